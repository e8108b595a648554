//! `completion/complete`'s request and result: the argument a client is filling in, and the
//! values the server offers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `completion/complete`'s params.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequest {
    /// What is completed: `{"type":"ref/prompt","name":…}` or `{"type":"ref/resource","uri":…}`.
    #[serde(rename = "ref")]
    pub reference: Value,
    /// The argument being filled in.
    pub argument: CompleteArgument,
    /// Arguments already filled in (`context.arguments`).
    #[serde(default)]
    pub context: Option<Value>,
}

/// The argument `completion/complete` completes.
#[derive(Clone, Debug, Deserialize)]
pub struct CompleteArgument {
    /// Its name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// The values a completion offers.
///
/// ```
/// let done = rpcwire::mcp::Completion::of(vec!["apple".into(), "apricot".into()]);
/// assert_eq!(serde_json::to_string(&done).unwrap(), r#"{"values":["apple","apricot"]}"#);
/// ```
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values (at most 100).
    pub values: Vec<String>,
    /// How many there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// A completion offering `values`.
    ///
    /// ```
    /// assert!(rpcwire::mcp::Completion::of(vec![]).values.is_empty());
    /// ```
    pub fn of(values: Vec<String>) -> Completion {
        Completion {
            values,
            total: None,
            has_more: None,
        }
    }
}
