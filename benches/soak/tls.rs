//! The TLS server's certificate for the soak, made when it starts (rcgen; a fresh authority,
//! nothing committed), and the client configuration that trusts it.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The files and the client side, made once per run.
pub struct Certificates {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client: Arc<rustls::ClientConfig>,
}

/// The run's certificates, under the target directory (`target/soak-tls/`).
pub fn certificates() -> &'static Certificates {
    static MADE: OnceLock<Certificates> = OnceLock::new();
    MADE.get_or_init(|| {
        let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/soak-tls");
        std::fs::create_dir_all(&directory).expect("target/soak-tls");
        let authority = crate::certs::Authority::new("rpcwire soak CA");
        let server = authority.server(crate::certs::LOCAL);
        let (cert, key) = (directory.join("cert.pem"), directory.join("key.pem"));
        std::fs::write(&cert, &server.cert).expect("cert.pem");
        std::fs::write(&key, &server.key).expect("key.pem");
        let mut roots = rustls::RootCertStore::empty();
        use rustls::pki_types::pem::PemObject;
        let ca = rustls::pki_types::CertificateDer::from_pem_slice(authority.pem.cert.as_bytes())
            .expect("the authority");
        roots.add(ca).expect("the authority as a root");
        let client =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
        Certificates {
            cert,
            key,
            client: Arc::new(client),
        }
    })
}
