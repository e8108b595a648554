//! The keys a client signs with: a [`ClientKey`] for `private_key_jwt` client assertions
//! (RFC 7523) given as PEM, and a DPoP key (RFC 9449) made for the session.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters, EllipticCurveKeyType,
    Jwk,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::json;

use super::error::AuthError;
use super::pkce::{random_text, s256};
use super::store::now_seconds;

/// How long a client assertion is good for.
const ASSERTION_LIFETIME: u64 = 300;

/// A private key a client authenticates with (`private_key_jwt`, RFC 7523 §2.2): RSA (RS256),
/// P-256 (ES256) or Ed25519 (EdDSA), from PEM (PKCS#8, or PKCS#1 for RSA).
///
/// Its `Debug` shows no key.
///
/// ```
/// let refused = rpcwire::mcp::auth::ClientKey::from_pem("not a key", None).unwrap_err();
/// assert!(refused.to_string().contains("private key"));
/// ```
#[derive(Clone)]
pub struct ClientKey {
    key: EncodingKey,
    algorithm: Algorithm,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl ClientKey {
    /// The key in `pem`, signing with `algorithm` (`RS256`, `ES256`, `EdDSA`, …); without
    /// one, the key's own kind says (RS256, ES256, EdDSA).
    pub fn from_pem(pem: &str, algorithm: Option<&str>) -> Result<ClientKey, AuthError> {
        let refuse =
            |why: &dyn std::fmt::Display| AuthError::Unsupported(format!("the client's private key: {why}"));
        let algorithm = match algorithm {
            Some(name) => name.parse::<Algorithm>().map_err(|e| refuse(&e))?,
            None if pem.contains("BEGIN RSA PRIVATE KEY") => Algorithm::RS256,
            None => {
                // PKCS#8 says its kind inside: try each.
                let bytes = pem.as_bytes();
                if EncodingKey::from_ec_pem(bytes).is_ok() && is_ec(pem) {
                    Algorithm::ES256
                } else if EncodingKey::from_ed_pem(bytes).is_ok() && is_ed(pem) {
                    Algorithm::EdDSA
                } else {
                    Algorithm::RS256
                }
            }
        };
        let bytes = pem.as_bytes();
        let key = match algorithm {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(bytes),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(bytes),
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
                return Err(refuse(&"a shared secret is not a private key"))
            }
            _ => EncodingKey::from_rsa_pem(bytes),
        }
        .map_err(|e| refuse(&e))?;
        // A key that cannot sign (the wrong kind for the algorithm) is refused now.
        let probe = ClientKey { key, algorithm };
        probe.sign(&json!({"probe": true}))?;
        Ok(probe)
    }

    /// A client assertion: `iss` and `sub` the client, `aud` the authorization server
    /// (`audience`), a short life and a fresh `jti`.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, AuthError> {
        let now = now_seconds();
        self.sign(&json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
            "jti": random_text(16)?,
        }))
    }

    fn sign(&self, claims: &serde_json::Value) -> Result<String, AuthError> {
        let mut header = Header::new(self.algorithm);
        header.typ = Some("JWT".to_owned());
        jsonwebtoken::encode(&header, claims, &self.key)
            .map_err(|e| AuthError::Unsupported(format!("the client's private key cannot sign: {e}")))
    }
}

/// Whether a PKCS#8 PEM holds an EC key (its algorithm OID, id-ecPublicKey).
fn is_ec(pem: &str) -> bool {
    pem.contains("BEGIN EC PRIVATE KEY")
        || pkcs8_der(pem).is_some_and(|der| contains(&der, &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]))
}

/// Whether a PKCS#8 PEM holds an Ed25519 key (OID 1.3.101.112).
fn is_ed(pem: &str) -> bool {
    pkcs8_der(pem).is_some_and(|der| contains(&der, &[0x06, 0x03, 0x2b, 0x65, 0x70]))
}

fn pkcs8_der(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem.lines().filter(|line| !line.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD.decode(body.trim()).ok()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// A DPoP key (P-256, ES256) made for one client, and the proofs signed with it.
pub(crate) struct DpopKey {
    key: EncodingKey,
    jwk: Jwk,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey").finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new key from the operating system's random source.
    pub fn generate() -> Result<DpopKey, AuthError> {
        let rng = ring::rand::SystemRandom::new();
        let refuse = |why: &dyn std::fmt::Display| AuthError::Unsupported(format!("no DPoP key: {why}"));
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).map_err(|e| refuse(&e))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|e| refuse(&e))?;
        // The public key is the uncompressed point: 0x04, x (32 bytes), y (32 bytes).
        let point = pair.public_key().as_ref();
        let (x, y) = (&point[1..33], &point[33..65]);
        let jwk = Jwk {
            common: CommonParameters::default(),
            algorithm: AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
                key_type: EllipticCurveKeyType::EC,
                curve: EllipticCurve::P256,
                x: URL_SAFE_NO_PAD.encode(x),
                y: URL_SAFE_NO_PAD.encode(y),
            }),
        };
        Ok(DpopKey {
            key: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk,
        })
    }

    /// A proof for a `method` request to `url` (its query and fragment left out), with the
    /// server's `nonce` and, for a resource request, the hash of the `access_token`.
    pub fn proof(
        &self,
        method: &str,
        url: &url::Url,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut target = url.clone();
        target.set_query(None);
        target.set_fragment(None);
        let mut claims = json!({
            "jti": random_text(16)?,
            "htm": method,
            "htu": target.as_str(),
            "iat": now_seconds(),
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        if let Some(token) = access_token {
            claims["ath"] = json!(s256(token));
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| AuthError::Unsupported(format!("cannot sign a DPoP proof: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    #[test]
    fn client_keys_say_their_kind_and_sign_assertions() {
        let ec = rcgen::KeyPair::generate().unwrap();
        let key = ClientKey::from_pem(&ec.serialize_pem(), None).unwrap();
        assert_eq!(key.algorithm, Algorithm::ES256);
        assert!(!format!("{key:?}").contains("BEGIN"));
        let assertion = key.assertion("me", "https://as.example").unwrap();
        let public = DecodingKey::from_ec_der(ec.public_key_raw());
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["https://as.example"]);
        let claims = jsonwebtoken::decode::<serde_json::Value>(&assertion, &public, &validation)
            .unwrap()
            .claims;
        assert_eq!(
            (claims["iss"].as_str(), claims["sub"].as_str()),
            (Some("me"), Some("me"))
        );
        assert!(claims["jti"].is_string() && claims["exp"].as_u64() > claims["iat"].as_u64());
        let ed = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        assert_eq!(
            ClientKey::from_pem(&ed.serialize_pem(), None).unwrap().algorithm,
            Algorithm::EdDSA
        );
        assert_eq!(
            ClientKey::from_pem(&ec.serialize_pem(), Some("ES256"))
                .unwrap()
                .algorithm,
            Algorithm::ES256
        );
        for (pem, algorithm) in [
            (ec.serialize_pem(), Some("HS256")),
            (ec.serialize_pem(), Some("RS256")),
            (ec.serialize_pem(), Some("nonsense")),
            ("not a key".to_owned(), None),
        ] {
            assert!(ClientKey::from_pem(&pem, algorithm).is_err(), "{algorithm:?}");
        }
    }

    #[test]
    fn a_dpop_proof_verifies_with_the_key_in_its_header() {
        let key = DpopKey::generate().unwrap();
        let url: url::Url = "https://mcp.example/mcp?x=1#f".parse().unwrap();
        let proof = key.proof("POST", &url, Some("n1"), Some("token")).unwrap();
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<serde_json::Value>(
            &proof,
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(claims["ath"], s256("token"));
    }
}
