//! Model checks of the correlation table's races with loom.
//!
//! Run with `.ci/loom` (`RUSTFLAGS="--cfg rpcwire_loom" cargo test --release --test correlate_loom`).
//! Under `cfg(rpcwire_loom)` the table's atomics, slot cells, `Arc`s and thread parking are loom's, and
//! its free list is a Treiber stack built on them, so these models cover the whole hot path:
//! the slot state machine, the free list, the owner/resolver hand-off and the wake-ups.
//! (Statistics counters stay plain std atomics; timeouts never fire by the clock here, expiry
//! is driven by `expire` with an instant far in the future.)
#![cfg(rpcwire_loom)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use loom::thread;
use rpcwire::correlate::{CallError, CorrelationTable, TableConfig, TableStats, UnmatchedReason};

/// Wakes a loom thread by unparking it.
struct Unpark(loom::thread::Thread);

impl Wake for Unpark {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

fn thread_waker() -> Waker {
    Waker::from(std::sync::Arc::new(Unpark(thread::current())))
}

/// A minimal executor on loom's park/unpark (loom's own `block_on` needs its `futures`
/// feature): polls, and parks until the waker unparks this thread.
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = thread_waker();
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        thread::park();
    }
}

/// `loom::model`, printing how many interleavings it explored (run with `--nocapture`).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    loom::model(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    println!(
        "{} interleavings",
        runs.load(std::sync::atomic::Ordering::Relaxed)
    );
}

fn table(capacity: usize) -> CorrelationTable<u32> {
    CorrelationTable::new(TableConfig {
        capacity,
        ..TableConfig::default()
    })
}

/// Far past every deadline in these models (default timeout 30 s).
fn later() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

/// Every started call ended exactly one way.
fn assert_balanced(stats: TableStats) {
    assert_eq!(
        stats.started,
        stats.completed + stats.timed_out + stats.cancelled + stats.dropped,
        "{stats:?}"
    );
}

/// Every slot is free again and clean: `capacity` calls can start, none of them finds a
/// stale outcome in its slot, and one more call cannot start.
fn assert_all_free(table: &CorrelationTable<u32>) {
    assert_eq!(table.pending(), 0);
    let mut calls: Vec<_> = (0..table.capacity())
        .map(|_| table.start().expect("slot free"))
        .collect();
    let waker = thread_waker();
    for call in &mut calls {
        let polled = pin!(call).poll(&mut Context::from_waker(&waker));
        assert!(
            polled.is_pending(),
            "a fresh call found a stale outcome: {polled:?}"
        );
    }
    assert!(matches!(table.start(), Err(CallError::TooManyPending { .. })));
    drop(calls);
}

#[test]
fn complete_vs_expire() {
    model(|| {
        let table = table(1);
        let call = table.start().unwrap();
        let id = call.id().clone();
        let completer = {
            let table = table.clone();
            thread::spawn(move || table.complete(&id, 7).is_ok())
        };
        let expirer = {
            let table = table.clone();
            thread::spawn(move || table.expire(later()))
        };
        let outcome = call.wait();
        let completed = completer.join().unwrap();
        let expired = expirer.join().unwrap();
        match outcome {
            Ok(7) => assert!(completed && expired == 0),
            Err(CallError::TimedOut { .. }) => assert!(!completed && expired == 1),
            other => panic!("unexpected outcome {other:?}"),
        }
        let stats = table.stats();
        assert_eq!(stats.late_or_unmatched, u64::from(!completed));
        assert_balanced(stats);
        assert_all_free(&table);
    });
}

#[test]
fn complete_vs_cancel_all() {
    model(|| {
        let table = table(1);
        let call = table.start().unwrap();
        let id = call.id().clone();
        let completer = {
            let table = table.clone();
            thread::spawn(move || table.complete(&id, 7).is_ok())
        };
        let canceller = {
            let table = table.clone();
            thread::spawn(move || table.cancel_all())
        };
        let outcome = call.wait();
        let completed = completer.join().unwrap();
        let cancelled = canceller.join().unwrap();
        match outcome {
            Ok(7) => assert!(completed && cancelled == 0),
            Err(CallError::ConnectionClosed) => assert!(!completed && cancelled == 1),
            other => panic!("unexpected outcome {other:?}"),
        }
        assert_balanced(table.stats());
        assert_eq!(table.pending(), 0);
        assert_eq!(table.start().unwrap_err(), CallError::ConnectionClosed);
    });
}

#[test]
fn complete_vs_drop() {
    model(|| {
        let table = table(1);
        let call = table.start().unwrap();
        let id = call.id().clone();
        let completer = {
            let table = table.clone();
            thread::spawn(move || table.complete(&id, 7).map_err(|e| e.reason()))
        };
        drop(call);
        let result = completer.join().unwrap();
        let stats = table.stats();
        match result {
            Ok(()) => assert_eq!((stats.completed, stats.dropped), (1, 0)),
            Err(reason) => {
                assert_eq!(reason, UnmatchedReason::NotPending);
                assert_eq!(
                    (stats.completed, stats.dropped, stats.late_or_unmatched),
                    (0, 1, 1)
                );
            }
        }
        assert_balanced(stats);
        // Whoever finished last freed the slot: it is usable again.
        assert_all_free(&table);
    });
}

#[test]
fn two_completes_with_the_same_id() {
    model(|| {
        let table = table(1);
        let call = table.start().unwrap();
        let spawn = |value: u32| {
            let table = table.clone();
            let id = call.id().clone();
            thread::spawn(move || table.complete(&id, value).map_err(|e| e.into_inner()))
        };
        let (a, b) = (spawn(1), spawn(2));
        let got = call.wait().unwrap();
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        match got {
            1 => assert_eq!((a, b), (Ok(()), Err(2))),
            2 => assert_eq!((a, b), (Err(1), Ok(()))),
            other => panic!("unexpected value {other}"),
        }
        assert_eq!(table.stats().late_or_unmatched, 1);
        assert_all_free(&table);
    });
}

#[test]
fn late_response_never_reaches_the_recycled_slot() {
    model(|| {
        let table = table(1);
        let first = table.start().unwrap();
        let first_id = first.id().clone();
        let late = {
            let table = table.clone();
            let id = first_id.clone();
            thread::spawn(move || table.complete(&id, 1).is_ok())
        };
        drop(first);
        // The slot may still be held by the late completer's hand-off: then the table is full.
        let second = match table.start() {
            Ok(call) => Some(call),
            Err(e) => {
                assert_eq!(e, CallError::TooManyPending { capacity: 1 });
                None
            }
        };
        let delivered_late = late.join().unwrap();
        let second = second.unwrap_or_else(|| table.start().expect("freed once the completer is done"));
        assert_ne!(second.id(), &first_id, "same slot, new generation");
        assert!(table.complete(&first_id, 3).is_err());
        table.complete(&second.id().clone(), 2).unwrap();
        assert_eq!(second.wait(), Ok(2));
        let stats = table.stats();
        assert_eq!(stats.completed, 1 + u64::from(delivered_late));
        assert_balanced(stats);
    });
}

#[test]
fn start_vs_cancel_all_leaves_nothing_pending() {
    model(|| {
        let table = table(1);
        let canceller = {
            let table = table.clone();
            thread::spawn(move || table.cancel_all())
        };
        match table.start() {
            // Started before the close was seen: the close must still end it (a missed call
            // would park `wait` forever, which loom reports as a deadlock).
            Ok(call) => assert_eq!(call.wait(), Err(CallError::ConnectionClosed)),
            Err(e) => assert_eq!(e, CallError::ConnectionClosed),
        }
        canceller.join().unwrap();
        assert_eq!(table.pending(), 0);
        assert_balanced(table.stats());
    });
}

#[test]
fn concurrent_starts_and_drops_share_the_free_list() {
    model(|| {
        let table = table(2);
        let worker = || {
            let table = table.clone();
            thread::spawn(move || {
                let first = table.start().unwrap();
                let first_id = first.id().clone();
                drop(first);
                let second = table.start().unwrap();
                (first_id, second)
            })
        };
        let (a, b) = (worker(), worker());
        let (a_first, a_second) = a.join().unwrap();
        let (b_first, b_second) = b.join().unwrap();
        assert_ne!(a_second.id(), b_second.id());
        assert!(a_first != b_first || a_first != *a_second.id());
        assert_eq!(table.pending(), 2);
        drop((a_second, b_second));
        assert_eq!(table.stats().dropped, 4);
        assert_all_free(&table);
    });
}

#[test]
fn future_is_woken_by_a_complete_on_another_thread() {
    model(|| {
        let table = table(1);
        let call = table.start().unwrap();
        let id = call.id().clone();
        let completer = {
            let table = table.clone();
            thread::spawn(move || table.complete(&id, 5).unwrap())
        };
        assert_eq!(block_on(call), Ok(5));
        completer.join().unwrap();
        assert_all_free(&table);
    });
}

#[test]
fn owner_times_out_by_itself_vs_complete() {
    model(|| {
        let table = table(1);
        let call = table.start_with_timeout(Duration::ZERO).unwrap();
        let id = call.id().clone();
        let completer = {
            let table = table.clone();
            thread::spawn(move || table.complete(&id, 5).is_ok())
        };
        // The deadline has passed: `wait` tries to time the call out itself and races the
        // completer's CAS.
        let outcome = call.wait();
        let completed = completer.join().unwrap();
        assert_eq!(outcome.is_ok(), completed);
        assert_balanced(table.stats());
        assert_all_free(&table);
    });
}
