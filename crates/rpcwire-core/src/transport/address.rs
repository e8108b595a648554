//! `AddressError`: an address a client cannot serve, refused when the client is built.

/// An address (a URL, `tcp://HOST:PORT`, …) that a client or an upstream cannot serve:
/// an unknown scheme, no host, a scheme whose transport is not built in. Clients check
/// their address when they are made, so a mistake is reported once, at start-up, not as a
/// failure of every request.
///
/// ```
/// use rpcwire_core::transport::AddressError;
/// let error = AddressError::new("ftp://node", "expected http://, https://, ws:// or wss://");
/// assert_eq!(error.address(), "ftp://node");
/// assert_eq!(
///     error.to_string(),
///     r#"cannot use address "ftp://node": expected http://, https://, ws:// or wss://"#
/// );
/// let io: std::io::Error = error.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot use address {address:?}: {reason}")]
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

impl From<AddressError> for std::io::Error {
    fn from(error: AddressError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, error)
    }
}
