//! The correlation table: ids, bounds, completion, timeouts, cancellation, drops, futures,
//! concurrency, and a long randomized soak checked against a model.

use std::future::Future;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use rpcwire::correlate::{
    CallError, CorrelationTable, IdFormat, PendingCall, TableConfig, TableStats, Unmatched, UnmatchedReason,
};
use rpcwire::{Id, IdKind};

fn new_table<T>(capacity: usize, id_format: IdFormat) -> CorrelationTable<T> {
    CorrelationTable::new(TableConfig {
        capacity,
        id_format,
        ..TableConfig::default()
    })
}

/// Far past the default 30 s deadline.
fn much_later() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

fn assert_balanced(stats: TableStats) {
    assert_eq!(
        stats.started,
        stats.completed + stats.timed_out + stats.cancelled + stats.dropped,
        "{stats:?}"
    );
}

/// No call pending and every slot can be taken again (and no more).
fn assert_all_free<T>(table: &CorrelationTable<T>) {
    assert_eq!(table.pending(), 0);
    let calls: Vec<_> = (0..table.capacity())
        .map(|i| table.start().unwrap_or_else(|e| panic!("slot {i} not free: {e}")))
        .collect();
    // No fresh call may find an outcome left over from the slot's previous call.
    let waker = futures::task::noop_waker();
    let calls: Vec<_> = calls
        .into_iter()
        .map(|mut call| {
            let polled = std::pin::Pin::new(&mut call).poll(&mut std::task::Context::from_waker(&waker));
            assert!(polled.is_pending(), "stale outcome in a fresh slot");
            call
        })
        .collect();
    assert_eq!(
        table.start().unwrap_err(),
        CallError::TooManyPending {
            capacity: table.capacity()
        }
    );
    drop(calls);
    assert_eq!(table.pending(), 0);
}

const FORMATS: [IdFormat; 2] = [IdFormat::Number, IdFormat::String];

// ---- ids ----------------------------------------------------------------------------------

#[test]
fn ids_are_unique_while_pending_and_of_the_chosen_format() {
    for format in FORMATS {
        let table = new_table::<()>(100, format);
        let calls: Vec<_> = (0..100).map(|_| table.start().unwrap()).collect();
        let mut seen = std::collections::HashSet::new();
        for call in &calls {
            assert!(seen.insert(call.id().clone()), "duplicate id {}", call.id());
            match format {
                IdFormat::Number => {
                    assert_eq!(call.id().kind(), IdKind::Number);
                    assert!(call.id().as_u64().unwrap() < 1 << 53, "JavaScript-safe");
                }
                IdFormat::String => {
                    let text = call.id().as_str().unwrap().into_owned();
                    let (gen, slot) = text.strip_prefix('r').unwrap().split_once('.').unwrap();
                    assert!(
                        gen.parse::<u64>().is_ok() && slot.parse::<u32>().unwrap() < 100,
                        "{text}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_recycled_slot_gets_a_new_id_and_the_old_one_is_rejected() {
    for format in FORMATS {
        let table = new_table::<u32>(1, format);
        let first = table.start().unwrap();
        let old = first.id().clone();
        table.complete(&old, 1).unwrap();
        assert_eq!(first.wait(), Ok(1));

        let second = table.start().unwrap();
        assert_ne!(second.id(), &old);
        let late = table.complete(&old, 2).unwrap_err();
        assert_eq!(
            (late.reason(), late.into_inner()),
            (UnmatchedReason::NotPending, 2)
        );
        let second = second
            .try_wait()
            .expect_err("the late response must not reach the new call");
        table.complete(&second.id().clone(), 3).unwrap();
        assert_eq!(second.wait(), Ok(3));
        assert_eq!(table.stats().late_or_unmatched, 1);
    }
}

#[test]
fn a_forged_id_for_a_future_generation_is_rejected() {
    let table = new_table::<u32>(4, IdFormat::Number);
    let call = table.start().unwrap();
    let n = call.id().as_u64().unwrap();
    // Slot bits for capacity 4: 2. Next generation of the same slot:
    let forged = Id::from(n + 4);
    assert_eq!(
        table.complete(&forged, 1).unwrap_err().reason(),
        UnmatchedReason::NotPending
    );

    let table = new_table::<u32>(4, IdFormat::String);
    let call2 = table.start().unwrap();
    let text = call2.id().as_str().unwrap().into_owned();
    let (gen, slot) = text[1..].split_once('.').unwrap();
    let forged = Id::string(format!("r{}.{slot}", gen.parse::<u64>().unwrap() + 1));
    assert_eq!(
        table.complete(&forged, 1).unwrap_err().reason(),
        UnmatchedReason::NotPending
    );
    drop((call, call2));
}

#[test]
fn foreign_ids_are_rejected_without_panicking() {
    let numbers = new_table::<u8>(8, IdFormat::Number);
    let _pending: Vec<_> = (0..8).map(|_| numbers.start().unwrap()).collect();
    let foreign = [
        Id::null(),
        Id::from("1"),
        Id::from("r1.0"),
        Id::number("1.0").unwrap(),
        Id::number("1e3").unwrap(),
        Id::number("-8").unwrap(),
        Id::number("18446744073709551616").unwrap(),
        Id::from(1u64 << 53),
        Id::from(u64::MAX),
    ];
    for id in &foreign {
        let err = numbers.complete(id, 1).unwrap_err();
        assert_eq!(err.reason(), UnmatchedReason::Foreign, "{id}");
    }

    let strings = new_table::<u8>(8, IdFormat::String);
    let _pending: Vec<_> = (0..8).map(|_| strings.start().unwrap()).collect();
    for text in [
        "",
        "r",
        "r1",
        "r1.",
        "r.1",
        "r01.1",
        "r1.01",
        "r1.8",
        "r1.1.1",
        "R1.1",
        " r1.1",
        "r1.1 ",
        "r-1.1",
        "r1.-1",
        "r+1.1",
        "r18446744073709551616.1",
        "r1.4294967296",
        "ré.1",
    ] {
        let err = strings.complete(&Id::string(text), 1).unwrap_err();
        assert_eq!(err.reason(), UnmatchedReason::Foreign, "{text:?}");
    }
    assert_eq!(
        strings.complete(&Id::from(1u64), 1).unwrap_err().reason(),
        UnmatchedReason::Foreign
    );
    assert_eq!(strings.stats().late_or_unmatched, 19);
    assert_eq!(strings.pending(), 8);
}

#[test]
fn ids_parsed_from_a_response_complete_the_call() {
    for format in FORMATS {
        let table = new_table::<String>(4, format);
        let call = table.start().unwrap();
        let mut id_json = String::new();
        call.id().write_json(&mut id_json);
        let response = format!(r#"{{"jsonrpc":"2.0","id":{id_json},"result":"ok"}}"#);
        let rpcwire::Parsed::Single(rpcwire::Message::Response(parsed)) =
            rpcwire::parse(response.as_bytes()).unwrap()
        else {
            panic!("a single response");
        };
        table.complete(parsed.id(), "ok".to_string()).unwrap();
        assert_eq!(call.wait().unwrap(), "ok");
    }
}

#[test]
fn escaped_string_ids_match_by_value() {
    let table = new_table::<u8>(4, IdFormat::String);
    let call = table.start().unwrap();
    let text = call.id().as_str().unwrap().into_owned();
    // The same string with its first character written as a JSON escape.
    let escaped = format!(r#"{{"jsonrpc":"2.0","id":"\u0072{}","result":1}}"#, &text[1..]);
    let rpcwire::Parsed::Single(rpcwire::Message::Response(parsed)) =
        rpcwire::parse(escaped.as_bytes()).unwrap()
    else {
        panic!("a single response");
    };
    table.complete(parsed.id(), 1).unwrap();
    assert_eq!(call.wait(), Ok(1));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary ids never panic and never complete anything but the exact live id.
    #[test]
    fn arbitrary_ids_never_match_by_accident(text in "[r0-9.]{0,12}|\\PC{0,12}", n in any::<u64>()) {
        for format in FORMATS {
            let table = new_table::<u8>(16, format);
            let call = table.start().unwrap();
            let live = call.id().clone();
            for id in [Id::string(text.clone()), Id::from(n)] {
                let result = table.complete(&id, 1);
                prop_assert_eq!(result.is_ok(), id == live);
            }
            if let Some(id) = Id::number(text.clone()) {
                prop_assert_eq!(table.complete(&id, 1).is_ok(), id == live);
            }
        }
    }
}

// ---- bounds -------------------------------------------------------------------------------

#[test]
fn a_full_table_fails_fast_and_recovers() {
    let table = new_table::<u32>(3, IdFormat::Number);
    let calls: Vec<_> = (0..3).map(|_| table.start().unwrap()).collect();
    for _ in 0..2 {
        let err = table.start().unwrap_err();
        assert_eq!(err, CallError::TooManyPending { capacity: 3 });
        assert_eq!(err.to_string(), "too many pending requests (capacity 3)");
    }
    assert_eq!(table.stats().rejected_full, 2);
    assert_eq!(table.pending(), 3);
    let mut calls = calls.into_iter();
    let first = calls.next().unwrap();
    table.complete(first.id(), 10).unwrap();
    assert_eq!(table.pending(), 2);
    // Completed but not yet taken: the slot still holds the value.
    assert!(table.start().is_err());
    assert_eq!(first.wait(), Ok(10));
    let again = table.start().unwrap();
    drop((again, calls));
    assert_all_free(&table);
}

#[test]
fn capacity_zero_rejects_every_call() {
    let table = new_table::<()>(0, IdFormat::String);
    assert_eq!(table.capacity(), 0);
    assert_eq!(
        table.start().unwrap_err(),
        CallError::TooManyPending { capacity: 0 }
    );
    assert_eq!(
        table.complete(&Id::string("r1.0"), ()).unwrap_err().reason(),
        UnmatchedReason::Foreign
    );
    assert_eq!(
        (table.expire(much_later()), table.cancel_all(), table.pending()),
        (0, 0, 0)
    );
}

// ---- completion ---------------------------------------------------------------------------

#[test]
fn complete_delivers_once_and_gives_back_duplicates() {
    let table = new_table::<String>(2, IdFormat::Number);
    let call = table.start().unwrap();
    let id = call.id().clone();
    table.complete(&id, "first".into()).unwrap();
    let dup: Unmatched<String> = table.complete(&id, "second".into()).unwrap_err();
    assert_eq!(dup.value(), "second");
    assert_eq!(dup.reason(), UnmatchedReason::NotPending);
    assert_eq!(
        dup.to_string(),
        "no pending call for this response id (late or unknown)"
    );
    assert_eq!(call.try_wait().ok(), Some(Ok("first".to_string())));
    let stats = table.stats();
    assert_eq!(
        (stats.started, stats.completed, stats.late_or_unmatched),
        (1, 1, 1)
    );
    assert_all_free(&table);
}

#[test]
fn unmatched_is_an_error_with_a_message() {
    let table = new_table::<u8>(1, IdFormat::Number);
    let err = table.complete(&Id::null(), 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "response id was not issued by this correlation table"
    );
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(boxed.to_string().contains("not issued"));
}

#[test]
fn never_issued_ids_of_the_right_form_are_not_pending() {
    let table = new_table::<u8>(4, IdFormat::Number);
    assert_eq!(
        table.complete(&Id::from(2u64), 1).unwrap_err().reason(),
        UnmatchedReason::NotPending
    );
    assert_eq!(table.pending(), 0);
}

#[test]
fn try_wait_gives_the_call_back_until_it_ends() {
    let table = new_table::<u8>(1, IdFormat::Number);
    let call = table.start().unwrap();
    let call = call.try_wait().unwrap_err();
    let call = call.try_wait().unwrap_err();
    table.complete(&call.id().clone(), 4).unwrap();
    assert_eq!(call.try_wait().ok(), Some(Ok(4)));
}

// ---- timeouts -----------------------------------------------------------------------------

#[test]
fn a_call_with_a_10ms_timeout_times_out_without_expire() {
    let table = new_table::<u8>(1, IdFormat::Number);
    let call = table.start_with_timeout(Duration::from_millis(10)).unwrap();
    assert_eq!(
        call.wait(),
        Err(CallError::TimedOut {
            after: Duration::from_millis(10)
        })
    );
    assert_eq!(table.stats().timed_out, 1);
    assert_all_free(&table);
}

#[test]
fn expire_times_out_only_calls_past_their_deadline() {
    let table = CorrelationTable::<u8>::new(TableConfig {
        capacity: 4,
        timeout: Duration::from_secs(10),
        id_format: IdFormat::Number,
    });
    let short = table.start_with_timeout(Duration::from_secs(1)).unwrap();
    let default = table.start().unwrap();
    let never = table.start_with_timeout(Duration::MAX).unwrap();
    assert_eq!(never.deadline(), None);
    let now = Instant::now();
    assert_eq!(table.expire(now), 0);
    assert_eq!(table.expire(now + Duration::from_secs(5)), 1);
    assert_eq!(table.pending(), 2);
    let short_id = short.id().clone();
    assert_eq!(
        short.wait(),
        Err(CallError::TimedOut {
            after: Duration::from_secs(1)
        })
    );
    // The late response is dropped and counted.
    assert_eq!(
        table.complete(&short_id, 1).unwrap_err().reason(),
        UnmatchedReason::NotPending
    );
    assert_eq!(table.expire(now + Duration::from_secs(60)), 1);
    let err = default.wait().unwrap_err();
    assert_eq!(
        err,
        CallError::TimedOut {
            after: Duration::from_secs(10)
        }
    );
    assert_eq!(err.to_string(), "request timed out after 10s");
    assert_eq!(
        table.expire(now + Duration::from_secs(1 << 40)),
        0,
        "a call without deadline never expires"
    );
    drop(never);
    let stats = table.stats();
    assert_eq!(
        (stats.timed_out, stats.dropped, stats.late_or_unmatched),
        (2, 1, 1)
    );
    assert_balanced(stats);
    assert_all_free(&table);
}

#[test]
fn expire_with_an_instant_before_the_table_existed_does_nothing() {
    let before = Instant::now();
    let table = new_table::<u8>(2, IdFormat::Number);
    let _call = table.start().unwrap();
    assert_eq!(table.expire(before), 0);
    assert_eq!(table.pending(), 1);
}

#[test]
fn wait_timeout_gives_the_call_back_and_the_deadline_still_applies() {
    let table = new_table::<u8>(1, IdFormat::Number);
    let call = table.start_with_timeout(Duration::from_millis(20)).unwrap();
    let call = call.wait_timeout(Duration::from_millis(1)).unwrap_err();
    assert_eq!(table.pending(), 1);
    // A longer wait ends at the call's own deadline.
    assert_eq!(
        call.wait_timeout(Duration::from_secs(60)).ok(),
        Some(Err(CallError::TimedOut {
            after: Duration::from_millis(20)
        }))
    );
    let call = table.start().unwrap();
    let call = call.wait_timeout(Duration::ZERO).unwrap_err();
    table.complete(&call.id().clone(), 3).unwrap();
    assert_eq!(call.wait_timeout(Duration::ZERO).ok(), Some(Ok(3)));
}

#[test]
fn a_blocked_waiter_is_woken_by_complete_on_another_thread() {
    let table = new_table::<u64>(1, IdFormat::String);
    let call = table.start().unwrap();
    let (tx, rx) = mpsc::channel();
    let responder = {
        let table = table.clone();
        thread::spawn(move || {
            let id: Id<'static> = rx.recv().unwrap();
            thread::sleep(Duration::from_millis(5));
            table.complete(&id, 99).unwrap();
        })
    };
    tx.send(call.id().clone()).unwrap();
    assert_eq!(call.wait(), Ok(99));
    responder.join().unwrap();
}

#[test]
fn a_waiter_that_moved_threads_is_still_woken() {
    let table = new_table::<u64>(1, IdFormat::Number);
    // Registers this thread as the waiter, then gives the call back.
    let call = table
        .start()
        .unwrap()
        .wait_timeout(Duration::from_millis(1))
        .unwrap_err();
    let id = call.id().clone();
    let waiter = thread::spawn(move || call.wait());
    thread::sleep(Duration::from_millis(5));
    table.complete(&id, 5).unwrap();
    assert_eq!(waiter.join().unwrap(), Ok(5));
}

// ---- cancel_all ---------------------------------------------------------------------------

#[test]
fn cancel_all_ends_every_call_and_closes_the_table() {
    let table = new_table::<u8>(4, IdFormat::Number);
    let a = table.start().unwrap();
    let b = table.start().unwrap();
    let c = table.start().unwrap();
    table.complete(c.id(), 3).unwrap();
    let waiter = thread::spawn(move || a.wait());
    assert!(!table.is_closed());
    assert_eq!(table.cancel_all(), 2);
    assert!(table.is_closed());
    assert_eq!(waiter.join().unwrap(), Err(CallError::ConnectionClosed));
    let b_id = b.id().clone();
    assert_eq!(b.wait(), Err(CallError::ConnectionClosed));
    assert_eq!(
        c.wait(),
        Ok(3),
        "a call completed before the close keeps its value"
    );
    assert_eq!(table.start().unwrap_err(), CallError::ConnectionClosed);
    assert_eq!(CallError::ConnectionClosed.to_string(), "connection closed");
    assert_eq!(
        table.complete(&b_id, 1).unwrap_err().reason(),
        UnmatchedReason::NotPending
    );
    assert_eq!(table.cancel_all(), 0);
    let stats = table.stats();
    assert_eq!(
        (stats.cancelled, stats.rejected_closed, stats.completed),
        (2, 1, 1)
    );
    assert_balanced(stats);
    assert_eq!(table.pending(), 0);
}

// ---- drop ---------------------------------------------------------------------------------

#[test]
fn dropping_a_call_frees_its_slot_and_its_response_is_late() {
    let table = new_table::<String>(1, IdFormat::Number);
    let call = table.start().unwrap();
    let id = call.id().clone();
    drop(call);
    assert_eq!(table.pending(), 0);
    let again = table.start().unwrap();
    assert_eq!(
        table.complete(&id, "late".into()).unwrap_err().into_inner(),
        "late"
    );
    drop(again);
    let stats = table.stats();
    assert_eq!((stats.dropped, stats.late_or_unmatched), (2, 1));
    assert_balanced(stats);
}

#[test]
fn dropping_a_completed_call_frees_its_slot_and_its_value() {
    let table = new_table::<std::sync::Arc<()>>(1, IdFormat::Number);
    let value = std::sync::Arc::new(());
    let call = table.start().unwrap();
    table.complete(call.id(), std::sync::Arc::clone(&value)).unwrap();
    assert_eq!(std::sync::Arc::strong_count(&value), 2);
    drop(call);
    assert_eq!(
        std::sync::Arc::strong_count(&value),
        1,
        "the undelivered value was dropped"
    );
    assert_all_free(&table);
    let timed_out = table.start().unwrap();
    table.expire(much_later());
    drop(timed_out);
    assert_all_free(&table);
}

// ---- futures ------------------------------------------------------------------------------

#[test]
fn future_under_block_on_with_a_completer_thread() {
    let table = new_table::<u32>(8, IdFormat::Number);
    let call = table.start().unwrap();
    let id = call.id().clone();
    let completer = {
        let table = table.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(5));
            table.complete(&id, 11).unwrap();
        })
    };
    assert_eq!(futures::executor::block_on(call), Ok(11));
    completer.join().unwrap();
}

#[test]
fn future_times_out_when_expire_runs_on_another_thread() {
    let table = new_table::<u32>(8, IdFormat::Number);
    let call = table.start().unwrap();
    let expirer = {
        let table = table.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(5));
            table.expire(much_later())
        })
    };
    assert_eq!(
        futures::executor::block_on(call),
        Err(CallError::TimedOut {
            after: Duration::from_secs(30)
        })
    );
    assert_eq!(expirer.join().unwrap(), 1);
}

#[test]
fn future_polled_after_its_deadline_times_out_by_itself() {
    let table = new_table::<u32>(1, IdFormat::Number);
    let call = table.start_with_timeout(Duration::ZERO).unwrap();
    assert_eq!(
        futures::executor::block_on(call),
        Err(CallError::TimedOut {
            after: Duration::ZERO
        })
    );
    assert_all_free(&table);
}

#[test]
fn a_finished_future_stays_pending_when_polled_again() {
    use std::future::Future;
    use std::task::{Context, Poll};
    let table = new_table::<u32>(1, IdFormat::Number);
    let mut call = table.start().unwrap();
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    assert_eq!(std::pin::Pin::new(&mut call).poll(&mut cx), Poll::Pending);
    assert_eq!(
        std::pin::Pin::new(&mut call).poll(&mut cx),
        Poll::Pending,
        "same waker kept"
    );
    table.complete(&call.id().clone(), 1).unwrap();
    assert_eq!(std::pin::Pin::new(&mut call).poll(&mut cx), Poll::Ready(Ok(1)));
    assert_eq!(std::pin::Pin::new(&mut call).poll(&mut cx), Poll::Pending);
    // A finished call cannot be waited on again; it does not block.
    assert!(format!("{call:?}").contains("finished: true"));
    let (tx, rx) = mpsc::channel();
    let pending_after: PendingCall<u32> = call;
    thread::spawn(move || tx.send(pending_after.wait()).unwrap());
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)).unwrap(),
        Err(CallError::ConnectionClosed)
    );
    assert_all_free(&table);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn future_under_tokio_woken_by_a_task_and_a_thread() {
    let table = new_table::<u32>(16, IdFormat::String);
    let a = table.start().unwrap();
    let b = table.start().unwrap();
    let (a_id, b_id) = (a.id().clone(), b.id().clone());
    let t = table.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(2)).await;
        t.complete(&a_id, 1).unwrap();
    });
    let t = table.clone();
    let thread = thread::spawn(move || {
        thread::sleep(Duration::from_millis(2));
        t.complete(&b_id, 2).unwrap();
    });
    let (a, b) = tokio::join!(tokio::spawn(a), b);
    assert_eq!((a.unwrap(), b), (Ok(1), Ok(2)));
    thread.join().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn tokio_timer_task_drives_expire() {
    let table = new_table::<u32>(4, IdFormat::Number);
    let ticker = {
        let table = table.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(2));
            loop {
                tick.tick().await;
                table.expire(Instant::now());
            }
        })
    };
    let call = table.start_with_timeout(Duration::from_millis(10)).unwrap();
    assert_eq!(
        call.await,
        Err(CallError::TimedOut {
            after: Duration::from_millis(10)
        })
    );
    ticker.abort();
    assert!(table.stats().timed_out == 1);
}

#[test]
fn types_are_send_sync_and_debuggable() {
    fn send_sync<T: Send + Sync>() {}
    fn send_static_unpin<T: Send + 'static + Unpin>() {}
    send_sync::<CorrelationTable<String>>();
    send_static_unpin::<PendingCall<String>>();
    let table = new_table::<u8>(2, IdFormat::Number);
    let call = table.start().unwrap();
    assert!(format!("{table:?}").contains("capacity: 2"));
    assert!(format!("{call:?}").contains("PendingCall"));
    assert_eq!(TableConfig::default().capacity, 1024);
    assert_eq!(IdFormat::default(), IdFormat::Number);
}

// ---- concurrency --------------------------------------------------------------------------

/// Callers start and wait on calls, responders complete (some of) them, an expirer sweeps,
/// all at once; every value reaches the call it was sent for.
#[test]
fn stress_start_complete_expire_from_many_threads() {
    const CALLERS: usize = 4;
    const CALLS_PER_CALLER: usize = if cfg!(debug_assertions) { 2_000 } else { 20_000 };
    for format in FORMATS {
        let table = new_table::<String>(32, format);
        let (tx, rx) = mpsc::channel::<Id<'static>>();
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        let responders: Vec<_> = (0..2)
            .map(|_| {
                let (table, rx) = (table.clone(), rx.clone());
                thread::spawn(move || {
                    let mut unmatched = 0u64;
                    loop {
                        let Ok(id) = rx.lock().unwrap().recv() else { break };
                        // Each id is completed twice: the second must always be rejected.
                        if table.complete(&id, id.to_string()).is_err() {
                            unmatched += 1;
                        }
                        assert!(table.complete(&id, String::new()).is_err());
                        unmatched += 1;
                    }
                    unmatched
                })
            })
            .collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let expirer = {
            let (table, stop) = (table.clone(), stop.clone());
            thread::spawn(move || {
                let mut expired = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    expired += table.expire(Instant::now());
                    thread::yield_now();
                }
                expired
            })
        };
        let callers: Vec<_> = (0..CALLERS)
            .map(|c| {
                let (table, tx) = (table.clone(), tx.clone());
                thread::spawn(move || {
                    let mut ok = 0u64;
                    for i in 0..CALLS_PER_CALLER {
                        let timeout = if i % 7 == 0 {
                            Duration::ZERO
                        } else {
                            Duration::from_secs(30)
                        };
                        let call = loop {
                            match table.start_with_timeout(timeout) {
                                Ok(call) => break call,
                                Err(CallError::TooManyPending { .. }) => thread::yield_now(),
                                Err(e) => panic!("{e}"),
                            }
                        };
                        let expected = call.id().to_string();
                        if (i + c) % 11 == 0 {
                            drop(call); // its response, if any, is late
                            continue;
                        }
                        tx.send(call.id().clone()).unwrap();
                        match call.wait() {
                            Ok(value) => {
                                assert_eq!(value, expected, "a value reached the wrong call");
                                ok += 1;
                            }
                            Err(e @ CallError::TimedOut { .. }) => {
                                assert_eq!(i % 7, 0, "{e} {expected} {:?}", Instant::now())
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                    ok
                })
            })
            .collect();
        drop(tx);
        let ok: u64 = callers.into_iter().map(|h| h.join().unwrap()).sum();
        let unmatched: u64 = responders.into_iter().map(|h| h.join().unwrap()).sum();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let expired = expirer.join().unwrap();
        let stats = table.stats();
        assert_eq!(stats.started, (CALLERS * CALLS_PER_CALLER) as u64);
        assert_eq!(stats.completed, ok);
        assert_eq!(stats.late_or_unmatched, unmatched);
        assert!(stats.timed_out >= expired as u64);
        assert_balanced(stats);
        assert_all_free(&table);
    }
}

// ---- soak ---------------------------------------------------------------------------------

/// xorshift64*: a fast, deterministic generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Debug, PartialEq)]
enum Expect {
    Waiting,
    Value(u64),
    TimedOut,
}

/// One million calls per id format (about 2.5 s each in a debug build), with random timeouts,
/// completions, duplicate and late responses, drops and expiry sweeps, each checked against a
/// model of what must happen.
#[test]
fn soak_random_calls_against_a_model() {
    let total_calls: u64 = 1_000_000;
    for (format, seed) in [
        (IdFormat::Number, 0x9e37_79b9_7f4a_7c15u64),
        (IdFormat::String, 0xdead_beef),
    ] {
        let capacity = 64;
        let table = new_table::<u64>(capacity, format);
        let mut rng = Rng(seed);
        let base = Instant::now();
        let mut clock = Duration::ZERO; // the model's time, ahead of the real clock
        let mut live: Vec<(PendingCall<u64>, Expect)> = Vec::new();
        let mut ended_ids: Vec<Id<'static>> = Vec::new();
        let (mut started, mut completed, mut timed_out, mut dropped, mut unmatched) = (0u64, 0, 0, 0, 0);
        while started < total_calls || !live.is_empty() {
            match rng.below(10) {
                // Start a call with a random timeout (some far beyond any sweep).
                0..=3 if started < total_calls => {
                    match table.start_with_timeout(Duration::from_secs([1, 5, 60, 1 << 30][rng.below(4)])) {
                        Ok(call) => {
                            started += 1;
                            live.push((call, Expect::Waiting));
                        }
                        Err(e) => {
                            assert_eq!(live.len(), capacity, "{e}");
                            assert_eq!(e, CallError::TooManyPending { capacity });
                        }
                    }
                }
                // Complete a random live call (perhaps one that already ended: then rejected).
                4 | 5 if !live.is_empty() => {
                    let i = rng.below(live.len());
                    let value = rng.next();
                    let result = table.complete(live[i].0.id(), value);
                    if live[i].1 == Expect::Waiting {
                        result.unwrap();
                        live[i].1 = Expect::Value(value);
                        completed += 1;
                    } else {
                        assert_eq!(result.unwrap_err().into_inner(), value);
                        unmatched += 1;
                    }
                }
                // Take the outcome of a random call that has ended, or drop a random call.
                6 | 7 if !live.is_empty() => {
                    let i = rng.below(live.len());
                    let (call, expect) = live.swap_remove(i);
                    ended_ids.push(call.id().clone());
                    match expect {
                        Expect::Waiting => {
                            let call = call.try_wait().expect_err("nothing delivered yet");
                            drop(call);
                            dropped += 1;
                        }
                        Expect::Value(v) => assert_eq!(call.try_wait().ok(), Some(Ok(v))),
                        Expect::TimedOut => {
                            assert!(matches!(call.try_wait(), Ok(Err(CallError::TimedOut { .. }))))
                        }
                    }
                }
                // A late response for an ended call.
                8 if !ended_ids.is_empty() => {
                    let id = &ended_ids[rng.below(ended_ids.len())];
                    assert_eq!(
                        table.complete(id, 0).unwrap_err().reason(),
                        UnmatchedReason::NotPending
                    );
                    unmatched += 1;
                }
                // Let time pass and sweep.
                _ => {
                    clock += Duration::from_secs(rng.below(3) as u64);
                    let now = base + clock;
                    let mut due = 0;
                    for (call, expect) in &mut live {
                        if *expect == Expect::Waiting && call.deadline().is_some_and(|d| d <= now) {
                            *expect = Expect::TimedOut;
                            due += 1;
                        }
                    }
                    assert_eq!(table.expire(now), due);
                    timed_out += due as u64;
                }
            }
            if ended_ids.len() > 1024 {
                ended_ids.drain(..512);
            }
        }
        let stats = table.stats();
        assert_eq!(
            stats,
            TableStats {
                started,
                completed,
                timed_out,
                cancelled: 0,
                dropped,
                late_or_unmatched: unmatched,
                rejected_full: stats.rejected_full,
                rejected_closed: 0,
            }
        );
        assert_eq!(started, total_calls);
        assert_balanced(stats);
        assert_all_free(&table);
    }
}
