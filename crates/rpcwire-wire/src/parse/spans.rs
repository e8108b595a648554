//! Offsets the parser found, without a lifetime, and the views built back from them.
//!
//! A `MessageSpans` is what travels in a [`ParsedFrame`](super::ParsedFrame) and in a batch:
//! plain numbers that index the input, turned into a borrowed [`Message`] on demand without
//! validating anything again.

use crate::json::kernels::Span;
use crate::json::string::StrSpan;
use crate::message::{ErrorCode, ErrorObject, Id, Message, Notification, RawJson, Request, Response};

/// Where the id is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdSpan {
    Null,
    Number(Span),
    String(StrSpan),
}

impl IdSpan {
    pub(crate) fn view(self, input: &[u8]) -> Id<'_> {
        match self {
            IdSpan::Null => Id::null(),
            IdSpan::Number(span) => Id::from_number_text(span.text(input)),
            IdSpan::String(s) => Id::from_string_text(s.span.text(input), s.escaped),
        }
    }
}

/// One message, as offsets into its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MessageSpans {
    Request {
        id: IdSpan,
        method: StrSpan,
        params: Option<Span>,
    },
    Notification {
        method: StrSpan,
        params: Option<Span>,
    },
    Success {
        id: IdSpan,
        result: Span,
    },
    Failure {
        id: IdSpan,
        code: i64,
        message: StrSpan,
        data: Option<Span>,
    },
}

fn raw(input: &[u8], span: Option<Span>) -> Option<RawJson<'_>> {
    span.map(|span| RawJson::from_validated(span.text(input)))
}

impl MessageSpans {
    /// The borrowed message these offsets describe in `input`.
    #[inline(always)]
    pub(crate) fn view(self, input: &[u8]) -> Message<'_> {
        match self {
            MessageSpans::Request { id, method, params } => Message::Request(Request::from_parts(
                id.view(input),
                method.value(input),
                raw(input, params),
            )),
            MessageSpans::Notification { method, params } => {
                Message::Notification(Notification::from_parts(method.value(input), raw(input, params)))
            }
            MessageSpans::Success { id, result } => Message::Response(Response::success_parts(
                id.view(input),
                RawJson::from_validated(result.text(input)),
            )),
            MessageSpans::Failure {
                id,
                code,
                message,
                data,
            } => Message::Response(Response::error(
                id.view(input),
                ErrorObject::from_parts(ErrorCode::from(code), message.value(input), raw(input, data)),
            )),
        }
    }
}
