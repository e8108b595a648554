//! How a table is sized, how long calls may wait, and which id form it issues.

use std::time::Duration;

/// The form of the ids a table issues.
///
/// ```
/// use rpcwire_core::correlate::{TableConfig, CorrelationTable, IdFormat};
/// let table = CorrelationTable::<()>::new(TableConfig { id_format: IdFormat::String, ..TableConfig::default() });
/// assert_eq!(table.start()?.id().kind(), rpcwire_core::IdKind::String);
/// # Ok::<(), rpcwire_core::correlate::CallError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IdFormat {
    /// JSON integers `generation << slot_bits | slot`, always below 2^53 so that JavaScript
    /// peers keep them exact.
    #[default]
    Number,
    /// JSON strings `"r<generation>.<slot>"`, e.g. `"r12.5"`.
    String,
}

/// The settings of a [`CorrelationTable`](super::CorrelationTable).
///
/// ```
/// use std::time::Duration;
/// use rpcwire_core::correlate::{TableConfig, IdFormat};
/// let config = TableConfig { capacity: 64, timeout: Duration::from_secs(5), ..TableConfig::default() };
/// assert_eq!(config.id_format, IdFormat::Number);
/// assert_eq!(TableConfig::default().timeout, Duration::from_secs(30));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableConfig {
    /// The most calls that may be pending at once (default 1024). A call started when all are
    /// taken fails at once with [`CallError::TooManyPending`](super::CallError::TooManyPending).
    /// Clamped to [`CorrelationTable::MAX_CAPACITY`](super::CorrelationTable::MAX_CAPACITY);
    /// `0` makes a table on which every call is rejected.
    pub capacity: usize,
    /// How long a call started with [`start`](super::CorrelationTable::start) waits for its
    /// response (default 30 s).
    pub timeout: Duration,
    /// The form of the ids the table issues (default [`IdFormat::Number`]).
    pub id_format: IdFormat,
}

impl Default for TableConfig {
    fn default() -> TableConfig {
        TableConfig {
            capacity: 1024,
            timeout: Duration::from_secs(30),
            id_format: IdFormat::Number,
        }
    }
}
