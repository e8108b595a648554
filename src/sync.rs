//! Two small synchronisation helpers shared by the buffer pool, the correlation table and
//! the peer: a statistics counter bump, and a lock that ignores poisoning. A leaf module.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Adds one to a statistics counter. Relaxed: each counter is exact, a snapshot of several
/// taken while they move may mix moments.
#[inline]
pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Locks `mutex`, ignoring poisoning: for data that stays valid whatever panicked while the
/// lock was held.
#[cfg_attr(rpcwire_loom, allow(dead_code))] // loom builds the table only, with its own locks
pub(crate) fn lock_unpoisoned<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
