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
        let key = rcgen::KeyPair::generate().expect("a key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("parameters");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "rpcwire soak CA");
        let ca = params.self_signed(&key).expect("the authority");
        let issuer = rcgen::Issuer::new(params, key);
        let server_key = rcgen::KeyPair::generate().expect("a key");
        let server = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("parameters")
            .signed_by(&server_key, &issuer)
            .expect("the server's certificate");
        let (cert, key) = (directory.join("cert.pem"), directory.join("key.pem"));
        std::fs::write(&cert, server.pem()).expect("cert.pem");
        std::fs::write(&key, server_key.serialize_pem()).expect("key.pem");
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).expect("the authority as a root");
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
