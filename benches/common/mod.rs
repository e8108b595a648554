//! Shared by `benches/parse.rs` (criterion) and `benches/report.rs` (the report): the
//! workloads of issue 3, the parsers measured on them, and the counting allocator.
#![allow(dead_code)]

pub mod alloc;
pub mod correlate;
pub mod instructions;
pub mod peer_stage;
pub mod peers;
pub mod router_stage;
pub mod stages;
pub mod stream_stage;
pub mod trend;
pub mod workloads;
