//! TLS for every client and server of rpcwire, through rustls (with the ring provider).
//!
//! Two types, each shared by everything on its side:
//!
//! - [`ClientTls`]: what a client trusts and shows — the operating system's roots (by
//!   default; `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured), Mozilla's roots
//!   (webpki-roots) as an option, extra certificate authorities, and a client certificate
//!   (mutual TLS). The HTTP client transport, the WebSocket client, the MCP Streamable HTTP
//!   client and every gateway upstream take one; `https://` and `wss://` addresses use the
//!   system roots when none is given. Server names are sent (SNI), sessions are resumed
//!   (one cache per `ClientTls`, shared by its clones) and ALPN picks HTTP/2 or HTTP/1.1.
//! - [`ServerTls`]: what a server presents — a certificate chain and its key, from PEM
//!   files that are read again when they change (no restart), ALPN `h2` and `http/1.1`,
//!   a handshake deadline, and client certificates required when asked. The
//!   [`Acceptor`](crate::http::Acceptor) — and so [`HttpServer`](crate::http::HttpServer),
//!   the MCP Streamable HTTP server and both gateways — serves TLS with one.
//!
//! A refused handshake is reported in words that say why: the certificate's issuer is not
//! trusted, it has expired, it is not valid for the name, the server does not speak TLS,
//! or (on a server) the client spoke plain HTTP, which gets a `400` that says so.
//!
//! ```
//! use rpcwire_http::tls::{ClientTls, ServerTls};
//! # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
//! # let (cert_pem, key_pem) = (certified.cert.pem(), certified.signing_key.serialize_pem());
//! // A server with its certificate, and a client that trusts the certificate's issuer
//! // (here the certificate itself, self-signed) on top of the system's roots.
//! let server = ServerTls::from_pem(cert_pem.as_bytes(), key_pem.as_bytes()).unwrap();
//! let client = ClientTls::builder().add_ca_pem(cert_pem.as_bytes()).unwrap().build().unwrap();
//! # let _ = (server, client);
//! ```

mod client;
mod failure;
mod server;

use std::path::PathBuf;

#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub use client::Offer;
pub use client::{ClientTls, ClientTlsBuilder};
pub use server::{ServerTls, DEFAULT_HANDSHAKE_TIMEOUT};

#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub use failure::{describe_client_failure, is_plain_http, is_tls_refusal};

/// The crypto provider every configuration is built with: ring's, named rather than taken
/// from the process default, so that another crate enabling another provider changes
/// nothing here.
fn provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    std::sync::Arc::new(rustls::crypto::ring::default_provider())
}

/// A TLS configuration that cannot be built: a file that cannot be read, PEM without the
/// certificate or key it should hold, or a certificate or key rustls refuses.
///
/// ```
/// let error = rpcwire_http::tls::ServerTls::from_pem(b"not PEM", b"").unwrap_err();
/// assert!(error.to_string().contains("no certificate"), "{error}");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// PEM text without what it should hold, or holding something unreadable.
    #[error("{0}")]
    Pem(String),
    /// rustls refused the certificates or the key (a key that does not match its
    /// certificate, an unsupported algorithm, …).
    #[error("TLS configuration refused: {0}")]
    Refused(#[from] rustls::Error),
}

/// The contents of `path`, or why they cannot be read.
fn read(path: &std::path::Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Every certificate in `pem` (at least one), in order; `what` names the text in errors.
fn certificates(pem: &[u8], what: &str) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, TlsError> {
    use rustls::pki_types::pem::PemObject;
    let certificates = rustls::pki_types::CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| TlsError::Pem(format!("{what}: unreadable PEM: {error}")))?;
    if certificates.is_empty() {
        return Err(TlsError::Pem(format!("no certificate in {what}")));
    }
    Ok(certificates)
}

/// The private key in `pem` (PKCS#8, PKCS#1 or SEC1); `what` names the text in errors.
fn private_key(pem: &[u8], what: &str) -> Result<rustls::pki_types::PrivateKeyDer<'static>, TlsError> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::PrivateKeyDer::from_pem_slice(pem).map_err(|error| match error {
        rustls::pki_types::pem::Error::NoItemsFound => TlsError::Pem(format!("no private key in {what}")),
        error => TlsError::Pem(format!("{what}: unreadable PEM: {error}")),
    })
}
