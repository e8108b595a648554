//! Correlation table throughput: start + complete + take pairs on one shared table.
//!
//! Self-contained so a bench can include it with
//! `#[path = "common/correlate.rs"] mod correlate;`.
#![allow(dead_code)]

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use rpcwire::correlate::{CorrelationTable, TableConfig};

/// Wall-clock nanoseconds per call when `threads` threads each run `ops_per_thread` calls on
/// one shared table: each call is `start` (slot + id), `complete` by the id (decode + CAS +
/// hand-off), and `try_wait` taking the value (which frees the slot). The figure is total
/// elapsed time divided by the total number of calls (the inverse of the table's aggregate
/// throughput), so perfect scaling halves it from 1 to 2 threads.
pub fn insert_complete_ns_per_op(threads: usize, ops_per_thread: usize) -> f64 {
    let threads = threads.max(1);
    let ops_per_thread = ops_per_thread.max(1);
    let table = CorrelationTable::<u64>::new(TableConfig {
        capacity: 1024,
        ..TableConfig::default()
    });
    // Warm-up: touch every slot once so the first measured calls do not fault pages in.
    let warm: Vec<_> = (0..table.capacity()).filter_map(|_| table.start().ok()).collect();
    drop(warm);

    let barrier = Arc::new(Barrier::new(threads + 1));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (table, barrier) = (table.clone(), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                let mut sum = 0u64;
                for i in 0..ops_per_thread as u64 {
                    let Ok(call) = table.start() else { continue };
                    // The id as the peer echoes it; completion goes by that id.
                    let _ = table.complete(call.id(), i);
                    if let Ok(Ok(value)) = call.try_wait() {
                        sum = sum.wrapping_add(value);
                    }
                }
                black_box(sum)
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    for worker in workers {
        let _ = worker.join();
    }
    let elapsed = started.elapsed();
    elapsed.as_nanos() as f64 / (threads * ops_per_thread) as f64
}
