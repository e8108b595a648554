//! `RedisTarget`: the Redis a fleet shares its state in — its URL (`redis://`, or
//! `rediss://` for TLS through the redis crate's rustls support) and, for TLS, the
//! authority it is trusted by and the client certificate it is shown.

/// Where the fleet's Redis is, and how to reach it over TLS: a `redis://HOST:PORT/` URL,
/// or `rediss://HOST:PORT/` with the operating system's roots (`SSL_CERT_FILE` honoured),
/// or those of [`with_ca_pem`](RedisTarget::with_ca_pem) instead, and a client certificate
/// for a Redis that asks for one (`tls-auth-clients yes`). A URL string is one, so every
/// fleet constructor takes `"redis://…"` as before.
///
/// ```
/// use rpcwire::proxy::fleet::{LimitConfig, RedisTarget, SharedLimiter};
/// # let ca = b"-----BEGIN CERTIFICATE-----\n...";
/// let target = RedisTarget::new("rediss://redis.internal:6380/").with_ca_pem(ca);
/// assert_eq!(target.url(), "rediss://redis.internal:6380/");
/// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default());
/// # let _ = limiter;
/// ```
#[derive(Clone)]
pub struct RedisTarget {
    url: String,
    ca_pem: Option<Vec<u8>>,
    client_certificate: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for RedisTarget {
    /// The URL without its password, if it has one; no key material.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = match self.url.split_once('@') {
            Some((credentials, host)) => {
                let scheme = credentials.split_once("://").map_or("", |(scheme, _)| scheme);
                format!("{scheme}://…@{host}")
            }
            None => self.url.clone(),
        };
        f.debug_struct("RedisTarget")
            .field("url", &url)
            .field("ca", &self.ca_pem.is_some())
            .field("client_certificate", &self.client_certificate.is_some())
            .finish()
    }
}

impl From<&str> for RedisTarget {
    fn from(url: &str) -> RedisTarget {
        RedisTarget::new(url)
    }
}

impl From<&String> for RedisTarget {
    fn from(url: &String) -> RedisTarget {
        RedisTarget::new(url.as_str())
    }
}

impl From<String> for RedisTarget {
    fn from(url: String) -> RedisTarget {
        RedisTarget::new(url)
    }
}

impl RedisTarget {
    /// The Redis at `url`.
    ///
    /// ```
    /// let target = rpcwire::proxy::fleet::RedisTarget::new("redis://127.0.0.1:6379/");
    /// assert_eq!(target.url(), "redis://127.0.0.1:6379/");
    /// ```
    pub fn new(url: impl Into<String>) -> RedisTarget {
        RedisTarget {
            url: url.into(),
            ca_pem: None,
            client_certificate: None,
        }
    }

    /// Trusts the authority (or authorities) in `pem` for a `rediss://` URL, instead of the
    /// operating system's roots.
    ///
    /// ```
    /// let target = rpcwire::proxy::fleet::RedisTarget::new("rediss://r:6380/").with_ca_pem(b"PEM");
    /// assert!(format!("{target:?}").contains("ca: true"));
    /// ```
    pub fn with_ca_pem(mut self, pem: &[u8]) -> RedisTarget {
        self.ca_pem = Some(pem.to_vec());
        self
    }

    /// Shows the certificate in `cert_pem` with the key in `key_pem` to a Redis that asks
    /// for a client certificate.
    ///
    /// ```
    /// let target = rpcwire::proxy::fleet::RedisTarget::new("rediss://r:6380/").with_client_certificate_pem(b"CERT", b"KEY");
    /// assert!(!format!("{target:?}").contains("KEY"));
    /// ```
    pub fn with_client_certificate_pem(mut self, cert_pem: &[u8], key_pem: &[u8]) -> RedisTarget {
        self.client_certificate = Some((cert_pem.to_vec(), key_pem.to_vec()));
        self
    }

    /// The URL.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::fleet::RedisTarget::from("redis://h:1/").url(), "redis://h:1/");
    /// ```
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The redis crate's client; an error for a URL that is not one, or TLS settings given
    /// for a URL that is not `rediss://`.
    pub(crate) fn client(&self) -> redis::RedisResult<redis::Client> {
        if self.ca_pem.is_none() && self.client_certificate.is_none() {
            return redis::Client::open(self.url.as_str());
        }
        let certificates = redis::TlsCertificates {
            client_tls: self
                .client_certificate
                .as_ref()
                .map(|(cert, key)| redis::ClientTlsConfig {
                    client_cert: cert.clone(),
                    client_key: key.clone(),
                }),
            root_cert: self.ca_pem.clone(),
        };
        redis::Client::build_with_tls(self.url.as_str(), certificates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_not_shown() {
        let target = RedisTarget::new("rediss://default:s3cret@redis:6380/0");
        let shown = format!("{target:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("rediss://…@redis:6380/0"), "{shown}");
        assert!(RedisTarget::from(&"redis://h:1/".to_owned()).client().is_ok());
        assert!(RedisTarget::from("not a url".to_owned()).client().is_err());
    }
}
