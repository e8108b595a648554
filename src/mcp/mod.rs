//! MCP (the Model Context Protocol) on rpcwire's JSON-RPC core (`mcp` feature): so far, the
//! protocol revisions and how one is agreed on. The server, the client and Streamable HTTP
//! come next (issue 28).
//!
//! ```
//! use rpcwire::mcp::ProtocolVersion;
//! // A client asking for a revision this side does not know gets the newest one it does.
//! let agreed = ProtocolVersion::negotiate("2099-01-01", &ProtocolVersion::ALL).unwrap();
//! assert_eq!(agreed, ProtocolVersion::V2025_11_25);
//! ```

mod version;

pub use version::{ProtocolVersion, UnknownVersion};
