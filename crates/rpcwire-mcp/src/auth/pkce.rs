//! PKCE (RFC 7636) with S256, and the `state` of an authorization request: random values from
//! the operating system, URL-safe base64 without padding.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

use super::error::AuthError;

/// `n` random bytes as URL-safe base64 (no padding).
pub(crate) fn random_text(n: usize) -> Result<String, AuthError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)
        .map_err(|e| AuthError::Unsupported(format!("no random source for PKCE and state: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A PKCE pair: the verifier kept for the token request, its S256 challenge sent in the
/// authorization request.
pub(crate) struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    /// A new pair: 32 random bytes (a 43-character verifier, the shortest RFC 7636 allows).
    pub fn new() -> Result<Pkce, AuthError> {
        let verifier = random_text(32)?;
        let challenge = s256(&verifier);
        Ok(Pkce { verifier, challenge })
    }
}

/// `BASE64URL(SHA256(text))`, the S256 transformation (also a DPoP proof's `ath`).
pub(crate) fn s256(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_s256_of_the_verifier() {
        // RFC 7636 appendix B.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let pair = Pkce::new().unwrap();
        assert_eq!(pair.verifier.len(), 43);
        assert_eq!(pair.challenge, s256(&pair.verifier));
        assert_ne!(Pkce::new().unwrap().verifier, pair.verifier);
    }
}
