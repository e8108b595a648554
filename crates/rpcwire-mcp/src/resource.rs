//! Resources: how one is listed (`Resource`), URI templates (`ResourceTemplate`, matched
//! against a URI to read), and what reading returns.

use serde::{Deserialize, Serialize};

use super::content::ResourceContents;

/// A resource as `resources/list` describes it.
///
/// ```
/// let hello = rpcwire::mcp::Resource::new("mem://hello", "hello").with_mime_type("text/plain");
/// assert_eq!(
///     serde_json::to_string(&hello).unwrap(),
///     r#"{"uri":"mem://hello","name":"hello","mimeType":"text/plain"}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl Resource {
    /// A resource at `uri` called `name`.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::Resource::new("a://b", "b").name, "b");
    /// ```
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// The same resource with its type.
    ///
    /// ```
    /// let r = rpcwire::mcp::Resource::new("a://b", "b").with_mime_type("text/plain");
    /// assert_eq!(r.mime_type.as_deref(), Some("text/plain"));
    /// ```
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Resource {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The same resource with a description.
    ///
    /// ```
    /// let r = rpcwire::mcp::Resource::new("a://b", "b").with_description("B");
    /// assert_eq!(r.description.as_deref(), Some("B"));
    /// ```
    pub fn with_description(mut self, description: impl Into<String>) -> Resource {
        self.description = Some(description.into());
        self
    }
}

/// A family of resources named by a URI template (RFC 6570 level 1: `{name}` stands for one
/// path segment's worth of characters), as `resources/templates/list` describes it.
///
/// ```
/// let template = rpcwire::mcp::ResourceTemplate::new("test://template/{id}/data", "data");
/// let vars = template.matches("test://template/123/data").unwrap();
/// assert_eq!(vars, vec![("id".to_string(), "123".to_string())]);
/// assert!(template.matches("test://template/123/other").is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Their type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl ResourceTemplate {
    /// A template `uri_template` called `name`.
    ///
    /// ```
    /// let t = rpcwire::mcp::ResourceTemplate::new("file:///{path}", "files");
    /// assert_eq!(t.uri_template, "file:///{path}");
    /// ```
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    /// The same template with its resources' type.
    ///
    /// ```
    /// let t = rpcwire::mcp::ResourceTemplate::new("a://{x}", "x").with_mime_type("application/json");
    /// assert_eq!(t.mime_type.as_deref(), Some("application/json"));
    /// ```
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> ResourceTemplate {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The template's variables and their values when `uri` is one of its resources: each
    /// `{name}` matches one or more characters up to the template's next literal text (and
    /// never a `/`, unless the variable ends the template).
    ///
    /// ```
    /// let t = rpcwire::mcp::ResourceTemplate::new("a://{x}/{y}", "xy");
    /// assert_eq!(t.matches("a://1/2/3").unwrap()[1].1, "2/3");
    /// assert!(t.matches("a:///2").is_none());
    /// ```
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut vars = Vec::new();
        let mut template = self.uri_template.as_str();
        let mut rest = uri;
        loop {
            let Some(open) = template.find('{') else {
                return (template == rest).then_some(vars);
            };
            let literal = &template[..open];
            rest = rest.strip_prefix(literal)?;
            let close = open + template[open..].find('}')?;
            let name = &template[open + 1..close];
            template = &template[close + 1..];
            let end = match template.find('{').map_or(template, |next| &template[..next]) {
                "" if template.is_empty() => rest.len(),
                "" => return None,
                literal => rest.find(literal)?,
            };
            let value = &rest[..end];
            let last = template.is_empty();
            if value.is_empty() || (!last && value.contains('/')) {
                return None;
            }
            vars.push((name.to_owned(), value.to_owned()));
            rest = &rest[end..];
        }
    }
}

/// What `resources/read` returns.
///
/// ```
/// use rpcwire::mcp::{ReadResourceResult, ResourceContents};
/// let read = ReadResourceResult::one(ResourceContents::text("mem://hello", "text/plain", "hello"));
/// assert_eq!(
///     serde_json::to_string(&read).unwrap(),
///     r#"{"contents":[{"uri":"mem://hello","mimeType":"text/plain","text":"hello"}]}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The contents (a resource may have several parts).
    pub contents: Vec<ResourceContents>,
}

impl ReadResourceResult {
    /// A result of one part.
    ///
    /// ```
    /// use rpcwire::mcp::{ReadResourceResult, ResourceContents};
    /// assert_eq!(ReadResourceResult::one(ResourceContents::text("a://b", "text/plain", "")).contents.len(), 1);
    /// ```
    pub fn one(contents: ResourceContents) -> ReadResourceResult {
        ReadResourceResult {
            contents: vec![contents],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_only_their_own_uris() {
        let t = ResourceTemplate::new("test://template/{id}/data", "d");
        assert!(t.matches("test://template//data").is_none(), "an empty value");
        assert!(
            t.matches("test://template/1/2/data").is_none(),
            "a slash inside a segment"
        );
        assert!(t.matches("other://template/1/data").is_none());
        assert!(t.matches("test://template/1/data/more").is_none());
        let two = ResourceTemplate::new("a://{x}{y}", "adjacent");
        assert!(
            two.matches("a://12").is_none(),
            "two variables with nothing between"
        );
        let broken = ResourceTemplate::new("a://{x", "unclosed");
        assert!(broken.matches("a://1").is_none());
        let plain = ResourceTemplate::new("a://fixed", "no variables");
        assert_eq!(plain.matches("a://fixed"), Some(vec![]));
    }
}
