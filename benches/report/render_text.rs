//! Output: the table printed on the terminal, and number formatting shared by the renderers.

use std::fmt::Write as _;

use crate::{measure::*, targets::*};

pub(crate) fn fmt_ns(ns: f64) -> String {
    if ns >= 100.0 {
        format!("{ns:.0}")
    } else {
        format!("{ns:.1}")
    }
}

pub(crate) fn fmt_count(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

pub(crate) fn fmt_allocs(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else if x >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

pub(crate) fn yes_no(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "**met**",
        Some(false) => "**not met**",
        None => "not measured",
    }
}

pub(crate) fn parser_names(results: &[WorkloadResult]) -> Vec<&'static str> {
    results
        .first()
        .map(|w| w.results.iter().map(|m| m.parser).collect())
        .unwrap_or_default()
}

/// The ns/msg matrix: workloads × parsers.
/// Replaces the text between the perf-table markers of README.md with `section`.
pub(crate) fn update_readme(section: &str) {
    const START: &str = "<!-- perf-table:start -->";
    const END: &str = "<!-- perf-table:end -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let Ok(readme) = std::fs::read_to_string(&path) else {
        println!("README.md not found; performance table not updated");
        return;
    };
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        println!("README.md has no perf-table markers; performance table not updated");
        return;
    };
    let updated = format!("{}{START}\n{section}{}", &readme[..start], &readme[end..]);
    std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("updated {}", path.display());
}

pub(crate) fn matrix(results: &[WorkloadResult], markdown: bool) -> String {
    let parsers = parser_names(results);
    let mut s = String::new();
    if markdown {
        let _ = write!(s, "| parser |");
        for w in results {
            let _ = write!(s, " {} |", w.name);
        }
        let _ = write!(s, "\n| --- |");
        for _ in results {
            let _ = write!(s, " ---: |");
        }
        s.push('\n');
        for p in &parsers {
            let _ = write!(s, "| {p} |");
            for w in results {
                let m = w.get(p);
                let mark = if *p == w.fastest_peer { " ◆" } else { "" };
                let _ = write!(s, " {}{mark} |", fmt_ns(m.ns_per_msg));
            }
            s.push('\n');
        }
    } else {
        let _ = write!(s, "{:<20}", "ns/msg (median)");
        for w in results {
            let _ = write!(s, "{:>12}", w.name);
        }
        s.push('\n');
        for p in &parsers {
            let _ = write!(s, "{p:<20}");
            for w in results {
                let m = w.get(p);
                let mark = if *p == w.fastest_peer { "*" } else { " " };
                let _ = write!(s, "{:>11}{mark}", fmt_ns(m.ns_per_msg));
            }
            s.push('\n');
        }
        let _ = write!(s, "{:<20}", "rpcwire speed-up");
        for w in results {
            let _ = write!(s, "{:>11.2}x", w.speedup());
        }
        s.push('\n');
    }
    s
}

pub(crate) fn print_table(results: &[WorkloadResult], target_list: &[Target], threads: &[ThreadRun]) {
    println!();
    for w in results {
        println!("{} — {}", w.name, w.about);
        println!(
            "  {:<20} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>9}",
            "parser", "ns/msg", "MB/s", "msg/s", "allocs", "p50", "p99", "p99.9", "max"
        );
        for m in &w.results {
            let (p50, p99, p999, max) = m.latency.as_ref().map_or_else(
                || ("-".into(), "-".into(), "-".into(), "-".into()),
                |l| {
                    (
                        l.p50_ns.to_string(),
                        l.p99_ns.to_string(),
                        l.p999_ns.to_string(),
                        l.max_ns.to_string(),
                    )
                },
            );
            println!(
                "  {:<20} {:>10} {:>10.1} {:>10} {:>10} {:>8} {:>8} {:>8} {:>9}{}",
                m.parser,
                fmt_ns(m.ns_per_msg),
                m.mb_per_s,
                fmt_count(m.msg_per_s),
                fmt_allocs(m.allocs_per_msg),
                p50,
                p99,
                p999,
                max,
                if m.parser == w.fastest_peer {
                    "  ← fastest peer"
                } else {
                    ""
                }
            );
        }
        println!();
    }
    print!("{}", matrix(results, false));
    println!();
    for t in threads {
        println!(
            "{} {:<20} {} thread(s): {:>8} msg/s (scaling per thread {:.2})",
            t.workload,
            t.parser,
            t.threads,
            fmt_count(t.msg_per_s),
            t.scaling
        );
    }
    println!();
    for t in target_list {
        println!(
            "[{}] {} — {}",
            match t.met {
                Some(true) => "MET",
                Some(false) => "NOT MET",
                None => "?",
            },
            t.target,
            t.measured
        );
    }
}
