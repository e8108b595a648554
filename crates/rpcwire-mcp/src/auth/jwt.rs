//! `JwtVerifier`: access tokens that are JWTs (RFC 9068), verified with the authorization
//! server's keys — its JWKS fetched (over https) and cached, fetched again when a token
//! names a key it does not have (at most every 30 s) or when the cache is old — and their
//! issuer, audience (this server, RFC 8707), life and algorithm checked. A token verified
//! once is known by its SHA-256 until it expires (a client sends the same one with every
//! call): the signature is checked once, not per call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use url::Url;

use sha2::{Digest, Sha256};

use super::error::AuthError;
use super::fetch::{server_metadata, Fetcher};
use super::store::now_seconds;
use super::verify::{Claims, Refusal, TokenVerifier, VerifyFuture};
use crate::sync::lock_unpoisoned;

/// How many verified tokens are known at most (the oldest known go first).
const MAX_VERIFIED: usize = 4096;

/// How long fetched keys are used before they are fetched again.
pub const DEFAULT_KEYS_TTL: Duration = Duration::from_secs(600);

/// A token naming a key not in the cache fetches the keys again at most this often.
const MIN_REFETCH: Duration = Duration::from_secs(30);

/// How far expiry and not-before are let slip by default (clocks differ).
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// The algorithms taken (asymmetric ones only: a shared secret is never a server's key).
const ALGORITHMS: [Algorithm; 8] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
];

/// Verifies JWT access tokens with an authorization server's published keys.
///
/// ```no_run
/// # async fn run() -> Result<(), rpcwire::mcp::auth::AuthError> {
/// use rpcwire::mcp::auth::JwtVerifier;
/// // The issuer's JWKS found through its metadata; tokens must be for this server.
/// let verifier = JwtVerifier::discover("https://as.example", "https://mcp.example/mcp").await?;
/// # let _ = verifier;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    issuer: String,
    audience: String,
    jwks_uri: Url,
    fetcher: Fetcher,
    ttl: Duration,
    leeway: Duration,
    keys: tokio::sync::Mutex<Keys>,
    /// Tokens verified, by their SHA-256: their claims, and when they were verified.
    verified: Mutex<HashMap<[u8; 32], (Claims, Instant)>>,
}

#[derive(Default)]
struct Keys {
    set: Vec<(Option<String>, DecodingKey, Option<Algorithm>)>,
    fetched: Option<Instant>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys").field("count", &self.set.len()).finish()
    }
}

impl JwtVerifier {
    /// Tokens of `issuer`, for `audience` (this server's resource URI), signed with the keys
    /// at `jwks_uri`.
    ///
    /// ```
    /// let verifier = rpcwire::mcp::auth::JwtVerifier::new(
    ///     "https://as.example",
    ///     "https://mcp.example/mcp",
    ///     "https://as.example/jwks".parse().unwrap(),
    /// );
    /// # let _ = verifier;
    /// ```
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>, jwks_uri: Url) -> JwtVerifier {
        JwtVerifier::with_fetcher(issuer.into(), audience.into(), jwks_uri, Fetcher::default())
    }

    fn with_fetcher(issuer: String, audience: String, jwks_uri: Url, fetcher: Fetcher) -> JwtVerifier {
        JwtVerifier {
            inner: Arc::new(Inner {
                issuer,
                audience,
                jwks_uri,
                fetcher,
                ttl: DEFAULT_KEYS_TTL,
                leeway: DEFAULT_LEEWAY,
                keys: tokio::sync::Mutex::new(Keys::default()),
                verified: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Tokens of `issuer` for `audience`, the keys' URL read from the issuer's metadata
    /// (RFC 8414, or OpenID Connect discovery).
    pub async fn discover(issuer: &str, audience: &str) -> Result<JwtVerifier, AuthError> {
        JwtVerifier::discover_with(issuer, audience, None).await
    }

    /// [`discover`](JwtVerifier::discover), speaking TLS through `tls` to the issuer.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rpcwire::mcp::auth::AuthError> {
    /// let tls = rpcwire::transport::tls::ClientTls::builder().add_ca_file("ca.pem").unwrap().build().unwrap();
    /// let verifier = rpcwire::mcp::auth::JwtVerifier::discover_with("https://as.internal", "https://mcp.internal/mcp", Some(tls)).await?;
    /// # let _ = verifier;
    /// # Ok(()) }
    /// ```
    pub async fn discover_with(
        issuer: &str,
        audience: &str,
        tls: Option<crate::transport::tls::ClientTls>,
    ) -> Result<JwtVerifier, AuthError> {
        let fetcher = Fetcher::default().with_tls(tls);
        let mut tried = Vec::new();
        let Some(metadata) = server_metadata(&fetcher, issuer, false, &mut tried).await? else {
            return Err(AuthError::Discovery(format!(
                "no metadata for {issuer}: tried {}",
                tried.join(", ")
            )));
        };
        let jwks_uri = metadata
            .jwks_uri
            .ok_or_else(|| AuthError::Discovery(format!("{issuer} publishes no jwks_uri")))?;
        let jwks_uri = Url::parse(&jwks_uri).map_err(|e| AuthError::Discovery(format!("jwks_uri: {e}")))?;
        Ok(JwtVerifier::with_fetcher(
            issuer.to_owned(),
            audience.to_owned(),
            jwks_uri,
            fetcher,
        ))
    }

    /// Uses fetched keys for `ttl` before fetching them again (default
    /// [`DEFAULT_KEYS_TTL`]).
    ///
    /// ```
    /// let verifier = rpcwire::mcp::auth::JwtVerifier::new("https://as", "https://mcp/mcp", "https://as/jwks".parse().unwrap())
    ///     .with_keys_ttl(std::time::Duration::from_secs(60));
    /// # let _ = verifier;
    /// ```
    pub fn with_keys_ttl(mut self, ttl: Duration) -> JwtVerifier {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.ttl = ttl;
        }
        self
    }

    /// Lets expiry and not-before slip by `leeway` (default [`DEFAULT_LEEWAY`]).
    ///
    /// ```
    /// let verifier = rpcwire::mcp::auth::JwtVerifier::new("https://as", "https://mcp/mcp", "https://as/jwks".parse().unwrap())
    ///     .with_leeway(std::time::Duration::ZERO);
    /// # let _ = verifier;
    /// ```
    pub fn with_leeway(mut self, leeway: Duration) -> JwtVerifier {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.leeway = leeway;
        }
        self
    }

    /// The key for `kid` (and `algorithm`): from the cache, or the keys fetched again when
    /// the cache is old or does not have it (not more often than every 30 s).
    async fn key(&self, kid: Option<&str>, algorithm: Algorithm) -> Result<DecodingKey, Refusal> {
        let mut keys = self.inner.keys.lock().await;
        let stale = none_or_older(keys.fetched, self.inner.ttl);
        let found = |keys: &Keys| {
            keys.set
                .iter()
                .find(|(id, _, alg)| {
                    (kid.is_none() || id.as_deref() == kid) && alg.map_or(true, |a| a == algorithm)
                })
                .map(|(_, key, _)| key.clone())
        };
        if !stale {
            if let Some(key) = found(&keys) {
                return Ok(key);
            }
        }
        let may_fetch = stale || none_or_older(keys.fetched, MIN_REFETCH);
        if may_fetch {
            match self.fetch().await {
                Ok(set) => {
                    keys.set = set;
                    keys.fetched = Some(Instant::now());
                }
                Err(why) if keys.set.is_empty() => return Err(Refusal::Unavailable(why)),
                Err(_) => {}
            }
        }
        found(&keys)
            .ok_or_else(|| Refusal::Invalid("signed with a key the issuer does not publish".to_owned()))
    }

    async fn fetch(&self) -> Result<Vec<(Option<String>, DecodingKey, Option<Algorithm>)>, String> {
        let fetched = self
            .inner
            .fetcher
            .get(&self.inner.jwks_uri, &[])
            .await
            .map_err(|e| e.to_string())?;
        let set: JwkSet = fetched.json(&self.inner.jwks_uri).map_err(|e| e.to_string())?;
        Ok(set.keys.iter().filter_map(decoding_key).collect())
    }

    /// A token's claims: known from an earlier verification while it has not expired, else
    /// verified now (and known from then on).
    async fn check(&self, token: &str) -> Result<Claims, Refusal> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((claims, at)) = lock_unpoisoned(&self.inner.verified).get(&digest) {
            let alive = claims.expires_at.is_some_and(|exp| exp > now_seconds());
            if alive && at.elapsed() < self.inner.ttl {
                return Ok(claims.clone());
            }
        }
        let claims = self.verify_signed(token).await?;
        let mut verified = lock_unpoisoned(&self.inner.verified);
        if verified.len() >= MAX_VERIFIED {
            // Expired ones first; else the oldest known.
            let now = now_seconds();
            verified.retain(|_, (claims, _)| claims.expires_at.is_some_and(|exp| exp > now));
            if verified.len() >= MAX_VERIFIED {
                let oldest = verified
                    .iter()
                    .min_by_key(|(_, (_, at))| *at)
                    .map(|(key, _)| *key);
                if let Some(oldest) = oldest {
                    verified.remove(&oldest);
                }
            }
        }
        verified.insert(digest, (claims.clone(), Instant::now()));
        Ok(claims)
    }

    /// Verifies `token`'s signature and claims.
    async fn verify_signed(&self, token: &str) -> Result<Claims, Refusal> {
        let invalid = |why: &dyn std::fmt::Display| Refusal::Invalid(why.to_string());
        let header = jsonwebtoken::decode_header(token).map_err(|e| invalid(&e))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(invalid(&format_args!("algorithm {:?} is not taken", header.alg)));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.inner.issuer]);
        validation.set_audience(&[&self.inner.audience]);
        validation.leeway = self.inner.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data =
            jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation).map_err(|e| invalid(&e))?;
        Ok(Claims::from_json(data.claims))
    }
}

/// A JWK as a key to verify with, and the algorithm it is for; `None` for a key that is not
/// a signing key of a kind taken.
fn decoding_key(jwk: &Jwk) -> Option<(Option<String>, DecodingKey, Option<Algorithm>)> {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let algorithm = match jwk.common.key_algorithm {
        None => None,
        Some(named) => Some(
            named
                .to_string()
                .parse::<Algorithm>()
                .ok()
                .filter(|a| ALGORITHMS.contains(a))?,
        ),
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some((jwk.common.key_id.clone(), key, algorithm))
}

/// Whether `at` is none, or `age` ago or longer.
fn none_or_older(at: Option<Instant>, age: Duration) -> bool {
    at.map_or(true, |at| at.elapsed() >= age)
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    /// Serves `documents` by path on the loopback (each connection one GET): the base URL.
    async fn serve(documents: Vec<(&'static str, String)>) -> String {
        let address = crate::auth::loopback::serve(move |asked| {
            match documents.iter().find(|(path, _)| *path == asked.path) {
                Some((_, body)) => crate::auth::loopback::json(200, body),
                None => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned(),
            }
        })
        .await;
        format!("http://{address}")
    }

    fn token(key: &rcgen::KeyPair, kid: &str, claims: serde_json::Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.to_owned());
        let encoding = EncodingKey::from_ec_pem(key.serialize_pem().as_bytes()).unwrap();
        jsonwebtoken::encode(&header, &claims, &encoding).unwrap()
    }

    #[tokio::test]
    async fn tokens_are_verified_with_the_issuers_keys_and_their_claims() {
        let key = rcgen::KeyPair::generate().unwrap();
        let point = key.public_key_raw();
        let jwks = json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
             "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65])},
            {"kty": "EC", "crv": "P-256", "kid": "enc", "use": "enc",
             "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65])},
        ]});
        let base = serve(vec![("/jwks", jwks.to_string())]).await;
        let issuer = "https://as.test";
        let verifier = JwtVerifier::new(
            issuer,
            "https://mcp.test/mcp",
            format!("{base}/jwks").parse().unwrap(),
        )
        .with_keys_ttl(Duration::from_secs(60))
        .with_leeway(Duration::ZERO);
        let now = now_seconds();
        let good = token(
            &key,
            "k1",
            json!({"iss": issuer, "aud": "https://mcp.test/mcp", "exp": now + 60, "sub": "a", "scope": "x"}),
        );
        let claims = verifier.verify(&good).await.unwrap();
        assert!(format!("{verifier:?}").contains("count: 1"), "{verifier:?}");
        assert_eq!(
            (claims.subject.as_deref(), claims.scopes.as_slice()),
            (Some("a"), &["x".to_owned()][..])
        );
        assert_eq!(
            verifier.verify(&good).await.unwrap(),
            claims,
            "known the second time"
        );
        for (what, bad) in [
            (
                "another audience",
                token(
                    &key,
                    "k1",
                    json!({"iss": issuer, "aud": "https://other/mcp", "exp": now + 60}),
                ),
            ),
            (
                "another issuer",
                token(
                    &key,
                    "k1",
                    json!({"iss": "https://evil", "aud": "https://mcp.test/mcp", "exp": now + 60}),
                ),
            ),
            (
                "expired",
                token(
                    &key,
                    "k1",
                    json!({"iss": issuer, "aud": "https://mcp.test/mcp", "exp": now - 5}),
                ),
            ),
            (
                "no expiry",
                token(&key, "k1", json!({"iss": issuer, "aud": "https://mcp.test/mcp"})),
            ),
            (
                "a key not published",
                token(
                    &key,
                    "k9",
                    json!({"iss": issuer, "aud": "https://mcp.test/mcp", "exp": now + 60}),
                ),
            ),
            (
                "an encryption key",
                token(
                    &key,
                    "enc",
                    json!({"iss": issuer, "aud": "https://mcp.test/mcp", "exp": now + 60}),
                ),
            ),
            ("not a JWT", "abc".to_owned()),
        ] {
            assert!(
                matches!(verifier.verify(&bad).await, Err(Refusal::Invalid(_))),
                "{what}"
            );
        }
        let shared_secret = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &json!({"iss": issuer}),
            &EncodingKey::from_secret(b"s"),
        )
        .unwrap();
        let refused = verifier.verify(&shared_secret).await.unwrap_err();
        assert!(refused.to_string().contains("not taken"), "{refused}");
        let unreachable = JwtVerifier::new(
            issuer,
            "https://mcp.test/mcp",
            "http://127.0.0.1:9/jwks".parse().unwrap(),
        );
        assert!(matches!(
            unreachable.verify(&good).await,
            Err(Refusal::Unavailable(_))
        ));
    }

    #[tokio::test]
    async fn discovery_reads_the_issuers_metadata_and_checks_it() {
        let base = serve(vec![
            (
                "/.well-known/oauth-authorization-server",
                json!({"issuer": "ISSUER", "jwks_uri": "http://127.0.0.1:9/jwks"}).to_string(),
            ),
            (
                "/tenant/.well-known/openid-configuration",
                json!({"issuer": "elsewhere"}).to_string(),
            ),
        ])
        .await;
        // The document names another issuer than the one asked for.
        let mismatch = JwtVerifier::discover(&base, "r").await.unwrap_err();
        assert!(matches!(mismatch, AuthError::Mismatch(_)), "{mismatch}");
        let tenant = JwtVerifier::discover(&format!("{base}/tenant"), "r")
            .await
            .unwrap_err();
        assert!(matches!(tenant, AuthError::Mismatch(_)), "{tenant}");
        let none = JwtVerifier::discover("http://127.0.0.1:9", "r")
            .await
            .unwrap_err();
        assert!(
            matches!(none, AuthError::Fetch(_) | AuthError::Discovery(_)),
            "{none}"
        );
        assert!(JwtVerifier::discover("not a url", "r").await.is_err());
    }
}
