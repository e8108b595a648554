//! Input-required results (MCP 2026-07-28, SEP-2322): where a stateless server cannot ask
//! the client mid-request (sampling, elicitation, roots), a handler answers with what it
//! needs — [`InputRequired`] — and the client sends the same request again with the answers
//! (`inputResponses`) and the server's `requestState`, sealed here with HMAC-SHA-256 so that
//! a client can neither forge nor alter it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::Sha256;

/// What a handler needs from the client before it can finish: requests keyed by names of
/// the handler's choosing, and a state to get back with the answers.
///
/// A handler returns it through [`McpContext::input_required`](super::McpContext::input_required);
/// on its next try, [`McpContext::input_response`](super::McpContext::input_response) gives
/// each answer by key and [`McpContext::request_state`](super::McpContext::request_state)
/// the state, verified.
///
/// ```
/// use rpcwire::mcp::InputRequired;
/// let schema = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
/// let needed = InputRequired::new()
///     .elicit("user_name", "What is your name?", &schema)
///     .list_roots("roots")
///     .with_state("step-1");
/// assert_eq!(needed.len(), 2);
/// ```
#[derive(Clone, Debug, Default)]
pub struct InputRequired {
    pub(crate) requests: Map<String, Value>,
    pub(crate) state: Option<String>,
}

impl InputRequired {
    /// Nothing asked yet.
    ///
    /// ```
    /// assert!(rpcwire::mcp::InputRequired::new().is_empty());
    /// ```
    pub fn new() -> InputRequired {
        InputRequired::default()
    }

    /// Asks the user (`elicitation/create`) for what `requested_schema` describes.
    ///
    /// ```
    /// let schema = serde_json::json!({"type": "object", "properties": {}});
    /// assert_eq!(rpcwire::mcp::InputRequired::new().elicit("ok", "Go on?", &schema).len(), 1);
    /// ```
    pub fn elicit<S: Serialize + ?Sized>(
        self,
        key: &str,
        message: &str,
        requested_schema: &S,
    ) -> InputRequired {
        let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
        let params = serde_json::json!({ "message": message, "requestedSchema": schema });
        self.request(key, "elicitation/create", params)
    }

    /// Asks the client's model (`sampling/createMessage`) with `params` (the specification's
    /// `CreateMessageRequest` params: `messages`, `maxTokens`, …).
    ///
    /// ```
    /// let params = serde_json::json!({"messages": [], "maxTokens": 10});
    /// assert_eq!(rpcwire::mcp::InputRequired::new().sample("answer", &params).len(), 1);
    /// ```
    pub fn sample<P: Serialize + ?Sized>(self, key: &str, params: &P) -> InputRequired {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.request(key, "sampling/createMessage", params)
    }

    /// Asks the client for its roots (`roots/list`).
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::InputRequired::new().list_roots("roots").len(), 1);
    /// ```
    pub fn list_roots(self, key: &str) -> InputRequired {
        self.request(key, "roots/list", Value::Object(Map::new()))
    }

    /// Any request to the client, `method` with `params`, under `key`.
    ///
    /// ```
    /// let needed = rpcwire::mcp::InputRequired::new().request("r", "roots/list", serde_json::json!({}));
    /// assert!(!needed.is_empty());
    /// ```
    pub fn request(mut self, key: &str, method: &str, params: Value) -> InputRequired {
        let mut request = Map::new();
        request.insert("method".into(), Value::String(method.into()));
        request.insert("params".into(), params);
        self.requests.insert(key.into(), Value::Object(request));
        self
    }

    /// A state the client must send back with its answers (sealed on the way out, verified
    /// on the way in): where a multi-round handler keeps what it learned so far.
    ///
    /// ```
    /// let needed = rpcwire::mcp::InputRequired::new().with_state("round-2");
    /// assert!(needed.is_empty(), "a state is not a request");
    /// ```
    pub fn with_state(mut self, state: impl Into<String>) -> InputRequired {
        self.state = Some(state.into());
        self
    }

    /// How many requests it makes.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::InputRequired::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether it makes no request.
    ///
    /// ```
    /// assert!(rpcwire::mcp::InputRequired::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The result's JSON text, its state sealed by `sealer` for `scope`.
    pub(crate) fn to_result(&self, sealer: &Sealer, scope: &str) -> String {
        let mut result = Map::new();
        result.insert("resultType".into(), Value::String("input_required".into()));
        result.insert("inputRequests".into(), Value::Object(self.requests.clone()));
        if let Some(state) = &self.state {
            result.insert("requestState".into(), Value::String(sealer.seal(scope, state)));
        }
        Value::Object(result).to_string()
    }
}

/// What a retried request brings: the client's answers by key (objects only; anything else
/// counts as no answer) and the server's state, verified.
#[derive(Debug, Default)]
pub(crate) struct RequestInput {
    pub(crate) responses: Map<String, Value>,
    pub(crate) state: Option<String>,
    /// Where the handler's [`InputRequired`] is left for the server to answer with.
    pub(crate) required: std::sync::Mutex<Option<InputRequired>>,
}

/// Seals and opens request states: HMAC-SHA-256 under a key drawn from the operating system
/// when the server is built, over the scope (method and name) and the state.
pub(crate) struct Sealer {
    key: [u8; 32],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer")
    }
}

impl Sealer {
    pub(crate) fn new() -> Sealer {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No OS randomness: a key from the clock and the address space still differs
            // between servers; states only need to be unforgeable by clients.
            let seed = format!("{:?}{:p}", std::time::SystemTime::now(), &key);
            key = <Sha256 as sha2::Digest>::digest(seed.as_bytes()).into();
        }
        Sealer { key }
    }

    fn mac(&self, scope: &str, state: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(&(scope.len() as u64).to_be_bytes());
        mac.update(scope.as_bytes());
        mac.update(state);
        mac
    }

    /// `state`, sealed: its base64url, a dot, the base64url of its MAC.
    pub(crate) fn seal(&self, scope: &str, state: &str) -> String {
        let tag = self.mac(scope, state.as_bytes()).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(state),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The state `sealed` carries, if this server sealed it for `scope`, unaltered.
    pub(crate) fn open(&self, scope: &str, sealed: &str) -> Option<String> {
        let (state, tag) = sealed.split_once('.')?;
        let state = URL_SAFE_NO_PAD.decode(state).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        self.mac(scope, &state).verify_slice(&tag).ok()?;
        String::from_utf8(state).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_state_opens_only_unaltered_and_in_its_scope() {
        let sealer = Sealer::new();
        let sealed = sealer.seal("tools/call\0t", "round-2");
        assert_eq!(sealer.open("tools/call\0t", &sealed).as_deref(), Some("round-2"));
        assert!(
            sealer.open("tools/call\0other", &sealed).is_none(),
            "another tool"
        );
        assert!(sealer
            .open("tools/call\0t", &format!("{sealed}-TAMPERED"))
            .is_none());
        assert!(sealer.open("tools/call\0t", "no-dot").is_none());
        assert!(sealer.open("tools/call\0t", "!!.!!").is_none());
        assert!(
            Sealer::new().open("tools/call\0t", &sealed).is_none(),
            "another server's key"
        );
        assert_eq!(format!("{sealer:?}"), "Sealer", "the key is not shown");
    }

    #[test]
    fn an_input_required_result_carries_its_requests_and_sealed_state() {
        let sealer = Sealer::new();
        let needed = InputRequired::new()
            .sample("q", &serde_json::json!({"messages": [], "maxTokens": 5}))
            .with_state("s");
        let result: Value = serde_json::from_str(&needed.to_result(&sealer, "x")).unwrap();
        assert_eq!(result["resultType"], "input_required");
        assert_eq!(result["inputRequests"]["q"]["method"], "sampling/createMessage");
        let sealed = result["requestState"].as_str().unwrap();
        assert_eq!(sealer.open("x", sealed).as_deref(), Some("s"));
        assert_eq!((needed.len(), needed.is_empty()), (1, false));
        assert!(InputRequired::new().is_empty());
        let stateless: Value =
            serde_json::from_str(&InputRequired::new().list_roots("r").to_result(&sealer, "x")).unwrap();
        assert!(stateless.get("requestState").is_none());
    }
}
