//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension), the host's side: the
//! skills a server lists, each a directory of resources with a manifest (each file's
//! SHA-256 and size), loaded only when asked for — never ahead of need — and verified as
//! they are read: a file that is not in the manifest, or whose size or digest is not the
//! listed one, or a `SKILL.md` whose frontmatter is not the listing's, is refused and its
//! content not handed on.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::client::McpClient;
use super::content::ResourceContents;
use super::resource::ReadResourceResult;
use crate::transport::PeerError;

/// The extension's name in a server's capabilities.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most files a skill's manifest may list that a host must take.
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes a skill's files may add up to that a host must take (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 << 20;

/// One skill a server lists (`skills/list`).
///
/// ```
/// let skill: rpcwire::mcp::Skill = serde_json::from_value(serde_json::json!({
///     "uri": "skill://pdf/SKILL.md",
///     "frontmatter": {"name": "pdf", "description": "PDFs"},
///     "resources": [{"uri": "skill://pdf/SKILL.md", "digest": "sha256:00", "size": 10}],
/// })).unwrap();
/// assert_eq!(skill.name(), Some("pdf"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// Its `SKILL.md`.
    pub uri: String,
    /// The frontmatter of its `SKILL.md`, as the server lists it.
    #[serde(default)]
    pub frontmatter: Map<String, Value>,
    /// Its files.
    #[serde(default)]
    pub resources: SkillFiles,
}

/// A skill's files: listed with their digests and sizes, or `"dynamic"` (not listed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillFiles {
    /// Every file, with what verifies it.
    Listed(Vec<SkillFile>),
    /// Not listed (the server makes them as asked): nothing to verify them against.
    Dynamic(String),
}

impl Default for SkillFiles {
    fn default() -> Self {
        SkillFiles::Listed(Vec::new())
    }
}

/// One file of a skill's manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// Its resource URI.
    pub uri: String,
    /// `sha256:` and the lowercase hex of its bytes' SHA-256.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// Why a skill's file was refused.
///
/// ```
/// let error = rpcwire::mcp::SkillError::Unlisted("skill://pdf/evil.md".into());
/// assert!(error.to_string().contains("not in the skill's manifest"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The request failed.
    #[error(transparent)]
    Call(#[from] PeerError),
    /// The file is not one the manifest lists.
    #[error("{0} is not in the skill's manifest")]
    Unlisted(String),
    /// The manifest lists more than a host takes.
    #[error("the skill's manifest is over the limits: {0}")]
    Limits(String),
    /// The file's size is not the listed one.
    #[error("{uri}: {got} bytes, the manifest says {listed}")]
    Size {
        /// The file.
        uri: String,
        /// What was read.
        got: u64,
        /// What the manifest says.
        listed: u64,
    },
    /// The file's digest is not the listed one.
    #[error("{0}: its SHA-256 is not the manifest's")]
    Digest(String),
    /// The `SKILL.md`'s frontmatter is not the listing's (or cannot be read).
    #[error("{uri}: the frontmatter is not the listed one: {why}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// What differs.
        why: String,
    },
    /// The file came back in no part, or in a part for another URI, or a blob that is not
    /// base64.
    #[error("{0}: no contents to verify")]
    Contents(String),
}

impl Skill {
    /// Its name (the frontmatter's `name`).
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The files other than its `SKILL.md`, as listed (none when dynamic).
    pub fn supporting_files(&self) -> Vec<&SkillFile> {
        match &self.resources {
            SkillFiles::Listed(files) => files.iter().filter(|f| f.uri != self.uri).collect(),
            SkillFiles::Dynamic(_) => Vec::new(),
        }
    }

    /// The manifest's limits, checked before anything is fetched.
    fn check_limits(&self) -> Result<(), SkillError> {
        let SkillFiles::Listed(files) = &self.resources else {
            return Ok(());
        };
        if files.len() > MAX_SKILL_FILES {
            return Err(SkillError::Limits(format!("{} files", files.len())));
        }
        let total: u64 = files.iter().map(|f| f.size).fold(0, u64::saturating_add);
        if total > MAX_SKILL_BYTES {
            return Err(SkillError::Limits(format!("{total} bytes")));
        }
        Ok(())
    }

    /// `bytes` of `uri` checked against the manifest.
    fn verify(&self, uri: &str, bytes: &[u8]) -> Result<(), SkillError> {
        let SkillFiles::Listed(files) = &self.resources else {
            return Ok(());
        };
        let file = files
            .iter()
            .find(|f| f.uri == uri)
            .ok_or_else(|| SkillError::Unlisted(uri.to_owned()))?;
        let got = bytes.len() as u64;
        if got != file.size {
            return Err(SkillError::Size {
                uri: uri.to_owned(),
                got,
                listed: file.size,
            });
        }
        let digest: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
        if file.digest != format!("sha256:{digest}") {
            return Err(SkillError::Digest(uri.to_owned()));
        }
        Ok(())
    }
}

/// The bytes of a read's part for `uri`.
fn bytes_of(result: &ReadResourceResult, uri: &str) -> Result<Vec<u8>, SkillError> {
    let part = result
        .contents
        .iter()
        .find(|part| match part {
            ResourceContents::Text { uri: at, .. } | ResourceContents::Blob { uri: at, .. } => at == uri,
        })
        .or(result.contents.first().filter(|_| result.contents.len() == 1))
        .ok_or_else(|| SkillError::Contents(uri.to_owned()))?;
    match part {
        ResourceContents::Text { text, .. } => Ok(text.as_bytes().to_vec()),
        ResourceContents::Blob { blob, .. } => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|_| SkillError::Contents(uri.to_owned()))
        }
    }
}

/// The YAML frontmatter of a `SKILL.md` (between its first two `---` lines), as JSON.
pub(crate) fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("no frontmatter (the file does not start with ---)".to_owned());
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err("the frontmatter is not closed with ---".to_owned());
    }
    let documents = yaml_rust2::YamlLoader::load_from_str(&yaml).map_err(|e| e.to_string())?;
    match documents.into_iter().next().map(yaml_to_json) {
        Some(Value::Object(map)) => Ok(map),
        _ => Err("the frontmatter is not a mapping".to_owned()),
    }
}

fn yaml_to_json(yaml: yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match yaml {
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(text), Value::Number),
        Yaml::Integer(n) => Value::from(n),
        Yaml::String(text) => Value::String(text),
        Yaml::Boolean(flag) => Value::Bool(flag),
        Yaml::Array(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Yaml::Hash(entries) => Value::Object(
            entries
                .into_iter()
                .map(|(key, value)| {
                    let key = match key {
                        Yaml::String(text) => text,
                        other => yaml_to_json(other).to_string(),
                    };
                    (key, yaml_to_json(value))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

impl McpClient {
    /// Whether the server offers skills (the extension in its capabilities).
    ///
    /// (See [`McpClient::list_skills`] for an example.)
    pub fn offers_skills(&self) -> bool {
        self.initialized["capabilities"]["extensions"]
            .get(SKILLS_EXTENSION)
            .is_some()
    }

    /// Every skill the server lists (all pages). Nothing of them is read: a skill's files
    /// are fetched when it is loaded ([`load_skill`](McpClient::load_skill)) or read.
    ///
    /// ```no_run
    /// # async fn run(client: rpcwire::mcp::McpClient) -> Result<(), Box<dyn std::error::Error>> {
    /// if client.offers_skills() {
    ///     for skill in client.list_skills().await? {
    ///         let loaded = client.load_skill(&skill).await?;
    ///         for file in skill.supporting_files() {
    ///             client.read_skill_file(&skill, &file.uri).await?;
    ///         }
    ///         # let _ = loaded;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_skills(&self) -> Result<Vec<Skill>, PeerError> {
        self.list("skills/list", "skills").await
    }

    /// Loads `skill`: its `SKILL.md` read, and handed back only when its size and digest are
    /// the manifest's and its frontmatter is the listing's.
    ///
    /// (See [`McpClient::list_skills`] for an example.)
    pub async fn load_skill(&self, skill: &Skill) -> Result<ReadResourceResult, SkillError> {
        let read = self.read_skill_file(skill, &skill.uri).await?;
        let bytes = bytes_of(&read, &skill.uri)?;
        let text = String::from_utf8_lossy(&bytes);
        let refuse = |why: String| SkillError::Frontmatter {
            uri: skill.uri.clone(),
            why,
        };
        let found = frontmatter(&text).map_err(refuse)?;
        if found != skill.frontmatter {
            let differs: std::collections::BTreeSet<&str> = found
                .keys()
                .chain(skill.frontmatter.keys())
                .filter(|key| found.get(*key) != skill.frontmatter.get(*key))
                .map(String::as_str)
                .collect();
            let differs: Vec<&str> = differs.into_iter().collect();
            return Err(refuse(format!("{} differ", differs.join(", "))));
        }
        Ok(read)
    }

    /// Reads the file `uri` of `skill`, handed back only when the manifest lists it with
    /// its size and digest (the manifest's limits are checked before anything is read).
    ///
    /// (See [`McpClient::list_skills`] for an example.)
    pub async fn read_skill_file(&self, skill: &Skill, uri: &str) -> Result<ReadResourceResult, SkillError> {
        skill.check_limits()?;
        if let SkillFiles::Listed(files) = &skill.resources {
            if !files.iter().any(|f| f.uri == uri) {
                return Err(SkillError::Unlisted(uri.to_owned()));
            }
        }
        let read = self.read_resource(uri).await?;
        skill.verify(uri, &bytes_of(&read, uri)?)?;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SKILL_MD: &str =
        "---\nname: pdf\ndescription: Extract PDFs\nmetadata:\n  version: 2\n---\n\nBody.\n";

    fn skill(text: &str) -> Skill {
        let digest: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        serde_json::from_value(json!({
            "uri": "skill://pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "Extract PDFs", "metadata": {"version": 2}},
            "resources": [{"uri": "skill://pdf/SKILL.md", "digest": format!("sha256:{digest}"), "size": text.len()},
                          {"uri": "skill://pdf/FORMS.md", "digest": "sha256:00", "size": 3}],
        }))
        .unwrap()
    }

    #[test]
    fn files_are_verified_by_size_and_digest() {
        let listed = skill(SKILL_MD);
        assert!(listed.verify("skill://pdf/SKILL.md", SKILL_MD.as_bytes()).is_ok());
        let same_length = SKILL_MD.replace("Body.", "Evil!");
        assert!(matches!(
            listed.verify("skill://pdf/SKILL.md", same_length.as_bytes()),
            Err(SkillError::Digest(_))
        ));
        let longer = format!("{SKILL_MD}more");
        assert!(matches!(
            listed.verify("skill://pdf/SKILL.md", longer.as_bytes()),
            Err(SkillError::Size { .. })
        ));
        assert!(matches!(
            listed.verify("skill://pdf/other.md", b""),
            Err(SkillError::Unlisted(_))
        ));
        assert_eq!(listed.supporting_files().len(), 1);
    }

    #[test]
    fn the_frontmatter_is_read_as_yaml() {
        let read = frontmatter(SKILL_MD).unwrap();
        assert_eq!(
            Value::Object(read),
            json!({"name": "pdf", "description": "Extract PDFs", "metadata": {"version": 2}})
        );
        let kinds =
            frontmatter("---\nname: x\nversion: 1.5\nbeta: true\ncount: 3\ntags: [a, b]\nnothing: ~\n---\n")
                .unwrap();
        assert_eq!(
            Value::Object(kinds),
            json!({"name": "x", "version": 1.5, "beta": true, "count": 3, "tags": ["a", "b"], "nothing": null})
        );
        let bare: Skill = serde_json::from_value(json!({"uri": "skill://x/SKILL.md"})).unwrap();
        assert_eq!(bare.resources, SkillFiles::Listed(Vec::new()));
        assert!(bare.name().is_none() && bare.supporting_files().is_empty());
        assert!(frontmatter("no frontmatter").is_err());
        assert!(frontmatter("---\nname: [unclosed\n---\n").is_err());
        assert!(frontmatter("---\nname: x\n").is_err(), "not closed");
        assert!(frontmatter("---\n- a list\n---\n").is_err(), "not a mapping");
    }

    #[test]
    fn limits_are_checked_before_reading() {
        let mut huge = skill(SKILL_MD);
        huge.resources = SkillFiles::Listed(vec![
            SkillFile {
                uri: "skill://pdf/SKILL.md".into(),
                digest: "sha256:00".into(),
                size: MAX_SKILL_BYTES + 1,
            };
            1
        ]);
        assert!(matches!(huge.check_limits(), Err(SkillError::Limits(_))));
        let dynamic = Skill {
            resources: SkillFiles::Dynamic("dynamic".into()),
            ..skill(SKILL_MD)
        };
        assert!(dynamic.check_limits().is_ok());
        assert!(dynamic.verify("skill://pdf/anything", b"x").is_ok());
    }
}
