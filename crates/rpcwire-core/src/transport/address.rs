//! `AddressError`: an address a client cannot serve, refused when the client is built.

/// An address (a URL, `tcp://HOST:PORT`, …) that a client or an upstream cannot serve:
/// an unknown scheme, no host, a scheme whose transport is not built in. Clients check
/// their address when they are made, so a mistake is reported once, at start-up, not as a
/// failure of every request. Its text names the address without credentials, path or query
/// (providers put API keys there): `https://node.example/…`; [`address`](AddressError::address)
/// gives it whole.
///
/// ```
/// use rpcwire_core::transport::AddressError;
/// let error = AddressError::new("ftp://node", "expected http://, https://, ws:// or wss://");
/// assert_eq!(error.address(), "ftp://node");
/// assert_eq!(
///     error.to_string(),
///     r#"cannot use address "ftp://node": expected http://, https://, ws:// or wss://"#
/// );
/// // What providers put in a URL is not shown.
/// let secret = AddressError::new("ftp://user:pw@node.example/v3/KEY?k=1", "unknown scheme");
/// assert_eq!(secret.to_string(), r#"cannot use address "ftp://node.example/…": unknown scheme"#);
/// assert!(!format!("{secret:?}").contains("KEY"));
/// let io: std::io::Error = error.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot use address {:?}: {reason}", shown(address))]
pub struct AddressError {
    address: String,
    reason: String,
}

impl AddressError {
    /// `address` refused for `reason`.
    ///
    /// ```
    /// let error = rpcwire_core::transport::AddressError::new("x", "no scheme");
    /// assert_eq!(error.reason(), "no scheme");
    /// ```
    pub fn new(address: impl Into<String>, reason: impl Into<String>) -> AddressError {
        AddressError {
            address: address.into(),
            reason: reason.into(),
        }
    }

    /// The address refused, as it was given.
    ///
    /// ```
    /// assert_eq!(rpcwire_core::transport::AddressError::new("x", "why").address(), "x");
    /// ```
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Why it was refused.
    ///
    /// ```
    /// assert_eq!(rpcwire_core::transport::AddressError::new("x", "why").reason(), "why");
    /// ```
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl std::fmt::Debug for AddressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressError")
            .field("address", &shown(&self.address))
            .field("reason", &self.reason)
            .finish()
    }
}

/// The scheme of the URL `address`, its host (with the port, when one is written) without
/// credentials, and what follows the host (path, query, fragment); `None` when it is not a
/// URL. What may be shown of an address where providers put API keys: the host.
///
/// ```
/// use rpcwire_core::transport::url_parts;
/// assert_eq!(
///     url_parts("wss://user:KEY@node.example:8546/v3/KEY?k=1"),
///     Some(("wss", "node.example:8546", "/v3/KEY?k=1"))
/// );
/// assert_eq!(url_parts("stdio:server"), None);
/// ```
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub fn url_parts(address: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = address.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    Some((scheme, host, &rest[end..]))
}

/// `address` as it may be shown: a URL's scheme and host, without credentials, and `/…` in
/// place of a path or query; anything else as it is.
fn shown(address: &str) -> String {
    let Some((scheme, host, rest)) = url_parts(address) else {
        return address.to_owned();
    };
    let elided = match rest {
        "" => "",
        "/" => "/",
        _ => "/…",
    };
    format!("{scheme}://{host}{elided}")
}

impl From<AddressError> for std::io::Error {
    fn from(error: AddressError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, error)
    }
}
