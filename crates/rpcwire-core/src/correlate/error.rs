//! What a call can end with besides its response, and what `complete` gives back.

use std::fmt;
use std::time::Duration;

/// Why a call ended without a response, or could not start.
///
/// ```
/// use rpcwire_core::correlate::CallError;
/// assert_eq!(
///     CallError::TooManyPending { capacity: 8 }.to_string(),
///     "too many pending requests (capacity 8)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// Every slot of the table is taken by a pending call; the new call was not started.
    #[error("too many pending requests (capacity {capacity})")]
    TooManyPending {
        /// The table's capacity.
        capacity: usize,
    },
    /// No response arrived before the call's deadline.
    #[error("request timed out after {after:?}")]
    TimedOut {
        /// The call's timeout.
        after: Duration,
    },
    /// The connection was closed ([`cancel_all`](super::CorrelationTable::cancel_all)).
    #[error("connection closed")]
    ConnectionClosed,
}

/// Why a response found no call to deliver to.
///
/// ```
/// use rpcwire_core::correlate::{TableConfig, CorrelationTable, UnmatchedReason};
/// let table = CorrelationTable::<u8>::new(TableConfig::default());
/// let err = table.complete(&rpcwire_core::Id::from("nope"), 1).unwrap_err();
/// assert_eq!(err.reason(), UnmatchedReason::Foreign);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnmatchedReason {
    /// The id is not one this table issues: another kind or format, or out of range.
    Foreign,
    /// The id has this table's form but no call waits for it: it was already completed,
    /// timed out, cancelled or dropped (a late response), or was never issued.
    NotPending,
}

/// A response that no pending call was waiting for; holds the value given to
/// [`complete`](super::CorrelationTable::complete) so the caller can log or reuse it.
///
/// ```
/// use rpcwire_core::correlate::{TableConfig, CorrelationTable, UnmatchedReason};
/// let table = CorrelationTable::<String>::new(TableConfig::default());
/// let call = table.start()?;
/// let id = call.id().clone();
/// drop(call);
/// let late = table.complete(&id, "late".to_string()).unwrap_err();
/// assert_eq!(late.reason(), UnmatchedReason::NotPending);
/// assert_eq!(late.into_inner(), "late");
/// # Ok::<(), rpcwire_core::correlate::CallError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmatched<T> {
    value: T,
    reason: UnmatchedReason,
}

impl<T> Unmatched<T> {
    pub(crate) fn new(value: T, reason: UnmatchedReason) -> Unmatched<T> {
        Unmatched { value, reason }
    }

    /// Why the response matched no call.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// assert_eq!(table.complete(&rpcwire_core::Id::from(0u64), ()).unwrap_err().reason(), UnmatchedReason::NotPending);
    /// ```
    pub fn reason(&self) -> UnmatchedReason {
        self.reason
    }

    /// The value that was not delivered.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<u32>::new(TableConfig::default());
    /// assert_eq!(table.complete(&rpcwire_core::Id::null(), 7).unwrap_err().value(), &7);
    /// ```
    pub fn value(&self) -> &T {
        &self.value
    }

    /// Takes the value back.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<u32>::new(TableConfig::default());
    /// assert_eq!(table.complete(&rpcwire_core::Id::null(), 7).unwrap_err().into_inner(), 7);
    /// ```
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> fmt::Display for Unmatched<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            UnmatchedReason::Foreign => f.write_str("response id was not issued by this correlation table"),
            UnmatchedReason::NotPending => {
                f.write_str("no pending call for this response id (late or unknown)")
            }
        }
    }
}

impl<T: fmt::Debug> std::error::Error for Unmatched<T> {}
