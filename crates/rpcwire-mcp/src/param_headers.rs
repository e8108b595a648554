//! Tool arguments mirrored in HTTP headers (SEP-2243): a tool's input schema marks a
//! top-level property with `x-mcp-header: Name`, and each call of it carries the argument
//! as `Mcp-Param-Name`. A tool whose marks break the rules (a name that is not an HTTP
//! token, used twice, on a property that is not a string, integer or boolean) is left out of
//! the client's tool list, as the specification asks.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::sync::lock_unpoisoned;
use crate::Tool;

/// The annotation's key in a property's schema.
const ANNOTATION: &str = "x-mcp-header";

/// The prefix of the headers.
#[cfg(feature = "http")]
pub(crate) const PARAM_PREFIX: &str = "mcp-param-";

/// The marks of one tool's input schema: (property, header name), or why the tool is
/// refused.
pub(crate) fn header_annotations(schema: &Value) -> Result<Vec<(String, String)>, String> {
    let mut marks: Vec<(String, String)> = Vec::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(marks);
    };
    for (property, definition) in properties {
        let Some(mark) = definition.get(ANNOTATION) else {
            continue;
        };
        let Some(name) = mark.as_str() else {
            return Err(format!("{property}: {ANNOTATION} is not a string"));
        };
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(format!("{property}: {ANNOTATION} {name:?} is not an HTTP token"));
        }
        let primitive = matches!(
            definition.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        );
        if !primitive {
            return Err(format!(
                "{property}: {ANNOTATION} on a property that is not a string, integer or boolean"
            ));
        }
        if marks.iter().any(|(_, seen)| seen.eq_ignore_ascii_case(name)) {
            return Err(format!("{property}: {ANNOTATION} {name:?} is used twice"));
        }
        marks.push((property.clone(), name.to_owned()));
    }
    Ok(marks)
}

/// `tchar` of RFC 9110.
pub(crate) fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `text` as a header value: as it is when it is printable ASCII without spaces at its
/// ends, else `=?base64?…?=` of its UTF-8 (SEP-2243); an empty text stays empty.
#[cfg(feature = "http")]
pub(crate) fn header_text(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.starts_with("=?base64?");
    if plain {
        return text.to_owned();
    }
    use base64::Engine;
    format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode(text)
    )
}

/// The tools listed so far and their marks, for the headers of their calls.
#[derive(Debug, Default)]
pub(crate) struct ParamHeaders {
    tools: Mutex<HashMap<String, Vec<(String, String)>>>,
}

impl ParamHeaders {
    /// Keeps from `tools` those whose marks are valid (learning the marks), and leaves the
    /// others out.
    pub fn keep_valid(&self, tools: &mut Vec<Tool>) {
        let mut known = lock_unpoisoned(&self.tools);
        tools.retain(|tool| {
            let schema: Value = serde_json::from_str(tool.input_schema.get()).unwrap_or_default();
            match header_annotations(&schema) {
                Ok(marks) => {
                    known.insert(tool.name.clone(), marks);
                    true
                }
                Err(_) => {
                    known.remove(&tool.name);
                    false
                }
            }
        });
    }

    /// The headers of a call of `tool` with `arguments`: one per marked argument that is a
    /// string, a number or a boolean (a null or absent one has none).
    #[cfg(feature = "http")]
    pub fn headers(&self, tool: &str, arguments: &Value) -> Vec<(String, String)> {
        let known = lock_unpoisoned(&self.tools);
        let Some(marks) = known.get(tool) else {
            return Vec::new();
        };
        marks
            .iter()
            .filter_map(|(property, name)| {
                let text = match arguments.get(property)? {
                    Value::String(text) => text.clone(),
                    Value::Bool(flag) => flag.to_string(),
                    Value::Number(number) => number.to_string(),
                    _ => return None,
                };
                Some((format!("{PARAM_PREFIX}{name}"), header_text(&text)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marks_follow_the_rules() {
        let ok = json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "query": {"type": "string"}}});
        assert_eq!(header_annotations(&ok).unwrap().len(), 2);
        for bad in [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": 7}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "F"}, "b": {"type": "string", "x-mcp-header": "f"}}}),
        ] {
            assert!(header_annotations(&bad).is_err(), "{bad}");
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn values_are_plain_or_base64() {
        assert_eq!(header_text("us-west1"), "us-west1");
        assert_eq!(header_text("us west 1"), "us west 1");
        assert_eq!(header_text(""), "");
        assert_eq!(header_text(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_text("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(header_text("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(header_text("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }

    #[cfg(feature = "http")]
    #[test]
    fn calls_carry_their_marked_arguments() {
        let headers = ParamHeaders::default();
        let tool = Tool::new(
            "t",
            "d",
            r#"{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"},"v":{"type":"boolean","x-mcp-header":"Verbose"},"p":{"type":"integer","x-mcp-header":"P"}}}"#,
        )
        .unwrap();
        let bad = Tool::new(
            "bad",
            "d",
            r#"{"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}"#,
        )
        .unwrap();
        let mut tools = vec![tool, bad];
        headers.keep_valid(&mut tools);
        assert_eq!(tools.len(), 1);
        let mut sent = headers.headers("t", &json!({"r": "eu", "v": null, "p": 42}));
        sent.sort();
        assert_eq!(
            sent,
            vec![
                ("mcp-param-P".to_owned(), "42".to_owned()),
                ("mcp-param-Region".to_owned(), "eu".to_owned())
            ]
        );
        assert!(headers.headers("bad", &json!({"x": 1})).is_empty());
    }
}
