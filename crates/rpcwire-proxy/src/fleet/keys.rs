//! The clients' API keys: where a request carries its key, and which keys there are (with
//! their rates), kept as SHA-256 digests.

use http::header::{HeaderMap, AUTHORIZATION};
use sha2::{Digest, Sha256};

/// One client's key, as the gateway knows it: never its text, but its digest, a label to
/// show in logs and metrics, and its rate.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiKey {
    digest: [u8; 32],
    /// Shared: a key is cloned into each request's extensions.
    label: std::sync::Arc<str>,
    rate: f64,
}

impl ApiKey {
    /// What logs and metrics show of it (`line N` of the file, unless it was named).
    ///
    /// ```
    /// let keys = rpcwire::proxy::fleet::ApiKeys::parse("abc 10").unwrap();
    /// assert_eq!(keys.find("abc").unwrap().label(), "line 1");
    /// ```
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Requests per second it may send.
    ///
    /// ```
    /// let keys = rpcwire::proxy::fleet::ApiKeys::parse("abc 10").unwrap();
    /// assert_eq!(keys.find("abc").unwrap().rate(), 10.0);
    /// ```
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The SHA-256 of its text: what shared state is keyed by.
    ///
    /// ```
    /// let keys = rpcwire::proxy::fleet::ApiKeys::parse("abc 10").unwrap();
    /// assert_eq!(keys.find("abc").unwrap().digest()[0], 0xba);
    /// ```
    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }
}

/// A line of a keys file that is not `KEY RATE`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("keys, line {line}: {reason}")]
pub struct KeysError {
    /// Its number, from 1.
    pub line: usize,
    /// What is wrong (the key's text is never in it).
    pub reason: String,
}

/// The keys clients may use, each with its rate.
#[derive(Clone, Debug, Default)]
pub struct ApiKeys {
    by_digest: super::ConfigMap<[u8; 32], ApiKey>,
}

impl ApiKeys {
    /// Reads lines `KEY RATE_PER_SECOND` (blank lines and `#` comments skipped; a third
    /// word names the key in logs instead of its line number).
    ///
    /// ```
    /// let keys = rpcwire::proxy::fleet::ApiKeys::parse("abc 10 team-a\n\n# comment\ndef 0.5").unwrap();
    /// assert_eq!(keys.len(), 2);
    /// assert_eq!(keys.find("abc").unwrap().label(), "team-a");
    /// assert!(rpcwire::proxy::fleet::ApiKeys::parse("abc ten").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<ApiKeys, KeysError> {
        let mut keys = ApiKeys::default();
        for (number, line) in text.lines().enumerate() {
            let line_number = number + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let failed = |reason: &str| KeysError {
                line: line_number,
                reason: reason.to_owned(),
            };
            let mut words = line.split_whitespace();
            let (Some(key), Some(rate)) = (words.next(), words.next()) else {
                return Err(failed("expected KEY RATE_PER_SECOND"));
            };
            let rate: f64 = rate.parse().map_err(|_| failed("the rate is not a number"))?;
            if !(rate.is_finite() && rate > 0.0) {
                return Err(failed("the rate must be above 0"));
            }
            let label = words
                .next()
                .map_or_else(|| format!("line {line_number}"), str::to_owned);
            if words.next().is_some() {
                return Err(failed("expected KEY RATE_PER_SECOND [LABEL]"));
            }
            let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
            if keys
                .by_digest
                .insert(
                    digest,
                    ApiKey {
                        digest,
                        label: label.into(),
                        rate,
                    },
                )
                .is_some()
            {
                return Err(failed("the key is listed twice"));
            }
        }
        Ok(keys)
    }

    /// Keys given by their digests (SHA-256, hex), each with `RATE [LABEL]` (the label
    /// `sha256:` and the digest's first 8 hex digits when there is none): how keys are kept in
    /// Redis, where their texts never go ([`load`](ApiKeys::load)).
    ///
    /// ```
    /// let digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; // "abc"
    /// let keys = rpcwire::proxy::fleet::ApiKeys::from_digests([(digest, "10")]).unwrap();
    /// assert_eq!(keys.find("abc").unwrap().label(), "sha256:ba7816bf");
    /// assert!(rpcwire::proxy::fleet::ApiKeys::from_digests([("abc", "10")]).is_err());
    /// ```
    pub fn from_digests<I, D, V>(entries: I) -> Result<ApiKeys, KeysError>
    where
        I: IntoIterator<Item = (D, V)>,
        D: AsRef<str>,
        V: AsRef<str>,
    {
        let mut keys = ApiKeys::default();
        for (number, (digest_hex, value)) in entries.into_iter().enumerate() {
            let failed = |reason: &str| KeysError {
                line: number + 1,
                reason: reason.to_owned(),
            };
            let digest_hex = digest_hex.as_ref().trim();
            let mut digest = [0u8; 32];
            if digest_hex.len() != 64 {
                return Err(failed("a digest is 64 hex digits"));
            }
            for (slot, pair) in digest.iter_mut().zip(digest_hex.as_bytes().chunks(2)) {
                let pair = std::str::from_utf8(pair).map_err(|_| failed("a digest is 64 hex digits"))?;
                *slot = u8::from_str_radix(pair, 16).map_err(|_| failed("a digest is 64 hex digits"))?;
            }
            let mut words = value.as_ref().split_whitespace();
            let rate: f64 = words
                .next()
                .and_then(|rate| rate.parse().ok())
                .filter(|rate: &f64| rate.is_finite() && *rate > 0.0)
                .ok_or_else(|| failed("expected RATE [LABEL] with a rate above 0"))?;
            let label = words
                .next()
                .map_or_else(|| format!("sha256:{}", &digest_hex[..8]), str::to_owned);
            keys.by_digest.insert(
                digest,
                ApiKey {
                    digest,
                    label: label.into(),
                    rate,
                },
            );
        }
        Ok(keys)
    }

    /// The keys kept in the Redis hash `hash` on `redis` (a [`RedisTarget`](super::RedisTarget); fields: the keys' SHA-256 in hex;
    /// values: `RATE [LABEL]`, see [`from_digests`](ApiKeys::from_digests)), read within
    /// `timeout`. A key is added with `redis-cli HSET rpcwire:keys $(printf %s KEY | sha256sum |
    /// cut -d' ' -f1) "100 team-a"`.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use std::time::Duration;
    /// let keys = rpcwire::proxy::fleet::ApiKeys::load("redis://127.0.0.1:6379/", "rpcwire:keys", Duration::from_secs(2)).await;
    /// # let _ = keys;
    /// # }
    /// ```
    pub async fn load(
        redis: impl Into<super::RedisTarget>,
        hash: &str,
        timeout: std::time::Duration,
    ) -> Result<ApiKeys, String> {
        let redis = redis.into();
        let read = async {
            let client = redis.client().map_err(|error| error.to_string())?;
            let mut connection = client
                .get_multiplexed_async_connection()
                .await
                .map_err(|error| error.to_string())?;
            let entries: Vec<(String, String)> = redis::cmd("HGETALL")
                .arg(hash)
                .query_async(&mut connection)
                .await
                .map_err(|error| error.to_string())?;
            ApiKeys::from_digests(entries).map_err(|error| format!("{hash}: {error}"))
        };
        tokio::time::timeout(timeout, read)
            .await
            .map_err(|_| format!("Redis did not answer within {timeout:?}"))?
    }

    /// Reads the keys file at `path` ([`parse`](ApiKeys::parse)).
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("rpcwire-doc-keys-{}", std::process::id()));
    /// std::fs::write(&path, "abc 10\n").unwrap();
    /// let keys = rpcwire::proxy::fleet::ApiKeys::from_file(&path).unwrap();
    /// assert_eq!(keys.len(), 1);
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn from_file(path: impl AsRef<std::path::Path>) -> std::io::Result<ApiKeys> {
        let text = std::fs::read_to_string(path)?;
        ApiKeys::parse(&text).map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
    }

    /// The key whose text is `given`: found by its digest, so that no comparison of the
    /// texts shows, by its time, how much of a wrong key was right.
    ///
    /// ```
    /// let keys = rpcwire::proxy::fleet::ApiKeys::parse("abc 10").unwrap();
    /// assert!(keys.find("abc").is_some() && keys.find("ab").is_none());
    /// ```
    pub fn find(&self, given: &str) -> Option<&ApiKey> {
        let digest: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        self.by_digest.get(&digest)
    }

    /// How many keys there are.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::fleet::ApiKeys::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.by_digest.len()
    }

    /// Whether there are none.
    ///
    /// ```
    /// assert!(rpcwire::proxy::fleet::ApiKeys::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }
}

/// The key a request carries: `Authorization: Bearer KEY`, else `x-api-key: KEY`, else the
/// first segment of its path (`/KEY` or `/KEY/…`).
///
/// ```
/// use http::header::{HeaderMap, HeaderValue};
/// use rpcwire::proxy::fleet::key_in;
/// let mut headers = HeaderMap::new();
/// assert_eq!(key_in(&headers, "/abc"), Some("abc"));
/// headers.insert("x-api-key", HeaderValue::from_static("def"));
/// assert_eq!(key_in(&headers, "/abc"), Some("def"));
/// headers.insert("authorization", HeaderValue::from_static("Bearer ghi"));
/// assert_eq!(key_in(&headers, "/"), Some("ghi"));
/// assert_eq!(key_in(&HeaderMap::new(), "/"), None);
/// ```
pub fn key_in<'a>(headers: &'a HeaderMap, path: &'a str) -> Option<&'a str> {
    let bearer = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let scheme = value.get(..7)?;
            scheme.eq_ignore_ascii_case("bearer ").then(|| value[7..].trim())
        });
    if let Some(key) = bearer.filter(|key| !key.is_empty()) {
        return Some(key);
    }
    let header = headers
        .get("x-api-key")
        .and_then(|value| value.to_str().ok())
        .map(str::trim);
    if let Some(key) = header.filter(|key| !key.is_empty()) {
        return Some(key);
    }
    path.trim_start_matches('/')
        .split('/')
        .next()
        .filter(|key| !key.is_empty())
}

/// Writes `bytes` in lower-case hex after `out` (no allocation beyond `out`'s own).
pub(super) fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_two_digits_a_byte() {
        let bytes: Vec<u8> = (0..=255).collect();
        let mut out = "prefix:".to_owned();
        push_hex(&mut out, &bytes);
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(out, format!("prefix:{expected}"));
    }

    #[test]
    fn a_bad_line_is_named_and_the_key_never_shown() {
        let error = ApiKeys::parse("ok 1\ns3cret-key -1").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(!error.to_string().contains("s3cret"), "{error}");
        for bad in ["k", "k 0", "k NaN", "k inf", "k 1 label extra", "k 1\nk 2"] {
            assert!(ApiKeys::parse(bad).is_err(), "{bad}");
        }
        assert!(ApiKeys::from_file("/nonexistent/keys").is_err());
        let path = std::env::temp_dir().join(format!("rpcwire-keys-test-{}", std::process::id()));
        std::fs::write(&path, "k x").unwrap();
        assert_eq!(
            ApiKeys::from_file(&path).unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn keys_are_found_by_their_whole_text_only() {
        let keys = ApiKeys::parse("alpha 5 team\nbeta 0.25").unwrap();
        assert_eq!((keys.len(), keys.is_empty()), (2, false));
        let alpha = keys.find("alpha").unwrap();
        assert_eq!((alpha.label(), alpha.rate()), ("team", 5.0));
        assert_eq!(alpha.digest(), &<[u8; 32]>::from(Sha256::digest(b"alpha")));
        assert_eq!(keys.find("beta").unwrap().label(), "line 2");
        for wrong in ["alph", "alpha ", "Alpha", ""] {
            assert!(keys.find(wrong).is_none(), "{wrong:?}");
        }
        assert!(ApiKeys::default().is_empty());
    }

    #[test]
    fn digests_must_be_whole_and_rates_above_zero() {
        let digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let keys = ApiKeys::from_digests([(digest, "2.5 named")]).unwrap();
        assert_eq!(
            keys.find("abc").map(|k| (k.label(), k.rate())),
            Some(("named", 2.5))
        );
        let bad_hex = format!("zz{}", &digest[2..]);
        for (field, value) in [
            (&digest[1..], "1"),
            (bad_hex.as_str(), "1"),
            (digest, "0"),
            (digest, "x"),
            (digest, ""),
        ] {
            let error = ApiKeys::from_digests([(field, value)]).unwrap_err();
            assert_eq!(error.line, 1, "{field} {value}");
        }
    }

    #[test]
    fn an_empty_bearer_or_header_falls_through() {
        let mut headers = HeaderMap::new();
        assert_eq!(key_in(&headers, "/k"), Some("k"));
        headers.insert("x-api-key", " h ".parse().unwrap());
        assert_eq!(key_in(&headers, "/k"), Some("h"));
        headers.insert(AUTHORIZATION, "bearer b".parse().unwrap());
        assert_eq!(key_in(&headers, "/k"), Some("b"));
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, "Bearer  ".parse().unwrap());
        headers.insert("x-api-key", "".parse().unwrap());
        assert_eq!(key_in(&headers, "/k/rest"), Some("k"));
        headers.insert(AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(key_in(&headers, ""), None);
    }
}
