//! The token endpoint (RFC 6749 §3.2): the grants a client of MCP asks with — an
//! authorization code with its PKCE verifier, a refresh token, client credentials — each
//! with the client's authentication the server takes (`client_secret_basic`,
//! `client_secret_post`, `private_key_jwt`, or none for a public client), the resource it is
//! for (RFC 8707), and a DPoP proof when the tokens are bound to a key (RFC 9449).

use http::header::{HeaderName, HeaderValue, AUTHORIZATION};
use serde::Deserialize;
use url::Url;

use super::error::AuthError;
use super::fetch::{basic_credentials, Fetched, Fetcher};
use super::keys::{ClientKey, DpopKey};
use super::store::{now_seconds, Tokens};

/// How the client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientAuth {
    /// `client_secret_basic`: HTTP Basic with the id and the secret, each form-encoded.
    Basic,
    /// `client_secret_post`: the id and the secret in the form.
    Post,
    /// `private_key_jwt`: a signed assertion in the form.
    PrivateKeyJwt,
    /// `none`: a public client, its id in the form.
    None,
}

impl ClientAuth {
    /// The RFC 7591 name.
    pub fn name(self) -> &'static str {
        match self {
            ClientAuth::Basic => "client_secret_basic",
            ClientAuth::Post => "client_secret_post",
            ClientAuth::PrivateKeyJwt => "private_key_jwt",
            ClientAuth::None => "none",
        }
    }

    /// The method of that name.
    pub fn from_name(name: &str) -> Option<ClientAuth> {
        Some(match name {
            "client_secret_basic" => ClientAuth::Basic,
            "client_secret_post" => ClientAuth::Post,
            "private_key_jwt" => ClientAuth::PrivateKeyJwt,
            "none" => ClientAuth::None,
            _ => return None,
        })
    }
}

/// Who is asking: the client's id and how it proves it.
pub(crate) struct Client<'a> {
    pub id: &'a str,
    pub secret: Option<&'a str>,
    pub key: Option<&'a ClientKey>,
    pub auth: ClientAuth,
}

/// The token endpoint's answer (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// One token request.
pub(crate) struct TokenRequest<'a> {
    pub endpoint: &'a Url,
    /// The `aud` of a client assertion: the authorization server's issuer.
    pub issuer: &'a str,
    pub client: Client<'a>,
    pub dpop: Option<&'a DpopKey>,
    /// The nonce the server asked DPoP proofs to carry, kept across requests.
    pub dpop_nonce: &'a std::sync::Mutex<Option<String>>,
}

impl TokenRequest<'_> {
    /// Asks for tokens with `grant` (the grant's own parameters), the client's
    /// authentication added; a DPoP nonce asked for is taken and the request sent once more.
    pub async fn send(&self, fetcher: &Fetcher, grant: &[(&str, &str)]) -> Result<Tokens, AuthError> {
        for _ in 0..2 {
            let fetched = self.send_once(fetcher, grant).await?;
            if let Some(nonce) = fetched.headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) {
                *crate::sync::lock_unpoisoned(self.dpop_nonce) = Some(nonce.to_owned());
            }
            if fetched.status.is_success() {
                return self.tokens(&fetched);
            }
            let error = serde_json::from_slice::<serde_json::Value>(&fetched.body).unwrap_or_default();
            let nonce_asked = error.get("error").and_then(|e| e.as_str()) == Some("use_dpop_nonce");
            if !(nonce_asked && self.dpop.is_some()) {
                return Err(AuthError::Refused(format!(
                    "the token endpoint answered {}",
                    fetched.oauth_error()
                )));
            }
        }
        Err(AuthError::Refused(
            "the token endpoint asked for a DPoP nonce twice".to_owned(),
        ))
    }

    async fn send_once(&self, fetcher: &Fetcher, grant: &[(&str, &str)]) -> Result<Fetched, AuthError> {
        let mut form: Vec<(&str, &str)> = grant.to_vec();
        let mut headers: Vec<(HeaderName, HeaderValue)> = Vec::new();
        let assertion;
        match self.client.auth {
            ClientAuth::Basic => {
                let value = basic_credentials(self.client.id, self.client.secret.unwrap_or_default())
                    .ok_or_else(|| AuthError::Unsupported("a client id that cannot be sent".to_owned()))?;
                headers.push((AUTHORIZATION, value));
            }
            ClientAuth::Post => {
                form.push(("client_id", self.client.id));
                form.push(("client_secret", self.client.secret.unwrap_or_default()));
            }
            ClientAuth::PrivateKeyJwt => {
                let key = self.client.key.ok_or_else(|| {
                    AuthError::Unsupported("private_key_jwt without a private key".to_owned())
                })?;
                assertion = key.assertion(self.client.id, self.issuer)?;
                form.push(("client_id", self.client.id));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                ));
                form.push(("client_assertion", &assertion));
            }
            ClientAuth::None => form.push(("client_id", self.client.id)),
        }
        if let Some(key) = self.dpop {
            let nonce = crate::sync::lock_unpoisoned(self.dpop_nonce).clone();
            let proof = key.proof("POST", self.endpoint, nonce.as_deref(), None)?;
            let value = HeaderValue::from_str(&proof)
                .map_err(|_| AuthError::Unsupported("a DPoP proof that cannot be sent".to_owned()))?;
            headers.push((HeaderName::from_static("dpop"), value));
        }
        fetcher.post_form(self.endpoint, &headers, &form).await
    }

    fn tokens(&self, fetched: &Fetched) -> Result<Tokens, AuthError> {
        let answer: TokenAnswer = fetched.json(self.endpoint)?;
        let token_type = answer.token_type.unwrap_or_else(|| "Bearer".to_owned());
        let known = token_type.eq_ignore_ascii_case("bearer") || token_type.eq_ignore_ascii_case("dpop");
        if !known {
            return Err(AuthError::Unsupported(format!("a token of type {token_type:?}")));
        }
        if token_type.eq_ignore_ascii_case("dpop") && self.dpop.is_none() {
            return Err(AuthError::Mismatch(
                "a DPoP-bound token to a client that did not ask for one".to_owned(),
            ));
        }
        Ok(Tokens {
            access_token: answer.access_token,
            token_type,
            refresh_token: answer.refresh_token,
            expires_at: answer.expires_in.map(|s| now_seconds().saturating_add(s)),
            scope: answer.scope,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for auth in [
            ClientAuth::Basic,
            ClientAuth::Post,
            ClientAuth::PrivateKeyJwt,
            ClientAuth::None,
        ] {
            assert_eq!(ClientAuth::from_name(auth.name()), Some(auth));
        }
        assert_eq!(ClientAuth::from_name("tls_client_auth"), None);
        let basic = basic_credentials("a b", "c:d").unwrap();
        // base64("a+b:c%3Ad")
        assert_eq!(basic.to_str().unwrap(), "Basic YStiOmMlM0Fk");
        assert!(format!("{basic:?}").contains("Sensitive"));
    }
}
