//! `Endpoint`: what a client's URL names — TLS or not, the host and port to connect to, the
//! `Host` header and the request target — checked once, when the client is made.

use http::header::HeaderValue;
use http::Uri;

use crate::transport::AddressError;

/// A checked client URL.
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// `https://` or `wss://`.
    pub secure: bool,
    /// The host to connect to and to name in TLS, IPv6 addresses without their brackets.
    pub host: String,
    pub port: u16,
    /// The `Host` header: the URL's authority.
    pub authority: HeaderValue,
    /// The request target, in origin form (`/path?query`).
    pub target: Uri,
}

impl Endpoint {
    /// An `http://` or `https://` URL with a host.
    ///
    /// ```
    /// let endpoint = rpcwire_http::endpoint::Endpoint::http(&"https://node.example/v3/key".parse().unwrap()).unwrap();
    /// assert_eq!((endpoint.secure, endpoint.port), (true, 443));
    /// let refused = rpcwire_http::endpoint::Endpoint::http(&"ws://node.example/".parse().unwrap()).unwrap_err();
    /// assert!(refused.to_string().contains("expected http:// or https://"), "{refused}");
    /// ```
    pub fn http(url: &Uri) -> Result<Endpoint, AddressError> {
        Endpoint::parse(url, ("http", "https"), "expected http:// or https://")
    }

    /// A `ws://` or `wss://` URL with a host.
    ///
    /// ```
    /// let endpoint = rpcwire_http::endpoint::Endpoint::websocket(&"ws://127.0.0.1:9/".parse().unwrap()).unwrap();
    /// assert_eq!((endpoint.secure, endpoint.port), (false, 9));
    /// ```
    pub fn websocket(url: &Uri) -> Result<Endpoint, AddressError> {
        Endpoint::parse(url, ("ws", "wss"), "expected ws:// or wss://")
    }

    fn parse(url: &Uri, (plain, secure): (&str, &str), expected: &str) -> Result<Endpoint, AddressError> {
        let refuse = |reason: &str| AddressError::new(url.to_string(), reason);
        let secure = match url.scheme_str() {
            Some(scheme) if scheme.eq_ignore_ascii_case(plain) => false,
            Some(scheme) if scheme.eq_ignore_ascii_case(secure) => true,
            _ => return Err(refuse(expected)),
        };
        let authority = url.authority().ok_or_else(|| refuse("no host"))?;
        let host = authority.host();
        if host.is_empty() {
            return Err(refuse("no host"));
        }
        if authority.as_str().contains('@') {
            return Err(refuse(
                "credentials in the URL are not sent; give them as a header",
            ));
        }
        let port = authority.port_u16().unwrap_or(if secure { 443 } else { 80 });
        let target = url
            .path_and_query()
            .and_then(|path| Uri::try_from(path.as_str()).ok())
            .unwrap_or_else(|| Uri::from_static("/"));
        Ok(Endpoint {
            secure,
            // An IPv6 address is written in brackets in a URL, not when connecting.
            host: host.trim_start_matches('[').trim_end_matches(']').to_owned(),
            port,
            authority: HeaderValue::from_str(authority.as_str())
                .map_err(|_| refuse("a host that is no header value"))?,
            target,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_and_target_come_from_the_url() {
        let endpoint = Endpoint::http(&"http://[::1]:8545/rpc?key=1".parse().unwrap()).unwrap();
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("::1", 8545));
        assert_eq!(endpoint.target, "/rpc?key=1");
        assert_eq!(endpoint.authority, "[::1]:8545");
        assert!(!endpoint.secure);
        let endpoint = Endpoint::http(&"HTTPS://node.example".parse().unwrap()).unwrap();
        assert_eq!(
            (endpoint.host.as_str(), endpoint.port, endpoint.secure),
            ("node.example", 443, true)
        );
        assert_eq!(endpoint.target, "/");
        let endpoint = Endpoint::websocket(&"wss://node.example:8546/ws".parse().unwrap()).unwrap();
        assert_eq!((endpoint.port, endpoint.secure), (8546, true));
    }

    #[test]
    fn what_a_client_cannot_serve_is_refused_with_the_reason() {
        for (url, reason) in [
            ("/relative", "expected http:// or https://"),
            ("ftp://node/", "expected http:// or https://"),
            ("ws://node/", "expected http:// or https://"),
            ("http://user:pw@node/", "credentials"),
        ] {
            let error = Endpoint::http(&url.parse().unwrap()).unwrap_err();
            assert!(error.to_string().contains(reason), "{url}: {error}");
            assert_eq!(error.address(), url.parse::<Uri>().unwrap().to_string());
        }
        let error = Endpoint::websocket(&"http://node/".parse().unwrap()).unwrap_err();
        assert!(error.reason().contains("ws://"), "{error}");
    }
}
