//! Output: perf-reports/latest.json.

use crate::common::peer_stage::PeerRun;
use crate::common::stages::StageResult;
use serde::Serialize;

use crate::{measure::*, pipeline::*, targets::*};

/// `x` rounded to `digits` decimals (for a readable JSON file).
pub(crate) fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

#[derive(Serialize)]
pub(crate) struct JsonResult {
    pub(crate) parser: &'static str,
    pub(crate) ns_per_msg: f64,
    pub(crate) mb_per_s: f64,
    pub(crate) allocs_per_msg: f64,
    pub(crate) p50_ns: Option<u64>,
    pub(crate) p99_ns: Option<u64>,
    pub(crate) p999_ns: Option<u64>,
    // Extra fields beyond the shape.
    pub(crate) max_ns: Option<u64>,
    pub(crate) msg_per_s: f64,
    pub(crate) ns_per_msg_min: f64,
    pub(crate) ns_per_msg_max: f64,
    pub(crate) batches: usize,
    pub(crate) latency_messages_per_sample: Option<u64>,
    pub(crate) latency_samples: Option<u64>,
    pub(crate) speedup_of_rpcwire: f64,
    pub(crate) about: &'static str,
}

#[derive(Serialize)]
pub(crate) struct JsonWorkload {
    pub(crate) name: &'static str,
    pub(crate) bytes: usize,
    pub(crate) messages: usize,
    pub(crate) total_bytes: usize,
    pub(crate) about: String,
    pub(crate) fastest_peer: &'static str,
    pub(crate) speedup_vs_fastest_peer: f64,
    pub(crate) results: Vec<JsonResult>,
    pub(crate) rpcwire_allocating_messages: Vec<JsonAllocating>,
}

#[derive(Serialize)]
pub(crate) struct JsonAllocating {
    pub(crate) index: usize,
    pub(crate) allocations: u64,
    pub(crate) prefix: String,
}

#[derive(Serialize)]
pub(crate) struct JsonProbe {
    pub(crate) parser: &'static str,
    pub(crate) rejected: Vec<&'static str>,
    pub(crate) accepted: Vec<&'static str>,
}

#[derive(Serialize)]
pub(crate) struct JsonReport {
    pub(crate) machine: String,
    pub(crate) workloads: Vec<JsonWorkload>,
    // Extra fields beyond the shape.
    pub(crate) generated_at: String,
    pub(crate) mode: &'static str,
    pub(crate) git_head: Option<String>,
    pub(crate) rustc: Option<String>,
    pub(crate) simd: String,
    pub(crate) load_average_before: String,
    pub(crate) load_average_after: String,
    pub(crate) timer_overhead_ns: u64,
    pub(crate) latency_method: String,
    pub(crate) jitter_floor: Option<JitterFloor>,
    pub(crate) targets: Vec<Target>,
    pub(crate) threads: Vec<ThreadRun>,
    /// Pipeline stages after parsing (router end to end, …), each beside its baseline.
    pub(crate) stages: Vec<StageResult>,
    /// Correlation table start + complete + take on 1 and 2 threads.
    pub(crate) correlation_table: Vec<CorrelationRun>,
    /// Round trips between two in-process peers over an in-memory duplex.
    pub(crate) peer_round_trip: Vec<PeerRun>,
    /// HTTP and WebSocket servers (rpcwire, jsonrpsee, the floors) under one load generator.
    pub(crate) transports: Vec<crate::transports::TransportRun>,
    /// MCP servers (rpcwire, rmcp, the TypeScript SDK) under one load generator.
    pub(crate) mcp: Vec<crate::mcp::McpRun>,
    /// Each MCP HTTP server's memory per idle session.
    pub(crate) mcp_idle_sessions: Vec<crate::mcp::SessionMemory>,
    /// Forwarding through gateways (rpcwire's, the usual way, the floor) under one load generator.
    pub(crate) gateway: Vec<crate::gateway::GatewayRun>,
    /// TLS: rpcwire's HTTPS server beside its floor, gateways to an https upstream beside theirs.
    pub(crate) tls: Vec<crate::tls::TlsRun>,
    /// A flood of concurrent requests against `spec_server --peer --max-concurrent 8`.
    pub(crate) overload: Vec<crate::overload::OverloadRun>,
    /// Stage 1 of a whole-value structural pass timed alone (issue 16's experiment).
    pub(crate) structural_pass: Vec<crate::structural::StructuralRun>,
    /// The latest soak run (`cargo bench --bench soak`), as perf-reports/soak.json has it.
    pub(crate) soak: Option<crate::soak::Soak>,
    pub(crate) instructions_per_msg: Vec<InstructionJson>,
    pub(crate) strictness_probes: Vec<JsonProbe>,
}

#[derive(Serialize)]
pub(crate) struct InstructionJson {
    pub(crate) workload: String,
    pub(crate) parser: String,
    pub(crate) instructions_per_msg: f64,
    pub(crate) branches_per_msg: Option<f64>,
    pub(crate) mispredicted_per_msg: Option<f64>,
}
