//! `ProtocolVersion`: the MCP revisions rpcwire speaks, and the choice of one in
//! `initialize`.

use std::fmt;
use std::str::FromStr;

/// An MCP protocol revision (the specification's dated versions).
///
/// ```
/// use rpcwire::mcp::ProtocolVersion;
/// let version: ProtocolVersion = "2025-06-18".parse().unwrap();
/// assert_eq!(version, ProtocolVersion::V2025_06_18);
/// assert_eq!(version.to_string(), "2025-06-18");
/// assert!(ProtocolVersion::V2025_03_26 < ProtocolVersion::V2025_06_18);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision (stdio, HTTP with SSE).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP; JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: batches removed; elicitation; the `MCP-Protocol-Version` header.
    V2025_06_18,
    /// 2025-11-25: tasks; resumable streams with a priming event.
    V2025_11_25,
    /// 2026-07-28: stateless — no `initialize`, no sessions; `server/discover` instead.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    ///
    /// ```
    /// let all = rpcwire::mcp::ProtocolVersion::ALL;
    /// assert!(all.windows(2).all(|pair| pair[0] < pair[1]));
    /// ```
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revision's date, as it is written on the wire.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::ProtocolVersion::V2026_07_28.as_str(), "2026-07-28");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether the revision is the stateless one: served without `initialize` or sessions,
    /// found with `server/discover`.
    ///
    /// ```
    /// use rpcwire::mcp::ProtocolVersion;
    /// assert!(ProtocolVersion::V2026_07_28.is_stateless());
    /// assert!(!ProtocolVersion::V2025_11_25.is_stateless());
    /// ```
    pub fn is_stateless(self) -> bool {
        self == ProtocolVersion::V2026_07_28
    }

    /// Whether JSON-RPC batches are allowed: in 2025-03-26 only (added there, removed in
    /// 2025-06-18).
    ///
    /// ```
    /// use rpcwire::mcp::ProtocolVersion;
    /// assert!(ProtocolVersion::V2025_03_26.allows_batches());
    /// assert!(!ProtocolVersion::V2025_06_18.allows_batches());
    /// ```
    pub fn allows_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// The revision an `initialize` asking for `requested` is answered with, among
    /// `enabled`: the one asked for when it is enabled, else the newest enabled (what the
    /// specification says a server should answer, "not an error"). The stateless revision
    /// is never agreed on this way. `None` when no revision with `initialize` is enabled.
    ///
    /// ```
    /// use rpcwire::mcp::ProtocolVersion;
    /// let enabled = [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18];
    /// assert_eq!(ProtocolVersion::negotiate("2025-03-26", &enabled), Some(ProtocolVersion::V2025_03_26));
    /// assert_eq!(ProtocolVersion::negotiate("2025-11-25", &enabled), Some(ProtocolVersion::V2025_06_18));
    /// assert_eq!(ProtocolVersion::negotiate("2025-03-26", &[ProtocolVersion::V2026_07_28]), None);
    /// ```
    pub fn negotiate(requested: &str, enabled: &[ProtocolVersion]) -> Option<ProtocolVersion> {
        let with_initialize = enabled.iter().copied().filter(|version| !version.is_stateless());
        match requested.parse::<ProtocolVersion>() {
            Ok(asked) if !asked.is_stateless() && enabled.contains(&asked) => Some(asked),
            _ => with_initialize.max(),
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A protocol version this crate does not know.
///
/// ```
/// let error = "2023-01-01".parse::<rpcwire::mcp::ProtocolVersion>().unwrap_err();
/// assert_eq!(error.to_string(), "unknown MCP protocol version \"2023-01-01\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVersion(String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown MCP protocol version {:?}", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(text: &str) -> Result<ProtocolVersion, UnknownVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|version| version.as_str() == text)
            .ok_or_else(|| UnknownVersion(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_revision_reads_back_from_its_date() {
        for version in ProtocolVersion::ALL {
            assert_eq!(version.as_str().parse::<ProtocolVersion>(), Ok(version));
            assert_eq!(version.to_string(), version.as_str());
        }
        for text in ["", "2025-11-25 ", "2024-10-07", "latest"] {
            assert!(text.parse::<ProtocolVersion>().is_err(), "{text:?}");
        }
    }

    #[test]
    fn initialize_gets_the_revision_asked_for_or_the_newest_enabled() {
        let all = ProtocolVersion::ALL;
        for version in all.into_iter().filter(|version| !version.is_stateless()) {
            assert_eq!(ProtocolVersion::negotiate(version.as_str(), &all), Some(version));
        }
        // Unknown, stateless, or not enabled: the newest revision with `initialize`.
        for asked in ["2099-01-01", "2026-07-28", "garbage"] {
            assert_eq!(
                ProtocolVersion::negotiate(asked, &all),
                Some(ProtocolVersion::V2025_11_25),
                "{asked}"
            );
        }
        let old = [ProtocolVersion::V2024_11_05];
        assert_eq!(
            ProtocolVersion::negotiate("2025-06-18", &old),
            Some(ProtocolVersion::V2024_11_05)
        );
        assert_eq!(ProtocolVersion::negotiate("2025-06-18", &[]), None);
    }

    #[test]
    fn only_2025_03_26_allows_batches_and_only_2026_07_28_is_stateless() {
        let batches: Vec<_> = ProtocolVersion::ALL
            .into_iter()
            .filter(|v| v.allows_batches())
            .collect();
        assert_eq!(batches, [ProtocolVersion::V2025_03_26]);
        let stateless: Vec<_> = ProtocolVersion::ALL
            .into_iter()
            .filter(|v| v.is_stateless())
            .collect();
        assert_eq!(stateless, [ProtocolVersion::V2026_07_28]);
    }
}
