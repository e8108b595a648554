//! `AuthError`: why an authorization did not give a token. Its text names the step and the
//! document or endpoint that failed, never a token, a secret or an authorization code.

/// Why authorization failed: what was tried and where, without any credential in the text.
///
/// ```
/// let error = rpcwire::mcp::auth::AuthError::Refused("the token endpoint answered 400 invalid_grant".into());
/// assert!(error.to_string().contains("invalid_grant"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A document or endpoint could not be reached, or answered what cannot be read.
    #[error("authorization: {0}")]
    Fetch(String),
    /// No protected-resource or authorization-server metadata was found where the
    /// specifications put it (each place tried is named).
    #[error("authorization: no metadata: {0}")]
    Discovery(String),
    /// A document said what must not be believed: an issuer or a resource that is not the
    /// one asked for, an authorization response from another issuer or with another state.
    #[error("authorization refused as unsafe: {0}")]
    Mismatch(String),
    /// The authorization server refused (registration, the authorization, a token).
    #[error("authorization refused: {0}")]
    Refused(String),
    /// Nothing this client can do: no way to register, no authorization step for a person,
    /// the retries allowed used up.
    #[error("authorization impossible: {0}")]
    Unsupported(String),
}

impl AuthError {
    /// A fetch failure at `url` (without its query, which may carry a code).
    pub(crate) fn fetch(url: &url::Url, why: impl std::fmt::Display) -> AuthError {
        AuthError::Fetch(format!("{}: {why}", without_query(url)))
    }
}

/// `url` without its query and fragment, for error texts.
pub(crate) fn without_query(url: &url::Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}
