//! `LogLevel`: the severities of MCP log messages (syslog's, RFC 5424), in order.

use serde::{Deserialize, Serialize};

/// A log message's severity, least severe first: a client's `logging/setLevel` lets through
/// this level and the ones after it.
///
/// ```
/// use rpcwire::mcp::LogLevel;
/// assert!(LogLevel::Debug < LogLevel::Error);
/// let level: LogLevel = serde_json::from_str(r#""warning""#).unwrap();
/// assert_eq!(level, LogLevel::Warning);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Information.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::LogLevel::ALL.len(), 8);
    /// ```
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];
}
