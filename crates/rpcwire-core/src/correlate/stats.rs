//! Counters of what happened to the table's calls.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

/// A snapshot of a table's counters, from [`CorrelationTable::stats`](super::CorrelationTable::stats).
///
/// Every started call ends exactly one way, so once no call is pending
/// `started == completed + timed_out + cancelled + dropped` (while calls are pending, the
/// difference is [`pending`](super::CorrelationTable::pending)). Taken while other threads work
/// on the table, the fields are read one by one and need not add up.
///
/// ```
/// use rpcwire_core::correlate::{TableConfig, CorrelationTable};
/// let table = CorrelationTable::<u8>::new(TableConfig::default());
/// let call = table.start()?;
/// table.complete(call.id(), 1).unwrap();
/// assert_eq!(call.wait(), Ok(1));
/// let stats = table.stats();
/// assert_eq!((stats.started, stats.completed), (1, 1));
/// # Ok::<(), rpcwire_core::correlate::CallError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableStats {
    /// Calls started: every successful [`start`](super::CorrelationTable::start), plus the rare
    /// call that was started at the very moment `cancel_all` closed the table (its `start`
    /// fails with `ConnectionClosed`, and it is counted as started and cancelled).
    pub started: u64,
    /// Calls that received their response.
    pub completed: u64,
    /// Calls that reached their deadline.
    pub timed_out: u64,
    /// Calls ended by [`cancel_all`](super::CorrelationTable::cancel_all).
    pub cancelled: u64,
    /// Calls whose [`PendingCall`](super::PendingCall) was dropped while still waiting.
    pub dropped: u64,
    /// Responses that matched no waiting call (late, duplicate, forged or foreign ids).
    pub late_or_unmatched: u64,
    /// Calls refused because every slot was taken.
    pub rejected_full: u64,
    /// Calls refused because the table was closed by `cancel_all`.
    pub rejected_closed: u64,
}

/// The live counters, each on its own cache line (they are bumped by different threads).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) started: CachePadded<AtomicU64>,
    pub(crate) completed: CachePadded<AtomicU64>,
    pub(crate) timed_out: CachePadded<AtomicU64>,
    pub(crate) cancelled: CachePadded<AtomicU64>,
    pub(crate) dropped: CachePadded<AtomicU64>,
    pub(crate) late_or_unmatched: CachePadded<AtomicU64>,
    pub(crate) rejected_full: CachePadded<AtomicU64>,
    pub(crate) rejected_closed: CachePadded<AtomicU64>,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> TableStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TableStats {
            started: get(&self.started),
            completed: get(&self.completed),
            timed_out: get(&self.timed_out),
            cancelled: get(&self.cancelled),
            dropped: get(&self.dropped),
            late_or_unmatched: get(&self.late_or_unmatched),
            rejected_full: get(&self.rejected_full),
            rejected_closed: get(&self.rejected_closed),
        }
    }
}
