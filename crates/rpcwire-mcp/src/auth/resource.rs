//! `ProtectedResource`: an MCP server's side of authorization — its metadata (RFC 9728)
//! served at the well-known URLs, each request's bearer token verified (a
//! [`TokenVerifier`]), a `401` with a challenge naming the metadata and the scopes when it
//! is missing or refused, and the scopes each method, tool or prompt requires checked (`403
//! insufficient_scope` naming them).

use std::collections::HashMap;
use std::sync::Arc;

use http::header::{HeaderMap, AUTHORIZATION};
use http::StatusCode;
use url::Url;

use super::metadata::ResourceMetadata;
use super::verify::{Claims, Refusal, TokenVerifier};

/// A request refused: its status and its `WWW-Authenticate` challenge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Denied {
    pub status: StatusCode,
    pub challenge: String,
    pub reason: String,
}

/// An MCP endpoint as a protected resource.
///
/// ```
/// use rpcwire::mcp::auth::{JwtVerifier, ProtectedResource};
/// let verifier = JwtVerifier::new("https://as.example", "https://mcp.example/mcp", "https://as.example/jwks".parse().unwrap());
/// let protected = ProtectedResource::new("https://mcp.example/mcp", "https://as.example", verifier)
///     .with_scopes_supported(["files:read", "files:write"])
///     .require_scope("files:read")
///     .require_scope_for_tool("delete_file", "files:write");
/// assert_eq!(protected.metadata().resource.as_deref(), Some("https://mcp.example/mcp"));
/// ```
#[derive(Clone, Debug)]
pub struct ProtectedResource {
    metadata: ResourceMetadata,
    /// The metadata's own URL, and its path (where it is served).
    metadata_url: String,
    metadata_path: String,
    verifier: Arc<dyn TokenVerifier>,
    /// Scopes every request needs.
    required: Vec<String>,
    /// Scopes by method, and by tool or prompt name (`tools/call NAME`, `prompts/get NAME`).
    by_method: HashMap<String, Vec<String>>,
    by_name: HashMap<(String, String), Vec<String>>,
}

/// The well-known path of protected resource metadata.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

impl ProtectedResource {
    /// The resource `resource` (this endpoint's URL, the audience its tokens must name),
    /// whose tokens `authorization_server` (an issuer) issues and `verifier` checks.
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        verifier: impl TokenVerifier + 'static,
    ) -> ProtectedResource {
        let resource = resource.into();
        let path = Url::parse(&resource)
            .map(|url| url.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let origin = Url::parse(&resource)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_default();
        let metadata_path = format!("{WELL_KNOWN}{path}");
        ProtectedResource {
            metadata: ResourceMetadata {
                resource: Some(resource),
                authorization_servers: vec![authorization_server.into()],
                bearer_methods_supported: Some(vec!["header".to_owned()]),
                ..ResourceMetadata::default()
            },
            metadata_url: format!("{origin}{metadata_path}"),
            metadata_path,
            verifier: Arc::new(verifier),
            required: Vec::new(),
            by_method: HashMap::new(),
            by_name: HashMap::new(),
        }
    }

    /// The scopes the metadata lists.
    ///
    /// (See [`ProtectedResource`] for an example.)
    pub fn with_scopes_supported<I, S>(mut self, scopes: I) -> ProtectedResource
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.metadata.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The resource's name for people, in its metadata.
    ///
    /// ```
    /// # use rpcwire::mcp::auth::{Claims, ProtectedResource, Refusal, TokenVerifier, VerifyFuture};
    /// # #[derive(Debug)] struct None_;
    /// # impl TokenVerifier for None_ { fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> { Box::pin(async { Err(Refusal::Invalid("no".into())) }) } }
    /// let protected = ProtectedResource::new("https://mcp.example/mcp", "https://as.example", None_).with_name("Files");
    /// assert_eq!(protected.metadata().resource_name.as_deref(), Some("Files"));
    /// ```
    pub fn with_name(mut self, name: impl Into<String>) -> ProtectedResource {
        self.metadata.resource_name = Some(name.into());
        self
    }

    /// A scope every request needs.
    ///
    /// (See [`ProtectedResource`] for an example.)
    pub fn require_scope(mut self, scope: impl Into<String>) -> ProtectedResource {
        self.required.push(scope.into());
        self
    }

    /// A scope requests of `method` need (`resources/read`, `tools/list`, …).
    ///
    /// ```
    /// # use rpcwire::mcp::auth::{ProtectedResource, Refusal, TokenVerifier, VerifyFuture};
    /// # #[derive(Debug)] struct None_;
    /// # impl TokenVerifier for None_ { fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> { Box::pin(async { Err(Refusal::Invalid("no".into())) }) } }
    /// let protected = ProtectedResource::new("https://mcp.example/mcp", "https://as.example", None_)
    ///     .require_scope_for_method("resources/read", "files:read");
    /// # let _ = protected;
    /// ```
    pub fn require_scope_for_method(
        mut self,
        method: impl Into<String>,
        scope: impl Into<String>,
    ) -> ProtectedResource {
        self.by_method
            .entry(method.into())
            .or_default()
            .push(scope.into());
        self
    }

    /// A scope calls of the tool `tool` need.
    ///
    /// (See [`ProtectedResource`] for an example.)
    pub fn require_scope_for_tool(
        mut self,
        tool: impl Into<String>,
        scope: impl Into<String>,
    ) -> ProtectedResource {
        let key = ("tools/call".to_owned(), tool.into());
        self.by_name.entry(key).or_default().push(scope.into());
        self
    }

    /// A scope getting the prompt `prompt` needs.
    ///
    /// ```
    /// # use rpcwire::mcp::auth::{ProtectedResource, Refusal, TokenVerifier, VerifyFuture};
    /// # #[derive(Debug)] struct None_;
    /// # impl TokenVerifier for None_ { fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> { Box::pin(async { Err(Refusal::Invalid("no".into())) }) } }
    /// let protected = ProtectedResource::new("https://mcp.example/mcp", "https://as.example", None_)
    ///     .require_scope_for_prompt("summarize", "prompts:use");
    /// # let _ = protected;
    /// ```
    pub fn require_scope_for_prompt(
        mut self,
        prompt: impl Into<String>,
        scope: impl Into<String>,
    ) -> ProtectedResource {
        let key = ("prompts/get".to_owned(), prompt.into());
        self.by_name.entry(key).or_default().push(scope.into());
        self
    }

    /// Its metadata document (RFC 9728).
    ///
    /// (See [`ProtectedResource`] for an example.)
    pub fn metadata(&self) -> &ResourceMetadata {
        &self.metadata
    }

    /// Whether `path` is where its metadata is served (the path-based URL, or the root one).
    pub(crate) fn serves_metadata_at(&self, path: &str) -> bool {
        path == self.metadata_path || path == WELL_KNOWN
    }

    /// A challenge: `error` (and its description) when a token was refused, the scopes
    /// needed, and where the metadata is.
    fn challenge(&self, error: Option<(&str, &str)>, scopes: &[&str]) -> String {
        let mut parts = Vec::new();
        if let Some((code, description)) = error {
            parts.push(format!("error=\"{code}\""));
            // Printable ASCII only, and short: it goes in a header, and holds nothing much of
            // what a token held.
            let description: String = description
                .chars()
                .map(|c| match c {
                    '"' | '\\' => '\'',
                    ' '..='~' => c,
                    _ => '?',
                })
                .take(160)
                .collect();
            parts.push(format!("error_description=\"{description}\""));
        }
        if !scopes.is_empty() {
            parts.push(format!("scope=\"{}\"", scopes.join(" ")));
        }
        parts.push(format!("resource_metadata=\"{}\"", self.metadata_url));
        format!("Bearer {}", parts.join(", "))
    }

    /// The scopes to name in a `401`: those every request needs, else those it lists.
    fn scopes_to_ask(&self) -> Vec<&str> {
        if !self.required.is_empty() {
            return self.required.iter().map(String::as_str).collect();
        }
        self.metadata
            .scopes_supported
            .iter()
            .flatten()
            .map(String::as_str)
            .collect()
    }

    /// The claims of the request's bearer token, or the `401` (`503` when it could not be
    /// checked).
    pub(crate) async fn admit(&self, headers: &HeaderMap) -> Result<Claims, Denied> {
        let scopes = self.scopes_to_ask();
        let token = headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|token| !token.is_empty());
        let Some(token) = token else {
            return Err(Denied {
                status: StatusCode::UNAUTHORIZED,
                challenge: self.challenge(None, &scopes),
                reason: "Unauthorized: a bearer token is required".to_owned(),
            });
        };
        match self.verifier.verify(token).await {
            Ok(claims) => Ok(claims),
            Err(Refusal::Invalid(why)) => Err(Denied {
                status: StatusCode::UNAUTHORIZED,
                challenge: self.challenge(Some(("invalid_token", &why)), &scopes),
                reason: format!("Unauthorized: {why}"),
            }),
            Err(Refusal::Unavailable(why)) => Err(Denied {
                status: StatusCode::SERVICE_UNAVAILABLE,
                challenge: self.challenge(Some(("temporarily_unavailable", &why)), &scopes),
                reason: format!("Service Unavailable: the token could not be checked: {why}"),
            }),
        }
    }

    /// Whether some method, tool or prompt needs a scope of its own (else a POST's requests
    /// need not be read to check them: [`allows_all`](ProtectedResource::allows_all) is enough).
    pub(crate) fn scopes_by_request(&self) -> bool {
        !self.by_method.is_empty() || !self.by_name.is_empty()
    }

    /// Whether `claims` grant the scopes every request needs; the `403` naming them
    /// otherwise.
    pub(crate) fn allows_all(&self, claims: &Claims) -> Result<(), Denied> {
        // Every protected POST comes here: nothing is allocated when the scopes are there.
        if self.required.iter().all(|scope| claims.has_scope(scope)) {
            return Ok(());
        }
        self.granted(claims, self.required.iter().map(String::as_str).collect())
    }

    /// Whether `claims` grant what a request of `method` (for the tool or prompt `name`)
    /// needs; the `403` naming every scope it needs otherwise.
    pub(crate) fn allows(&self, claims: &Claims, method: &str, name: Option<&str>) -> Result<(), Denied> {
        let mut needed: Vec<&str> = self.required.iter().map(String::as_str).collect();
        needed.extend(
            self.by_method
                .get(method)
                .into_iter()
                .flatten()
                .map(String::as_str),
        );
        if let Some(name) = name {
            let key = (method.to_owned(), name.to_owned());
            needed.extend(self.by_name.get(&key).into_iter().flatten().map(String::as_str));
        }
        self.granted(claims, needed)
    }

    /// `Ok` when `claims` hold every scope `needed`; the `403` naming them otherwise.
    fn granted(&self, claims: &Claims, mut needed: Vec<&str>) -> Result<(), Denied> {
        if needed.iter().all(|scope| claims.has_scope(scope)) {
            return Ok(());
        }
        needed.dedup();
        Err(Denied {
            status: StatusCode::FORBIDDEN,
            challenge: self.challenge(
                Some(("insufficient_scope", "the token lacks a scope this request needs")),
                &needed,
            ),
            reason: format!("Forbidden: this request needs scope {}", needed.join(" ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::VerifyFuture;
    use http::header::HeaderValue;

    #[derive(Debug)]
    struct Fixed;

    impl TokenVerifier for Fixed {
        fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
            Box::pin(async move {
                match token {
                    "good" => Ok(Claims::new("alice", ["read"])),
                    "down" => Err(Refusal::Unavailable("the issuer is down".into())),
                    _ => Err(Refusal::Invalid("unknown \"token\"".into())),
                }
            })
        }
    }

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[tokio::test]
    async fn tokens_are_admitted_or_challenged() {
        let protected = ProtectedResource::new("https://mcp.example/mcp", "https://as", Fixed)
            .require_scope("read")
            .require_scope_for_tool("delete", "write");
        assert!(protected.serves_metadata_at("/.well-known/oauth-protected-resource/mcp"));
        assert!(protected.serves_metadata_at("/.well-known/oauth-protected-resource"));
        let missing = protected.admit(&HeaderMap::new()).await.unwrap_err();
        assert_eq!(missing.status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            missing.challenge,
            r#"Bearer scope="read", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#
        );
        let bad = protected.admit(&headers("Bearer nope")).await.unwrap_err();
        assert!(
            bad.challenge
                .starts_with(r#"Bearer error="invalid_token", error_description="unknown 'token'""#),
            "{}",
            bad.challenge
        );
        let down = protected.admit(&headers("Bearer down")).await.unwrap_err();
        assert_eq!(down.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(protected.admit(&headers("Basic good")).await.is_err());
        let claims = protected.admit(&headers("bearer good")).await.unwrap();
        assert!(protected.allows(&claims, "tools/call", Some("echo")).is_ok());
        let denied = protected
            .allows(&claims, "tools/call", Some("delete"))
            .unwrap_err();
        assert_eq!(denied.status, StatusCode::FORBIDDEN);
        assert!(denied.challenge.contains(r#"error="insufficient_scope""#));
        assert!(
            denied.challenge.contains(r#"scope="read write""#),
            "{}",
            denied.challenge
        );
    }

    #[tokio::test]
    async fn scopes_by_method_and_prompt_and_the_listed_ones_in_a_challenge() {
        let protected = ProtectedResource::new("https://mcp.example/", "https://as", Fixed)
            .with_name("Files")
            .with_scopes_supported(["read", "write"])
            .require_scope_for_method("resources/read", "read")
            .require_scope_for_prompt("summarize", "write");
        assert_eq!(protected.metadata().resource_name.as_deref(), Some("Files"));
        assert!(protected.serves_metadata_at("/.well-known/oauth-protected-resource"));
        let missing = protected.admit(&HeaderMap::new()).await.unwrap_err();
        assert!(
            missing.challenge.contains(r#"scope="read write""#),
            "the listed ones: {}",
            missing.challenge
        );
        let claims = Claims::new("alice", ["read"]);
        assert!(protected.allows(&claims, "resources/read", None).is_ok());
        assert!(protected.allows(&claims, "prompts/get", Some("other")).is_ok());
        let denied = protected
            .allows(&claims, "prompts/get", Some("summarize"))
            .unwrap_err();
        assert!(
            denied.challenge.contains(r#"scope="write""#),
            "{}",
            denied.challenge
        );
        assert!(protected
            .allows(&Claims::new("bob", ["write"]), "resources/read", None)
            .is_err());
    }

    #[test]
    fn scopes_every_request_needs_are_checked_without_reading_the_requests() {
        let everywhere =
            ProtectedResource::new("https://mcp.example/mcp", "https://as", Fixed).require_scope("mcp");
        assert!(!everywhere.scopes_by_request());
        assert!(everywhere.allows_all(&Claims::new("alice", ["mcp", "x"])).is_ok());
        let denied = everywhere.allows_all(&Claims::new("bob", ["x"])).unwrap_err();
        assert_eq!(denied.status, StatusCode::FORBIDDEN);
        assert!(
            denied.challenge.contains(r#"scope="mcp""#),
            "{}",
            denied.challenge
        );
        let open = ProtectedResource::new("https://mcp.example/mcp", "https://as", Fixed);
        assert!(open
            .allows_all(&Claims::new("carol", Vec::<String>::new()))
            .is_ok());
        assert!(open
            .clone()
            .require_scope_for_method("ping", "p")
            .scopes_by_request());
        assert!(open.require_scope_for_tool("t", "p").scopes_by_request());
    }
}
