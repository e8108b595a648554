//! Lock-free correlation table: matches incoming responses to the outgoing calls waiting for
//! them.
//!
//! A [`CorrelationTable`] has a fixed number of slots (one per pending call, configured by
//! [`TableConfig::capacity`]). [`start`](CorrelationTable::start) takes a free slot and returns a
//! [`PendingCall`] whose [`id`](PendingCall::id) goes into the request; when the response
//! arrives, [`complete`](CorrelationTable::complete) with its id hands the value to the
//! waiting caller, who gets it by awaiting the `PendingCall` (any executor) or by blocking in
//! [`wait`](PendingCall::wait). [`expire`](CorrelationTable::expire), called periodically by
//! whoever drives timers, times out calls past their deadline;
//! [`cancel_all`](CorrelationTable::cancel_all) ends every call when the connection closes.
//!
//! ```
//! use rpcwire_core::correlate::{CallError, TableConfig, CorrelationTable};
//! use rpcwire_core::Id;
//!
//! let table = CorrelationTable::<String>::new(TableConfig { capacity: 2, ..TableConfig::default() });
//! let call = table.start()?;
//! let wire_id: Id<'static> = call.id().clone(); // written into the outgoing request
//!
//! // ... later, the reader side parses a response and completes the call by its id:
//! table.complete(&wire_id, "result".to_string()).unwrap();
//! assert_eq!(call.wait()?, "result");
//!
//! // A second response with the same id finds no call and gets its value back.
//! assert!(table.complete(&wire_id, "again".to_string()).is_err());
//! assert_eq!(table.stats().late_or_unmatched, 1);
//! # Ok::<(), CallError>(())
//! ```
//!
//! # Ids
//!
//! An id encodes the slot index and the slot's *generation*, bumped each time the slot is
//! reused: `generation << slot_bits | slot` ([`IdFormat::Number`], always below 2^53) or
//! `"r<generation>.<slot>"` ([`IdFormat::String`]). Lookup is O(1), two pending calls never
//! share an id, and a response for a slot that has been reused since carries an old
//! generation and is rejected (counted in [`TableStats::late_or_unmatched`]). Any id that does not
//! decode to a live slot and generation — another kind, another format, out of range, with
//! leading zeros — is rejected the same way, never a panic. (A generation wraps after
//! 2^(53 − slot_bits) reuses of one slot, at least 2^33: a response would have to arrive that
//! many reuses late to be mistaken for a live call.)
//!
//! # Design
//!
//! Each slot has one `AtomicU64` state word holding its generation and state (`FREE`,
//! `WAITING`, `COMPLETED`, `TIMED_OUT`, `CANCELLED`). A call ends by a compare-and-swap out of
//! `WAITING` at its generation, so exactly one of `complete`, `expire` (or the caller timing
//! out by itself), `cancel_all` and dropping the `PendingCall` wins; the others fail their CAS
//! and count as unmatched (or do nothing). The winner stores the outcome in the slot's cell
//! and wakes the caller. The slot goes back to the free list once both the winner and the
//! caller are done with it (two "done" bits in the state word; whoever sets the second one
//! frees it). Free slots are kept on a tagged Treiber stack in one `AtomicU64` (LIFO, so the
//! slot reused is the one that is warm in cache).
//!
//! What is and isn't lock-free, honestly:
//!
//! * `start`, `complete`, `expire`, `cancel_all` and dropping a call never wait for one
//!   another and take no table-wide lock: the free list and the state words are plain
//!   atomics (CAS loops that fail only when another thread made progress).
//! * The hand-off of the value and the waker goes through a per-slot
//!   `Mutex<(outcome, waiter)>`. Only two parties ever lock it — the call's owner and the
//!   single winner of the CAS — each for a few instructions, so it is uncontended except when
//!   both arrive at the very same moment. It keeps the module free of `unsafe` (the crate
//!   allows `unsafe` only in the parser's scanning kernels).
//! * [`expire`](CorrelationTable::expire), [`cancel_all`](CorrelationTable::cancel_all) and
//!   [`pending`](CorrelationTable::pending) scan all slots (O(capacity)); they are meant for
//!   a timer tick, connection close and monitoring, not for every message.
//!
//! # Timeouts and slot reuse
//!
//! A call that times out (or is cancelled) gets its error and wakes its caller; the slot is
//! reused once that caller has taken the error or dropped the `PendingCall` — immediately for
//! a caller that is awaiting or waiting. A `PendingCall` that is kept but never polled again
//! keeps its slot until it is dropped, as it keeps its completed value.
//!
//! # Closing
//!
//! [`cancel_all`](CorrelationTable::cancel_all) is final: it ends every pending call with
//! [`CallError::ConnectionClosed`] and every later `start` fails with the same error. A table
//! belongs to one connection; make a new table for a new connection.
//!
//! # Model checking
//!
//! The atomics, the cell lock and parking go through a small `sync` shim that becomes loom's
//! under `--cfg rpcwire_loom`; `tests/correlate_loom.rs` checks the races (see `.ci/loom`).

mod config;
mod error;
mod free_list;
mod id_codec;
mod pending;
mod slot;
mod stats;
mod sync;
mod table;

use std::fmt;
use std::time::{Duration, Instant};

use crate::message::Id;

pub use config::{IdFormat, TableConfig};
pub use error::{CallError, Unmatched, UnmatchedReason};
pub use pending::PendingCall;
pub use stats::TableStats;

use sync::Arc;
use table::Shared;

/// Matches responses to the calls waiting for them; see the [module docs](self) for the design.
///
/// `T` is whatever the reader side delivers for a response (a parsed frame, a decoded value,
/// a `Result` of one…). Cloning the table is cheap and gives another handle on the same table.
///
/// ```
/// use rpcwire_core::correlate::{CallError, TableConfig, CorrelationTable};
/// let table = CorrelationTable::<u64>::new(TableConfig { capacity: 1, ..TableConfig::default() });
/// let call = table.start()?;
/// assert_eq!(table.start().unwrap_err(), CallError::TooManyPending { capacity: 1 });
/// table.complete(call.id(), 42).unwrap();
/// assert_eq!(call.wait(), Ok(42));
/// assert!(table.start().is_ok()); // the slot is free again
/// # Ok::<(), CallError>(())
/// ```
pub struct CorrelationTable<T> {
    shared: Arc<Shared<T>>,
}

impl<T> CorrelationTable<T> {
    /// The largest capacity a table can have (2^20, about a million pending calls); larger
    /// configured capacities are clamped. Each slot takes one or two cache lines (128 bytes
    /// for a small `T`), allocated up front.
    ///
    /// ```
    /// use rpcwire_core::correlate::CorrelationTable;
    /// assert_eq!(CorrelationTable::<()>::MAX_CAPACITY, 1 << 20);
    /// ```
    pub const MAX_CAPACITY: usize = 1 << 20;

    /// A table with `config.capacity` free slots (at most [`MAX_CAPACITY`](Self::MAX_CAPACITY)).
    /// Allocates every slot up front; nothing grows later.
    ///
    /// ```
    /// use rpcwire_core::correlate::{TableConfig, CorrelationTable};
    /// let table = CorrelationTable::<()>::new(TableConfig { capacity: 16, ..TableConfig::default() });
    /// assert_eq!(table.capacity(), 16);
    /// ```
    pub fn new(config: TableConfig) -> CorrelationTable<T> {
        let capacity = config.capacity.min(Self::MAX_CAPACITY) as u32;
        CorrelationTable {
            shared: Arc::new(Shared::new(&config, capacity)),
        }
    }

    /// Starts a call with the table's configured timeout.
    ///
    /// Fails at once, without blocking, with [`CallError::TooManyPending`] when every slot is
    /// taken, and with [`CallError::ConnectionClosed`] after [`cancel_all`](Self::cancel_all).
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// let call = table.start()?;
    /// assert_eq!(table.pending(), 1);
    /// drop(call);
    /// assert_eq!(table.pending(), 0);
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn start(&self) -> Result<PendingCall<T>, CallError> {
        self.start_with_timeout(self.shared.timeout)
    }

    /// Starts a call that times out after `timeout` instead of the configured timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// let call = table.start_with_timeout(Duration::from_millis(10))?;
    /// assert_eq!(call.wait(), Err(CallError::TimedOut { after: Duration::from_millis(10) }));
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn start_with_timeout(&self, timeout: Duration) -> Result<PendingCall<T>, CallError> {
        let started = self.shared.start(timeout)?;
        Ok(PendingCall::new(Arc::clone(&self.shared), started))
    }

    /// Delivers `value` to the call waiting for `id`.
    ///
    /// Gives the value back in [`Unmatched`] when no call waits for it: an id this table did
    /// not issue, or one whose call already ended (completed, timed out, cancelled, dropped).
    /// Such responses are counted in [`TableStats::late_or_unmatched`].
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<&str>::new(TableConfig::default());
    /// let call = table.start()?;
    /// // The id as it comes back in a parsed response: borrowed from the input buffer.
    /// let text = call.id().to_string();
    /// let parsed = rpcwire_core::Id::number(text.as_str()).unwrap();
    /// assert!(table.complete(&parsed, "ok").is_ok());
    /// assert_eq!(call.wait(), Ok("ok"));
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn complete(&self, id: &Id<'_>, value: T) -> Result<(), Unmatched<T>> {
        self.shared.complete(id, value)
    }

    /// Times out every call whose deadline is at or before `now`; returns how many.
    ///
    /// Call it periodically from the side that drives timers (a tick of a few milliseconds to
    /// a second, depending on the precision wanted). Scans every slot.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// let call = table.start()?;
    /// assert_eq!(table.expire(Instant::now()), 0);
    /// assert_eq!(table.expire(Instant::now() + Duration::from_secs(31)), 1);
    /// assert_eq!(call.wait(), Err(CallError::TimedOut { after: Duration::from_secs(30) }));
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn expire(&self, now: Instant) -> usize {
        self.shared.expire(now)
    }

    /// Ends every pending call with [`CallError::ConnectionClosed`] and closes the table for
    /// good: every later [`start`](Self::start) fails with the same error. Returns how many
    /// calls it ended. Responses still arriving are rejected as unmatched.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// let call = table.start()?;
    /// assert_eq!(table.cancel_all(), 1);
    /// assert_eq!(call.wait(), Err(CallError::ConnectionClosed));
    /// assert_eq!(table.start().unwrap_err(), CallError::ConnectionClosed);
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn cancel_all(&self) -> usize {
        self.shared.cancel_all()
    }

    /// `true` once [`cancel_all`](Self::cancel_all) has run.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// assert!(!table.is_closed());
    /// table.cancel_all();
    /// assert!(table.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// How many calls are waiting for a response right now (scans every slot).
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// let _a = table.start()?;
    /// let _b = table.start()?;
    /// assert_eq!(table.pending(), 2);
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn pending(&self) -> usize {
        self.shared.pending()
    }

    /// The number of slots: the most calls that can be pending at once.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig { capacity: 3, ..TableConfig::default() });
    /// assert_eq!(table.capacity(), 3);
    /// ```
    pub fn capacity(&self) -> usize {
        self.shared.capacity()
    }

    /// A snapshot of the counters.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig { capacity: 0, ..TableConfig::default() });
    /// assert!(table.start().is_err());
    /// assert_eq!(table.stats().rejected_full, 1);
    /// ```
    pub fn stats(&self) -> TableStats {
        self.shared.counters.snapshot()
    }
}

impl<T> Clone for CorrelationTable<T> {
    /// Another handle on the same table.
    fn clone(&self) -> CorrelationTable<T> {
        CorrelationTable {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for CorrelationTable<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CorrelationTable")
            .field("capacity", &self.capacity())
            .field("closed", &self.is_closed())
            .field("stats", &self.stats())
            .finish()
    }
}
