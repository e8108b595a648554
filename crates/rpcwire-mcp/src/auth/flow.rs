//! One whole authorization of an [`Authorizer`]: the resource's metadata and its
//! authorization server's found (each checked to be the one asked for), the client
//! registered, and tokens got with the grant the authorizer was given — an authorization
//! code with PKCE through its step (the response's state and issuer checked), client
//! credentials, a workload's JWT, or an enterprise identity assertion.

use url::Url;

use super::authorizer::{Authorizer, Flow, Grant, IdentityProvider};
use super::challenge::Challenge;
use super::error::{without_query, AuthError};
use super::fetch::server_metadata;
use super::metadata::{canonical_resource, resource_covers, resource_metadata_urls};
use super::metadata::{ResourceMetadata, ServerMetadata};
use super::pkce::{random_text, Pkce};
use super::registration::{preferred_auth, register};
use super::store::{Kept, RegisteredClient, Tokens};
use super::token::ClientAuth;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

impl Authorizer {
    /// A whole authorization for the server at `url` after `challenge`, asking for
    /// `scope` (the challenge's, or a step-up's) when given.
    pub(super) async fn authorize(
        &self,
        flow: &mut Flow,
        url: &Url,
        challenge: &Challenge,
        scope: Option<String>,
    ) -> Result<(), AuthError> {
        let named = challenge
            .param("resource_metadata")
            .and_then(|u| url.join(u).ok());
        let resource_metadata = self.resource_metadata(url, named.as_ref()).await?;
        let (issuer, resource, scopes_supported) = match &resource_metadata {
            Some(metadata) => {
                // Kept as the document wrote it: it is sent back as it is (RFC 8707).
                let resource = metadata
                    .resource
                    .clone()
                    .unwrap_or_else(|| canonical_resource(url));
                if !resource_covers(&resource, url) {
                    return Err(AuthError::Mismatch(format!(
                        "the protected resource metadata is for {resource}, not {}",
                        without_query(url)
                    )));
                }
                let issuer = metadata.authorization_servers.first().cloned().ok_or_else(|| {
                    AuthError::Discovery(
                        "the protected resource metadata names no authorization server".to_owned(),
                    )
                })?;
                (issuer, resource, metadata.scopes_supported.clone())
            }
            // 2025-03-26: the MCP server's origin is its authorization server.
            None => (url.origin().ascii_serialization(), canonical_resource(url), None),
        };
        let server = self.server_metadata(&issuer, resource_metadata.is_none()).await?;
        // Scopes: asked for, else the challenge's (a step-up's union), else the resource's,
        // else none; `offline_access` too where the authorization server offers it and a
        // user is there to grant it.
        let mut scope = self.inner.scope.clone().or(scope).or_else(|| {
            scopes_supported
                .map(|all| all.join(" "))
                .filter(|s| !s.is_empty())
        });
        let offline = ServerMetadata::lists(&server.scopes_supported, "offline_access", false)
            && matches!(self.inner.grant, Grant::AuthorizationCode);
        if offline
            && !scope
                .as_deref()
                .unwrap_or_default()
                .split(' ')
                .any(|s| s == "offline_access")
        {
            scope = Some(match scope {
                Some(scope) => format!("{scope} offline_access"),
                None => "offline_access".to_owned(),
            });
        }
        let key = Self::key_of(url);
        let mut kept = self.inner.store.load(&key);
        let (client, auth) = self.client_for(&server, &kept, offline).await?;
        flow.server = Some(server.clone());
        flow.resource = Some(resource.clone());
        flow.auth = Some(auth);
        flow.scope = scope.clone();
        flow.resource_dpop = challenge.is("DPoP")
            || resource_metadata
                .as_ref()
                .is_some_and(|m| m.dpop_signing_alg_values_supported.is_some());
        kept.client = Some(client.clone());
        let scope = scope.as_deref();
        let tokens = match &self.inner.grant {
            Grant::ClientCredentials => {
                let mut grant = vec![
                    ("grant_type", "client_credentials"),
                    ("resource", resource.as_str()),
                ];
                grant.extend(scope.map(|scope| ("scope", scope)));
                self.token_request(flow, &server, &client, auth, &grant).await?
            }
            Grant::JwtBearer(assertion) => {
                let mut grant = vec![("grant_type", JWT_BEARER), ("assertion", assertion.as_str())];
                grant.extend(scope.map(|scope| ("scope", scope)));
                self.token_request(flow, &server, &client, auth, &grant).await?
            }
            Grant::IdentityAssertion(provider) => {
                let assertion = self
                    .identity_assertion(provider, &server, &resource, scope)
                    .await?;
                let mut grant = vec![("grant_type", JWT_BEARER), ("assertion", assertion.as_str())];
                grant.extend(scope.map(|scope| ("scope", scope)));
                self.token_request(flow, &server, &client, auth, &grant).await?
            }
            Grant::AuthorizationCode => {
                self.authorization_code(flow, &server, &client, auth, &resource, scope)
                    .await?
            }
        };
        kept.tokens = Some(tokens);
        self.inner.store.save(&key, &kept);
        Ok(())
    }

    /// The resource's metadata: from the URL its challenge named (only), else the
    /// well-known ones; `None` when there is none (a 2025-03-26 server).
    async fn resource_metadata(
        &self,
        url: &Url,
        named: Option<&Url>,
    ) -> Result<Option<ResourceMetadata>, AuthError> {
        for candidate in resource_metadata_urls(url, named) {
            let fetched = self.inner.fetcher.get(&candidate, &[]).await?;
            if fetched.status.is_success() {
                return fetched.json(&candidate).map(Some);
            }
        }
        Ok(None)
    }

    /// The authorization server's metadata for `issuer`, its `issuer` exactly that (RFC
    /// 8414 §3.3); for a 2025-03-26 server (`legacy`: no resource metadata, `issuer` its
    /// origin), whatever its origin serves, or without any, the default endpoints there.
    async fn server_metadata(&self, issuer: &str, legacy: bool) -> Result<ServerMetadata, AuthError> {
        let mut tried = Vec::new();
        // A 2025-03-26 server named no issuer: its own origin's metadata is taken as it is
        // (that revision's discovery), whatever issuer it gives.
        if let Some(metadata) = server_metadata(&self.inner.fetcher, issuer, legacy, &mut tried).await? {
            return Ok(metadata);
        }
        if legacy {
            let issuer_url =
                Url::parse(issuer).map_err(|e| AuthError::Discovery(format!("issuer {issuer:?}: {e}")))?;
            let at = |path: &str| issuer_url.join(path).ok().map(|u| u.to_string());
            return Ok(ServerMetadata {
                issuer: issuer.to_owned(),
                authorization_endpoint: at("/authorize"),
                token_endpoint: at("/token"),
                registration_endpoint: at("/register"),
                code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
                ..Default::default()
            });
        }
        Err(AuthError::Discovery(format!(
            "no authorization server metadata for {issuer}: tried {}",
            tried.join(", ")
        )))
    }

    /// The client to use with `server`: the one given, the one kept from an earlier
    /// registration with that same issuer, or a new registration.
    async fn client_for(
        &self,
        server: &ServerMetadata,
        kept: &Kept,
        offline: bool,
    ) -> Result<(RegisteredClient, ClientAuth), AuthError> {
        if let Some((id, secret)) = &self.inner.given {
            let client = RegisteredClient::new(&server.issuer, id, secret.clone());
            let auth = preferred_auth(server, secret.is_some(), self.inner.key.is_some());
            return Ok((client, auth));
        }
        if matches!(self.inner.grant, Grant::JwtBearer(_)) {
            // A workload names itself in its assertion.
            return Ok((RegisteredClient::new(&server.issuer, "", None), ClientAuth::None));
        }
        if let Some(client) = kept.client.as_ref().filter(|c| c.issuer == server.issuer) {
            let auth = match client.client_secret {
                Some(_) => preferred_auth(server, true, false),
                None => ClientAuth::None,
            };
            return Ok((client.clone(), auth));
        }
        let mut grants = vec!["authorization_code"];
        if offline || ServerMetadata::lists(&server.grant_types_supported, "refresh_token", false) {
            grants.push("refresh_token");
        }
        register(&self.inner.fetcher, server, &self.inner.profile, &grants).await
    }

    /// The authorization code grant: PKCE, the step, the response checked (state, issuer),
    /// the code exchanged.
    async fn authorization_code(
        &self,
        flow: &Flow,
        server: &ServerMetadata,
        client: &RegisteredClient,
        auth: ClientAuth,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<Tokens, AuthError> {
        if server.code_challenge_methods_supported.is_some() && !server.supports_pkce_s256() {
            return Err(AuthError::Unsupported(format!(
                "{} does not support PKCE with S256",
                server.issuer
            )));
        }
        let endpoint = server.authorization_endpoint.as_deref().ok_or_else(|| {
            AuthError::Discovery(format!("{} names no authorization endpoint", server.issuer))
        })?;
        let mut authorization =
            Url::parse(endpoint).map_err(|e| AuthError::Fetch(format!("authorization_endpoint: {e}")))?;
        let pkce = Pkce::new()?;
        let state = random_text(16)?;
        let redirect_uri = &self.inner.profile.redirect_uri;
        {
            let mut query = authorization.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", redirect_uri.as_str())
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", resource);
            if let Some(scope) = scope {
                query.append_pair("scope", scope);
                // An OpenID provider grants offline access (a refresh token) only when asked
                // to prompt for consent (OpenID Connect Core §11).
                if scope.split(' ').any(|s| s == "offline_access") {
                    query.append_pair("prompt", "consent");
                }
            }
        }
        let back = self.inner.step.authorize(&authorization, redirect_uri).await?;
        let code = check_response(&back, &state, server)?;
        let grant = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_verifier", pkce.verifier.as_str()),
            ("resource", resource),
        ];
        self.token_request(flow, server, client, auth, &grant).await
    }

    /// The user's ID token exchanged at the enterprise identity provider (RFC 8693) for an
    /// identity assertion (ID-JAG) for `server`'s issuer and `resource`.
    async fn identity_assertion(
        &self,
        provider: &IdentityProvider,
        server: &ServerMetadata,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut form = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
            ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"),
            ("subject_token", provider.id_token.as_str()),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"),
            ("audience", server.issuer.as_str()),
            ("resource", resource),
        ];
        form.extend(scope.map(|scope| ("scope", scope)));
        form.extend(provider.client_id.as_deref().map(|id| ("client_id", id)));
        let fetched = self
            .inner
            .fetcher
            .post_form(&provider.token_endpoint, &[], &form)
            .await?;
        if !fetched.status.is_success() {
            return Err(AuthError::Refused(format!(
                "the identity provider's token exchange answered {}",
                fetched.oauth_error()
            )));
        }
        #[derive(serde::Deserialize)]
        struct Exchanged {
            access_token: String,
            #[serde(default)]
            issued_token_type: Option<String>,
        }
        let exchanged: Exchanged = fetched.json(&provider.token_endpoint)?;
        match exchanged.issued_token_type.as_deref() {
            None | Some("urn:ietf:params:oauth:token-type:id-jag") => Ok(exchanged.access_token),
            Some(other) => Err(AuthError::Unsupported(format!(
                "the identity provider issued a {other}, not an identity assertion"
            ))),
        }
    }
}

/// The code of an authorization response, once its issuer (RFC 9207: `iss` compared as a
/// string, required where the server says it sends one) and its `state` are the ones
/// expected; an error response as the error it is.
fn check_response(back: &Url, state: &str, server: &ServerMetadata) -> Result<String, AuthError> {
    let param = |name: &str| {
        back.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    match param("iss") {
        Some(iss) if iss != server.issuer => {
            return Err(AuthError::Mismatch(format!(
                "the authorization response is from issuer {iss:?}, not {:?}",
                server.issuer
            )))
        }
        None if server.authorization_response_iss_parameter_supported => {
            return Err(AuthError::Mismatch(
                "the authorization response has no iss, which its server says it sends".to_owned(),
            ))
        }
        _ => {}
    }
    if param("state").as_deref() != Some(state) {
        return Err(AuthError::Mismatch(
            "the authorization response's state is not the one sent".to_owned(),
        ));
    }
    if let Some(error) = param("error") {
        let description = param("error_description").unwrap_or_default();
        return Err(AuthError::Refused(format!(
            "the authorization was refused: {error} {description}"
        )));
    }
    param("code").ok_or_else(|| AuthError::Refused("the authorization response has no code".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(iss_supported: bool) -> ServerMetadata {
        ServerMetadata {
            issuer: "http://localhost:9".into(),
            authorization_response_iss_parameter_supported: iss_supported,
            ..Default::default()
        }
    }

    #[test]
    fn the_issuer_of_a_response_is_compared_as_a_string() {
        let back = |query: &str| Url::parse(&format!("http://127.0.0.1/cb?{query}")).unwrap();
        let ok = check_response(
            &back("code=c&state=s&iss=http%3A%2F%2Flocalhost%3A9"),
            "s",
            &server(true),
        );
        assert_eq!(ok.unwrap(), "c");
        let slash = check_response(
            &back("code=c&state=s&iss=http%3A%2F%2Flocalhost%3A9%2F"),
            "s",
            &server(true),
        );
        assert!(matches!(slash, Err(AuthError::Mismatch(_))), "{slash:?}");
        let missing = check_response(&back("code=c&state=s"), "s", &server(true));
        assert!(matches!(missing, Err(AuthError::Mismatch(_))));
        assert_eq!(
            check_response(&back("code=c&state=s"), "s", &server(false)).unwrap(),
            "c"
        );
        let unexpected = check_response(
            &back("code=c&state=s&iss=https%3A%2F%2Fevil"),
            "s",
            &server(false),
        );
        assert!(matches!(unexpected, Err(AuthError::Mismatch(_))));
        let state = check_response(&back("code=c&state=t"), "s", &server(false));
        assert!(matches!(state, Err(AuthError::Mismatch(_))));
        let refused = check_response(&back("error=access_denied&state=s"), "s", &server(false));
        assert!(refused.unwrap_err().to_string().contains("access_denied"));
    }
}
