//! MCP authorization (OAuth 2.1, `auth` feature).
//!
//! The client side: an [`Authorizer`] given to [`McpClientBuilder::with_authorizer`](crate::McpClientBuilder::with_authorizer)
//! answers a server's `401` by itself — the protected resource's metadata (RFC 9728), its
//! authorization server's (RFC 8414, OpenID Connect discovery), the client's registration (a
//! client id given, a client metadata document, or dynamic registration, RFC 7591), an
//! authorization code with PKCE S256 (RFC 7636) for the resource (RFC 8707) with its issuer
//! checked (RFC 9207), or client credentials; tokens refreshed, scopes stepped up on `403
//! insufficient_scope`, bound to a key with DPoP (RFC 9449) when asked.
//!
//! The server side: a [`ProtectedResource`] on a Streamable HTTP server or the MCP gateway
//! serves its metadata, verifies each request's bearer token through a [`TokenVerifier`] — a
//! [`JwtVerifier`] (the issuer's JWKS, cached) or an [`IntrospectionVerifier`] (RFC 7662) —
//! checks its audience, and the scopes each method, tool or prompt requires; handlers see the
//! verified [`Claims`] and the request's headers in their [`McpContext`](crate::McpContext).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use rpcwire::mcp::auth::{Authorizer, Browser};
//! let client = rpcwire::mcp::McpClient::builder("my-host", "1.0")
//!     .with_authorizer(Authorizer::new("my-host").with_step(Browser::default()))
//!     .connect_http("https://mcp.example/mcp".parse()?)
//!     .await?;
//! println!("{:?}", client.list_tools().await?);
//! # Ok(()) }
//! ```

mod authorizer;
mod challenge;
mod error;
mod fetch;
mod flow;
mod introspection;
mod jwt;
mod keys;
#[cfg(test)]
mod loopback;
mod metadata;
mod pkce;
mod registration;
mod resource;
mod step;
mod store;
mod token;
mod verify;

pub use authorizer::{Authorizer, IdentityProvider, DEFAULT_REDIRECT_URI};
pub use challenge::Challenge;
pub use error::AuthError;
pub use introspection::{IntrospectionVerifier, DEFAULT_INTROSPECTION_TTL};
pub use jwt::{JwtVerifier, DEFAULT_KEYS_TTL, DEFAULT_LEEWAY};
pub use keys::ClientKey;
pub use metadata::{
    resource_covers, resource_metadata_urls, server_metadata_urls, ResourceMetadata, ServerMetadata,
};
pub(crate) use resource::Denied;
pub use resource::ProtectedResource;
pub use step::{AuthorizationStep, Browser, Headless, StepFuture, DEFAULT_BROWSER_WAIT};
pub use store::{FileStore, Kept, MemoryStore, RegisteredClient, TokenStore, Tokens};
/// The URL type of authorization's documents and endpoints.
pub use url::Url;
pub use verify::{Claims, Refusal, TokenVerifier, VerifyFuture};
