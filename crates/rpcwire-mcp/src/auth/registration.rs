//! How a client comes to have an id at an authorization server: given one (pre-registered),
//! naming itself by the URL of its metadata document (CIMD, where the server says it takes
//! them), or registering dynamically (RFC 7591).

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::error::AuthError;
use super::fetch::Fetcher;
use super::metadata::ServerMetadata;
use super::store::RegisteredClient;
use super::token::ClientAuth;

/// What a client says of itself when it registers.
#[derive(Clone, Debug)]
pub(crate) struct ClientProfile {
    pub name: String,
    pub redirect_uri: Url,
    /// The URL of its metadata document, if it has one (CIMD).
    pub metadata_url: Option<Url>,
}

/// RFC 7591 §3.2.1.
#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// The token endpoint authentication a client without a secret asks to register with, from
/// what the server takes.
pub(crate) fn preferred_auth(server: &ServerMetadata, has_secret: bool, has_key: bool) -> ClientAuth {
    let takes = |method: ClientAuth, default: bool| {
        ServerMetadata::lists(
            &server.token_endpoint_auth_methods_supported,
            method.name(),
            default,
        )
    };
    if has_key && takes(ClientAuth::PrivateKeyJwt, false) {
        return ClientAuth::PrivateKeyJwt;
    }
    if has_secret {
        // RFC 8414: absent, the default is client_secret_basic.
        if takes(ClientAuth::Basic, true) {
            return ClientAuth::Basic;
        }
        if takes(ClientAuth::Post, false) {
            return ClientAuth::Post;
        }
    }
    if has_key {
        return ClientAuth::PrivateKeyJwt;
    }
    ClientAuth::None
}

/// A client id for `server`: by CIMD when the client has a metadata document and the
/// server takes one, else registered dynamically; the method it authenticates with.
pub(crate) async fn register(
    fetcher: &Fetcher,
    server: &ServerMetadata,
    profile: &ClientProfile,
    grant_types: &[&str],
) -> Result<(RegisteredClient, ClientAuth), AuthError> {
    if let Some(metadata_url) = profile
        .metadata_url
        .as_ref()
        .filter(|_| server.client_id_metadata_document_supported)
    {
        let client = RegisteredClient::new(&server.issuer, metadata_url.as_str(), None);
        return Ok((client, ClientAuth::None));
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(AuthError::Unsupported(format!(
            "the authorization server {} offers no dynamic registration{}: give a client id",
            server.issuer,
            if profile.metadata_url.is_some() {
                " and takes no client metadata document"
            } else {
                ""
            }
        )));
    };
    let endpoint =
        Url::parse(endpoint).map_err(|e| AuthError::Fetch(format!("registration_endpoint: {e}")))?;
    // A public client when the server takes one; else whatever it gives a secret for.
    let asked = match preferred_auth(server, false, false) {
        ClientAuth::None
            if ServerMetadata::lists(&server.token_endpoint_auth_methods_supported, "none", true) =>
        {
            ClientAuth::None
        }
        _ => preferred_auth(server, true, false),
    };
    // A loopback or private-scheme redirect is a native application's (SEP-837).
    let native = profile.redirect_uri.scheme() != "https"
        || matches!(
            profile.redirect_uri.host_str(),
            Some("localhost" | "127.0.0.1" | "[::1]")
        );
    let body = json!({
        "application_type": if native { "native" } else { "web" },
        "client_name": profile.name,
        "redirect_uris": [profile.redirect_uri.as_str()],
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": asked.name(),
    });
    let fetched = fetcher.post_json(&endpoint, &body).await?;
    if !fetched.status.is_success() {
        return Err(AuthError::Refused(format!(
            "registration answered {}",
            fetched.oauth_error()
        )));
    }
    let registered: Registered = fetched.json(&endpoint)?;
    let auth = match registered
        .token_endpoint_auth_method
        .as_deref()
        .and_then(ClientAuth::from_name)
    {
        Some(auth) => auth,
        None if registered.client_secret.is_some() => preferred_auth(server, true, false),
        None => ClientAuth::None,
    };
    let client = RegisteredClient::new(&server.issuer, registered.client_id, registered.client_secret);
    Ok((client, auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(methods: Option<&[&str]>) -> ServerMetadata {
        ServerMetadata {
            issuer: "https://as".into(),
            token_endpoint_auth_methods_supported: methods.map(|m| m.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }
    }

    #[test]
    fn the_method_follows_what_the_server_takes() {
        assert_eq!(preferred_auth(&server(None), true, false), ClientAuth::Basic);
        assert_eq!(
            preferred_auth(&server(Some(&["client_secret_post"])), true, false),
            ClientAuth::Post
        );
        assert_eq!(
            preferred_auth(&server(Some(&["none"])), false, false),
            ClientAuth::None
        );
        assert_eq!(
            preferred_auth(
                &server(Some(&["private_key_jwt", "client_secret_basic"])),
                true,
                true
            ),
            ClientAuth::PrivateKeyJwt
        );
    }
}
