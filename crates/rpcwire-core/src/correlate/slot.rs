//! One slot of the table: the state word that decides every race, the deadline, and the
//! cell through which the single winner hands the outcome to the call's owner.
//!
//! # The state word
//!
//! `generation << 8 | flags`, flags being a 3-bit state and two "done" bits:
//!
//! ```text
//!             start (owner of a popped index)                 complete / expire / cancel:
//!  FREE(g) ─────────────────────────────────► WAITING(g+1) ── CAS, exactly one wins ──► COMPLETED / TIMED_OUT / CANCELLED (g+1)
//!     ▲                                          │                                            │
//!     │        drop of the PendingCall: CAS ─────┘ (then the index goes back on the free list) │
//!     └── the second of RESOLVER_DONE / OWNER_DONE to be set frees the slot ◄──────────────────┘
//! ```
//!
//! A resolver (the winner of the CAS out of `WAITING`) stores the outcome in the cell, takes
//! the registered waiter, then sets `RESOLVER_DONE`; the owner sets `OWNER_DONE` once it has
//! taken the outcome (or dropped the call). Whoever sets the second bit stores `FREE(g)` and
//! pushes the index on the free list, so the cell is never reused while either side may still
//! touch it. A late response carries an old generation (or finds the slot not `WAITING`):
//! its CAS fails and it is counted as unmatched.

use std::task::Waker;
use std::time::Duration;

use super::error::CallError;
use super::sync::{AtomicU64, Mutex, Thread};

/// Not in use: on the free list (or about to be pushed there).
pub(crate) const FREE: u64 = 0;
/// A call waits for its response.
pub(crate) const WAITING: u64 = 1;
/// A response was delivered.
pub(crate) const COMPLETED: u64 = 2;
/// The deadline passed.
pub(crate) const TIMED_OUT: u64 = 3;
/// `cancel_all` ended the call.
pub(crate) const CANCELLED: u64 = 4;
const STATE_MASK: u64 = 0b111;
/// The resolver has stored the outcome and will not touch the cell again.
pub(crate) const RESOLVER_DONE: u64 = 1 << 3;
/// The owner has taken the outcome (or given up on it) and will not touch the cell again.
pub(crate) const OWNER_DONE: u64 = 1 << 4;
const GEN_SHIFT: u32 = 8;

/// The word for `state` at generation `gen`, no done bits.
pub(crate) const fn pack(gen: u64, state: u64) -> u64 {
    gen << GEN_SHIFT | state
}

/// The generation in a state word.
pub(crate) const fn gen_of(word: u64) -> u64 {
    word >> GEN_SHIFT
}

/// The state (without the done bits) in a state word.
pub(crate) const fn state_of(word: u64) -> u64 {
    word & STATE_MASK
}

/// Who to wake when the outcome arrives.
pub(crate) enum Waiter {
    /// An async task polling the call.
    Task(Waker),
    /// A thread blocked in `wait`.
    Thread(Thread),
}

impl Waiter {
    pub(crate) fn wake(self) {
        match self {
            Waiter::Task(waker) => waker.wake(),
            Waiter::Thread(thread) => thread.unpark(),
        }
    }
}

/// The hand-off between the resolver and the owner. Only those two ever lock it, and the
/// resolver only once, so it is uncontended except when both arrive at the same instant.
pub(crate) struct Cell<T> {
    pub(crate) outcome: Option<Result<T, CallError>>,
    pub(crate) waiter: Option<Waiter>,
}

pub(crate) struct Slot<T> {
    pub(crate) word: AtomicU64,
    /// Nanoseconds since the table's epoch after which the call times out (`u64::MAX`: never).
    pub(crate) deadline_ns: AtomicU64,
    /// The call's timeout in nanoseconds, for the `TimedOut` error.
    pub(crate) timeout_ns: AtomicU64,
    pub(crate) cell: Mutex<Cell<T>>,
}

impl<T> Slot<T> {
    pub(crate) fn new() -> Slot<T> {
        Slot {
            word: AtomicU64::new(pack(0, FREE)),
            deadline_ns: AtomicU64::new(u64::MAX),
            timeout_ns: AtomicU64::new(0),
            cell: Mutex::new(Cell {
                outcome: None,
                waiter: None,
            }),
        }
    }
}

/// A duration in whole nanoseconds, saturating at `u64::MAX`.
pub(crate) fn saturating_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(all(test, not(rpcwire_loom)))]
mod tests {
    use super::*;

    #[test]
    fn word_round_trips() {
        let word = pack(12345, CANCELLED) | RESOLVER_DONE;
        assert_eq!((gen_of(word), state_of(word)), (12345, CANCELLED));
        assert_eq!(saturating_nanos(Duration::MAX), u64::MAX);
        assert_eq!(saturating_nanos(Duration::from_micros(3)), 3000);
    }
}
