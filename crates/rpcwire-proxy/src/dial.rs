//! `Dial`: how a client reaches an address — the largest answer it reads, and with the
//! `http` feature the TLS it speaks and the HTTP version — and the address checked before
//! anything is opened.

use crate::transport::AddressError;

/// How to reach an address: the largest frame or answer read, and (`http` feature) the
/// TLS configuration for `https://` and `wss://` and the HTTP version. One per upstream, so
/// that each may trust its own authority and show its own client certificate.
///
/// ```
/// use rpcwire::proxy::{Dial, Upstream};
/// let dial = Dial::new().with_max_response(64 << 20);
/// let upstream = Upstream::dial("tcp://127.0.0.1:9", &dial).unwrap();
/// assert_eq!(dial.max_response(), 64 << 20);
/// # let _ = upstream;
/// ```
#[derive(Clone, Debug)]
pub struct Dial {
    max_response: usize,
    #[cfg(feature = "http")]
    tls: Option<rpcwire_http::tls::ClientTls>,
    #[cfg(feature = "http")]
    version: rpcwire_http::http::HttpVersion,
}

impl Default for Dial {
    fn default() -> Dial {
        Dial::new()
    }
}

impl Dial {
    /// Answers up to [`DEFAULT_MAX_RESPONSE`](crate::DEFAULT_MAX_RESPONSE), the system's
    /// roots for TLS, HTTP/2 when a TLS server offers it.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::Dial::new().max_response(), rpcwire::proxy::DEFAULT_MAX_RESPONSE);
    /// ```
    pub fn new() -> Dial {
        Dial {
            max_response: crate::upstream::DEFAULT_MAX_RESPONSE,
            #[cfg(feature = "http")]
            tls: None,
            #[cfg(feature = "http")]
            version: rpcwire_http::http::HttpVersion::Auto,
        }
    }

    /// Reads answers (frames, HTTP bodies, WebSocket messages) of up to `bytes` each; a
    /// larger one fails its calls without being kept.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::Dial::new().with_max_response(1024).max_response(), 1024);
    /// ```
    pub fn with_max_response(mut self, bytes: usize) -> Dial {
        self.max_response = bytes;
        self
    }

    /// The largest answer read.
    ///
    /// ```
    /// assert!(rpcwire::proxy::Dial::new().max_response() > 1 << 20);
    /// ```
    pub fn max_response(&self) -> usize {
        self.max_response
    }

    /// Speaks TLS through `tls` to `https://` and `wss://` addresses (what they are trusted
    /// by, the client certificate shown).
    ///
    /// ```
    /// let tls = rpcwire::transport::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let dial = rpcwire::proxy::Dial::new().with_tls(tls);
    /// assert!(dial.tls().is_some());
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn with_tls(mut self, tls: rpcwire_http::tls::ClientTls) -> Dial {
        self.tls = Some(tls);
        self
    }

    /// The TLS configuration given, if any (else the system's roots are trusted).
    ///
    /// ```
    /// assert!(rpcwire::proxy::Dial::new().tls().is_none());
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn tls(&self) -> Option<&rpcwire_http::tls::ClientTls> {
        self.tls.as_ref()
    }

    /// Speaks `version` of HTTP to `http://` and `https://` addresses.
    ///
    /// ```
    /// use rpcwire::transport::http::HttpVersion;
    /// let dial = rpcwire::proxy::Dial::new().with_http_version(HttpVersion::Http1);
    /// assert_eq!(dial.http_version(), HttpVersion::Http1);
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn with_http_version(mut self, version: rpcwire_http::http::HttpVersion) -> Dial {
        self.version = version;
        self
    }

    /// The HTTP version spoken.
    ///
    /// ```
    /// use rpcwire::transport::http::HttpVersion;
    /// assert_eq!(rpcwire::proxy::Dial::new().http_version(), HttpVersion::Auto);
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn http_version(&self) -> rpcwire_http::http::HttpVersion {
        self.version
    }

    /// The HTTP client for `url` (`http://` or `https://`), as set here.
    #[cfg(feature = "http")]
    pub(crate) fn http_client(
        &self,
        url: &str,
    ) -> Result<rpcwire_http::http::HttpClientTransport, AddressError> {
        let parsed = url.parse().map_err(|_| AddressError::new(url, "not a URL"))?;
        let mut client = rpcwire_http::http::HttpClientTransport::new(parsed)?
            .with_max_response(self.max_response)
            .with_http_version(self.version);
        if let Some(tls) = &self.tls {
            client = client.with_tls(tls.clone());
        }
        Ok(client)
    }
}

/// Checks that `address` names a transport this build can open: `stdio`,
/// `tcp://HOST:PORT`, and with the `http` feature `http://`, `https://`, `ws://` and
/// `wss://` URLs with a host.
///
/// ```
/// use rpcwire::proxy::check_address;
/// assert!(check_address("tcp://127.0.0.1:8545").is_ok());
/// let refused = check_address("tcp://127.0.0.1").unwrap_err();
/// assert!(refused.reason().contains("HOST:PORT"), "{refused}");
/// assert!(check_address("carrier-pigeon://home").is_err());
/// ```
pub fn check_address(address: &str) -> Result<(), AddressError> {
    if address == "stdio" {
        return Ok(());
    }
    if let Some(host) = address.strip_prefix("tcp://") {
        let port = host
            .rsplit_once(':')
            .map(|(host, port)| (host, port.parse::<u16>()));
        return match port {
            Some((host, Ok(_))) if !host.is_empty() => Ok(()),
            _ => Err(AddressError::new(address, "expected tcp://HOST:PORT")),
        };
    }
    let scheme = address
        .split_once("://")
        .map(|(scheme, _)| scheme.to_ascii_lowercase());
    match scheme.as_deref() {
        #[cfg(feature = "http")]
        Some("http" | "https") => {
            let url = address
                .parse()
                .map_err(|_| AddressError::new(address, "not a URL"))?;
            rpcwire_http::endpoint::Endpoint::http(&url).map(|_| ())
        }
        #[cfg(feature = "http")]
        Some("ws" | "wss") => {
            let url = address
                .parse()
                .map_err(|_| AddressError::new(address, "not a URL"))?;
            rpcwire_http::endpoint::Endpoint::websocket(&url).map(|_| ())
        }
        #[cfg(not(feature = "http"))]
        Some("http" | "https" | "ws" | "wss") => Err(AddressError::new(
            address,
            "HTTP and WebSocket addresses need rpcwire's `http` feature",
        )),
        _ => Err(AddressError::new(
            address,
            "expected stdio, tcp://HOST:PORT, http(s)://… or ws(s)://…",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_before_anything_is_opened() {
        for good in [
            "stdio",
            "tcp://127.0.0.1:1",
            "tcp://[::1]:8545",
            "tcp://node:8545",
        ] {
            assert!(check_address(good).is_ok(), "{good}");
        }
        for bad in [
            "tcp://node",
            "tcp://:8545",
            "tcp://node:port",
            "",
            "ftp://x",
            "node:8545",
        ] {
            assert!(check_address(bad).is_err(), "{bad}");
        }
        #[cfg(feature = "http")]
        {
            for good in ["http://h/", "https://h:8443/v3/key", "ws://h/", "WSS://h/ws"] {
                assert!(check_address(good).is_ok(), "{good}");
            }
            for bad in ["http://", "https:// bad", "wss://user@h/"] {
                assert!(check_address(bad).is_err(), "{bad}");
            }
        }
    }
}

#[cfg(all(test, feature = "http"))]
mod http_tests {
    use super::*;

    #[test]
    fn a_dial_carries_its_settings_to_the_http_client() {
        let dial = Dial::default()
            .with_max_response(1 << 10)
            .with_http_version(rpcwire_http::http::HttpVersion::Http1)
            .with_tls(
                rpcwire_http::tls::ClientTls::builder()
                    .without_system_roots()
                    .build()
                    .unwrap(),
            );
        assert_eq!(dial.max_response(), 1 << 10);
        assert_eq!(dial.http_version(), rpcwire_http::http::HttpVersion::Http1);
        assert_eq!(dial.tls().map(|tls| tls.root_count()), Some(0));
        let client = dial.http_client("https://node.example/v3/key").unwrap();
        assert_eq!(client.max_response(), 1 << 10);
        assert!(dial.http_client("not a url at all").is_err());
        assert!(dial.http_client("ws://node.example/").is_err());
    }
}
