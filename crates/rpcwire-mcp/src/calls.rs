//! A call — `tools/call`, `prompts/get`, `resources/read`, `completion/complete` — decoded
//! from its params and run on the registry's handler, once for every revision: the session
//! revisions' router and the stateless revision both serve a call through [`Call::decode`]
//! and [`run`], so that the checks ("Unknown tool", "missing required argument") are made in
//! one place.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::completion::{CompleteRequest, Completion};
use crate::context::McpContext;
use crate::message::{ErrorObject, Params};
use crate::methods::Called;
use crate::prompt::GetPromptResult;
use crate::registry::{BoxFuture, Registry};
use crate::resource::ReadResourceResult;
use crate::tool::CallToolResult;

/// A call, decoded.
pub(crate) enum Call {
    /// Runs the tool `name` with `arguments` (as they came).
    Tool {
        name: String,
        arguments: Option<Box<RawValue>>,
    },
    /// Gets the prompt `name` with `arguments`.
    Prompt {
        name: String,
        arguments: HashMap<String, String>,
    },
    /// Reads the resource at `uri`.
    Read { uri: String },
    /// Completes an argument of a prompt or a resource template.
    Complete(CompleteRequest),
}

/// A call and the progress token its `_meta` carries.
pub(crate) struct Decoded {
    pub(crate) call: Call,
    pub(crate) progress_token: Option<Box<RawValue>>,
}

/// The `_meta` of a call's params, as far as a call reads it.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CallMeta {
    progress_token: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct ToolParams {
    name: String,
    arguments: Option<Box<RawValue>>,
    #[serde(rename = "_meta", default)]
    meta: Option<CallMeta>,
}

#[derive(Deserialize)]
struct PromptParams {
    name: String,
    #[serde(default)]
    arguments: HashMap<String, String>,
    #[serde(rename = "_meta", default)]
    meta: Option<CallMeta>,
}

#[derive(Deserialize)]
struct ReadParams {
    uri: String,
    #[serde(rename = "_meta", default)]
    meta: Option<CallMeta>,
}

impl Call {
    /// Decodes the params (a JSON object's text, validated; absent params as `{}`) of a call
    /// to `called`'s handler; -32602 when they do not fit.
    pub(crate) fn decode(called: Called, params: Option<&str>) -> Result<Decoded, ErrorObject<'static>> {
        let token = |meta: Option<CallMeta>| meta.unwrap_or_default().progress_token;
        Ok(match called {
            Called::Tool => {
                let p: ToolParams = decode(params)?;
                Decoded {
                    call: Call::Tool {
                        name: p.name,
                        arguments: p.arguments,
                    },
                    progress_token: token(p.meta),
                }
            }
            Called::Prompt => {
                let p: PromptParams = decode(params)?;
                Decoded {
                    call: Call::Prompt {
                        name: p.name,
                        arguments: p.arguments,
                    },
                    progress_token: token(p.meta),
                }
            }
            Called::Read => {
                let p: ReadParams = decode(params)?;
                Decoded {
                    call: Call::Read { uri: p.uri },
                    progress_token: token(p.meta),
                }
            }
            Called::Complete => Decoded {
                call: Call::Complete(decode(params)?),
                progress_token: None,
            },
        })
    }

    /// What the call is about: the tool's or the prompt's name, the resource's URI; empty for
    /// a completion.
    pub(crate) fn target(&self) -> &str {
        match self {
            Call::Tool { name, .. } | Call::Prompt { name, .. } => name,
            Call::Read { uri } => uri,
            Call::Complete(_) => "",
        }
    }
}

/// What a call's handler gave.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Outcome {
    Tool(CallToolResult),
    Prompt(GetPromptResult),
    Read(ReadResourceResult),
    Complete { completion: Completion },
}

/// Starts `call` on the registry's handler with `cx`: -32602 for a tool or a prompt the
/// registry does not have, or a prompt without a required argument (at once); the handler's
/// work otherwise, whose error is the handler's own. What runs is the handler's own boxed
/// future: a call in flight holds no state of its own beside it.
pub(crate) fn start(
    registry: &Registry,
    call: Call,
    cx: McpContext,
) -> Result<Running, ErrorObject<'static>> {
    Ok(match call {
        Call::Tool { name, arguments } => {
            let Some(tool) = registry.tool(&name) else {
                return Err(ErrorObject::invalid_params(format_args!("Unknown tool: {name}")));
            };
            Running::Tool((tool.handler)(arguments, cx))
        }
        Call::Prompt { name, arguments } => {
            let Some(prompt) = registry.prompt(&name) else {
                return Err(ErrorObject::invalid_params(format_args!(
                    "Unknown prompt: {name}"
                )));
            };
            if let Some(missing) = prompt.missing_argument(&arguments) {
                return Err(ErrorObject::invalid_params(format_args!(
                    "missing required argument: {missing}"
                )));
            }
            Running::Prompt((prompt.handler)(arguments, cx))
        }
        Call::Read { uri } => Running::Read(registry.read(uri, cx)?),
        Call::Complete(request) => {
            Running::Complete(registry.completion.as_ref().map(|complete| complete(request, cx)))
        }
    })
}

/// Runs `call` (see [`start`]) to its end.
pub(crate) async fn run(
    registry: Arc<Registry>,
    call: Call,
    cx: McpContext,
) -> Result<Outcome, ErrorObject<'static>> {
    start(&registry, call, cx)?.await
}

/// A call's handler at work: its boxed future, and what its result becomes.
pub(crate) enum Running {
    Tool(BoxFuture<Result<CallToolResult, ErrorObject<'static>>>),
    Prompt(BoxFuture<Result<GetPromptResult, ErrorObject<'static>>>),
    Read(BoxFuture<Result<ReadResourceResult, ErrorObject<'static>>>),
    /// `None`: no completion handler (an empty completion).
    Complete(Option<BoxFuture<Result<Completion, ErrorObject<'static>>>>),
}

impl Future for Running {
    type Output = Result<Outcome, ErrorObject<'static>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Running::Tool(work) => work.as_mut().poll(cx).map_ok(Outcome::Tool),
            Running::Prompt(work) => work.as_mut().poll(cx).map_ok(Outcome::Prompt),
            Running::Read(work) => work.as_mut().poll(cx).map_ok(Outcome::Read),
            Running::Complete(Some(work)) => work
                .as_mut()
                .poll(cx)
                .map_ok(|completion| Outcome::Complete { completion }),
            Running::Complete(None) => Poll::Ready(Ok(Outcome::Complete {
                completion: Completion::default(),
            })),
        }
    }
}

/// `params` (a JSON object's or array's text, validated) decoded into `T` through rpcwire's
/// own deserializer (absent params as `{}`), or -32602: the one decoder of MCP's params, for
/// calls, the session's lifecycle and the stateless revision alike.
pub(crate) fn decode<T: for<'de> Deserialize<'de>>(params: Option<&str>) -> Result<T, ErrorObject<'static>> {
    match params {
        Some(params) => Params::new(params).decode::<T>(),
        None => serde_json::from_str("{}"),
    }
    .map_err(ErrorObject::invalid_params)
}
