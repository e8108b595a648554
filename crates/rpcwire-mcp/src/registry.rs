//! The registry: what an MCP server offers — tools, resources, resource templates, prompts,
//! completion — with its limits and its listings, built once by
//! [`McpServer`](crate::McpServer) and shared by every session it serves.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;

use super::changes::ChangeNotifier;
use super::completion::{CompleteRequest, Completion};
use super::context::McpContext;
use super::input::Sealer;
use super::prompt::{GetPromptResult, Prompt};
use super::resource::{ReadResourceResult, Resource, ResourceTemplate};
use super::tool::{CallToolResult, Tool};
use super::version::ProtocolVersion;
use crate::message::{ErrorObject, RawJson};
use crate::parse::Limits as ParserLimits;

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
pub(crate) type Outcome<T> = Result<T, ErrorObject<'static>>;
pub(crate) type ToolFn =
    dyn Fn(Option<Box<RawValue>>, McpContext) -> BoxFuture<Outcome<CallToolResult>> + Send + Sync;
pub(crate) type ReadFn =
    dyn Fn(String, Vec<(String, String)>, McpContext) -> BoxFuture<Outcome<ReadResourceResult>> + Send + Sync;
pub(crate) type PromptFn =
    dyn Fn(HashMap<String, String>, McpContext) -> BoxFuture<Outcome<GetPromptResult>> + Send + Sync;
pub(crate) type CompleteFn =
    dyn Fn(CompleteRequest, McpContext) -> BoxFuture<Outcome<Completion>> + Send + Sync;

/// The error code of a resource that does not exist (the specification's "Resource not
/// found", revisions up to 2025-11-25): [`codes::RESOURCE_NOT_FOUND`](crate::codes::RESOURCE_NOT_FOUND).
pub const RESOURCE_NOT_FOUND: i64 = crate::codes::RESOURCE_NOT_FOUND;

/// Bounds on what one session may ask of the server.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServerLimits {
    pub(crate) parser: ParserLimits,
    pub(crate) page_size: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) handler_timeout: Option<Duration>,
}

/// Everything a session serves from: built once, shared by every session.
pub(crate) struct Registry {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) versions: Vec<ProtocolVersion>,
    pub(crate) limits: ServerLimits,
    pub(crate) tools: Vec<ToolEntry>,
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) prompts: Vec<PromptEntry>,
    pub(crate) completion: Option<Arc<CompleteFn>>,
    pub(crate) tool_list: Listing,
    pub(crate) resource_list: Listing,
    pub(crate) template_list: Listing,
    pub(crate) prompt_list: Listing,
    pub(crate) changes: ChangeNotifier,
    pub(crate) sealer: Sealer,
    pub(crate) cache: CacheHints,
}

/// How long clients may keep list results, `resources/read` results and `server/discover`'s
/// result (2026-07-28 `ttlMs`), and who may share them (`cacheScope`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheHints {
    pub(crate) ttl_ms: u64,
    pub(crate) scope: CacheScope,
    /// The members a stateless result starts with: its type and these hints (written once).
    pub(crate) members: String,
}

/// Who may share a cached result (2026-07-28 `cacheScope`).
///
/// ```
/// assert_eq!(rpcwire::mcp::CacheScope::Public.as_str(), "public");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// Any client may be given it (the same for every user).
    Public,
    /// Only the client that asked.
    Private,
}

impl CacheScope {
    /// As the wire writes it.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::CacheScope::Private.as_str(), "private");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

impl CacheHints {
    pub(crate) fn new(ttl_ms: u64, scope: CacheScope) -> CacheHints {
        let members = format!(
            r#""resultType":"complete","ttlMs":{ttl_ms},"cacheScope":"{}","#,
            scope.as_str()
        );
        CacheHints {
            ttl_ms,
            scope,
            members,
        }
    }
}

pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<ToolFn>,
    /// The arguments its schema mirrors in headers (`x-mcp-header`): (argument, header name).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) headers: Vec<(String, String)>,
}

impl ToolEntry {
    pub(crate) fn new(tool: Tool, handler: Arc<ToolFn>) -> ToolEntry {
        let headers = mirrored_headers(tool.input_schema.get());
        ToolEntry {
            tool,
            handler,
            headers,
        }
    }
}

/// The arguments a tool's input schema (its JSON text) mirrors in headers (`x-mcp-header`):
/// (argument, header name), in order.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn mirrored_headers(input_schema: &str) -> Vec<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Schema {
        #[serde(default)]
        properties: HashMap<String, Property>,
    }
    #[derive(serde::Deserialize)]
    struct Property {
        #[serde(rename = "x-mcp-header")]
        header: Option<String>,
    }
    let mut headers: Vec<(String, String)> = serde_json::from_str::<Schema>(input_schema)
        .map(|schema| {
            schema
                .properties
                .into_iter()
                .filter_map(|(name, property)| {
                    Some((
                        name,
                        format!("mcp-param-{}", property.header?.to_ascii_lowercase()),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    headers.sort();
    headers
}

pub(crate) struct ResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) handler: Arc<ReadFn>,
}

pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) handler: Arc<ReadFn>,
}

pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Arc<PromptFn>,
}

impl PromptEntry {
    /// The first required argument `given` lacks.
    pub(crate) fn missing_argument(&self, given: &HashMap<String, String>) -> Option<&str> {
        self.prompt
            .arguments
            .iter()
            .find(|argument| argument.required == Some(true) && !given.contains_key(&argument.name))
            .map(|argument| argument.name.as_str())
    }
}

/// A list method's items as JSON text, in registration order, answered a page at a time.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// The result's member: `tools`, `resources`, `resourceTemplates`, `prompts`.
    pub(crate) member: &'static str,
    pub(crate) items: Vec<Box<RawValue>>,
}

impl Listing {
    fn new<T: Serialize>(member: &'static str, items: impl Iterator<Item = T>) -> Listing {
        let items = items
            .map(|item| serde_json::value::to_raw_value(&item).expect("MCP definitions serialize"))
            .collect();
        Listing { member, items }
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The page that starts at `cursor` (the index of its first item, as the previous page's
    /// `nextCursor` said), `size` items long, `members` (JSON members and their commas)
    /// first; `None` for a cursor this listing never gave.
    pub(crate) fn page(&self, cursor: Option<&str>, size: usize, members: &str) -> Option<String> {
        let start = match cursor {
            None => 0,
            Some(cursor) => match cursor.parse::<usize>() {
                Ok(start) if start > 0 && start < self.items.len() && cursor == start.to_string() => start,
                _ => return None,
            },
        };
        let end = start.saturating_add(size.max(1)).min(self.items.len());
        let mut text = String::with_capacity(
            64 + self.items[start..end]
                .iter()
                .map(|i| i.get().len() + 1)
                .sum::<usize>(),
        );
        text.push('{');
        text.push_str(members);
        text.push('"');
        text.push_str(self.member);
        text.push_str("\":[");
        for (n, item) in self.items[start..end].iter().enumerate() {
            if n > 0 {
                text.push(',');
            }
            text.push_str(item.get());
        }
        text.push(']');
        if end < self.items.len() {
            text.push_str(",\"nextCursor\":\"");
            text.push_str(&end.to_string());
            text.push('"');
        }
        text.push('}');
        Some(text)
    }
}

impl Registry {
    pub(crate) fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.iter().find(|entry| entry.tool.name == name)
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompts.iter().find(|entry| entry.prompt.name == name)
    }

    /// Starts reading `uri`: a listed resource, else the first template it matches, else
    /// -32002 (at once).
    pub(crate) fn read(
        &self,
        uri: String,
        cx: McpContext,
    ) -> Outcome<BoxFuture<Outcome<ReadResourceResult>>> {
        if let Some(entry) = self.resources.iter().find(|entry| entry.resource.uri == uri) {
            return Ok((entry.handler)(uri, Vec::new(), cx));
        }
        for entry in &self.templates {
            if let Some(vars) = entry.template.matches(&uri) {
                return Ok((entry.handler)(uri, vars, cx));
            }
        }
        let error = ErrorObject::new(RESOURCE_NOT_FOUND, "Resource not found")
            .with_data(&serde_json::json!({ "uri": uri }))
            .unwrap_or_else(|_| ErrorObject::new(RESOURCE_NOT_FOUND, "Resource not found"));
        Err(error)
    }

    /// The capabilities this server declares.
    /// `stateless`: as the stateless revision declares them (no resource subscriptions:
    /// `subscriptions/listen` instead). List changes reach every client: sessions as
    /// notifications (over Streamable HTTP on their GET stream), stateless clients on their
    /// listen streams.
    fn capabilities(&self, stateless: bool) -> serde_json::Value {
        let mut capabilities = serde_json::Map::new();
        let list = |more: serde_json::Value| {
            let mut capability = serde_json::json!({ "listChanged": true });
            if let (Some(capability), serde_json::Value::Object(more)) = (capability.as_object_mut(), more) {
                capability.extend(more);
            }
            capability
        };
        if !self.tools.is_empty() {
            capabilities.insert("tools".into(), list(serde_json::json!({})));
        }
        if !self.resources.is_empty() || !self.templates.is_empty() {
            let subscribe = if stateless {
                serde_json::json!({})
            } else {
                serde_json::json!({ "subscribe": true })
            };
            capabilities.insert("resources".into(), list(subscribe));
        }
        if !self.prompts.is_empty() {
            capabilities.insert("prompts".into(), list(serde_json::json!({})));
        }
        capabilities.insert("logging".into(), serde_json::json!({}));
        if self.completion.is_some() {
            capabilities.insert("completions".into(), serde_json::json!({}));
        }
        serde_json::Value::Object(capabilities)
    }

    fn server_info(&self) -> serde_json::Value {
        serde_json::json!({ "name": self.name, "version": self.version })
    }

    /// `initialize`'s result for the revision agreed on.
    pub(crate) fn initialize_result(&self, version: ProtocolVersion) -> RawJson<'static> {
        let mut result = serde_json::json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.capabilities(false),
            "serverInfo": self.server_info(),
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = instructions.as_str().into();
        }
        RawJson::from_value(&result).expect("a JSON value serializes")
    }

    /// `server/discover`'s result: every enabled revision, the capabilities (as the
    /// stateless revision serves them when it is enabled), who this is (as `serverInfo` and,
    /// for 2026-07-28, in `_meta`), with the cache hints.
    pub(crate) fn discover_result(&self) -> RawJson<'static> {
        let versions: Vec<&str> = self.versions.iter().map(|v| v.as_str()).collect();
        let stateless = self.versions.iter().any(|version| version.is_stateless());
        let mut result = serde_json::json!({
            "resultType": "complete",
            "ttlMs": self.cache.ttl_ms,
            "cacheScope": self.cache.scope.as_str(),
            "supportedVersions": versions,
            "capabilities": self.capabilities(stateless),
            "serverInfo": self.server_info(),
            "_meta": { "io.modelcontextprotocol/serverInfo": self.server_info() },
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = instructions.as_str().into();
        }
        RawJson::from_value(&result).expect("a JSON value serializes")
    }

    pub(crate) fn relist(&mut self) {
        self.tool_list = Listing::new("tools", self.tools.iter().map(|entry| &entry.tool));
        self.resource_list = Listing::new("resources", self.resources.iter().map(|entry| &entry.resource));
        self.template_list = Listing::new(
            "resourceTemplates",
            self.templates.iter().map(|entry| &entry.template),
        );
        self.prompt_list = Listing::new("prompts", self.prompts.iter().map(|entry| &entry.prompt));
    }
}
