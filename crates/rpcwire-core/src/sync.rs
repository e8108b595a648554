//! Small synchronisation helpers shared by the buffer pool, the correlation table, the peer
//! and the fleet: a statistics counter bump, and locks that ignore poisoning. A leaf module.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Adds one to a statistics counter. Relaxed: each counter is exact, a snapshot of several
/// taken while they move may mix moments.
#[inline]
pub fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Locks `mutex`, ignoring poisoning: for data that stays valid whatever panicked while the
/// lock was held.
#[cfg_attr(rpcwire_loom, allow(dead_code))] // loom builds the table only, with its own locks
pub fn lock_unpoisoned<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads `lock`, ignoring poisoning (as [`lock_unpoisoned`]).
pub fn read_unpoisoned<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

/// Writes `lock`, ignoring poisoning (as [`lock_unpoisoned`]).
pub fn write_unpoisoned<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}
