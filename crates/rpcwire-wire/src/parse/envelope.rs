//! The JSON-RPC 2.0 rules for one message object.
//!
//! Members are read in one pass. A member that breaks a JSON-RPC rule (a bad version, a
//! duplicate, a wrong type) does not stop the pass: the first such problem is remembered and
//! the rest of the object is still validated as JSON, because a syntax error anywhere wins
//! (-32700 before -32600). Syntax errors travel in the outer `Result` of the functions
//! below, JSON-RPC problems in the [`Outcome`].

use super::error::{ParseError, ParseErrorKind};
use super::error_object::{error_object, ErrorSpans};
use super::members::{envelope_member, Member, Members, ENVELOPE_KEYS};
use super::spans::{IdSpan, MessageSpans};
use super::{any_order, compact};
use crate::json::cursor::Cursor;
use crate::json::kernels::Span;
use crate::json::string::StrSpan;
use crate::json::value::Literal;
use crate::json::{SyntaxError, SyntaxErrorKind};

/// A message object's outcome: `Ok` a message, `Err` valid JSON that is not a valid
/// message.
pub(crate) type Outcome = Result<MessageSpans, ParseError>;

/// Parses the message object at the cursor (which is at `{`), inside `enclosing`
/// containers (0 for a single message, 1 for a batch element).
#[inline(always)]
pub(crate) fn message(
    r: &mut Cursor<'_>,
    enclosing: usize,
    max_depth: usize,
) -> Result<Outcome, SyntaxError> {
    if let Some((spans, end)) = compact::message(r.buf, r.pos, enclosing, max_depth) {
        r.pos = end;
        return Ok(Ok(spans));
    }
    message_past_fixed_layouts(r, enclosing, max_depth)
}

/// [`message`] for an object the fixed-layout reader ([`compact::message`]) has already
/// refused at the cursor: the any-order path, then the general one.
#[inline(always)]
pub(crate) fn message_past_fixed_layouts(
    r: &mut Cursor<'_>,
    enclosing: usize,
    max_depth: usize,
) -> Result<Outcome, SyntaxError> {
    if let Some((spans, end)) = any_order::message(r.buf, r.pos, enclosing, max_depth) {
        r.pos = end;
        return Ok(Ok(spans));
    }
    let (outcome, end) = general(r.buf, r.pos, enclosing, max_depth)?;
    r.pos = end;
    Ok(outcome)
}

/// The general path: members in any order and spelling, every rule applied. Returns the
/// outcome and the position after the object (taking and returning positions, so that the
/// caller's cursor can stay in a register).
#[inline(never)]
pub(crate) fn general(
    buf: &[u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
) -> Result<(Outcome, usize), SyntaxError> {
    let mut r = Cursor::at(buf, pos);
    let outcome = message_at(&mut r, enclosing, max_depth)?;
    Ok((outcome, r.pos))
}

/// What a message object holds, as the member loop found it.
#[derive(Default)]
struct Found {
    id: Option<IdSpan>,
    /// How many `"id"` members there were: with more than one, the id cannot be told.
    ids: u8,
    method: Option<StrSpan>,
    params: Option<Span>,
    result: Option<Span>,
    error: Option<ErrorSpans>,
}

#[inline(always)]
fn message_at(r: &mut Cursor<'_>, enclosing: usize, max_depth: usize) -> Result<Outcome, SyntaxError> {
    let object_at = r.pos;
    let depth = enclosing + 1;
    if depth > max_depth {
        return Err(r.error(SyntaxErrorKind::TooDeep { limit: max_depth }));
    }
    let mut members = Members::new(r.buf);
    let mut found = Found::default();
    members.read_object(r, &ENVELOPE_KEYS, envelope_member, |members, r, member| {
        let value_at = r.pos;
        match member {
            Some(Member::Jsonrpc) => {
                let rest = r.buf.get(r.pos..).unwrap_or_default();
                if rest.first_chunk::<5>() == Some(b"\"2.0\"") {
                    r.pos += 5;
                } else if r.peek() == Some(b'"') {
                    let version = r.string()?;
                    let ok = if version.escaped {
                        version.value(r.buf) == "2.0"
                    } else {
                        version.span.text(r.buf) == "2.0"
                    };
                    if !ok {
                        members.note(ParseErrorKind::BadVersion, value_at);
                    }
                } else {
                    r.value(depth, max_depth)?;
                    members.note(ParseErrorKind::BadVersion, value_at);
                }
            }
            Some(Member::Id) => {
                found.ids = found.ids.saturating_add(1);
                match r.peek() {
                    Some(b'"') => found.id = Some(IdSpan::String(r.string()?)),
                    Some(b'-' | b'0'..=b'9') => found.id = Some(IdSpan::Number(r.number()?)),
                    Some(b'n' | b't' | b'f') => {
                        if r.literal()? == Literal::Null {
                            found.id = Some(IdSpan::Null);
                        } else {
                            members.note(ParseErrorKind::BadId, value_at);
                        }
                    }
                    _ => {
                        r.value(depth, max_depth)?;
                        members.note(ParseErrorKind::BadId, value_at);
                    }
                }
            }
            Some(Member::Method) => {
                if r.peek() == Some(b'"') {
                    let name = r.string()?;
                    if name.span.is_empty() {
                        members.note(ParseErrorKind::EmptyMethod, value_at);
                    }
                    found.method = Some(name);
                } else {
                    r.value(depth, max_depth)?;
                    members.note(ParseErrorKind::MethodNotString, value_at);
                }
            }
            Some(Member::Params) => match r.peek() {
                Some(b'[' | b'{') => found.params = Some(r.value_span(depth, max_depth)?),
                Some(b'n') if r.literal()? == Literal::Null => {}
                _ => {
                    if r.pos == value_at {
                        r.value(depth, max_depth)?;
                    }
                    members.note(ParseErrorKind::BadParams, value_at);
                }
            },
            Some(Member::Result) => found.result = Some(r.value_span(depth, max_depth)?),
            Some(Member::Error) => {
                if r.peek() == Some(b'{') {
                    let (parts, after) = error_object(r.buf, r.pos, depth, max_depth)?;
                    r.pos = after;
                    match parts {
                        Ok(parts) => found.error = Some(parts),
                        Err(problem) => members.note(problem.kind().clone(), problem.offset()),
                    }
                } else {
                    r.value(depth, max_depth)?;
                    members.note(ParseErrorKind::BadErrorObject("not an object"), value_at);
                }
            }
            _ => r.value(depth, max_depth)?,
        }
        Ok(())
    })?;
    // Two ids: which one is meant cannot be told, so an error answer carries `null`.
    let id = if found.ids > 1 { None } else { found.id };
    Ok(assemble(&members, object_at, found)
        .map_err(|problem| problem.with_id(id.map(|id| id.view(r.buf).into_owned()))))
}

/// Applies the rules that need the whole object.
fn assemble(members: &Members<'_>, object_at: usize, found: Found) -> Outcome {
    if let Some(problem) = &members.problem {
        return Err(problem.clone());
    }
    let fail = |kind| Err(ParseError::new(kind, object_at));
    if !members.has(Member::Jsonrpc) {
        return fail(ParseErrorKind::MissingVersion);
    }
    let Found {
        id,
        method,
        params,
        result,
        error,
        ids: _,
    } = found;
    let has_result = members.has(Member::Result);
    let has_error = members.has(Member::Error);
    if let Some(method) = method {
        if has_result || has_error {
            return fail(ParseErrorKind::MethodWithResult);
        }
        return Ok(match id {
            Some(id) => MessageSpans::Request { id, method, params },
            None => MessageSpans::Notification { method, params },
        });
    }
    if has_result && has_error {
        return fail(ParseErrorKind::ResultAndError);
    }
    if !has_result && !has_error {
        return fail(ParseErrorKind::MissingMethod);
    }
    let Some(id) = id else {
        return fail(ParseErrorKind::MissingId);
    };
    if members.has(Member::Params) {
        return fail(ParseErrorKind::ParamsInResponse);
    }
    match (result, error) {
        (Some(_), _) if id == IdSpan::Null => fail(ParseErrorKind::NullIdSuccess),
        (Some(result), _) => Ok(MessageSpans::Success { id, result }),
        (None, Some(error)) => Ok(MessageSpans::Failure {
            id,
            code: error.code,
            message: error.message,
            data: error.data,
        }),
        (None, None) => fail(ParseErrorKind::MissingMethod),
    }
}
