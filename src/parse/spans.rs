//! Offsets the parser found, without a lifetime, and the views built back from them.
//!
//! A `MessageSpans` is what travels in a [`ParsedFrame`](super::ParsedFrame) and in a batch:
//! plain numbers that index the input, turned into a borrowed [`Message`] on demand without
//! validating anything again.

use std::borrow::Cow;

use crate::message::{ErrorCode, ErrorObject, Id, Message, Notification, RawJson, Request, Response};

use super::scan::str_from_validated;
use super::unescape::unescape;

/// A byte range `start..end` of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Span {
    pub(crate) fn new(start: usize, end: usize) -> Span {
        // Limits::max_size never exceeds u32::MAX, so the casts are exact.
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The validated text this span covers.
    pub(crate) fn text(self, input: &[u8]) -> &str {
        str_from_validated(&input[self.start as usize..self.end as usize])
    }
}

/// The content of a JSON string (between its quotes) and whether it holds escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StrSpan {
    pub(crate) span: Span,
    pub(crate) escaped: bool,
}

impl StrSpan {
    /// The string's value: borrowed when it had no escapes.
    pub(crate) fn value(self, input: &[u8]) -> Cow<'_, str> {
        let raw = self.span.text(input);
        if self.escaped {
            Cow::Owned(unescape(raw))
        } else {
            Cow::Borrowed(raw)
        }
    }
}

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
            MessageSpans::Success { id, result } => Message::Response(Response::success_raw(
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
