//! Tools: how one is described to clients (`Tool`, with its JSON Schema as raw text), and
//! what a call returns (`CallToolResult`).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::content::Content;

/// A tool as `tools/list` describes it. The schemas are JSON text kept as written: a schema
/// given by hand reaches the client byte for byte.
///
/// ```
/// use rpcwire::mcp::Tool;
/// let tool = Tool::new("echo", "Says it back", r#"{"type":"object","properties":{"text":{"type":"string"}}}"#).unwrap();
/// assert_eq!(
///     serde_json::to_string(&tool).unwrap(),
///     r#"{"name":"echo","description":"Says it back","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#
/// );
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The name clients call it by.
    pub name: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does (for the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments (an object schema), as written.
    pub input_schema: Box<RawValue>,
    /// The JSON Schema of its `structuredContent`, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Box<RawValue>>,
    /// Hints about its behaviour (`readOnlyHint`, `destructiveHint`, …), as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<RawValue>>,
}

impl Tool {
    /// A tool whose input schema is the JSON text `input_schema`, kept byte for byte; an
    /// error when it is not JSON.
    ///
    /// ```
    /// assert!(rpcwire::mcp::Tool::new("t", "d", "{not json").is_err());
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: &str,
    ) -> Result<Tool, serde_json::Error> {
        Ok(Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: RawValue::from_string(input_schema.to_owned())?,
            output_schema: None,
            annotations: None,
        })
    }

    /// A tool whose input schema is made from the arguments' type by schemars.
    ///
    /// ```
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Add { a: i64, b: i64 }
    /// let tool = rpcwire::mcp::Tool::for_args::<Add>("add", "Adds two integers");
    /// assert!(tool.input_schema.get().contains(r#""required":["a","b"]"#));
    /// ```
    pub fn for_args<A: schemars::JsonSchema>(
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Tool {
        Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: input_schema_for::<A>(),
            output_schema: None,
            annotations: None,
        }
    }

    /// The same tool with a title for people.
    ///
    /// ```
    /// let tool = rpcwire::mcp::Tool::new("t", "d", "{}").unwrap().with_title("T");
    /// assert_eq!(tool.title.as_deref(), Some("T"));
    /// ```
    pub fn with_title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }
}

/// The input schema of a tool taking `A`: schemars' schema of `A`, or an empty object
/// schema when `A` is not an object (a tool without arguments).
fn input_schema_for<A: schemars::JsonSchema>() -> Box<RawValue> {
    let schema = schemars::schema_for!(A);
    let is_object = schema.get("type").and_then(|kind| kind.as_str()) == Some("object");
    let text = if is_object {
        serde_json::to_string(&schema).unwrap_or_else(|_| EMPTY_OBJECT_SCHEMA.to_owned())
    } else {
        EMPTY_OBJECT_SCHEMA.to_owned()
    };
    RawValue::from_string(text).unwrap_or_else(|_| empty_object_schema())
}

const EMPTY_OBJECT_SCHEMA: &str = r#"{"type":"object","properties":{}}"#;

fn empty_object_schema() -> Box<RawValue> {
    RawValue::from_string(EMPTY_OBJECT_SCHEMA.to_owned()).expect("a JSON constant")
}

/// What a tool call returns: content for the model, optionally structured content (JSON
/// matching the tool's output schema), and whether the tool failed. A tool that fails in a
/// way the model should see returns [`CallToolResult::error`], not a JSON-RPC error.
///
/// ```
/// use rpcwire::mcp::CallToolResult;
/// let failed = CallToolResult::error("the disk is full");
/// assert_eq!(
///     serde_json::to_string(&failed).unwrap(),
///     r#"{"content":[{"type":"text","text":"the disk is full"}],"isError":true}"#
/// );
/// ```
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// What the model reads.
    pub content: Vec<Content>,
    /// JSON matching the tool's output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Box<RawValue>>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    /// A result of one text item.
    ///
    /// ```
    /// let done = rpcwire::mcp::CallToolResult::text("8");
    /// assert_eq!(done.content[0].as_text(), Some("8"));
    /// ```
    pub fn text(text: impl Into<String>) -> CallToolResult {
        CallToolResult::content(vec![Content::text(text)])
    }

    /// A result of these items.
    ///
    /// ```
    /// use rpcwire::mcp::{CallToolResult, Content};
    /// let mixed = CallToolResult::content(vec![Content::text("a"), Content::image("AA==", "image/png")]);
    /// assert_eq!(mixed.content.len(), 2);
    /// ```
    pub fn content(content: Vec<Content>) -> CallToolResult {
        CallToolResult {
            content,
            structured_content: None,
            is_error: None,
        }
    }

    /// A failed call, told to the model as text (`isError: true`).
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::CallToolResult::error("no").is_error, Some(true));
    /// ```
    pub fn error(text: impl Into<String>) -> CallToolResult {
        CallToolResult {
            content: vec![Content::text(text)],
            structured_content: None,
            is_error: Some(true),
        }
    }

    /// The same result with structured content: `value` serialized, and also given as text
    /// for clients that read only `content` (as the specification advises).
    ///
    /// ```
    /// let result = rpcwire::mcp::CallToolResult::default().with_structured(&serde_json::json!({"sum": 8})).unwrap();
    /// assert_eq!(result.structured_content.unwrap().get(), r#"{"sum":8}"#);
    /// assert_eq!(result.content[0].as_text(), Some(r#"{"sum":8}"#));
    /// ```
    pub fn with_structured<T: Serialize + ?Sized>(
        mut self,
        value: &T,
    ) -> Result<CallToolResult, serde_json::Error> {
        let text = serde_json::to_string(value)?;
        self.content.push(Content::text(text.clone()));
        self.structured_content = Some(RawValue::from_string(text)?);
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_without_object_arguments_gets_an_empty_object_schema() {
        let tool = Tool::for_args::<()>("none", "no arguments");
        assert_eq!(tool.input_schema.get(), EMPTY_OBJECT_SCHEMA);
        assert_eq!(empty_object_schema().get(), EMPTY_OBJECT_SCHEMA);
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// What to say.
        text: String,
    }

    #[test]
    fn tools_and_results_serialize_as_the_specification_writes_them() {
        assert!(Tool::new("t", "d", "[").is_err());
        let tool = Tool::for_args::<Args>("say", "Says").with_title("Say");
        let text = serde_json::to_string(&tool).unwrap();
        assert!(
            text.starts_with(r#"{"name":"say","title":"Say","description":"Says","inputSchema":{"#),
            "{text}"
        );
        let back: Tool = serde_json::from_str(&text).unwrap();
        assert_eq!(back.input_schema.get(), tool.input_schema.get());
        let result = CallToolResult::content(vec![Content::text("a")])
            .with_structured(&serde_json::json!({"n": 1}))
            .unwrap();
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}"#
        );
        let read: CallToolResult = serde_json::from_str(r#"{"content":[],"isError":false}"#).unwrap();
        assert_eq!(read.is_error, Some(false));
        assert_eq!(CallToolResult::text("x").content.len(), 1);
    }
}
