//! `ClientTls`: what every rpcwire client trusts and shows in a TLS handshake.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

use super::{certificates, private_key, provider, read, TlsError};

/// A client's TLS configuration, shared by every client transport (HTTP, WebSocket, MCP
/// Streamable HTTP, gateway upstreams): the roots it trusts, extra certificate
/// authorities, and the certificate it shows when a server asks for one (mutual TLS).
/// Clones share one session cache, so a client that connects again resumes its session
/// instead of a full handshake.
///
/// [`ClientTls::new`] (also the default) trusts the operating system's roots, read once
/// per process (`SSL_CERT_FILE` and `SSL_CERT_DIR` replace them, as for OpenSSL);
/// [`ClientTls::builder`] adds the rest.
///
/// ```
/// use rpcwire_http::tls::ClientTls;
/// # let ca = rcgen::generate_simple_self_signed(vec!["rpc.internal".to_owned()]).unwrap().cert.pem();
/// // The system's roots, and a company's own authority besides.
/// let tls = ClientTls::builder().add_ca_pem(ca.as_bytes())?.build()?;
/// // Mozilla's roots only, whatever the machine has.
/// let portable = ClientTls::builder().without_system_roots().with_webpki_roots().build()?;
/// # let _ = (tls, portable);
/// # Ok::<(), rpcwire_http::tls::TlsError>(())
/// ```
#[derive(Clone)]
pub struct ClientTls {
    configs: Arc<Configs>,
}

/// The configuration once per protocol offered (ALPN), sharing one session cache.
struct Configs {
    /// Offers `h2` and `http/1.1`.
    any: Arc<ClientConfig>,
    /// Offers `http/1.1` only (WebSocket, and clients told to keep to HTTP/1.1).
    http1: Arc<ClientConfig>,
    /// Offers `h2` only.
    http2: Arc<ClientConfig>,
    /// How many roots are trusted: none makes every handshake fail, said in its error.
    roots: usize,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls")
            .field("roots", &self.configs.roots)
            .field(
                "client_certificate",
                &self.configs.any.client_auth_cert_resolver.has_certs(),
            )
            .finish()
    }
}

impl Default for ClientTls {
    fn default() -> ClientTls {
        ClientTls::new()
    }
}

/// What a client asks for in ALPN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub enum Offer {
    /// HTTP/2, else HTTP/1.1.
    Any,
    /// HTTP/1.1 only.
    Http1,
    /// HTTP/2 only.
    Http2,
}

impl ClientTls {
    /// The operating system's roots, read once per process (the first call reads them;
    /// `SSL_CERT_FILE` / `SSL_CERT_DIR` as OpenSSL reads them), no client certificate.
    ///
    /// ```
    /// let tls = rpcwire_http::tls::ClientTls::new();
    /// # let _ = tls;
    /// ```
    pub fn new() -> ClientTls {
        static SYSTEM: OnceLock<ClientTls> = OnceLock::new();
        SYSTEM
            .get_or_init(|| {
                ClientTls::builder()
                    .build()
                    .expect("roots alone always make a configuration")
            })
            .clone()
    }

    /// A configuration to build: the system's roots unless turned off, then what is added.
    ///
    /// ```
    /// let tls = rpcwire_http::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// assert!(tls.root_count() > 100);
    /// ```
    pub fn builder() -> ClientTlsBuilder {
        ClientTlsBuilder {
            system_roots: true,
            webpki_roots: false,
            authorities: Vec::new(),
            identity: None,
        }
    }

    /// How many certificate authorities this configuration trusts.
    ///
    /// ```
    /// let tls = rpcwire_http::tls::ClientTls::builder().without_system_roots().build().unwrap();
    /// assert_eq!(tls.root_count(), 0);
    /// ```
    pub fn root_count(&self) -> usize {
        self.configs.roots
    }

    /// The rustls configuration offering `offer` in ALPN.
    #[doc(hidden)] // for rpcwire's own crates; not covered by semver
    pub fn config(&self, offer: Offer) -> Arc<ClientConfig> {
        match offer {
            Offer::Any => self.configs.any.clone(),
            Offer::Http1 => self.configs.http1.clone(),
            Offer::Http2 => self.configs.http2.clone(),
        }
    }

    /// Opens TLS over `stream` to `host` (the name sent and checked), offering `offer`;
    /// a refusal is an error that says why (see [`describe_client_failure`](super::describe_client_failure)).
    #[doc(hidden)] // for rpcwire's own crates; not covered by semver
    pub async fn connect<S>(
        &self,
        host: &str,
        stream: S,
        offer: Offer,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<S>>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let name = ServerName::try_from(host.to_owned()).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{host:?} is not a name or address TLS can check a certificate against"),
            )
        })?;
        tokio_rustls::TlsConnector::from(self.config(offer))
            .connect(name, stream)
            .await
            .map_err(|error| {
                let reason = super::describe_client_failure(&error, host, self.configs.roots);
                std::io::Error::new(error.kind(), reason)
            })
    }
}

/// Builds a [`ClientTls`]: which roots, which extra authorities, which client certificate.
///
/// ```
/// let tls = rpcwire_http::tls::ClientTls::builder()
///     .without_system_roots()
///     .with_webpki_roots()
///     .build()
///     .unwrap();
/// # let _ = tls;
/// ```
pub struct ClientTlsBuilder {
    system_roots: bool,
    webpki_roots: bool,
    authorities: Vec<CertificateDer<'static>>,
    identity: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
}

impl std::fmt::Debug for ClientTlsBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTlsBuilder")
            .field("system_roots", &self.system_roots)
            .field("webpki_roots", &self.webpki_roots)
            .field("authorities", &self.authorities.len())
            .field("client_certificate", &self.identity.is_some())
            .finish()
    }
}

impl ClientTlsBuilder {
    /// Does not trust the operating system's roots (only what is added).
    ///
    /// ```
    /// let tls = rpcwire_http::tls::ClientTls::builder().without_system_roots().build().unwrap();
    /// assert_eq!(tls.root_count(), 0);
    /// ```
    pub fn without_system_roots(mut self) -> ClientTlsBuilder {
        self.system_roots = false;
        self
    }

    /// Trusts Mozilla's roots as the webpki-roots crate carries them (the same on every
    /// machine, whatever its own store holds).
    ///
    /// ```
    /// let tls = rpcwire_http::tls::ClientTls::builder().without_system_roots().with_webpki_roots().build().unwrap();
    /// assert!(tls.root_count() > 100);
    /// ```
    pub fn with_webpki_roots(mut self) -> ClientTlsBuilder {
        self.webpki_roots = true;
        self
    }

    /// Also trusts every certificate authority in `pem` (a private CA, a test's own).
    ///
    /// ```
    /// # let ca = rcgen::generate_simple_self_signed(vec!["rpc.internal".to_owned()]).unwrap().cert.pem();
    /// let tls = rpcwire_http::tls::ClientTls::builder().without_system_roots().add_ca_pem(ca.as_bytes())?.build()?;
    /// assert_eq!(tls.root_count(), 1);
    /// # Ok::<(), rpcwire_http::tls::TlsError>(())
    /// ```
    pub fn add_ca_pem(mut self, pem: &[u8]) -> Result<ClientTlsBuilder, TlsError> {
        self.authorities.extend(certificates(pem, "the CA PEM")?);
        Ok(self)
    }

    /// Also trusts every certificate authority in the PEM file at `path`.
    ///
    /// ```
    /// let error = rpcwire_http::tls::ClientTls::builder().add_ca_file("/nonexistent/ca.pem").unwrap_err();
    /// assert!(error.to_string().starts_with("cannot read /nonexistent/ca.pem"), "{error}");
    /// ```
    pub fn add_ca_file(mut self, path: impl AsRef<Path>) -> Result<ClientTlsBuilder, TlsError> {
        let path = path.as_ref();
        let what = path.display().to_string();
        self.authorities.extend(certificates(&read(path)?, &what)?);
        Ok(self)
    }

    /// Shows the certificate chain in `cert_pem` (its own certificate first) with the
    /// private key in `key_pem` to a server that asks for one (mutual TLS).
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["client".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// let tls = rpcwire_http::tls::ClientTls::builder()
    ///     .with_client_certificate_pem(cert.as_bytes(), key.as_bytes())?
    ///     .build()?;
    /// # let _ = tls;
    /// # Ok::<(), rpcwire_http::tls::TlsError>(())
    /// ```
    pub fn with_client_certificate_pem(
        mut self,
        cert_pem: &[u8],
        key_pem: &[u8],
    ) -> Result<ClientTlsBuilder, TlsError> {
        self.identity = Some((
            certificates(cert_pem, "the client certificate PEM")?,
            private_key(key_pem, "the client key PEM")?,
        ));
        Ok(self)
    }

    /// As [`with_client_certificate_pem`](ClientTlsBuilder::with_client_certificate_pem),
    /// from PEM files.
    ///
    /// ```
    /// let error = rpcwire_http::tls::ClientTls::builder()
    ///     .with_client_certificate_files("/nonexistent/client.pem", "/nonexistent/client.key")
    ///     .unwrap_err();
    /// assert!(error.to_string().contains("/nonexistent/client.pem"), "{error}");
    /// ```
    pub fn with_client_certificate_files(
        mut self,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<ClientTlsBuilder, TlsError> {
        let (cert, key) = (cert.as_ref(), key.as_ref());
        self.identity = Some((
            certificates(&read(cert)?, &cert.display().to_string())?,
            private_key(&read(key)?, &key.display().to_string())?,
        ));
        Ok(self)
    }

    /// The configuration; refused when rustls refuses the client certificate or its key.
    ///
    /// ```
    /// let tls = rpcwire_http::tls::ClientTls::builder().build().unwrap();
    /// # let _ = tls;
    /// ```
    pub fn build(self) -> Result<ClientTls, TlsError> {
        let mut roots = RootCertStore::empty();
        if self.system_roots {
            // Unreadable entries of the store are skipped; an empty store is reported by
            // every handshake it makes fail.
            let (added, _ignored) =
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            let _ = added;
        }
        if self.webpki_roots {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        for authority in self.authorities {
            roots.add(authority)?;
        }
        let count = roots.len();
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots);
        let base = match self.identity {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key)?,
            None => builder.with_no_client_auth(),
        };
        let offering = |protocols: &[&[u8]]| {
            let mut config = base.clone();
            config.alpn_protocols = protocols.iter().map(|protocol| protocol.to_vec()).collect();
            Arc::new(config)
        };
        Ok(ClientTls {
            configs: Arc::new(Configs {
                any: offering(&[b"h2", b"http/1.1"]),
                http1: offering(&[b"http/1.1"]),
                http2: offering(&[b"h2"]),
                roots: count,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pem_files(name: &str) -> (std::path::PathBuf, std::path::PathBuf, String) {
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let directory =
            std::env::temp_dir().join(format!("rpcwire-client-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let (cert, key) = (directory.join("cert.pem"), directory.join("key.pem"));
        std::fs::write(&cert, certified.cert.pem()).unwrap();
        std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
        (cert, key, certified.cert.pem())
    }

    #[test]
    fn roots_authorities_and_a_client_certificate_from_files() {
        let (cert, key, pem) = pem_files("files");
        let tls = ClientTls::builder()
            .without_system_roots()
            .with_webpki_roots()
            .add_ca_file(&cert)
            .unwrap()
            .with_client_certificate_files(&cert, &key)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(tls.root_count(), webpki_roots::TLS_SERVER_ROOTS.len() + 1);
        let shown = format!("{tls:?}");
        assert!(shown.contains("client_certificate: true"), "{shown}");
        let builder = ClientTls::builder().add_ca_pem(pem.as_bytes()).unwrap();
        assert!(format!("{builder:?}").contains("authorities: 1"));
        // Each offer has its own ALPN list, one session cache between them.
        assert_eq!(tls.config(Offer::Any).alpn_protocols.len(), 2);
        assert_eq!(
            tls.config(Offer::Http1).alpn_protocols,
            vec![b"http/1.1".to_vec()]
        );
        assert_eq!(tls.config(Offer::Http2).alpn_protocols, vec![b"h2".to_vec()]);
        std::fs::remove_dir_all(cert.parent().unwrap()).unwrap();
    }

    #[test]
    fn what_cannot_be_read_is_refused_with_the_reason() {
        let (cert, _key, pem) = pem_files("refused");
        let no_key = ClientTls::builder()
            .with_client_certificate_pem(pem.as_bytes(), b"")
            .unwrap_err();
        assert!(no_key.to_string().contains("no private key"), "{no_key}");
        let missing = ClientTls::builder()
            .with_client_certificate_files(&cert, "/nonexistent/key.pem")
            .unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/key.pem"), "{missing}");
        let garbage = ClientTls::builder()
            .add_ca_pem(b"-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n")
            .unwrap_err();
        assert!(garbage.to_string().contains("unreadable PEM"), "{garbage}");
        assert!(ClientTls::builder().add_ca_pem(b"").is_err());
        std::fs::remove_dir_all(cert.parent().unwrap()).unwrap();
    }

    #[tokio::test]
    async fn a_host_tls_cannot_name_is_refused_before_the_handshake() {
        let (a, _b) = tokio::io::duplex(64);
        let error = ClientTls::default()
            .connect("not a host name!", a, Offer::Any)
            .await
            .err()
            .unwrap();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert!(error.to_string().contains("not a name or address"), "{error}");
    }
}
