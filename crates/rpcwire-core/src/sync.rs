//! Small synchronisation helpers shared by the buffer pool, the correlation table, the peer,
//! the dispatch of batches and the proxy: a statistics counter bump, locks that ignore
//! poisoning, and futures joined in order. A leaf module.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::task::Poll;

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

/// Runs `futures` at the same time; their outputs in the order of `futures`.
pub async fn join_in_order<T>(mut futures: Vec<Pin<Box<dyn Future<Output = T> + Send + '_>>>) -> Vec<T> {
    let mut outputs: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
