//! `Authorizer`: the client side of MCP's authorization. Told of a refusal (`401`, or `403`
//! `insufficient_scope`), it finds the resource's metadata and its authorization server's,
//! registers the client, gets tokens (an authorization code with PKCE through an
//! [`AuthorizationStep`], or client credentials), keeps them in a [`TokenStore`], refreshes
//! them, and gives the credentials each request carries (`Authorization`, a DPoP proof).

use std::sync::{Arc, Mutex};

use http::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use http::StatusCode;
use url::Url;

use super::challenge::Challenge;
use super::error::AuthError;
use super::fetch::Fetcher;
use super::keys::{ClientKey, DpopKey};
use super::metadata::{canonical_resource, ServerMetadata};
use super::registration::ClientProfile;
use super::step::{AuthorizationStep, Headless};
use super::store::{Kept, MemoryStore, RegisteredClient, TokenStore, Tokens};
use super::token::{Client, ClientAuth, TokenRequest};
use crate::sync::lock_unpoisoned;

/// The redirect URI of a client not given one: a loopback address [`Browser`](super::Browser)
/// listens on.
pub const DEFAULT_REDIRECT_URI: &str = "http://127.0.0.1:33418/callback";

/// How tokens are got.
#[derive(Clone)]
pub(super) enum Grant {
    /// A user authorizes (authorization code with PKCE).
    AuthorizationCode,
    /// The client is the one authorized (client credentials, a machine).
    ClientCredentials,
    /// A JWT a trusted identity provider issued to this workload, presented as the grant
    /// (RFC 7523 §2.1: workload identity federation).
    JwtBearer(String),
    /// A user's ID token from the enterprise's identity provider, exchanged there for an
    /// identity assertion (an ID-JAG) for the authorization server, presented as a JWT
    /// bearer grant (enterprise-managed authorization, SEP-990).
    IdentityAssertion(IdentityProvider),
}

/// The enterprise identity provider of [`Authorizer::with_identity_provider`]: where its
/// token exchange is, and what the user signed in there with.
///
/// Its `Debug` shows no token.
///
/// ```
/// let idp = rpcwire::mcp::auth::IdentityProvider::new("https://idp.example/token".parse().unwrap(), "eyJ.id.token")
///     .with_client_id("host-at-idp");
/// assert!(!format!("{idp:?}").contains("eyJ"));
/// ```
#[derive(Clone)]
pub struct IdentityProvider {
    pub(super) token_endpoint: Url,
    pub(super) id_token: String,
    pub(super) client_id: Option<String>,
}

impl IdentityProvider {
    /// The provider whose token endpoint is `token_endpoint`, and the user's `id_token`
    /// from it.
    pub fn new(token_endpoint: Url, id_token: impl Into<String>) -> IdentityProvider {
        IdentityProvider {
            token_endpoint,
            id_token: id_token.into(),
            client_id: None,
        }
    }

    /// The client id this client has at the provider.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> IdentityProvider {
        self.client_id = Some(client_id.into());
        self
    }
}

impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("token_endpoint", &self.token_endpoint.as_str())
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Grant {
    /// The grant's kind, without the assertion it may hold.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Grant::AuthorizationCode => f.write_str("AuthorizationCode"),
            Grant::ClientCredentials => f.write_str("ClientCredentials"),
            Grant::JwtBearer(_) => f.write_str("JwtBearer(…)"),
            Grant::IdentityAssertion(provider) => f.debug_tuple("IdentityAssertion").field(provider).finish(),
        }
    }
}

/// When tokens are bound to a key of this client (DPoP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DpopUse {
    /// When the authorization server says it takes ES256 proofs.
    WhenOffered,
    /// Always (asked for with `with_dpop`).
    Always,
}

/// The client side of MCP authorization (OAuth 2.1), for [`McpClientBuilder::with_authorizer`](crate::McpClientBuilder::with_authorizer)
/// and the gateway's remote servers: it starts when a server refuses a request, and the
/// request is sent again with the credentials it got.
///
/// ```
/// use rpcwire::mcp::auth::{Authorizer, Browser, FileStore};
/// // A person's client: registers itself, prints the URL to open, keeps tokens in a file.
/// let authorizer = Authorizer::new("my-host")
///     .with_step(Browser::default())
///     .with_store(FileStore::new(std::env::temp_dir().join("tokens.json")));
/// // A machine: pre-registered, client credentials.
/// let machine = Authorizer::new("my-agent").with_client_credentials("agent-7", "s3cret");
/// # let _ = (authorizer, machine);
/// ```
#[derive(Clone, Debug)]
pub struct Authorizer {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) profile: ClientProfile,
    /// A pre-registered client: its id, secret.
    pub(super) given: Option<(String, Option<String>)>,
    pub(super) key: Option<ClientKey>,
    pub(super) grant: Grant,
    pub(super) step: Arc<dyn AuthorizationStep>,
    pub(super) store: Arc<dyn TokenStore>,
    pub(super) fetcher: Fetcher,
    pub(super) dpop_use: DpopUse,
    /// The DPoP key, made when first needed; the same for every token and proof.
    pub(super) dpop: Mutex<Option<Arc<DpopKey>>>,
    /// Scopes asked for whatever the server says.
    pub(super) scope: Option<String>,
    /// Authorizations in a row without a request getting through, at most.
    max_authorizations: u32,
    /// One authorization at a time; what was found out.
    pub(super) flow: tokio::sync::Mutex<Flow>,
    /// The DPoP nonces the resource server and the authorization server asked for.
    resource_nonce: Mutex<Option<String>>,
    server_nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for Inner {
    /// What the authorizer is, without the client's secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("client_name", &self.profile.name)
            .field("redirect_uri", &self.profile.redirect_uri.as_str())
            .field("client_id", &self.given.as_ref().map(|(id, _)| id))
            .field("grant", &self.grant)
            .field("step", &self.step)
            .field("store", &self.store)
            .field("dpop", &self.dpop_use)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// What an authorization found out.
#[derive(Debug, Default)]
pub(super) struct Flow {
    pub(super) server: Option<ServerMetadata>,
    /// The resource indicator (RFC 8707) tokens are asked for.
    pub(super) resource: Option<String>,
    pub(super) auth: Option<ClientAuth>,
    /// The scope last asked for (a step-up asks for it and what is missing).
    pub(super) scope: Option<String>,
    /// Whether the resource takes DPoP-bound tokens (its challenge was `DPoP`, or its
    /// metadata lists DPoP algorithms).
    pub(super) resource_dpop: bool,
    /// Authorizations since a request last got through.
    attempts: u32,
}

impl Authorizer {
    /// An authorizing client named `client_name` (what it registers as): authorization code
    /// with PKCE through [`Headless`] (give a person's step with
    /// [`with_step`](Authorizer::with_step)), tokens kept in memory, redirect URI
    /// [`DEFAULT_REDIRECT_URI`].
    pub fn new(client_name: impl Into<String>) -> Authorizer {
        Authorizer {
            inner: Arc::new(Inner {
                profile: ClientProfile {
                    name: client_name.into(),
                    redirect_uri: Url::parse(DEFAULT_REDIRECT_URI).expect("a valid URL"),
                    metadata_url: None,
                },
                given: None,
                key: None,
                grant: Grant::AuthorizationCode,
                step: Arc::new(Headless::default()),
                store: Arc::new(MemoryStore::default()),
                fetcher: Fetcher::default(),
                dpop_use: DpopUse::WhenOffered,
                dpop: Mutex::new(None),
                scope: None,
                max_authorizations: 3,
                flow: tokio::sync::Mutex::new(Flow::default()),
                resource_nonce: Mutex::new(None),
                server_nonce: Mutex::new(None),
            }),
        }
    }

    fn settings(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.inner).expect("an Authorizer is configured before it is shared")
    }

    /// The redirect URI the authorization server sends the user agent back to.
    ///
    /// ```
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("host").with_redirect_uri("http://localhost:8090/cb".parse().unwrap());
    /// # let _ = authorizer;
    /// ```
    pub fn with_redirect_uri(mut self, redirect_uri: Url) -> Authorizer {
        self.settings().profile.redirect_uri = redirect_uri;
        self
    }

    /// A pre-registered client: its `client_id`, and `client_secret` for a confidential one.
    ///
    /// ```
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("host").with_client("abc", Some("s3cret".into()));
    /// # let _ = authorizer;
    /// ```
    pub fn with_client(mut self, client_id: impl Into<String>, client_secret: Option<String>) -> Authorizer {
        self.settings().given = Some((client_id.into(), client_secret));
        self
    }

    /// Names the client by the URL of its metadata document (CIMD) where the authorization
    /// server takes that, instead of registering.
    ///
    /// ```
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("host")
    ///     .with_client_metadata_url("https://host.example/oauth/client.json".parse().unwrap());
    /// # let _ = authorizer;
    /// ```
    pub fn with_client_metadata_url(mut self, url: Url) -> Authorizer {
        self.settings().profile.metadata_url = Some(url);
        self
    }

    /// Authenticates with a private key (`private_key_jwt`) instead of a secret.
    ///
    /// ```no_run
    /// let pem = std::fs::read_to_string("client-key.pem").unwrap();
    /// let key = rpcwire::mcp::auth::ClientKey::from_pem(&pem, None).unwrap();
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("agent").with_client("agent-7", None).with_private_key(key);
    /// # let _ = authorizer;
    /// ```
    pub fn with_private_key(mut self, key: ClientKey) -> Authorizer {
        self.settings().key = Some(key);
        self
    }

    /// Gets tokens with the client credentials grant (a machine, no user): `client_id`
    /// and `client_secret` (or, with [`with_private_key`](Authorizer::with_private_key), a
    /// signed assertion).
    ///
    /// (See [`Authorizer`] for an example.)
    pub fn with_client_credentials(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Authorizer {
        let secret: String = client_secret.into();
        let settings = self.settings();
        settings.given = Some((client_id.into(), (!secret.is_empty()).then_some(secret)));
        settings.grant = Grant::ClientCredentials;
        self
    }

    /// How a person authorizes (default [`Headless`]).
    ///
    /// (See [`Authorizer`] for an example.)
    pub fn with_step(mut self, step: impl AuthorizationStep + 'static) -> Authorizer {
        self.settings().step = Arc::new(step);
        self
    }

    /// Where tokens and the registered client are kept (default in memory).
    ///
    /// (See [`Authorizer`] for an example.)
    pub fn with_store(mut self, store: impl TokenStore + 'static) -> Authorizer {
        self.settings().store = Arc::new(store);
        self
    }

    /// Asks for `scope` (space-separated) whatever the server's challenge says.
    ///
    /// ```
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("host").with_scope("files:read");
    /// # let _ = authorizer;
    /// ```
    pub fn with_scope(mut self, scope: impl Into<String>) -> Authorizer {
        self.settings().scope = Some(scope.into());
        self
    }

    /// Binds tokens to a key of this client (DPoP, RFC 9449) always, not only where the
    /// authorization server takes ES256 proofs and the resource DPoP tokens (which they are
    /// by default): every request then carries a proof.
    ///
    /// ```
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("host").with_dpop();
    /// # let _ = authorizer;
    /// ```
    pub fn with_dpop(mut self) -> Authorizer {
        self.settings().dpop_use = DpopUse::Always;
        self
    }

    /// Gets tokens with a JWT an identity provider issued to this workload (RFC 7523 §2.1,
    /// workload identity federation): `assertion`, whose audience is the authorization
    /// server.
    ///
    /// ```
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("agent").with_jwt_bearer("eyJ.workload.jwt");
    /// # let _ = authorizer;
    /// ```
    pub fn with_jwt_bearer(mut self, assertion: impl Into<String>) -> Authorizer {
        self.settings().grant = Grant::JwtBearer(assertion.into());
        self
    }

    /// Gets tokens through the enterprise's identity provider (enterprise-managed
    /// authorization, SEP-990): the user's ID token exchanged at `provider` for an identity
    /// assertion naming the authorization server and the resource (RFC 8693), presented to
    /// the authorization server as a JWT bearer grant by the client of
    /// [`with_client`](Authorizer::with_client).
    ///
    /// ```
    /// use rpcwire::mcp::auth::{Authorizer, IdentityProvider};
    /// let idp = IdentityProvider::new("https://idp.example/token".parse().unwrap(), "eyJ.id.token");
    /// let authorizer = Authorizer::new("host").with_client("host-at-as", Some("s3cret".into())).with_identity_provider(idp);
    /// # let _ = authorizer;
    /// ```
    pub fn with_identity_provider(mut self, provider: IdentityProvider) -> Authorizer {
        self.settings().grant = Grant::IdentityAssertion(provider);
        self
    }

    /// The DPoP key, made the first time.
    pub(super) fn dpop_key(&self) -> Result<Arc<DpopKey>, AuthError> {
        let mut key = lock_unpoisoned(&self.inner.dpop);
        if let Some(key) = &*key {
            return Ok(key.clone());
        }
        let made = Arc::new(DpopKey::generate()?);
        *key = Some(made.clone());
        Ok(made)
    }

    /// Speaks TLS through `tls` to `https://` metadata and authorization servers.
    ///
    /// ```
    /// let tls = rpcwire::transport::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let authorizer = rpcwire::mcp::auth::Authorizer::new("host").with_tls(tls);
    /// # let _ = authorizer;
    /// ```
    pub fn with_tls(mut self, tls: crate::transport::tls::ClientTls) -> Authorizer {
        let settings = self.settings();
        settings.fetcher = std::mem::take(&mut settings.fetcher).with_tls(Some(tls));
        self
    }

    /// The key tokens for the server at `url` are kept under.
    pub(super) fn key_of(url: &Url) -> String {
        canonical_resource(url)
    }

    /// The credentials a request (`method` to `url`) carries: `Authorization` and, with DPoP,
    /// its proof; none before there is a token. An expired token is refreshed first.
    pub(crate) async fn credentials(
        &self,
        method: &str,
        url: &Url,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, AuthError> {
        let key = Self::key_of(url);
        let mut kept = self.inner.store.load(&key);
        if kept
            .tokens
            .as_ref()
            .is_some_and(|t| t.is_expired() && t.refresh_token.is_some())
        {
            let mut flow = self.inner.flow.lock().await;
            kept = self.inner.store.load(&key);
            if kept.tokens.as_ref().is_some_and(Tokens::is_expired)
                && self.refresh(&mut flow, url, &mut kept).await.is_err()
            {
                kept.tokens = None;
                self.inner.store.save(&key, &kept);
            }
        }
        let Some(tokens) = kept.tokens else {
            return Ok(Vec::new());
        };
        self.present(&tokens, method, url)
    }

    /// The headers that present `tokens`.
    fn present(
        &self,
        tokens: &Tokens,
        method: &str,
        url: &Url,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, AuthError> {
        let unsendable = || AuthError::Unsupported("a token that cannot be sent in a header".to_owned());
        let mut headers = Vec::with_capacity(2);
        match tokens.is_dpop() {
            true => {
                let key = self.dpop_key()?;
                let nonce = lock_unpoisoned(&self.inner.resource_nonce).clone();
                let proof = key.proof(method, url, nonce.as_deref(), Some(&tokens.access_token))?;
                let value = format!("DPoP {}", tokens.access_token);
                headers.push((
                    AUTHORIZATION,
                    HeaderValue::from_str(&value).map_err(|_| unsendable())?,
                ));
                headers.push((
                    HeaderName::from_static("dpop"),
                    HeaderValue::from_str(&proof).map_err(|_| unsendable())?,
                ));
            }
            false => {
                let value = format!("Bearer {}", tokens.access_token);
                headers.push((
                    AUTHORIZATION,
                    HeaderValue::from_str(&value).map_err(|_| unsendable())?,
                ));
            }
        }
        Ok(headers)
    }

    /// A request with these credentials got through: the count of authorizations in a row
    /// starts again; a DPoP nonce the server gave is kept.
    pub(crate) fn accepted(&self, headers: &HeaderMap) {
        self.keep_resource_nonce(headers);
        if let Ok(mut flow) = self.inner.flow.try_lock() {
            flow.attempts = 0;
        }
    }

    fn keep_resource_nonce(&self, headers: &HeaderMap) {
        if let Some(nonce) = headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) {
            *lock_unpoisoned(&self.inner.resource_nonce) = Some(nonce.to_owned());
        }
    }

    /// Whether a refusal with `status` and `headers` is for an authorizer to answer: a `401`,
    /// or a `403` whose challenge says `insufficient_scope` (any other `403` is the server's
    /// own refusal, which no token changes).
    pub(crate) fn concerns(status: StatusCode, headers: &HeaderMap) -> bool {
        let challenges = Challenge::from_headers(headers);
        Self::concerned(status, token_challenge(&challenges))
    }

    /// [`concerns`](Authorizer::concerns), with the refusal's token challenge already read.
    fn concerned(status: StatusCode, challenge: Option<&Challenge>) -> bool {
        status == StatusCode::UNAUTHORIZED
            || status == StatusCode::FORBIDDEN
                && challenge.is_some_and(|c| c.param("error") == Some("insufficient_scope"))
    }

    /// The server at `url` refused a request (`status`, its `headers`) that carried
    /// `sent` (the `Authorization` value, if any): new credentials are got when that can
    /// help, `Ok` meaning the request is worth sending again.
    pub(crate) async fn refused(
        &self,
        url: &Url,
        status: StatusCode,
        headers: &HeaderMap,
        sent: Option<&HeaderValue>,
    ) -> Result<(), AuthError> {
        let challenges = Challenge::from_headers(headers);
        let error_of = |c: &Challenge| c.param("error").map(str::to_owned);
        // A DPoP nonce asked for: the same token, a new proof.
        if status == StatusCode::UNAUTHORIZED
            && lock_unpoisoned(&self.inner.dpop).is_some()
            && challenges
                .iter()
                .any(|c| error_of(c).as_deref() == Some("use_dpop_nonce"))
            && headers.contains_key("dpop-nonce")
        {
            let before = lock_unpoisoned(&self.inner.resource_nonce).clone();
            self.keep_resource_nonce(headers);
            if *lock_unpoisoned(&self.inner.resource_nonce) != before {
                return Ok(());
            }
        }
        if !Self::concerned(status, token_challenge(&challenges)) {
            return Err(AuthError::Refused(format!("the server answered {status}")));
        }
        let challenge = token_challenge(&challenges).cloned().unwrap_or_default();
        let insufficient = error_of(&challenge).as_deref() == Some("insufficient_scope");
        let key = Self::key_of(url);
        let mut flow = self.inner.flow.lock().await;
        let mut kept = self.inner.store.load(&key);
        let current = kept
            .tokens
            .as_ref()
            .and_then(|t| self.present(t, "POST", url).ok())
            .and_then(|headers| headers.into_iter().next().map(|(_, value)| value));
        if current.is_some() && current.as_ref() != sent {
            // Another request got new credentials meanwhile.
            return Ok(());
        }
        if flow.attempts >= self.inner.max_authorizations {
            return Err(AuthError::Unsupported(format!(
                "{} authorizations in a row did not get a request through; not trying again",
                flow.attempts
            )));
        }
        flow.attempts += 1;
        // An expired or revoked token is refreshed first (not a scope it lacks).
        if status == StatusCode::UNAUTHORIZED && self.refresh(&mut flow, url, &mut kept).await.is_ok() {
            return Ok(());
        }
        let mut scope = challenge.param("scope").map(str::to_owned);
        if insufficient {
            // A step-up asks for what it had and what is missing; a scope it already asked
            // for will not come from asking again.
            let had = flow.scope.clone().unwrap_or_default();
            let had: Vec<&str> = had.split(' ').filter(|s| !s.is_empty()).collect();
            let wanted: Vec<&str> = scope
                .as_deref()
                .unwrap_or_default()
                .split(' ')
                .filter(|s| !s.is_empty())
                .collect();
            let missing: Vec<&str> = wanted.iter().copied().filter(|w| !had.contains(w)).collect();
            if missing.is_empty() {
                return Err(AuthError::Refused(format!(
                    "the server wants scope {:?}, which was asked for and not granted",
                    scope.unwrap_or_default()
                )));
            }
            scope = Some(had.into_iter().chain(missing).collect::<Vec<_>>().join(" "));
        }
        self.authorize(&mut flow, url, &challenge, scope).await
    }

    /// Uses the refresh token, if there is one.
    pub(super) async fn refresh(&self, flow: &mut Flow, url: &Url, kept: &mut Kept) -> Result<(), AuthError> {
        let refresh_token = kept
            .tokens
            .as_ref()
            .and_then(|t| t.refresh_token.clone())
            .ok_or_else(|| AuthError::Unsupported("no refresh token".to_owned()))?;
        let (Some(server), Some(client)) = (flow.server.clone(), kept.client.clone()) else {
            return Err(AuthError::Unsupported(
                "nothing known of the authorization server".to_owned(),
            ));
        };
        let auth = flow.auth.unwrap_or(ClientAuth::None);
        let resource = flow.resource.clone();
        let mut grant = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
        ];
        if let Some(resource) = &resource {
            grant.push(("resource", resource));
        }
        let mut tokens = self.token_request(flow, &server, &client, auth, &grant).await?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token);
        }
        kept.tokens = Some(tokens);
        self.inner.store.save(&Self::key_of(url), kept);
        Ok(())
    }

    pub(super) async fn token_request(
        &self,
        flow: &Flow,
        server: &ServerMetadata,
        client: &RegisteredClient,
        auth: ClientAuth,
        grant: &[(&str, &str)],
    ) -> Result<Tokens, AuthError> {
        let endpoint = server
            .token_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::Discovery(format!("{} names no token endpoint", server.issuer)))?;
        let endpoint = Url::parse(endpoint).map_err(|e| AuthError::Fetch(format!("token_endpoint: {e}")))?;
        // By default, tokens are bound to a key where both the authorization server and the
        // resource take DPoP proofs.
        let dpop = match self.inner.dpop_use {
            DpopUse::Always => Some(self.dpop_key()?),
            DpopUse::WhenOffered
                if flow.resource_dpop
                    && ServerMetadata::lists(&server.dpop_signing_alg_values_supported, "ES256", false) =>
            {
                Some(self.dpop_key()?)
            }
            DpopUse::WhenOffered => None,
        };
        let request = TokenRequest {
            endpoint: &endpoint,
            issuer: &server.issuer,
            client: Client {
                id: &client.client_id,
                secret: client.client_secret.as_deref(),
                key: self.inner.key.as_ref(),
                auth,
            },
            dpop: dpop.as_deref(),
            dpop_nonce: &self.inner.server_nonce,
        };
        request.send(&self.inner.fetcher, grant).await
    }
}

/// The challenge of a refusal that is about the token: its first `Bearer` or `DPoP` one.
fn token_challenge(challenges: &[Challenge]) -> Option<&Challenge> {
    challenges.iter().find(|c| c.is("Bearer") || c.is("DPoP"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authorizer_shows_its_kind_and_never_its_secrets() {
        let idp = IdentityProvider::new("https://idp.example/token".parse().unwrap(), "id-token-value")
            .with_client_id("at-idp");
        let all = [
            Authorizer::new("host").with_client("given", Some("secret-value".into())),
            Authorizer::new("machine").with_client_credentials("robot", "secret-value"),
            Authorizer::new("workload").with_jwt_bearer("assertion-value"),
            Authorizer::new("host").with_identity_provider(idp),
        ];
        let shown: Vec<String> = all.iter().map(|a| format!("{a:?}")).collect();
        for (text, kind) in shown.iter().zip([
            "AuthorizationCode",
            "ClientCredentials",
            "JwtBearer",
            "IdentityAssertion",
        ]) {
            assert!(text.contains(kind), "{text}");
            for secret in ["secret-value", "assertion-value", "id-token-value"] {
                assert!(!text.contains(secret), "{text}");
            }
        }
        assert!(shown[3].contains("at-idp"), "{}", shown[3]);
    }
}
