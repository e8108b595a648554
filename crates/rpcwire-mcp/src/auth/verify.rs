//! What a protected MCP server learns from a token: the [`TokenVerifier`] trait, the
//! verified [`Claims`] handlers see, and why a token is refused.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

/// What a verifier gives back.
pub type VerifyFuture<'a> = Pin<Box<dyn Future<Output = Result<Claims, Refusal>> + Send + 'a>>;

/// Checks an access token: its signature or the authorization server's word on it, its
/// issuer, its audience (this server), its life.
///
/// ```
/// use rpcwire::mcp::auth::{Claims, Refusal, TokenVerifier, VerifyFuture};
/// /// Takes one fixed token (tests).
/// #[derive(Debug)]
/// struct Fixed;
/// impl TokenVerifier for Fixed {
///     fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
///         Box::pin(async move {
///             match token {
///                 "good" => Ok(Claims::new("alice", ["files:read"])),
///                 _ => Err(Refusal::Invalid("unknown token".into())),
///             }
///         })
///     }
/// }
/// # let _ = Fixed;
/// ```
pub trait TokenVerifier: Send + Sync + std::fmt::Debug {
    /// The claims of `token`, or why it is refused.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

/// Why a token is refused.
///
/// ```
/// let refusal = rpcwire::mcp::auth::Refusal::Invalid("expired".into());
/// assert_eq!(refusal.to_string(), "invalid token: expired");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The token is not good here (`401`, `invalid_token`): a bad signature, another
    /// issuer or audience, expired, inactive.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// It could not be checked now (`503`): the keys or the introspection endpoint could
    /// not be reached.
    #[error("token not checked: {0}")]
    Unavailable(String),
}

/// A verified token's claims, as handlers see them
/// ([`McpContext::claims`](crate::McpContext::claims)).
///
/// ```
/// let claims = rpcwire::mcp::auth::Claims::new("alice", ["files:read", "files:write"]);
/// assert!(claims.has_scope("files:write"));
/// assert!(!claims.has_scope("admin"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Claims {
    /// Who the token is for (`sub`).
    pub subject: Option<String>,
    /// The client it was issued to (`client_id`, or `azp`).
    pub client_id: Option<String>,
    /// Its issuer (`iss`).
    pub issuer: Option<String>,
    /// Its scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// When it expires, in seconds since the Unix epoch (`exp`).
    pub expires_at: Option<u64>,
    /// Every claim, as the token (or the introspection answer) gave them.
    pub all: Value,
}

impl Claims {
    /// Claims of `subject` with `scopes` (tests, verifiers of one's own).
    pub fn new<I, S>(subject: impl Into<String>, scopes: I) -> Claims
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Claims {
            subject: Some(subject.into()),
            scopes: scopes.into_iter().map(Into::into).collect(),
            ..Claims::default()
        }
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }

    /// The claims of a JWT's payload or an introspection answer (RFC 7662 §2.2).
    pub(crate) fn from_json(all: Value) -> Claims {
        let text = |name: &str| all.get(name).and_then(Value::as_str).map(str::to_owned);
        let scopes = match (all.get("scope"), all.get("scp")) {
            (Some(Value::String(scope)), _) => scope
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            (_, Some(Value::Array(scopes))) => scopes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            (_, Some(Value::String(scope))) => scope
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Claims {
            subject: text("sub"),
            client_id: text("client_id").or_else(|| text("azp")),
            issuer: text("iss"),
            scopes,
            expires_at: all.get("exp").and_then(Value::as_u64),
            all,
        }
    }

    /// Whether `aud` (a string or an array) of these claims names `audience`.
    pub(crate) fn has_audience(&self, audience: &str) -> bool {
        match self.all.get("aud") {
            Some(Value::String(aud)) => aud == audience,
            Some(Value::Array(auds)) => auds.iter().any(|aud| aud.as_str() == Some(audience)),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claims_read_scope_and_scp_and_audiences() {
        let claims =
            Claims::from_json(json!({"sub": "a", "scope": "x y", "aud": ["r1", "r2"], "azp": "c", "exp": 9}));
        assert_eq!(claims.scopes, ["x", "y"]);
        assert_eq!(claims.client_id.as_deref(), Some("c"));
        assert!(claims.has_audience("r2") && !claims.has_audience("r3"));
        let scp = Claims::from_json(json!({"scp": ["a", "b"], "aud": "r"}));
        assert!(scp.has_scope("b") && scp.has_audience("r"));
        assert!(Claims::from_json(json!({})).scopes.is_empty());
    }
}
