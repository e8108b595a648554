//! The documents authorization starts from: a protected resource's metadata (RFC 9728) and
//! an authorization server's (RFC 8414, or OpenID Connect discovery), and where each is
//! looked for.

use serde::{Deserialize, Serialize};
use url::Url;

/// A protected resource's metadata (RFC 9728 §2): which authorization servers issue its
/// tokens, and the scopes it knows.
///
/// ```
/// let metadata: rpcwire::mcp::auth::ResourceMetadata = serde_json::from_str(
///     r#"{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"]}"#,
/// ).unwrap();
/// assert_eq!(metadata.authorization_servers, ["https://as.example"]);
/// ```
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource identifier (the MCP server's URL, or a prefix of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The issuers of the authorization servers it trusts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The scopes it uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How it takes a bearer token (`header`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// Its name, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// The JWS algorithms it accepts in DPoP proofs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// An authorization server's metadata (RFC 8414 §2, and what OpenID Connect discovery adds
/// that a client of MCP reads).
///
/// ```
/// let metadata: rpcwire::mcp::auth::ServerMetadata = serde_json::from_str(
///     r#"{"issuer":"https://as.example","authorization_endpoint":"https://as.example/authorize",
///         "token_endpoint":"https://as.example/token","code_challenge_methods_supported":["S256"]}"#,
/// ).unwrap();
/// assert!(metadata.supports_pkce_s256());
/// ```
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ServerMetadata {
    /// Its issuer identifier: the URL the metadata was found from.
    pub issuer: String,
    /// Where a user agent is sent to authorize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where tokens are asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Where clients register themselves (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Its signing keys (for resource servers that verify its JWTs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Token introspection (RFC 7662).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint: Option<String>,
    /// The scopes it knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `code`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// `authorization_code`, `refresh_token`, `client_credentials`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// `client_secret_basic`, `client_secret_post`, `none`, `private_key_jwt`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// The JWS algorithms it takes for client assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods (`S256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether a client may name itself by the URL of its metadata document (CIMD).
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// The JWS algorithms it takes in DPoP proofs (RFC 9449).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// Whether it says it supports PKCE with S256 (a client of MCP must not go on otherwise;
    /// OpenID providers that do not say are taken to, as the specification allows).
    pub fn supports_pkce_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|methods| methods.iter().any(|m| m == "S256"))
    }

    /// Whether it lists `value` in `list` (absent: `default`).
    pub(crate) fn lists(list: &Option<Vec<String>>, value: &str, default: bool) -> bool {
        list.as_ref()
            .map_or(default, |all| all.iter().any(|v| v == value))
    }
}

/// Where a resource's metadata is looked for, in order (RFC 9728 §3.1, MCP's authorization
/// spec): the URL its challenge named, alone; else the well-known URL with the resource's
/// path, then the one at the root.
///
/// ```
/// let server: url::Url = "https://mcp.example/tenant/mcp".parse().unwrap();
/// let urls = rpcwire::mcp::auth::resource_metadata_urls(&server, None);
/// let urls: Vec<&str> = urls.iter().map(|u| u.as_str()).collect();
/// assert_eq!(urls, [
///     "https://mcp.example/.well-known/oauth-protected-resource/tenant/mcp",
///     "https://mcp.example/.well-known/oauth-protected-resource",
/// ]);
/// ```
pub fn resource_metadata_urls(server: &Url, named: Option<&Url>) -> Vec<Url> {
    if let Some(named) = named {
        return vec![named.clone()];
    }
    let mut urls = Vec::new();
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.extend(well_known(server, "oauth-protected-resource", path));
    }
    urls.extend(well_known(server, "oauth-protected-resource", ""));
    urls.dedup();
    urls
}

/// Where an authorization server's metadata is looked for, in order (RFC 8414 §3.1 and
/// OpenID Connect discovery, as MCP's authorization spec lists them): for an issuer with a
/// path, the path inserted after each well-known name, then appended after it.
///
/// ```
/// let issuer: url::Url = "https://as.example/tenant1".parse().unwrap();
/// let urls = rpcwire::mcp::auth::server_metadata_urls(&issuer);
/// let urls: Vec<&str> = urls.iter().map(|u| u.as_str()).collect();
/// assert_eq!(urls, [
///     "https://as.example/.well-known/oauth-authorization-server/tenant1",
///     "https://as.example/.well-known/openid-configuration/tenant1",
///     "https://as.example/tenant1/.well-known/openid-configuration",
/// ]);
/// ```
pub fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        return well_known(issuer, "oauth-authorization-server", "")
            .into_iter()
            .chain(well_known(issuer, "openid-configuration", ""))
            .collect();
    }
    let mut urls: Vec<Url> = well_known(issuer, "oauth-authorization-server", path)
        .into_iter()
        .chain(well_known(issuer, "openid-configuration", path))
        .collect();
    let mut appended = issuer.clone();
    appended.set_query(None);
    appended.set_fragment(None);
    appended.set_path(&format!("{path}/.well-known/openid-configuration"));
    urls.push(appended);
    urls
}

/// `origin/.well-known/{name}{path}`.
fn well_known(base: &Url, name: &str, path: &str) -> Option<Url> {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.set_path(&format!("/.well-known/{name}{path}"));
    Some(url)
}

/// Whether the resource a metadata document names covers the server at `server` (RFC 9728
/// §3.3 and MCP's authorization spec): the same origin, and a path that is the server's or
/// a parent of it.
///
/// ```
/// use rpcwire::mcp::auth::resource_covers;
/// let server: url::Url = "https://mcp.example/mcp".parse().unwrap();
/// assert!(resource_covers("https://mcp.example/mcp", &server));
/// assert!(resource_covers("https://mcp.example/", &server));
/// assert!(!resource_covers("https://evil.example/mcp", &server));
/// assert!(!resource_covers("https://mcp.example/mcp-other", &server));
/// ```
pub fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() {
        return false;
    }
    let parent = resource.path().trim_end_matches('/');
    let path = server.path().trim_end_matches('/');
    path == parent || path.starts_with(&format!("{parent}/"))
}

/// `url` canonical as a resource indicator (RFC 8707): no fragment, and no trailing slash
/// on a path of its own (`https://mcp.example/mcp`); the scheme and host are in lower case
/// already (the URL parser makes them so).
pub(crate) fn canonical_resource(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    let text = url.to_string();
    if url.path() != "/" && text.ends_with('/') && url.query().is_none() {
        return text.trim_end_matches('/').to_owned();
    }
    text
}
