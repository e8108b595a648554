//! Certificates made at test time (rcgen; no key is committed): a CA, and server
//! certificates it signs — good, expired, for another name — and a client certificate.

#![allow(dead_code)] // each test uses some

use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};

/// A certificate and its key, in PEM.
#[derive(Clone, Debug)]
pub struct Pem {
    pub cert: String,
    pub key: String,
}

/// A certificate authority that signs what the tests need.
pub struct Authority {
    pub pem: Pem,
    issuer: Issuer<'static, KeyPair>,
}

impl Authority {
    /// A new CA called `name`.
    pub fn new(name: &str) -> Authority {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).unwrap();
        let pem = Pem {
            cert: cert.pem(),
            key: key.serialize_pem(),
        };
        Authority {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `names` (`localhost` and `127.0.0.1` by default).
    pub fn server(&self, names: &[&str]) -> Pem {
        self.sign(names, ExtendedKeyUsagePurpose::ServerAuth, None)
    }

    /// A server certificate for localhost that expired in 2020.
    pub fn expired_server(&self) -> Pem {
        self.sign(
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
            Some((2019, 2020)),
        )
    }

    /// A client certificate (mutual TLS).
    pub fn client(&self, name: &str) -> Pem {
        self.sign(&[name], ExtendedKeyUsagePurpose::ClientAuth, None)
    }

    fn sign(&self, names: &[&str], usage: ExtendedKeyUsagePurpose, validity: Option<(i32, i32)>) -> Pem {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(names.iter().map(|name| (*name).to_owned()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(DnType::CommonName, names[0]);
        params.extended_key_usages = vec![usage];
        if let Some((from, to)) = validity {
            params.not_before = date_time_ymd(from, 1, 1);
            params.not_after = date_time_ymd(to, 1, 1);
        }
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Pem {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

/// The names a test server's certificate is for.
pub const LOCAL: &[&str] = &["localhost", "127.0.0.1"];
