//! Where tokens are kept between calls and runs: the [`TokenStore`] trait, kept in memory
//! ([`MemoryStore`]) or in a file only its owner can read ([`FileStore`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::sync::lock_unpoisoned;

/// The tokens of one resource, as the token endpoint gave them.
///
/// Its `Debug` shows no token.
///
/// ```
/// let tokens = rpcwire::mcp::auth::Tokens::new("eyJ.secret", Some(3600));
/// assert!(!format!("{tokens:?}").contains("secret"));
/// assert!(!tokens.is_expired());
/// ```
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Tokens {
    /// The access token.
    pub access_token: String,
    /// `Bearer`, or `DPoP` for a token bound to this client's key.
    pub token_type: String,
    /// The refresh token, if one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (space-separated), when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// Seconds since the Unix epoch, now.
pub(crate) fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

impl Tokens {
    /// A bearer token that expires in `expires_in` seconds (never, when `None`).
    pub fn new(access_token: impl Into<String>, expires_in: Option<u64>) -> Tokens {
        Tokens {
            access_token: access_token.into(),
            token_type: "Bearer".to_owned(),
            refresh_token: None,
            expires_at: expires_in.map(|seconds| now_seconds().saturating_add(seconds)),
            scope: None,
        }
    }

    /// Whether the access token has expired, or will within 30 seconds (it is refreshed
    /// before it is refused).
    pub fn is_expired(&self) -> bool {
        self.expires_at
            .is_some_and(|at| now_seconds().saturating_add(30) >= at)
    }

    /// Whether it is bound to a DPoP key (`token_type` `DPoP`).
    pub fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }
}

/// A client registered with an authorization server (dynamically, or given), kept so that a
/// later authorization does not register again.
///
/// Its `Debug` shows no secret.
///
/// ```
/// let client = rpcwire::mcp::auth::RegisteredClient::new("https://as.example", "abc", Some("s3cret".into()));
/// assert!(!format!("{client:?}").contains("s3cret"));
/// ```
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RegisteredClient {
    /// The authorization server's issuer it is registered with.
    pub issuer: String,
    /// Its `client_id`.
    pub client_id: String,
    /// Its `client_secret`, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
}

impl RegisteredClient {
    /// A client `client_id` (with `client_secret`, when confidential) of `issuer`.
    pub fn new(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        RegisteredClient {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret,
        }
    }
}

impl std::fmt::Debug for RegisteredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredClient")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .finish()
    }
}

/// What is kept for one protected resource: its tokens and the client registered for it.
///
/// ```
/// let kept = rpcwire::mcp::auth::Kept::default();
/// assert!(kept.tokens.is_none() && kept.client.is_none());
/// ```
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Kept {
    /// The tokens, once there are some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// The client registered with the resource's authorization server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<RegisteredClient>,
}

/// Where an authorizing client keeps what it got, by the resource (the MCP server's URL).
///
/// ```
/// use rpcwire::mcp::auth::{Kept, MemoryStore, TokenStore, Tokens};
/// let store = MemoryStore::default();
/// store.save("https://mcp.example/mcp", &Kept { tokens: Some(Tokens::new("t", None)), client: None });
/// assert!(store.load("https://mcp.example/mcp").tokens.is_some());
/// assert!(store.load("https://other.example/mcp").tokens.is_none());
/// ```
pub trait TokenStore: Send + Sync + std::fmt::Debug {
    /// What is kept for `resource` (nothing: the default).
    fn load(&self, resource: &str) -> Kept;
    /// Keeps `kept` for `resource`, replacing what was.
    fn save(&self, resource: &str, kept: &Kept);
}

/// Tokens kept in memory, for as long as the program runs.
///
/// (See [`TokenStore`] for an example.)
#[derive(Debug, Default)]
pub struct MemoryStore {
    kept: Mutex<HashMap<String, Kept>>,
}

impl TokenStore for MemoryStore {
    fn load(&self, resource: &str) -> Kept {
        lock_unpoisoned(&self.kept)
            .get(resource)
            .cloned()
            .unwrap_or_default()
    }

    fn save(&self, resource: &str, kept: &Kept) {
        lock_unpoisoned(&self.kept).insert(resource.to_owned(), kept.clone());
    }
}

/// Tokens kept in a JSON file that only its owner may read or write (mode `0600` on Unix,
/// set when the file is made), for a command-line client that runs again later. A file
/// that cannot be read is taken as empty; one that cannot be written is left as it was
/// (the tokens stay in memory for this run).
///
/// ```
/// use rpcwire::mcp::auth::{FileStore, Kept, TokenStore, Tokens};
/// let path = std::env::temp_dir().join(format!("rpcwire-doc-tokens-{}.json", std::process::id()));
/// let store = FileStore::new(&path);
/// store.save("https://mcp.example/mcp", &Kept { tokens: Some(Tokens::new("t", None)), client: None });
/// assert!(FileStore::new(&path).load("https://mcp.example/mcp").tokens.is_some());
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    memory: MemoryStore,
}

impl FileStore {
    /// A store in the file at `path` (made when something is first saved).
    pub fn new(path: impl Into<PathBuf>) -> FileStore {
        let path = path.into();
        let memory = MemoryStore::default();
        let read: HashMap<String, Kept> = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        *lock_unpoisoned(&memory.kept) = read;
        FileStore { path, memory }
    }

    fn write(&self, all: &HashMap<String, Kept>) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(all)?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&self.path)?;
        std::io::Write::write_all(&mut file, &text)
    }
}

impl TokenStore for FileStore {
    fn load(&self, resource: &str) -> Kept {
        self.memory.load(resource)
    }

    fn save(&self, resource: &str, kept: &Kept) {
        let mut all = lock_unpoisoned(&self.memory.kept);
        all.insert(resource.to_owned(), kept.clone());
        let _ = self.write(&all);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_file_is_the_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("rpcwire-test-tokens-{}.json", std::process::id()));
        let store = FileStore::new(&path);
        let mut tokens = Tokens::new("access", Some(60));
        tokens.refresh_token = Some("refresh".into());
        let kept = Kept {
            tokens: Some(tokens),
            client: Some(RegisteredClient::new("https://as", "id", None)),
        };
        store.save("r", &kept);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(FileStore::new(&path).load("r"), kept);
        std::fs::write(&path, b"not json").unwrap();
        assert_eq!(
            FileStore::new(&path).load("r"),
            Kept::default(),
            "unreadable: empty"
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_file_that_cannot_be_written_keeps_the_tokens_in_memory() {
        let store = FileStore::new("/nonexistent-dir/tokens.json");
        let kept = Kept {
            tokens: Some(Tokens::new("t", None)),
            client: Some(RegisteredClient::new(
                "https://as",
                "id",
                Some("s3cr3t-value".into()),
            )),
        };
        store.save("r", &kept);
        assert_eq!(store.load("r"), kept);
        assert!(!format!("{store:?}").contains("s3cr3t-value"));
        let mut tokens = Tokens::new("access-value", Some(60));
        tokens.refresh_token = Some("refresh-value".into());
        let shown = format!("{tokens:?} {:?}", kept.client);
        for secret in ["access-value", "refresh-value", "s3cr3t-value"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(
            shown.contains("Bearer") && shown.contains("https://as"),
            "{shown}"
        );
    }

    #[test]
    fn expiry_is_counted_with_a_margin() {
        assert!(Tokens::new("t", Some(10)).is_expired(), "within the 30 s margin");
        assert!(!Tokens::new("t", Some(3600)).is_expired());
        assert!(!Tokens::new("t", None).is_expired());
        let mut dpop = Tokens::new("t", None);
        dpop.token_type = "DPoP".into();
        assert!(dpop.is_dpop());
    }
}
