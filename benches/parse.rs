//! Criterion: every workload × every parser (issue 3).
//!
//! `cargo bench --bench parse` (all), `cargo bench --bench parse -- W2/` (one workload),
//! `cargo bench --bench parse -- /rpcwire$` (one parser). One iteration is one message
//! (W4: the whole 100-request batch; ETH: the whole stream, reported per stream).
//! The report with medians, allocations and latency percentiles is `benches/report.rs`.

mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use common::peers::{self, Peer, Visit};
use common::workloads::{self, Workload};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Bench<'c> {
    criterion: &'c mut Criterion,
}

impl Visit for Bench<'_> {
    fn visit<P: Peer>(&mut self, workload: &Workload) {
        let mut group = self.criterion.benchmark_group(workload.name);
        group.throughput(Throughput::Bytes(workload.total_bytes() as u64));
        let mut peer = P::new(workload);
        let n = workload.messages.len();
        group.bench_function(P::NAME, |b| {
            b.iter(|| {
                let mut sum = 0usize;
                for i in 0..n {
                    sum = sum.wrapping_add(peer.parse(black_box(workload), black_box(i)));
                }
                sum
            })
        });
        group.finish();
    }
}

fn parse(criterion: &mut Criterion) {
    for workload in workloads::all() {
        peers::verify(&workload);
        peers::for_each(&mut Bench { criterion }, &workload);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50);
    targets = parse
}
criterion_main!(benches);
