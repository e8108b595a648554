//! The content MCP results carry: text, images, audio, embedded resources and links to
//! resources (the specification's `ContentBlock`), and the contents of a resource.

use serde::{Deserialize, Serialize};

/// Who a message or a piece of content is meant for, or who wrote it.
///
/// ```
/// assert_eq!(serde_json::to_string(&rpcwire::mcp::Role::Assistant).unwrap(), r#""assistant""#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (the client's side).
    User,
    /// The model.
    Assistant,
}

/// Hints to the client about a piece of content: who it is for, how important it is, when
/// it last changed.
///
/// ```
/// let hints = rpcwire::mcp::Annotations { priority: Some(0.5), ..Default::default() };
/// assert_eq!(serde_json::to_string(&hints).unwrap(), r#"{"priority":0.5}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// From 0 (least important) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// An ISO 8601 time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// One piece of a tool result, a prompt message or a sampling message.
///
/// ```
/// use rpcwire::mcp::Content;
/// let text = Content::text("hi");
/// assert_eq!(serde_json::to_string(&text).unwrap(), r#"{"type":"text","text":"hi"}"#);
/// let image = Content::image("iVBORw0KGgo=", "image/png");
/// assert_eq!(
///     serde_json::to_string(&image).unwrap(),
///     r#"{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Hints to the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An image, base64-encoded.
    #[serde(rename_all = "camelCase")]
    Image {
        /// The image bytes, base64.
        data: String,
        /// Its type, such as `image/png`.
        mime_type: String,
        /// Hints to the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// Audio, base64-encoded.
    #[serde(rename_all = "camelCase")]
    Audio {
        /// The audio bytes, base64.
        data: String,
        /// Its type, such as `audio/wav`.
        mime_type: String,
        /// Hints to the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A resource's contents, embedded.
    Resource {
        /// The contents.
        resource: ResourceContents,
        /// Hints to the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A link to a resource the client may read.
    #[serde(rename_all = "camelCase")]
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Hints to the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
}

impl Content {
    /// Text content.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::Content::text("a").as_text(), Some("a"));
    /// ```
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text {
            text: text.into(),
            annotations: None,
        }
    }

    /// An image: base64 `data` of type `mime_type`.
    ///
    /// ```
    /// let image = rpcwire::mcp::Content::image("AAAA", "image/png");
    /// assert!(image.as_text().is_none());
    /// ```
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// Audio: base64 `data` of type `mime_type`.
    ///
    /// ```
    /// let audio = rpcwire::mcp::Content::audio("UklGRg==", "audio/wav");
    /// assert!(serde_json::to_string(&audio).unwrap().contains(r#""mimeType":"audio/wav""#));
    /// ```
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// A resource's contents, embedded.
    ///
    /// ```
    /// use rpcwire::mcp::{Content, ResourceContents};
    /// let embedded = Content::resource(ResourceContents::text("mem://a", "text/plain", "A"));
    /// assert_eq!(
    ///     serde_json::to_string(&embedded).unwrap(),
    ///     r#"{"type":"resource","resource":{"uri":"mem://a","mimeType":"text/plain","text":"A"}}"#
    /// );
    /// ```
    pub fn resource(resource: ResourceContents) -> Content {
        Content::Resource {
            resource,
            annotations: None,
        }
    }

    /// The text of text content.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::Content::text("t").as_text(), Some("t"));
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// A resource's contents: text, or bytes as base64 (`blob`).
///
/// ```
/// use rpcwire::mcp::ResourceContents;
/// let blob = ResourceContents::blob("test://b", "image/png", "AAAA");
/// assert_eq!(
///     serde_json::to_string(&blob).unwrap(),
///     r#"{"uri":"test://b","mimeType":"image/png","blob":"AAAA"}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The resource's URI.
        uri: String,
        /// Its type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents.
    #[serde(rename_all = "camelCase")]
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The bytes, base64.
        blob: String,
    },
}

impl ResourceContents {
    /// Text contents of `uri`.
    ///
    /// ```
    /// let text = rpcwire::mcp::ResourceContents::text("mem://hello", "text/plain", "hello");
    /// assert_eq!(text.uri(), "mem://hello");
    /// ```
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> ResourceContents {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
        }
    }

    /// Binary contents of `uri`, base64.
    ///
    /// ```
    /// let blob = rpcwire::mcp::ResourceContents::blob("mem://b", "application/octet-stream", "AA==");
    /// assert_eq!(blob.uri(), "mem://b");
    /// ```
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> ResourceContents {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: blob.into(),
        }
    }

    /// The resource's URI.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::ResourceContents::text("a://b", "text/plain", "").uri(), "a://b");
    /// ```
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_content_reads_back_as_it_was_written() {
        let texts = [
            r#"{"type":"text","text":"hi","annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"}}"#,
            r#"{"type":"image","data":"AA==","mimeType":"image/png"}"#,
            r#"{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}"#,
            r#"{"type":"resource","resource":{"uri":"a://b","mimeType":"text/plain","text":"t"}}"#,
            r#"{"type":"resource","resource":{"uri":"a://c","blob":"AA=="}}"#,
            r#"{"type":"resource_link","uri":"a://d","name":"d","description":"D","mimeType":"text/plain"}"#,
        ];
        for text in texts {
            let content: Content = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&content).unwrap(), text);
        }
        let link: Content = serde_json::from_str(texts[5]).unwrap();
        assert!(link.as_text().is_none());
        let blob: Content = serde_json::from_str(texts[4]).unwrap();
        let Content::Resource { resource, .. } = blob else {
            panic!("a resource")
        };
        assert_eq!(resource.uri(), "a://c");
        assert!(serde_json::from_str::<Content>(r#"{"type":"video","data":""}"#).is_err());
        assert_eq!(
            Content::audio("A", "audio/wav"),
            Content::Audio {
                data: "A".into(),
                mime_type: "audio/wav".into(),
                annotations: None
            }
        );
    }

    #[test]
    fn the_constructors_make_what_they_name() {
        assert_eq!(Content::text("t").as_text(), Some("t"));
        assert!(
            matches!(Content::image("AA==", "image/png"), Content::Image { ref mime_type, .. } if mime_type == "image/png")
        );
        let text = ResourceContents::text("a://t", "text/plain", "T");
        let blob = ResourceContents::blob("a://b", "image/png", "AA==");
        assert_eq!((text.uri(), blob.uri()), ("a://t", "a://b"));
        let embedded = Content::resource(blob.clone());
        assert_eq!(
            embedded,
            Content::Resource {
                resource: blob,
                annotations: None
            }
        );
        assert!(embedded.as_text().is_none());
        assert_eq!(serde_json::to_string(&Role::User).unwrap(), r#""user""#);
    }
}
