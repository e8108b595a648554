//! `ServerTls`: what every rpcwire server presents in a TLS handshake, its certificate read
//! again when its files change.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{RootCertStore, ServerConfig};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::{certificates, private_key, provider, read, TlsError};

/// How long a client has for its TLS handshake by default (the first byte included).
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How often, at most, certificate files are looked at for a change.
const RELOAD_CHECK: Duration = Duration::from_secs(1);

/// The answer to plain HTTP spoken to a TLS port, before the connection is closed.
const PLAIN_HTTP_ANSWER: &[u8] = b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\
connection: close\r\ncontent-length: 58\r\n\r\nThis port speaks HTTPS: the request was sent in plain HTTP.";

/// A server's TLS configuration, shared by every rpcwire server (the
/// [`Acceptor`](crate::http::Acceptor) under [`HttpServer`](crate::http::HttpServer), the
/// MCP Streamable HTTP server and the gateways): its certificate chain and key, ALPN `h2`
/// and `http/1.1`, a handshake deadline, and optionally the authority client certificates
/// must be issued by (mutual TLS).
///
/// Made [`from_pem_files`](ServerTls::from_pem_files), the files are looked at again (at
/// most once a second, when a client connects) and read again when they change, so that a
/// renewed certificate is served without a restart; files caught half-written keep the old
/// certificate until they read whole.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use rpcwire_http::{http::HttpServer, tls::ServerTls};
///
/// let tls = ServerTls::from_pem_files("/etc/rpc/cert.pem", "/etc/rpc/key.pem")?;
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8443").await?;
/// HttpServer::new(rpcwire_core::dispatch::Router::new()).with_tls(tls).serve(listener).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ServerTls {
    certificate: Arc<Certificate>,
    config: Arc<ServerConfig>,
    handshake_timeout: Duration,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("files", &self.certificate.files)
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// The certificate chain in `cert_pem` (the server's own first) and the private key in
    /// `key_pem`; refused when either is missing or they do not belong together.
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// let tls = rpcwire_http::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    /// # let _ = tls;
    /// ```
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<ServerTls, TlsError> {
        let key = certified(cert_pem, key_pem, "the certificate PEM", "the key PEM")?;
        ServerTls::serving(Certificate::fixed(key), None)
    }

    /// The certificate chain and key in the PEM files at `cert` and `key`, read again when
    /// the files change.
    ///
    /// ```
    /// let error = rpcwire_http::tls::ServerTls::from_pem_files("/nonexistent/cert.pem", "/nonexistent/key.pem").unwrap_err();
    /// assert!(error.to_string().starts_with("cannot read /nonexistent/cert.pem"), "{error}");
    /// ```
    pub fn from_pem_files(cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Result<ServerTls, TlsError> {
        let files = (cert.as_ref().to_owned(), key.as_ref().to_owned());
        let (stamp, key) = load(&files)?;
        ServerTls::serving(Certificate::from_files(files, stamp, key), None)
    }

    /// Requires every client to show a certificate issued by an authority in `ca_pem`
    /// (mutual TLS); a client without one, or with another, is refused in the handshake.
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// use rpcwire_http::tls::ServerTls;
    /// let tls = ServerTls::from_pem(cert.as_bytes(), key.as_bytes())?.with_client_ca_pem(cert.as_bytes())?;
    /// # let _ = tls;
    /// # Ok::<(), rpcwire_http::tls::TlsError>(())
    /// ```
    pub fn with_client_ca_pem(self, ca_pem: &[u8]) -> Result<ServerTls, TlsError> {
        let mut roots = RootCertStore::empty();
        for authority in certificates(ca_pem, "the client CA PEM")? {
            roots.add(authority)?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .map_err(|error| TlsError::Pem(format!("the client CA PEM: {error}")))?;
        let handshake_timeout = self.handshake_timeout;
        Ok(ServerTls::serving(self.certificate, Some(verifier))?.with_handshake_timeout(handshake_timeout))
    }

    /// Sets how long a client has for its whole handshake, from its first byte on (default
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`]); a slower one is disconnected.
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// use std::time::Duration;
    /// let tls = rpcwire_http::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes())
    ///     .unwrap()
    ///     .with_handshake_timeout(Duration::from_secs(3));
    /// assert_eq!(tls.handshake_timeout(), Duration::from_secs(3));
    /// ```
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> ServerTls {
        self.handshake_timeout = timeout;
        self
    }

    /// How long a client has for its handshake.
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// let tls = rpcwire_http::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    /// assert_eq!(tls.handshake_timeout(), rpcwire_http::tls::DEFAULT_HANDSHAKE_TIMEOUT);
    /// ```
    pub fn handshake_timeout(&self) -> Duration {
        self.handshake_timeout
    }

    fn serving(
        certificate: Arc<Certificate>,
        clients: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
    ) -> Result<ServerTls, TlsError> {
        let builder =
            ServerConfig::builder_with_provider(provider()).with_safe_default_protocol_versions()?;
        let builder = match clients {
            Some(verifier) => builder.with_client_cert_verifier(verifier),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_cert_resolver(certificate.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(ServerTls {
            certificate,
            config: Arc::new(config),
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
        })
    }

    /// The server side of one connection's handshake, within the handshake deadline: the
    /// TLS stream and whether ALPN chose HTTP/2, or `None` when the connection ends here —
    /// the client spoke plain HTTP (answered with a `400` that says this port speaks
    /// HTTPS), failed its handshake, or was too slow.
    #[doc(hidden)] // for rpcwire's own crates; not covered by semver
    pub async fn accept(
        &self,
        stream: TcpStream,
    ) -> Option<(tokio_rustls::server::TlsStream<TcpStream>, bool)> {
        let deadline = tokio::time::Instant::now() + self.handshake_timeout;
        let mut first = [0u8; 1];
        match tokio::time::timeout_at(deadline, stream.peek(&mut first)).await {
            Ok(Ok(1)) => {}
            _ => return None,
        }
        if super::is_plain_http(first[0]) {
            tokio::spawn(answer_plain_http(stream));
            return None;
        }
        let acceptor = tokio_rustls::TlsAcceptor::from(self.config.clone());
        let stream = tokio::time::timeout_at(deadline, acceptor.accept(stream))
            .await
            .ok()?
            .ok()?;
        let http2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        Some((stream, http2))
    }
}

/// Tells a plain-HTTP client that this port speaks HTTPS, then closes: what it still sends
/// read and dropped a while, so that the close does not reset the answer away.
async fn answer_plain_http(mut stream: TcpStream) {
    if stream.write_all(PLAIN_HTTP_ANSWER).await.is_err() || stream.shutdown().await.is_err() {
        return;
    }
    crate::linger::drain(&mut stream, crate::linger::LINGER_DECLARED).await;
}

/// The certificate a server presents: fixed, or from files looked at again for changes.
struct Certificate {
    current: RwLock<Arc<CertifiedKey>>,
    files: Option<Files>,
}

/// The files a certificate is read from, and when they were last looked at.
#[derive(Debug)]
struct Files {
    paths: (PathBuf, PathBuf),
    /// What the files looked like when last read.
    stamp: RwLock<Stamp>,
    /// When they were last looked at (or read first), in milliseconds since `since`.
    looked: AtomicU64,
    since: Instant,
}

impl std::fmt::Debug for Certificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificate")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

/// The modification times and lengths of the two files.
type Stamp = [(Option<SystemTime>, u64); 2];

impl Certificate {
    fn fixed(key: CertifiedKey) -> Arc<Certificate> {
        Arc::new(Certificate {
            current: RwLock::new(Arc::new(key)),
            files: None,
        })
    }

    fn from_files(paths: (PathBuf, PathBuf), stamp: Stamp, key: CertifiedKey) -> Arc<Certificate> {
        Arc::new(Certificate {
            current: RwLock::new(Arc::new(key)),
            files: Some(Files {
                paths,
                stamp: RwLock::new(stamp),
                looked: AtomicU64::new(0),
                since: Instant::now(),
            }),
        })
    }

    /// Reads the files again when they changed since they were last read (looked at most
    /// once per [`RELOAD_CHECK`]); a failed read keeps the certificate served.
    fn refresh(&self) {
        let Some(files) = &self.files else { return };
        let now = files.since.elapsed().as_millis() as u64;
        let looked = files.looked.load(Ordering::Relaxed);
        // One handshake looks; the others meanwhile serve what is loaded.
        if now < looked + RELOAD_CHECK.as_millis() as u64
            || files
                .looked
                .compare_exchange(looked, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let unchanged = stamp(&files.paths) == *crate::sync::read_unpoisoned(&files.stamp);
        if unchanged {
            return;
        }
        if let Ok((stamp, key)) = load(&files.paths) {
            *crate::sync::write_unpoisoned(&self.current) = Arc::new(key);
            *crate::sync::write_unpoisoned(&files.stamp) = stamp;
        }
    }
}

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.refresh();
        Some(crate::sync::read_unpoisoned(&self.current).clone())
    }
}

/// What the two files look like now (a file that cannot be looked at: no time, length 0).
fn stamp(paths: &(PathBuf, PathBuf)) -> Stamp {
    let of = |path: &Path| {
        std::fs::metadata(path).map_or((None, 0), |metadata| (metadata.modified().ok(), metadata.len()))
    };
    [of(&paths.0), of(&paths.1)]
}

/// The files' stamp and the certificate they hold; the stamp is taken first, so that a
/// change while they are read is seen at the next look.
fn load(paths: &(PathBuf, PathBuf)) -> Result<(Stamp, CertifiedKey), TlsError> {
    let stamp = stamp(paths);
    let (cert, key) = (read(&paths.0)?, read(&paths.1)?);
    let key = certified(
        &cert,
        &key,
        &paths.0.display().to_string(),
        &paths.1.display().to_string(),
    )?;
    Ok((stamp, key))
}

/// The chain in `cert_pem` with the key in `key_pem`, checked to belong together.
fn certified(
    cert_pem: &[u8],
    key_pem: &[u8],
    cert_what: &str,
    key_what: &str,
) -> Result<CertifiedKey, TlsError> {
    let chain = certificates(cert_pem, cert_what)?;
    let key = private_key(key_pem, key_what)?;
    Ok(CertifiedKey::from_der(chain, key, &provider())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_and_keys_that_do_not_fit_are_refused() {
        let one = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let (cert, key) = (one.cert.pem(), one.signing_key.serialize_pem());
        let tls = ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
        assert!(format!("{tls:?}").contains("handshake_timeout"));
        assert_eq!(tls.handshake_timeout(), DEFAULT_HANDSHAKE_TIMEOUT);
        let mismatched =
            ServerTls::from_pem(cert.as_bytes(), other.signing_key.serialize_pem().as_bytes()).unwrap_err();
        assert!(
            mismatched.to_string().starts_with("TLS configuration refused"),
            "{mismatched}"
        );
        let no_key = ServerTls::from_pem(cert.as_bytes(), b"").unwrap_err();
        assert!(no_key.to_string().contains("no private key"), "{no_key}");
        let no_ca = tls.clone().with_client_ca_pem(b"").unwrap_err();
        assert!(no_ca.to_string().contains("no certificate"), "{no_ca}");
        // Mutual TLS keeps the handshake deadline set before.
        let strict = tls
            .with_handshake_timeout(Duration::from_secs(3))
            .with_client_ca_pem(cert.as_bytes())
            .unwrap();
        assert_eq!(strict.handshake_timeout(), Duration::from_secs(3));
    }

    #[test]
    fn files_are_looked_at_again_at_most_once_a_second() {
        let one = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let directory = std::env::temp_dir().join(format!("rpcwire-server-tls-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let paths = (directory.join("cert.pem"), directory.join("key.pem"));
        std::fs::write(&paths.0, one.cert.pem()).unwrap();
        std::fs::write(&paths.1, one.signing_key.serialize_pem()).unwrap();
        let tls = ServerTls::from_pem_files(&paths.0, &paths.1).unwrap();
        assert!(format!("{:?}", tls.certificate).contains("cert.pem"));
        let files = tls.certificate.files.as_ref().unwrap();
        tls.certificate.refresh();
        assert_eq!(
            files.looked.load(Ordering::Relaxed),
            0,
            "not looked at again so soon"
        );
        // A missing key file: unreadable, the certificate kept.
        std::fs::remove_file(&paths.1).unwrap();
        assert!(load(&paths).is_err());
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
