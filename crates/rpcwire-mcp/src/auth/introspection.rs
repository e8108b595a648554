//! `IntrospectionVerifier`: opaque access tokens checked by asking the authorization server
//! (RFC 7662) — the token posted to its introspection endpoint with this server's own
//! client credentials; an active token's audience (this server) and life checked. Answers
//! are kept for a short while (never past the token's expiry), by the token's SHA-256, not
//! the token.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use http::header::AUTHORIZATION;
use sha2::{Digest, Sha256};
use url::Url;

use super::fetch::{basic_credentials, Fetcher};
use super::store::now_seconds;
use super::verify::{Claims, Refusal, TokenVerifier, VerifyFuture};
use crate::sync::lock_unpoisoned;

/// How long an introspection answer is used by default.
pub const DEFAULT_INTROSPECTION_TTL: Duration = Duration::from_secs(30);

/// How many answers are kept at most (the oldest go first).
const MAX_KEPT: usize = 4096;

/// Verifies tokens through an authorization server's introspection endpoint.
///
/// ```
/// let verifier = rpcwire::mcp::auth::IntrospectionVerifier::new(
///     "https://as.example/introspect".parse().unwrap(),
///     "mcp-server",
///     "s3cret",
///     "https://mcp.example/mcp",
/// );
/// assert!(!format!("{verifier:?}").contains("s3cret"));
/// ```
pub struct IntrospectionVerifier {
    endpoint: Url,
    client_id: String,
    client_secret: String,
    audience: String,
    fetcher: Fetcher,
    ttl: Duration,
    kept: Mutex<HashMap<[u8; 32], (Claims, Instant)>>,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint.as_str())
            .field("client_id", &self.client_id)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Tokens checked at `endpoint`, this server authenticating as `client_id` with
    /// `client_secret` (HTTP Basic); an active token must name `audience` in its `aud`.
    pub fn new(
        endpoint: Url,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        audience: impl Into<String>,
    ) -> IntrospectionVerifier {
        IntrospectionVerifier {
            endpoint,
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            audience: audience.into(),
            fetcher: Fetcher::default(),
            ttl: DEFAULT_INTROSPECTION_TTL,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// Speaks TLS through `tls` to the endpoint.
    ///
    /// ```
    /// let tls = rpcwire::transport::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let verifier = rpcwire::mcp::auth::IntrospectionVerifier::new("https://as/introspect".parse().unwrap(), "rs", "s", "https://mcp/mcp")
    ///     .with_tls(tls);
    /// # let _ = verifier;
    /// ```
    pub fn with_tls(mut self, tls: crate::transport::tls::ClientTls) -> IntrospectionVerifier {
        self.fetcher = self.fetcher.with_tls(Some(tls));
        self
    }

    /// Uses an answer for `ttl` (default [`DEFAULT_INTROSPECTION_TTL`]; zero: asks every
    /// time).
    ///
    /// ```
    /// let verifier = rpcwire::mcp::auth::IntrospectionVerifier::new("https://as/introspect".parse().unwrap(), "rs", "s", "https://mcp/mcp")
    ///     .with_ttl(std::time::Duration::ZERO);
    /// # let _ = verifier;
    /// ```
    pub fn with_ttl(mut self, ttl: Duration) -> IntrospectionVerifier {
        self.ttl = ttl;
        self
    }

    async fn check(&self, token: &str) -> Result<Claims, Refusal> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((claims, at)) = lock_unpoisoned(&self.kept).get(&key) {
            let alive = claims.expires_at.map_or(true, |exp| exp > now_seconds());
            if at.elapsed() < self.ttl && alive {
                return Ok(claims.clone());
            }
        }
        let basic = basic_credentials(&self.client_id, &self.client_secret)
            .ok_or_else(|| Refusal::Unavailable("client credentials that cannot be sent".to_owned()))?;
        let form = [("token", token), ("token_type_hint", "access_token")];
        let fetched = self
            .fetcher
            .post_form(&self.endpoint, &[(AUTHORIZATION, basic)], &form)
            .await
            .map_err(|e| Refusal::Unavailable(e.to_string()))?;
        if !fetched.status.is_success() {
            return Err(Refusal::Unavailable(format!(
                "introspection answered {}",
                fetched.oauth_error()
            )));
        }
        let answer: serde_json::Value = fetched
            .json(&self.endpoint)
            .map_err(|e| Refusal::Unavailable(e.to_string()))?;
        if answer.get("active").and_then(serde_json::Value::as_bool) != Some(true) {
            return Err(Refusal::Invalid("the token is not active".to_owned()));
        }
        let claims = Claims::from_json(answer);
        if !claims.has_audience(&self.audience) {
            return Err(Refusal::Invalid(format!(
                "the token is not for {}",
                self.audience
            )));
        }
        if claims.expires_at.is_some_and(|exp| exp <= now_seconds()) {
            return Err(Refusal::Invalid("the token has expired".to_owned()));
        }
        if !self.ttl.is_zero() {
            let mut kept = lock_unpoisoned(&self.kept);
            if kept.len() >= MAX_KEPT {
                let oldest = kept.iter().min_by_key(|(_, (_, at))| *at).map(|(key, _)| *key);
                if let Some(oldest) = oldest {
                    kept.remove(&oldest);
                }
            }
            kept.insert(key, (claims.clone(), Instant::now()));
        }
        Ok(claims)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// An introspection endpoint answering by the token in the form: `(status, body)`; how
    /// many times it was asked.
    async fn endpoint(answer: fn(&str) -> (u16, serde_json::Value)) -> (Url, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let count = asked.clone();
        let address = crate::auth::loopback::serve(move |request| {
            count.fetch_add(1, Ordering::SeqCst);
            let credentials = request.header("authorization").unwrap_or_default();
            assert!(credentials.starts_with("Basic "), "{}", request.head);
            let token = request
                .body
                .split('&')
                .find_map(|pair| pair.strip_prefix("token="))
                .unwrap_or_default();
            let (status, body) = answer(token);
            crate::auth::loopback::json(status, &body.to_string())
        })
        .await;
        (format!("http://{address}/introspect").parse().unwrap(), asked)
    }

    fn answer(token: &str) -> (u16, serde_json::Value) {
        let exp = now_seconds() + 600;
        match token {
            "good" => (
                200,
                json!({"active": true, "aud": "https://mcp/mcp", "sub": "a", "scope": "x y", "exp": exp}),
            ),
            "other" => (
                200,
                json!({"active": true, "aud": ["https://other/mcp"], "exp": exp}),
            ),
            "expired" => (200, json!({"active": true, "aud": "https://mcp/mcp", "exp": 1})),
            "inactive" => (200, json!({"active": false})),
            _ => (500, json!({"error": "server_error"})),
        }
    }

    #[tokio::test]
    async fn the_authorization_server_says_which_tokens_are_good_here() {
        let (url, asked) = endpoint(answer).await;
        let verifier = IntrospectionVerifier::new(url.clone(), "rs", "s3cret", "https://mcp/mcp");
        assert!(!format!("{verifier:?}").contains("s3cret"));
        let claims = verifier.verify("good").await.unwrap();
        assert_eq!(claims.scopes, ["x", "y"]);
        assert_eq!(verifier.verify("good").await.unwrap(), claims);
        assert_eq!(asked.load(Ordering::SeqCst), 1, "the second answer was kept");
        for token in ["other", "expired", "inactive"] {
            assert!(
                matches!(verifier.verify(token).await, Err(Refusal::Invalid(_))),
                "{token}"
            );
        }
        assert!(matches!(
            verifier.verify("boom").await,
            Err(Refusal::Unavailable(_))
        ));
        let every_time =
            IntrospectionVerifier::new(url, "rs", "s3cret", "https://mcp/mcp").with_ttl(Duration::ZERO);
        let before = asked.load(Ordering::SeqCst);
        every_time.verify("good").await.unwrap();
        every_time.verify("good").await.unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), before + 2);
        let down = IntrospectionVerifier::new(
            "http://127.0.0.1:9/i".parse().unwrap(),
            "rs",
            "s",
            "https://mcp/mcp",
        );
        assert!(matches!(down.verify("good").await, Err(Refusal::Unavailable(_))));
    }
}
