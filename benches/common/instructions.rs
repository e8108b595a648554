//! `perf-reports/instructions.json` (written by `benches/instructions.sh`): instruction and
//! branch counts per message under valgrind, and where rpcwire's instructions go; and the
//! report's "Where the time goes" section built from it and a run's timings.

use std::fmt::Write as _;
use std::path::Path;

/// One `(workload, parser)` row of the counts.
#[derive(Clone, Debug)]
pub struct Count {
    pub workload: String,
    pub parser: String,
    pub instructions: f64,
    /// Conditional branches per message (cachegrind), when recorded.
    pub branches: Option<f64>,
    /// Of those, mispredicted by cachegrind's predictor model, when recorded.
    pub mispredicted: Option<f64>,
}

/// rpcwire's instructions on one workload: `(name, instructions per message)` by function
/// and by source file, largest first.
#[derive(Clone, Debug)]
pub struct Profile {
    pub workload: String,
    pub by_function: Vec<(String, f64)>,
    pub by_file: Vec<(String, f64)>,
}

/// The contents of `instructions.json`.
pub struct Instructions {
    pub generated_at: String,
    pub git_head: String,
    pub counts: Vec<Count>,
    pub profiles: Vec<Profile>,
}

fn rows(value: &serde_json::Value, field: &str) -> Vec<(String, f64)> {
    value
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| Some((r[field].as_str()?.to_owned(), r["instructions_per_msg"].as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

impl Instructions {
    /// Reads `dir/instructions.json`; `None` when it is missing or unreadable.
    pub fn load(dir: &Path) -> Option<Instructions> {
        let text = std::fs::read_to_string(dir.join("instructions.json")).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        let counts = json["results"]
            .as_array()?
            .iter()
            .filter_map(|r| {
                Some(Count {
                    workload: r["workload"].as_str()?.to_owned(),
                    parser: r["parser"].as_str()?.to_owned(),
                    instructions: r["instructions_per_msg"].as_f64()?,
                    branches: r["branches_per_msg"].as_f64(),
                    mispredicted: r["mispredicted_per_msg"].as_f64(),
                })
            })
            .collect();
        let profiles = json["profiles"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter_map(|p| {
                        Some(Profile {
                            workload: p["workload"].as_str()?.to_owned(),
                            by_function: rows(&p["profile"]["by_function"], "function"),
                            by_file: rows(&p["profile"]["by_file"], "file"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Instructions {
            generated_at: json["generated_at"].as_str().unwrap_or("?").to_owned(),
            git_head: json["git_head"].as_str().unwrap_or("?").to_owned(),
            counts,
            profiles,
        })
    }

    /// The row of `(workload, parser)`.
    pub fn count(&self, workload: &str, parser: &str) -> Option<&Count> {
        self.counts
            .iter()
            .find(|c| c.workload == workload && c.parser == parser)
    }

    /// Instructions per message of `(workload, parser)`.
    pub fn get(&self, workload: &str, parser: &str) -> Option<f64> {
        self.count(workload, parser).map(|c| c.instructions)
    }
}

/// A workload's timing in the report's run: rpcwire's and the fastest peer's median ns per
/// message, and every parser's, for the table.
pub struct Timing<'a> {
    pub workload: &'a str,
    pub fastest_peer: &'a str,
    pub ns: Vec<(&'a str, f64)>,
}

impl Timing<'_> {
    fn ns(&self, parser: &str) -> Option<f64> {
        self.ns.iter().find(|(p, _)| *p == parser).map(|(_, ns)| *ns)
    }
}

fn optional(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |x| format!("{:.0}", x.max(0.0)))
}

/// The "Where the time goes" section: for each workload that has counts, rpcwire and the
/// fastest peers side by side (instructions, ns per 1000 instructions in this run, branches,
/// modelled mispredictions), what a 3× speed-up would take in instructions at rpcwire's own
/// rate, and rpcwire's profile by function and by source file.
pub fn where_the_time_goes(
    out: &mut String,
    instructions: &Instructions,
    timings: &[Timing<'_>],
    rpcwire: &str,
) {
    let _ = writeln!(out, "## Where the time goes\n");
    let _ = writeln!(
        out,
        "Counts from `perf-reports/instructions.json` ({}, git {}; `benches/instructions.sh`: \
         callgrind inside the parse loop; branches and their mispredictions from cachegrind's \
         branch-predictor model, which is simpler than this CPU's, so read them as a relative \
         measure), beside the median ns of this run. \"ns per 1000 instructions\" is how fast \
         each parser's code runs on this core: higher means the core waits more, on mispredicted \
         branches or on chains of steps that each need the previous one's result (where a \
         vector scan of one string decides where the next scan starts, say).\n",
        instructions.generated_at, instructions.git_head
    );
    let _ = writeln!(
        out,
        "| workload | parser | ns/msg | instructions/msg | ns per 1000 instructions | branches/msg | mispredicted/msg (model) |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: |"
    );
    for timing in timings {
        for count in instructions
            .counts
            .iter()
            .filter(|c| c.workload == timing.workload)
        {
            let Some(ns) = timing.ns(&count.parser) else {
                continue;
            };
            let name = if count.parser == timing.fastest_peer {
                format!("{} ◆", count.parser)
            } else {
                count.parser.clone()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {:.0} | {:.1} | {} | {} |",
                count.workload,
                name,
                ns,
                count.instructions,
                ns * 1000.0 / count.instructions,
                optional(count.branches),
                optional(count.mispredicted)
            );
        }
    }
    let _ = writeln!(out);
    for timing in timings {
        let (Some(ours), Some(peer), Some(count)) = (
            timing.ns(rpcwire),
            timing.ns(timing.fastest_peer),
            instructions.get(timing.workload, rpcwire),
        ) else {
            continue;
        };
        let needed_ns = peer / 3.0;
        let rate = ours / count;
        let budget = needed_ns / rate;
        if ours <= needed_ns {
            let _ = writeln!(
                out,
                "- {}: met, {:.2}× the fastest peer ({}, {:.1} ns): rpcwire {:.1} ns, {:.0} \
                 instructions{}.",
                timing.workload,
                peer / ours,
                timing.fastest_peer,
                peer,
                ours,
                count,
                match instructions.get(timing.workload, timing.fastest_peer) {
                    Some(theirs) => format!(" (the peer executes {theirs:.0})"),
                    None => String::new(),
                }
            );
            continue;
        }
        let _ = writeln!(
            out,
            "- {}: 3× the fastest peer ({}, {:.1} ns) is {:.1} ns per message. At rpcwire's own \
             rate in this run ({:.1} ns per 1000 instructions) that is {:.0} instructions; it \
             executes {:.0}, {:.1}× as many{}.",
            timing.workload,
            timing.fastest_peer,
            peer,
            needed_ns,
            rate * 1000.0,
            budget,
            count,
            count / budget,
            match instructions.get(timing.workload, timing.fastest_peer) {
                Some(theirs) => {
                    let peer_rate = peer / theirs;
                    format!(
                        " (the peer executes {theirs:.0}, at {:.1} ns per 1000; rpcwire's \
                         {count:.0} at the peer's rate would take {:.1} ns, {:.2}× the peer)",
                        peer_rate * 1000.0,
                        count * peer_rate,
                        peer / (count * peer_rate)
                    )
                }
                None => String::new(),
            }
        );
    }
    let _ = writeln!(out);
    for profile in &instructions.profiles {
        let total = instructions.get(&profile.workload, rpcwire);
        let share = |n: f64| total.map_or_else(String::new, |t| format!("{:.0}%", 100.0 * n / t));
        let _ = writeln!(
            out,
            "rpcwire on {}: instructions per message by function (code inlined into a function \
             counts as that function's) and by source file (`std: core/src/slice/index.rs` is \
             bounds checks, `std: core_arch/…` the vector compares).\n",
            profile.workload
        );
        for (column, rows) in [
            ("function", &profile.by_function),
            ("source file", &profile.by_file),
        ] {
            let _ = writeln!(
                out,
                "| {column} | instructions/msg | share |\n| --- | ---: | ---: |"
            );
            for (name, n) in rows {
                let _ = writeln!(out, "| `{name}` | {n:.0} | {} |", share(*n));
            }
            let _ = writeln!(out);
        }
    }
}
