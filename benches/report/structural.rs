//! The whole-value structural pass that issue 16 asks to try: the first stage of a two-stage
//! parser (`rpcwire::json::kernels::twins::stage_one_*`: 64-byte blocks classified into
//! bitmasks, strings found by a prefix XOR, structural positions counted) timed alone on each
//! workload where rpcwire is under 3× the fastest peer, interleaved with rpcwire's whole parse
//! of the same messages. If the first stage alone takes most of the time a 3× parse may take,
//! the second stage (walking the positions, validating numbers, literals and strings) cannot
//! fit in what is left.

use std::hint::black_box;

use rpcwire::json::kernels::twins;
use serde::Serialize;

use crate::common::peers::{self, RPCWIRE};
use crate::common::workloads::Workload;
use crate::config::Config;
use crate::measure::{time_runners, CollectRunners, Runner, WorkloadResult};
use crate::render_json::round;

const STAGE_ONE: &str = "stage 1 alone";

#[derive(Clone, Debug, Serialize)]
pub(crate) struct StructuralRun {
    pub(crate) workload: &'static str,
    /// Which stage 1 ran: "AVX2 + PCLMULQDQ" or "portable".
    pub(crate) kernel: &'static str,
    pub(crate) structurals_per_msg: f64,
    pub(crate) stage_one_ns: f64,
    pub(crate) rpcwire_ns: f64,
    pub(crate) fastest_peer: &'static str,
    pub(crate) fastest_peer_ns: f64,
}

impl StructuralRun {
    /// The time a parse 3× faster than the fastest peer may take.
    pub(crate) fn budget_ns(&self) -> f64 {
        self.fastest_peer_ns / 3.0
    }

    /// What the budget leaves for stage 2 after stage 1, per structural position.
    pub(crate) fn stage_two_ns_per_structural(&self) -> f64 {
        (self.budget_ns() - self.stage_one_ns) / self.structurals_per_msg.max(1.0)
    }
}

/// Stage 1 on every message of `workload`, with the fastest kernel this CPU has.
fn stage_one(bytes: &[u8]) -> twins::StageOne {
    twins::stage_one_avx2(bytes).unwrap_or_else(|| twins::stage_one_portable(bytes))
}

/// Measures stage 1 beside rpcwire's parse on `workload` (whose timed result is `result`).
pub(crate) fn measure_structural(
    config: &Config,
    workload: &Workload,
    result: &WorkloadResult,
) -> StructuralRun {
    let kernel = if twins::stage_one_avx2(b"[]").is_some() {
        "AVX2 + PCLMULQDQ"
    } else {
        "portable"
    };
    let structurals: u64 = workload
        .messages
        .iter()
        .map(|m| {
            let found = stage_one(&m.bytes);
            assert!(
                !found.control_in_string && !found.ends_in_string,
                "stage 1 finds {} invalid: {found:?}",
                workload.name
            );
            found.structurals
        })
        .sum();
    let mut collect = CollectRunners {
        workload,
        out: Vec::new(),
    };
    peers::for_name(&mut collect, workload, RPCWIRE);
    collect.out.push(Runner {
        parser: STAGE_ONE,
        about: "",
        run: Box::new(move |passes| {
            let mut sum = 0u64;
            for _ in 0..passes {
                for message in &workload.messages {
                    sum = sum.wrapping_add(stage_one(black_box(&message.bytes)).structurals);
                }
            }
            black_box(sum);
        }),
    });
    let measured = time_runners(config, workload, collect.out);
    let ns = |name: &str| {
        measured
            .iter()
            .find(|m| m.parser == name)
            .map_or(f64::NAN, |m| m.ns_per_msg)
    };
    StructuralRun {
        workload: workload.name,
        kernel,
        structurals_per_msg: round(structurals as f64 / workload.messages.len() as f64, 1),
        stage_one_ns: round(ns(STAGE_ONE), 1),
        rpcwire_ns: round(ns(RPCWIRE), 1),
        fastest_peer: result.fastest_peer,
        fastest_peer_ns: round(result.fastest().ns_per_msg, 1),
    }
}

/// The report's section.
pub(crate) fn structural_section(runs: &[StructuralRun]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "## Whole-value structural pass (tried for issue 16)\n");
    let _ = writeln!(
        s,
        "Issue 16 asks to try a whole-value structural pass for the large values: classify \
         64-byte blocks into quote, backslash, operator, whitespace and control bitmasks, carry \
         the in-string state across blocks by a prefix XOR, and walk the structural positions \
         found. Its first stage is built (`json::kernels::structural`, AVX2 `vpshufb` lookups \
         and a carry-less multiply, with a portable twin it is tested and fuzzed against; the \
         parser does not use it) and timed here alone, counting the structural positions \
         without even writing them out, on each workload where rpcwire is under 3× the fastest \
         peer, interleaved with rpcwire's whole single-pass parse of the same messages (median \
         of the batches). The 3× budget is the fastest peer's time ÷ 3; what stage 1 leaves of \
         it is all a stage 2 would have to walk every structural position and validate every \
         number, literal and string.\n"
    );
    let _ = writeln!(
        s,
        "| workload | stage 1 | structural positions/msg | stage 1 alone ns/msg | rpcwire whole parse ns/msg | stage 1 ÷ whole parse | 3× budget ns/msg | left for stage 2 ns/msg | left per position | rpcwire now per position |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in runs {
        let left = r.budget_ns() - r.stage_one_ns;
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.1} | {:.1} | {:.0}% | {:.1} ({} {:.0} ÷ 3) | {:.1} | {:.2} ns | {:.2} ns |",
            r.workload,
            r.kernel,
            r.structurals_per_msg,
            r.stage_one_ns,
            r.rpcwire_ns,
            100.0 * r.stage_one_ns / r.rpcwire_ns,
            r.budget_ns(),
            r.fastest_peer,
            r.fastest_peer_ns,
            left,
            r.stage_two_ns_per_structural(),
            r.rpcwire_ns / r.structurals_per_msg.max(1.0),
        );
    }
    let _ = writeln!(s);
    s
}
