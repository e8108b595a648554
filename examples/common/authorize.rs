//! The authorization options of the MCP examples that connect to servers (`mcp_client`,
//! `mcp_gateway --connect`), and the `Authorizer` they make (`auth` feature).

#![allow(dead_code)] // each example uses its part

/// What the command line said of authorization.
#[derive(Clone, Debug, Default)]
pub struct AuthOptions {
    /// A pre-registered client.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// The URL of the client's metadata document (CIMD).
    pub client_metadata_url: Option<String>,
    /// A PEM private key (`private_key_jwt`), and its algorithm.
    pub private_key_pem: Option<String>,
    pub signing_algorithm: Option<String>,
    /// Client credentials instead of a user's authorization.
    pub client_credentials: bool,
    /// A workload's JWT (RFC 7523 JWT bearer grant).
    pub jwt_bearer: Option<String>,
    /// An enterprise identity provider's token endpoint, the user's ID token there, and
    /// this client's id there.
    pub idp_token_endpoint: Option<String>,
    pub idp_id_token: Option<String>,
    pub idp_client_id: Option<String>,
    /// Follow the authorization redirects without a browser.
    pub headless: bool,
    pub redirect_uri: Option<String>,
    pub scope: Option<String>,
    /// Keep tokens in this file (0600), `--oauth-tokens`.
    pub token_file: Option<String>,
}

/// The flags, for a usage line.
pub const AUTH_USAGE: &str = "[--client-id ID] [--client-secret SECRET] [--client-metadata-url URL] \
[--assertion-key PEM] [--client-credentials] [--oauth-headless] [--redirect-uri URL] [--scope S] [--oauth-tokens FILE]";

impl AuthOptions {
    /// Takes `flag` (and its value) when it is one of these options: `Ok(true)`; `Ok(false)`
    /// when it is not.
    pub fn take(
        &mut self,
        flag: &str,
        value: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Result<bool, String> {
        match flag {
            "--client-id" => self.client_id = Some(value(flag)?),
            "--client-secret" => self.client_secret = Some(value(flag)?),
            "--client-metadata-url" => self.client_metadata_url = Some(value(flag)?),
            "--assertion-key" => {
                let path = value(flag)?;
                let pem =
                    std::fs::read_to_string(&path).map_err(|e| format!("--assertion-key {path}: {e}"))?;
                self.private_key_pem = Some(pem);
            }
            "--client-credentials" => self.client_credentials = true,
            "--oauth-headless" => self.headless = true,
            "--redirect-uri" => self.redirect_uri = Some(value(flag)?),
            "--scope" => self.scope = Some(value(flag)?),
            "--oauth-tokens" => self.token_file = Some(value(flag)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The authorizer these options describe, for a client called `name`.
    #[cfg(feature = "auth")]
    pub fn authorizer(&self, name: &str) -> Result<rpcwire::mcp::auth::Authorizer, String> {
        use rpcwire::mcp::auth::{Authorizer, Browser, ClientKey, FileStore, Headless, IdentityProvider};
        let parse = |flag: &str, url: &str| url.parse().map_err(|e| format!("{flag} {url}: {e}"));
        let mut authorizer = Authorizer::new(name);
        authorizer = if self.headless {
            authorizer.with_step(Headless::default())
        } else {
            authorizer.with_step(Browser::default())
        };
        if let Some(url) = &self.redirect_uri {
            authorizer = authorizer.with_redirect_uri(parse("--redirect-uri", url)?);
        }
        if let Some(url) = &self.client_metadata_url {
            authorizer = authorizer.with_client_metadata_url(parse("--client-metadata-url", url)?);
        }
        if let Some(id) = &self.client_id {
            authorizer = if self.client_credentials {
                authorizer.with_client_credentials(id, self.client_secret.clone().unwrap_or_default())
            } else {
                authorizer.with_client(id, self.client_secret.clone())
            };
        }
        if let Some(pem) = &self.private_key_pem {
            let key =
                ClientKey::from_pem(pem, self.signing_algorithm.as_deref()).map_err(|e| e.to_string())?;
            authorizer = authorizer.with_private_key(key);
        }
        if let Some(jwt) = &self.jwt_bearer {
            authorizer = authorizer.with_jwt_bearer(jwt);
        }
        if let (Some(endpoint), Some(id_token)) = (&self.idp_token_endpoint, &self.idp_id_token) {
            let mut provider = IdentityProvider::new(parse("idp token endpoint", endpoint)?, id_token);
            if let Some(id) = &self.idp_client_id {
                provider = provider.with_client_id(id);
            }
            authorizer = authorizer.with_identity_provider(provider);
        }
        if let Some(scope) = &self.scope {
            authorizer = authorizer.with_scope(scope);
        }
        if let Some(path) = &self.token_file {
            authorizer = authorizer.with_store(FileStore::new(path));
        }
        Ok(authorizer)
    }
}
