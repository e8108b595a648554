//! Prompts: how one is listed (`Prompt` and its arguments), and what `prompts/get` returns.

use serde::{Deserialize, Serialize};

use super::content::{Content, Role};

/// A prompt as `prompts/list` describes it.
///
/// ```
/// use rpcwire::mcp::Prompt;
/// let greet = Prompt::new("greet", "Greets someone").with_argument("name", "Who", true);
/// assert_eq!(
///     serde_json::to_string(&greet).unwrap(),
///     r#"{"name":"greet","description":"Greets someone","arguments":[{"name":"name","description":"Who","required":true}]}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// The name clients get it by.
    pub name: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a [`Prompt`].
///
/// ```
/// let arg = rpcwire::mcp::PromptArgument { name: "x".into(), description: None, required: Some(false) };
/// assert_eq!(serde_json::to_string(&arg).unwrap(), r#"{"name":"x","required":false}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl Prompt {
    /// A prompt called `name`, without arguments.
    ///
    /// ```
    /// assert!(rpcwire::mcp::Prompt::new("p", "d").arguments.is_empty());
    /// ```
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Prompt {
        Prompt {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            arguments: Vec::new(),
        }
    }

    /// The same prompt with one more argument.
    ///
    /// ```
    /// let p = rpcwire::mcp::Prompt::new("p", "d").with_argument("a", "A", false);
    /// assert_eq!(p.arguments[0].required, Some(false));
    /// ```
    pub fn with_argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Prompt {
        self.arguments.push(PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: Some(required),
        });
        self
    }
}

/// One message of a prompt.
///
/// ```
/// let m = rpcwire::mcp::PromptMessage::user_text("Hello, Ada!");
/// assert_eq!(
///     serde_json::to_string(&m).unwrap(),
///     r#"{"role":"user","content":{"type":"text","text":"Hello, Ada!"}}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A user message of text.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::PromptMessage::user_text("hi").role, rpcwire::mcp::Role::User);
    /// ```
    pub fn user_text(text: impl Into<String>) -> PromptMessage {
        PromptMessage {
            role: Role::User,
            content: Content::text(text),
        }
    }
}

/// What `prompts/get` returns.
///
/// ```
/// use rpcwire::mcp::{GetPromptResult, PromptMessage};
/// let got = GetPromptResult::new(vec![PromptMessage::user_text("hi")]);
/// assert_eq!(
///     serde_json::to_string(&got).unwrap(),
///     r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// A result of these messages.
    ///
    /// ```
    /// assert!(rpcwire::mcp::GetPromptResult::new(vec![]).messages.is_empty());
    /// ```
    pub fn new(messages: Vec<PromptMessage>) -> GetPromptResult {
        GetPromptResult {
            description: None,
            messages,
        }
    }
}
