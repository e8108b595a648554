//! The synchronisation primitives the table uses, swapped for loom's under `cfg(rpcwire_loom)` so the
//! model checker sees every atomic, lock and park of the slot state machine and the free list.
//!
//! The statistics counters deliberately stay `std` atomics in both builds: they take part in
//! no hand-off (relaxed `fetch_add` only), and keeping them out of the model keeps the number
//! of interleavings loom explores small.

#[cfg(rpcwire_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
#[cfg(rpcwire_loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(rpcwire_loom)]
pub(crate) use loom::thread::{current, park, Thread};

#[cfg(not(rpcwire_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
#[cfg(not(rpcwire_loom))]
pub(crate) use std::sync::{Arc, Mutex};
#[cfg(not(rpcwire_loom))]
pub(crate) use std::thread::{current, park, Thread};

pub(crate) use std::sync::atomic::Ordering;

/// Parks the current thread for at most `timeout` (spurious wake-ups allowed).
///
/// loom has no timed park: under `cfg(rpcwire_loom)` this parks until unparked, so the loom models
/// only wait on calls that some other thread resolves.
#[cfg(not(rpcwire_loom))]
pub(crate) fn park_timeout(timeout: std::time::Duration) {
    std::thread::park_timeout(timeout);
}

/// See the `cfg(not(rpcwire_loom))` twin: loom cannot time out a park.
#[cfg(rpcwire_loom)]
pub(crate) fn park_timeout(_timeout: std::time::Duration) {
    loom::thread::park();
}

/// Locks `mutex`, ignoring poisoning: the data behind every lock in this module is a pair of
/// `Option`s that is valid whatever panicked while it was held.
#[cfg(not(rpcwire_loom))]
pub(crate) use crate::sync::lock_unpoisoned as lock;

/// The same for loom's `Mutex` (a type of its own, so the shared helper cannot take it).
#[cfg(rpcwire_loom)]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
