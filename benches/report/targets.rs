//! The targets, each met or not by the numbers of the same run.

use crate::common::instructions::Instructions;
use crate::common::peers::RPCWIRE;
use crate::common::workloads;
use serde::Serialize;

use crate::{measure::*, render_text::*};

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Target {
    pub(crate) target: String,
    pub(crate) measured: String,
    /// `None`: not measured in this run.
    pub(crate) met: Option<bool>,
}

pub(crate) fn targets(results: &[WorkloadResult], instructions: Option<&Instructions>) -> Vec<Target> {
    let mut out = Vec::new();
    for w in results {
        let speedup = w.speedup();
        out.push(Target {
            target: format!("{}: rpcwire ≥ 3× faster than the fastest peer", w.name),
            measured: format!(
                "{:.2}× ({} {} ns vs rpcwire {} ns)",
                speedup,
                w.fastest_peer,
                fmt_ns(w.fastest().ns_per_msg),
                fmt_ns(w.rpcwire().ns_per_msg)
            ),
            met: Some(speedup >= 3.0),
        });
    }
    layouts(results, &mut out);
    let w1 = instructions.and_then(|i| i.get("W1", RPCWIRE));
    out.push(Target {
        target: "W1: ≤ 600 instructions per message (callgrind)".to_owned(),
        measured: match (w1, instructions) {
            (Some(n), Some(i)) => format!(
                "{n:.0} instructions (instructions.json of {}, git {})",
                i.generated_at, i.git_head
            ),
            _ => "not measured: run benches/instructions.sh".to_owned(),
        },
        met: w1.map(|n| n <= 600.0),
    });
    match results.iter().find(|w| w.name == "W2") {
        Some(w2) => {
            let latency = w2.rpcwire().latency.as_ref().expect("rpcwire has a histogram");
            out.push(Target {
                target: "W2: rpcwire p99.9 < 1 µs".to_owned(),
                measured: format!(
                    "p99.9 {} ns ({} messages per sample)",
                    latency.p999_ns, latency.messages_per_sample
                ),
                met: Some(latency.p999_ns < 1000),
            });
        }
        None => out.push(Target {
            target: "W2: rpcwire p99.9 < 1 µs".to_owned(),
            measured: "W2 not measured".to_owned(),
            met: None,
        }),
    }
    let allocating: Vec<String> = results
        .iter()
        .filter(|w| w.name != "ETH")
        .filter(|w| w.rpcwire().allocs_per_msg > 0.0)
        .map(|w| format!("{} {:.3}", w.name, w.rpcwire().allocs_per_msg))
        .collect();
    let measured: Vec<&str> = results
        .iter()
        .filter(|w| w.name != "ETH")
        .map(|w| w.name)
        .collect();
    out.push(Target {
        target: "every workload but ETH: rpcwire 0 heap allocations per message".to_owned(),
        measured: if allocating.is_empty() {
            format!("0 on {}", measured.join(", "))
        } else {
            format!("allocations/msg: {}", allocating.join(", "))
        },
        met: Some(allocating.is_empty() && measured.len() == workloads::NAMES.len() - 1),
    });
    out
}

/// Issue 16: each W6 layout within 15% of the canonical layout's time, same run.
fn layouts(results: &[WorkloadResult], out: &mut Vec<Target>) {
    let find = |name: &str| results.iter().find(|w| w.name == name);
    let Some(canonical) = find("W6-canonical") else {
        return;
    };
    let base = canonical.rpcwire().ns_per_msg;
    for (name, _, _) in &workloads::W6_LAYOUTS[1..] {
        let target = format!("{name}: rpcwire within 15% of W6-canonical's time");
        out.push(match find(name) {
            Some(w) => {
                let ratio = w.rpcwire().ns_per_msg / base;
                Target {
                    target,
                    measured: format!(
                        "{} ns vs {} ns ({:+.0}%)",
                        fmt_ns(w.rpcwire().ns_per_msg),
                        fmt_ns(base),
                        (ratio - 1.0) * 100.0
                    ),
                    met: Some(ratio <= 1.15),
                }
            }
            None => Target {
                target,
                measured: format!("{name} not measured"),
                met: None,
            },
        });
    }
}
