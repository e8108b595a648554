//! MCP (the Model Context Protocol) on rpcwire's JSON-RPC core (`mcp` feature): the protocol
//! revisions and their negotiation, the content model, and [`McpServer`] — tools (typed
//! arguments with schemars schemas, or raw JSON schemas passed through byte for byte),
//! resources and templates, prompts, completion, logging, progress, cancellation, and
//! requests to the client — served over stdio through a [`Peer`](crate::transport::Peer),
//! and over Streamable HTTP (`http` feature). The stateless revision, 2026-07-28, is served
//! beside the handshake ones when enabled: each request carries its revision and the client's
//! capabilities in `_meta`; handlers ask the client through [`InputRequired`] results; clients
//! listen for changes announced through a [`ChangeNotifier`].
//!
//! ```
//! use rpcwire::mcp::ProtocolVersion;
//! // A client asking for a revision this side does not know gets the newest one it does.
//! let agreed = ProtocolVersion::negotiate("2099-01-01", &ProtocolVersion::ALL).unwrap();
//! assert_eq!(agreed, ProtocolVersion::V2025_11_25);
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers below, under the paths the modules here know them by.
use rpcwire_core::{codes, dispatch, frame, message, parse, sync};
#[cfg(feature = "http")]
use rpcwire_core::{correlate, encode, json, middleware, trace};

/// The transports: the core's, and with `http` the HTTP crate's.
mod transport {
    pub(crate) use rpcwire_core::transport::*;
    #[cfg(feature = "http")]
    pub(crate) use rpcwire_http::{http, tls};
}

#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub mod auth;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod gateway;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;

mod calls;
mod changes;
mod child;
mod client;
mod client_builder;
mod completion;
mod content;
mod context;
mod input;
mod logging;
mod methods;
mod param_headers;
mod prompt;
mod registry;
#[cfg(feature = "http")]
mod request_info;
mod resource;
mod server;
mod session;
mod skills;
mod state;
mod stateless;
mod tool;
mod version;

/// The schemars crate the tool schemas are made with (derive `schemars::JsonSchema` on a
/// tool's argument type).
pub use schemars;

pub use changes::{ChangeNotifier, ListChanged};
pub use client::{ConnectError, McpClient, Progress};
pub use client_builder::{elicitation_defaults, McpClientBuilder};
pub use completion::{CompleteArgument, CompleteRequest, Completion};
pub use content::{Annotations, Content, ResourceContents, Role};
pub use context::McpContext;
pub use input::InputRequired;
pub use logging::LogLevel;
pub use prompt::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
pub use registry::{CacheScope, RESOURCE_NOT_FOUND};
pub use resource::{ReadResourceResult, Resource, ResourceTemplate};
pub use server::McpServer;
pub use skills::{
    Skill, SkillError, SkillFile, SkillFiles, MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION,
};
pub use stateless::{HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION};
pub use tool::{CallToolResult, Tool};
pub use version::{ProtocolVersion, UnknownVersion};
