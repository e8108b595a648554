//! The performance report of issue 3: `cargo bench --bench report --features http,mcp,auth,redis` (README's
//! "main job"; with `--features tokio` only, the transports section is skipped; without
//! either, the peer round-trip section too).
//!
//! For each workload (W1–W7, ETH) and parser (rpcwire, rpcwire-frame and the peers):
//! median ns per message over timed batches, MB/s, msg/s and heap allocations per message
//! (mimalloc wrapped in a counting allocator); for rpcwire and the fastest peer a latency
//! histogram (p50, p99, p99.9, max); multi-thread throughput on W1 (1 and 2 threads).
//! Prints a table and writes `perf-reports/latest.{md,json}`, `perf-reports/speedup.svg` and
//! `perf-reports/latency.svg`. Whether each target of the issue is met is computed from the
//! numbers of the same run (and from `perf-reports/instructions.json`, written by
//! `benches/instructions.sh`, for the instruction-count target).
//!
//! Options (after `--`):
//! - `--quick`: shorter batches and histograms (well under 2 minutes);
//! - `--only W1,W3`: just these workloads (`stages`, `transports`, `gateway`, `overload`, `mcp`: those sections); prints,
//!   writes nothing;
//! - `--transport-server KIND`: run one server of the transports section (its child process);
//! - `--mcp-server KIND`: run one server of the MCP section (its child process);
//! - `--instructions WORKLOAD PARSER N`: parse message 0 of WORKLOAD N times inside
//!   `instructions_loop` and exit (for callgrind; see `benches/instructions.sh`).
//!
//! What "one message" is: W1, W2, W3, W5, W6-*, W7 one JSON-RPC message; W4 one batch of 100 requests;
//! W6 and ETH one message of their stream (ns/msg = time for the stream / its number of messages).

#[path = "../common/mod.rs"]
mod common;
mod config;
mod environment;
mod gateway;
mod mcp;
mod measure;
mod overload;
mod pipeline;
mod render_json;
mod render_markdown;
mod render_svg;
mod render_text;
mod soak;
mod structural;
mod targets;
mod tls;
mod transports;

use crate::common::instructions::Instructions;
use crate::common::peers::{self, Peer, Visit, RPCWIRE};
use crate::common::workloads::{self, Workload};
use std::time::Instant;

use crate::{
    config::*, environment::*, measure::*, pipeline::*, render_json::*, render_markdown::*, render_svg::*,
    render_text::*, targets::*,
};

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::COUNTING;

// ---------------------------------------------------------------------------------------
// Main

pub(crate) const USAGE: &str =
    "usage: cargo bench --bench report --features http,mcp,auth,redis [-- [--quick] [--only W1,W2,...,stages,transports,gateway,tls,overload,mcp] \
                     | --instructions WORKLOAD PARSER N]";

pub(crate) fn instructions_mode(args: &[String]) {
    let [workload, parser, n] = args else {
        panic!("{USAGE}");
    };
    let n: u64 = n.parse().unwrap_or_else(|_| panic!("{USAGE}"));
    struct Count {
        n: u64,
        digest: usize,
    }
    impl Visit for Count {
        fn visit<P: Peer>(&mut self, workload: &Workload) {
            let mut peer = P::new(workload);
            // Outside the counted loop: grows buffers, runs CPU feature detection.
            assert!(
                peer.parse(workload, 0) != 0,
                "{} rejected {}",
                P::NAME,
                workload.name
            );
            self.digest = instructions_loop(&mut peer, workload, self.n);
        }
    }
    let workload = workloads::build(workload).unwrap_or_else(|| panic!("workload {workload} unavailable"));
    let mut count = Count { n, digest: 0 };
    assert!(
        peers::for_name(&mut count, &workload, parser),
        "unknown parser {parser}"
    );
    println!(
        "instructions mode: {} × {parser} × {n} (digest sum {}); messages {}",
        workload.name,
        count.digest,
        workload.messages.len()
    );
}

pub(crate) fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    #[cfg(feature = "http")]
    if let [flag, kind, rest @ ..] = &args[..] {
        if flag == "--transport-server" {
            if let Some(kind) = kind.strip_prefix("tls-") {
                tls::servers::serve(kind, rest);
                return;
            }
            match kind.strip_prefix("gateway-") {
                Some(kind) => gateway::servers::serve(kind, rest),
                None => transports::server::serve(kind),
            }
            return;
        }
    }
    #[cfg(all(feature = "mcp", feature = "http"))]
    if let [flag, kind, ..] = &args[..] {
        if flag == "--mcp-server" {
            mcp::servers::serve(kind);
            return;
        }
    }
    if let Some(at) = args.iter().position(|a| a == "--instructions") {
        instructions_mode(&args[at + 1..]);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    args.retain(|a| a != "--quick");
    let mut only: Option<Vec<String>> = None;
    if let Some(at) = args.iter().position(|a| a == "--only") {
        let list = args.get(at + 1).unwrap_or_else(|| panic!("{USAGE}")).clone();
        only = Some(list.split(',').map(str::to_owned).collect());
        args.drain(at..at + 2);
    }
    if let Some(unknown) = args.first() {
        eprintln!("unknown argument {unknown:?}\n{USAGE}");
        std::process::exit(2);
    }
    let config = Config::new(quick);
    let began = Instant::now();
    let load_before = load_average();
    // At the start: the source this binary was just built from, as near as can be told.
    let git_head = git_head();
    let machine = machine();
    println!(
        "rpcwire report ({} mode) on {machine}",
        if quick { "quick" } else { "full" }
    );

    let workload_list: Vec<Workload> = match &only {
        Some(names) => names
            .iter()
            .filter(|n| !["stages", "transports", "gateway", "tls", "overload", "mcp"].contains(&n.as_str()))
            .filter_map(|n| workloads::build(n))
            .collect(),
        None => workloads::all(),
    };
    let timer_ns = timer_overhead_ns();
    println!("timer overhead (two Instant::now() calls, median): {timer_ns} ns");

    let mut results = Vec::new();
    let mut structural_runs = Vec::new();
    for workload in &workload_list {
        peers::verify(workload);
        println!(
            "{}: {} — verified all parsers; measuring…",
            workload.name, workload.about
        );
        let mut measured = measure_throughput(&config, workload);
        let fastest_peer = measured
            .iter()
            .filter(|m| !peers::is_rpcwire(m.parser))
            .min_by(|a, b| a.ns_per_msg.total_cmp(&b.ns_per_msg))
            .expect("peers")
            .parser;
        let quickest = measured
            .iter()
            .filter(|m| m.parser == RPCWIRE || m.parser == fastest_peer)
            .map(|m| m.ns_per_msg)
            .fold(f64::INFINITY, f64::min);
        let per_sample = if quickest >= LATENCY_SINGLE_MIN_NS {
            1
        } else {
            (LATENCY_SAMPLE_NS / quickest).ceil() as u64
        };
        for m in measured.iter_mut() {
            if m.parser == RPCWIRE || m.parser == fastest_peer {
                let mut run = LatencyRun {
                    config: &config,
                    per_sample,
                    timer_ns,
                    out: None,
                };
                peers::for_name(&mut run, workload, m.parser);
                m.latency = run.out;
            }
        }
        let mut rpcwire_allocating = Vec::new();
        if measured
            .iter()
            .any(|m| m.parser == RPCWIRE && m.allocs_per_msg > 0.0)
        {
            let mut allocating = Allocating { out: Vec::new() };
            peers::for_name(&mut allocating, workload, RPCWIRE);
            rpcwire_allocating = allocating.out;
        }
        results.push(WorkloadResult {
            name: workload.name,
            about: workload.about.clone(),
            bytes: workload.bytes_per_msg(),
            messages: workload.messages.len(),
            total_bytes: workload.total_bytes(),
            results: measured,
            fastest_peer,
            rpcwire_allocating,
        });
        let result = results.last().expect("just pushed");
        if result.speedup() < 3.0 {
            let run = structural::measure_structural(&config, workload, result);
            println!(
                "{}: stage 1 of a structural pass alone {:.1} ns/msg ({} positions) vs rpcwire's whole parse {:.1} ns/msg; 3x budget {:.1} ns",
                run.workload,
                run.stage_one_ns,
                run.structurals_per_msg,
                run.rpcwire_ns,
                run.budget_ns()
            );
            structural_runs.push(run);
        }
    }

    let mut threads = Vec::new();
    if let (Some(w1), Some(r1)) = (
        workload_list.iter().find(|w| w.name == "W1"),
        results.iter().find(|w| w.name == "W1"),
    ) {
        // Short runs in rounds, alternating parsers and thread counts; the median of each.
        let configs: Vec<(&str, usize)> = [RPCWIRE, r1.fastest_peer]
            .into_iter()
            .flat_map(|parser| [(parser, 1), (parser, 2)])
            .collect();
        let mut runs = vec![Vec::new(); configs.len()];
        for _ in 0..THREAD_ROUNDS {
            for (c, (parser, n)) in configs.iter().enumerate() {
                let mut run = Threads {
                    duration: config.threads / THREAD_ROUNDS as u32,
                    warmup: config.warmup / 4,
                    threads: *n,
                    out: 0.0,
                };
                peers::for_name(&mut run, w1, parser);
                runs[c].push(run.out);
            }
        }
        let medians: Vec<f64> = runs.iter().map(|r| median(r)).collect();
        for (c, (parser, n)) in configs.iter().enumerate() {
            let single = medians[configs
                .iter()
                .position(|(p, k)| p == parser && *k == 1)
                .expect("1 thread")];
            threads.push(ThreadRun {
                workload: "W1",
                parser: (*parser).to_owned(),
                threads: *n,
                msg_per_s: round(medians[c], 0),
                scaling: round(medians[c] / *n as f64 / single, 3),
                runs: runs[c].iter().map(|r| round(*r, 0)).collect(),
            });
        }
    }

    let jitter = results.iter().find(|w| w.name == "W2").map(|w2| {
        jitter_floor(
            &config,
            "rpcwire's median W2 parse".to_owned(),
            w2.rpcwire().ns_per_msg,
            timer_ns,
        )
    });
    if let Some(j) = &jitter {
        println!(
            "jitter floor ({:.0} ns of arithmetic): p50 {} p99 {} p99.9 {} max {} ns",
            j.work_ns, j.p50_ns, j.p99_ns, j.p999_ns, j.max_ns
        );
    }
    let run_stages = only
        .as_ref()
        .map_or(true, |names| names.iter().any(|n| n == "stages"));
    let (stage_results, correlation, peer_runs) = if run_stages {
        (
            measure_stages(&config, timer_ns),
            measure_correlation(&config),
            measure_peer_round_trips(&config),
        )
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    let run_transports = only
        .as_ref()
        .map_or(true, |names| names.iter().any(|n| n == "transports"));
    let transport_runs = if run_transports {
        transports::measure_transports(&config)
    } else {
        Vec::new()
    };
    let run_gateway = only
        .as_ref()
        .map_or(true, |names| names.iter().any(|n| n == "gateway"));
    let gateway_runs = if run_gateway {
        gateway::measure_gateway(&config)
    } else {
        Vec::new()
    };
    let run_tls = only
        .as_ref()
        .map_or(true, |names| names.iter().any(|n| n == "tls"));
    let tls_runs = if run_tls {
        tls::measure_tls(&config)
    } else {
        Vec::new()
    };
    let run_mcp = only
        .as_ref()
        .map_or(true, |names| names.iter().any(|n| n == "mcp"));
    let (mcp_runs, mcp_memory) = if run_mcp {
        mcp::measure_mcp(&config)
    } else {
        (Vec::new(), Vec::new())
    };
    let run_overload = only
        .as_ref()
        .map_or(true, |names| names.iter().any(|n| n == "overload"));
    let overload_runs = if run_overload {
        overload::measure_overload(&config)
    } else {
        Vec::new()
    };
    let instructions = Instructions::load(&reports_dir());
    let soak = soak::Soak::load(&reports_dir());
    let mut target_list = targets(&results, instructions.as_ref());
    target_list.extend(stage_targets(&stage_results));
    target_list.extend(transports::transport_targets(&transport_runs));
    target_list.extend(gateway::gateway_targets(&gateway_runs));
    target_list.extend(tls::tls_targets(&tls_runs));
    target_list.extend(mcp::mcp_targets(&mcp_runs));
    target_list.extend(mcp::gateway_targets(&mcp_runs, &mcp_memory));
    target_list.extend(overload::overload_targets(&overload_runs));
    target_list.extend(soak.iter().flat_map(soak::Soak::targets));
    let probes = peers::probe_all();
    print_table(&results, &target_list, &threads);
    print_stages(&stage_results);

    if only.is_some() {
        println!("\n--only: partial run, perf-reports/ left unchanged");
        return;
    }
    let latency_method = format!(
        "per-sample `Instant::now()` pairs for {} ms per parser, cycling through the workload's \
         messages; the timer's own overhead ({timer_ns} ns, median of empty pairs) is subtracted. \
         A sample is one message, unless the faster of rpcwire and the fastest peer takes under \
         {LATENCY_SINGLE_MIN_NS} ns per message: then a sample is N = ⌈{LATENCY_SAMPLE_NS} ns ÷ \
         that time⌉ back-to-back messages and records elapsed ÷ N (column messages-per-sample in \
         latest.json), which smooths the tail of such short messages. Recorded in an HdrHistogram \
         (3 significant digits).",
        config.histogram.as_millis()
    );
    let generated_at = now_utc();
    let rustc = command("rustc", &["-V"]);
    let simd = simd_note();
    let load_after = load_average();
    let report = Report {
        config: &config,
        results: &results,
        targets: &target_list,
        threads: &threads,
        stages: &stage_results,
        correlation: &correlation,
        peer: &peer_runs,
        transports: &transport_runs,
        gateway: &gateway_runs,
        tls: &tls_runs,
        mcp: &mcp_runs,
        mcp_memory: &mcp_memory,
        overload: &overload_runs,
        structural: &structural_runs,
        soak: soak.as_ref(),
        instructions: instructions.as_ref(),
        probes: &probes,
        machine: &machine,
        generated_at: &generated_at,
        git_head: git_head.as_deref(),
        rustc: rustc.as_deref(),
        simd: &simd,
        load: (&load_before, &load_after),
        timer_ns,
        latency_method: &latency_method,
        seconds: began.elapsed().as_secs_f64(),
        jitter: jitter.as_ref(),
    };
    let dir = reports_dir();
    std::fs::create_dir_all(&dir).expect("create perf-reports/");
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("wrote {}", path.display());
    };
    write("latest.md", report.markdown());
    write(
        "latest.json",
        serde_json::to_string_pretty(&report.json()).expect("serializable") + "\n",
    );
    write("speedup.svg", speedup_svg(&results));
    write("latency.svg", latency_svg(&results));
    update_readme(&report.readme_section());
    println!("report took {:.0} s", began.elapsed().as_secs_f64());
}
