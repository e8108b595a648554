//! The JSON-RPC 2.0 rules for one message object.
//!
//! Members are read in one pass. A member that breaks a JSON-RPC rule (a bad version, a
//! duplicate, a wrong type) does not stop the pass: the first such problem is remembered and
//! the rest of the object is still validated as JSON, because a syntax error anywhere wins
//! (-32700 before -32600).

use std::borrow::Cow;
use std::collections::HashSet;

use smallvec::SmallVec;

use super::compact;
use super::error::{ParseError, Reason};
use super::reader::{Literal, Reader};
use super::spans::{IdSpan, MessageSpans, Span, StrSpan};
use super::unescape::unescape;

/// A message object's outcome: `Ok` a message, `Err` valid JSON that is not a valid
/// message. Syntax errors travel in the outer `Result` of the functions below.
pub(crate) type Outcome = Result<MessageSpans, ParseError>;

/// The members the parser knows, as bits of a "seen" mask.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member {
    Jsonrpc = 1,
    Id = 2,
    Method = 4,
    Params = 8,
    Result = 16,
    Error = 32,
    Code = 64,
    Message = 128,
    Data = 256,
}

impl Member {
    fn name(self) -> &'static str {
        match self {
            Member::Jsonrpc => "jsonrpc",
            Member::Id => "id",
            Member::Method => "method",
            Member::Params => "params",
            Member::Result => "result",
            Member::Error => "error",
            Member::Code => "code",
            Member::Message => "message",
            Member::Data => "data",
        }
    }
}

fn envelope_member(key: &[u8]) -> Option<Member> {
    match key {
        b"jsonrpc" => Some(Member::Jsonrpc),
        b"id" => Some(Member::Id),
        b"method" => Some(Member::Method),
        b"params" => Some(Member::Params),
        b"result" => Some(Member::Result),
        b"error" => Some(Member::Error),
        _ => None,
    }
}

fn error_member(key: &[u8]) -> Option<Member> {
    match key {
        b"code" => Some(Member::Code),
        b"message" => Some(Member::Message),
        b"data" => Some(Member::Data),
        _ => None,
    }
}

/// A known key with its closing quote as a little-endian word: `(pattern, mask, length
/// including the quote, member)`.
type QuickKey = (u64, u64, usize, Member);

const fn quick(text: &[u8], member: Member) -> QuickKey {
    let mut word = 0u64;
    let mut i = 0;
    while i < text.len() {
        word |= (text[i] as u64) << (8 * i);
        i += 1;
    }
    let mask = if text.len() == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * text.len())) - 1
    };
    (word, mask, text.len(), member)
}

const ENVELOPE_KEYS: [QuickKey; 6] = [
    quick(b"jsonrpc\"", Member::Jsonrpc),
    quick(b"id\"", Member::Id),
    quick(b"method\"", Member::Method),
    quick(b"params\"", Member::Params),
    quick(b"result\"", Member::Result),
    quick(b"error\"", Member::Error),
];

const ERROR_KEYS: [QuickKey; 3] = [
    quick(b"code\"", Member::Code),
    quick(b"message\"", Member::Message),
    quick(b"data\"", Member::Data),
];

/// The known key at `at` (an opening quote), when the next eight bytes start with one of
/// `keys` spelled plainly, closing quote included; with its length.
#[inline(always)]
fn quick_key(buf: &[u8], at: usize, keys: &[QuickKey]) -> Option<(Member, usize)> {
    let after_quote = buf.get(at + 1..)?;
    if buf[at] != b'"' {
        return None;
    }
    let word = u64::from_le_bytes(*after_quote.first_chunk::<8>()?);
    keys.iter()
        .find(|&&(pattern, mask, _, _)| word & mask == pattern)
        .map(|&(_, _, len, member)| (member, len))
}

/// Up to this many unknown members, duplicates are found by comparing with each earlier
/// one; past it, with a hash set (comparing each with all is quadratic: a 1 MiB message of
/// short unknown members took seconds).
const UNKNOWN_SCAN_LIMIT: usize = 8;

/// Bookkeeping shared by the message object and the error object: which members were seen,
/// the keys of unknown members (for duplicate detection), and the first problem.
struct Members<'a> {
    buf: &'a [u8],
    seen: u16,
    unknown: SmallVec<[StrSpan; 4]>,
    /// The unescaped names of the unknown members, once there are more than
    /// `UNKNOWN_SCAN_LIMIT` of them.
    unknown_set: Option<HashSet<Cow<'a, str>>>,
    problem: Option<ParseError>,
}

impl<'a> Members<'a> {
    fn new(buf: &'a [u8]) -> Members<'a> {
        Members {
            buf,
            seen: 0,
            unknown: SmallVec::new(),
            unknown_set: None,
            problem: None,
        }
    }

    /// Remembers the first JSON-RPC problem.
    fn note(&mut self, reason: Reason, offset: usize) {
        if self.problem.is_none() {
            self.problem = Some(ParseError::new(reason, offset));
        }
    }

    fn has(&self, member: Member) -> bool {
        self.seen & member as u16 != 0
    }

    /// Classifies `key` (compared after unescaping) with `known`, recording duplicates.
    fn classify(
        &mut self,
        key: StrSpan,
        key_at: usize,
        known: fn(&[u8]) -> Option<Member>,
    ) -> Option<Member> {
        let raw = key.span.text(self.buf);
        let member = if key.escaped {
            known(unescape(raw).as_bytes())
        } else {
            known(raw.as_bytes())
        };
        match member {
            Some(member) => self.mark(member, key_at),
            None => {
                if let Some(name) = self.record_unknown(key) {
                    self.note(Reason::DuplicateMember(name), key_at);
                }
            }
        }
        member
    }

    /// Records a known member, noting a duplicate.
    #[inline(always)]
    fn mark(&mut self, member: Member, key_at: usize) {
        if self.has(member) {
            self.note(Reason::DuplicateMember(member.name().to_owned()), key_at);
        }
        self.seen |= member as u16;
    }

    /// Reads the key at the reader (at its opening quote) and its colon, and classifies it.
    /// The usual spelling of a known key (no escapes) is recognised by one word compare;
    /// anything else takes the general path.
    #[inline(always)]
    fn key(
        &mut self,
        r: &mut Reader<'_>,
        quick: &[QuickKey],
        known: fn(&[u8]) -> Option<Member>,
    ) -> Result<Option<Member>, ParseError> {
        let key_at = r.pos;
        if let Some((member, len)) = quick_key(r.buf, key_at, quick) {
            r.pos = key_at + 1 + len;
            if r.peek() == Some(b':') {
                r.pos += 1;
            } else {
                r.expect(b':', "':'")?;
            }
            r.skip_ws();
            self.mark(member, key_at);
            return Ok(Some(member));
        }
        let key = r.member_key()?;
        Ok(self.classify(key, key_at, known))
    }

    /// Records an unknown member; returns its unescaped name when an earlier unknown member
    /// had the same name.
    fn record_unknown(&mut self, key: StrSpan) -> Option<String> {
        if self.unknown.len() < UNKNOWN_SCAN_LIMIT {
            let duplicate = self.duplicate_unknown(key);
            self.unknown.push(key);
            return duplicate;
        }
        let buf = self.buf;
        let set = self
            .unknown_set
            .get_or_insert_with(|| self.unknown.iter().map(|earlier| earlier.value(buf)).collect());
        let value = key.value(buf);
        if set.contains(&value) {
            Some(value.into_owned())
        } else {
            set.insert(value);
            None
        }
    }

    /// The unescaped name of `key` when an earlier unknown member had the same name.
    fn duplicate_unknown(&self, key: StrSpan) -> Option<String> {
        let raw = key.span.text(self.buf);
        let value = key.value(self.buf);
        self.unknown.iter().find_map(|earlier| {
            let same = if !key.escaped && !earlier.escaped {
                earlier.span.text(self.buf) == raw
            } else {
                earlier.value(self.buf) == value
            };
            same.then(|| value.clone().into_owned())
        })
    }
}

/// The `error` member's parts.
struct ErrorSpans {
    code: i64,
    message: StrSpan,
    data: Option<Span>,
}

/// Parses the message object at the reader (which is at `{`), inside `enclosing`
/// containers (0 for a single message, 1 for a batch element).
#[inline(always)]
pub(crate) fn message(r: &mut Reader<'_>, enclosing: usize, max_depth: usize) -> Result<Outcome, ParseError> {
    if let Some((spans, end)) = compact::message(r.buf, r.pos, enclosing, max_depth) {
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
) -> Result<(Outcome, usize), ParseError> {
    let mut r = Reader::at(buf, pos);
    let outcome = message_at(&mut r, enclosing, max_depth)?;
    Ok((outcome, r.pos))
}

#[inline(always)]
fn message_at(r: &mut Reader<'_>, enclosing: usize, max_depth: usize) -> Result<Outcome, ParseError> {
    let object_at = r.pos;
    let depth = enclosing + 1;
    if depth > max_depth {
        return Err(r.error(Reason::TooDeep { limit: max_depth }));
    }
    let mut members = Members::new(r.buf);
    let mut id: Option<IdSpan> = None;
    let mut method: Option<StrSpan> = None;
    let mut params: Option<Span> = None;
    let mut result: Option<Span> = None;
    let mut error: Option<ErrorSpans> = None;

    r.pos += 1;
    r.skip_ws();
    if r.peek() == Some(b'}') {
        r.pos += 1;
    } else {
        loop {
            let value_member = members.key(r, &ENVELOPE_KEYS, envelope_member)?;
            let value_at = r.pos;
            match value_member {
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
                            members.note(Reason::BadVersion, value_at);
                        }
                    } else {
                        r.value(depth, max_depth)?;
                        members.note(Reason::BadVersion, value_at);
                    }
                }
                Some(Member::Id) => match r.peek() {
                    Some(b'"') => id = Some(IdSpan::String(r.string()?)),
                    Some(b'-' | b'0'..=b'9') => id = Some(IdSpan::Number(r.number()?)),
                    Some(b'n' | b't' | b'f') => {
                        if r.literal()? == Literal::Null {
                            id = Some(IdSpan::Null);
                        } else {
                            members.note(Reason::BadId, value_at);
                        }
                    }
                    _ => {
                        r.value(depth, max_depth)?;
                        members.note(Reason::BadId, value_at);
                    }
                },
                Some(Member::Method) => {
                    if r.peek() == Some(b'"') {
                        let name = r.string()?;
                        if name.span.start == name.span.end {
                            members.note(Reason::EmptyMethod, value_at);
                        }
                        method = Some(name);
                    } else {
                        r.value(depth, max_depth)?;
                        members.note(Reason::MethodNotString, value_at);
                    }
                }
                Some(Member::Params) => match r.peek() {
                    Some(b'[' | b'{') => {
                        r.container(depth, max_depth)?;
                        params = Some(Span::new(value_at, r.pos));
                    }
                    Some(b'n') if r.literal()? == Literal::Null => {}
                    _ => {
                        if r.pos == value_at {
                            r.value(depth, max_depth)?;
                        }
                        members.note(Reason::BadParams, value_at);
                    }
                },
                Some(Member::Result) => {
                    r.value(depth, max_depth)?;
                    result = Some(Span::new(value_at, r.pos));
                }
                Some(Member::Error) => {
                    if r.peek() == Some(b'{') {
                        let (parts, after) = error_object(r.buf, r.pos, depth, max_depth)?;
                        r.pos = after;
                        match parts {
                            Ok(parts) => error = Some(parts),
                            Err(problem) => members.note(problem.reason().clone(), problem.offset()),
                        }
                    } else {
                        r.value(depth, max_depth)?;
                        members.note(Reason::BadErrorObject("not an object"), value_at);
                    }
                }
                _ => r.value(depth, max_depth)?,
            }
            r.skip_ws();
            match r.peek() {
                Some(b',') => {
                    r.pos += 1;
                    r.skip_ws();
                }
                Some(b'}') => {
                    r.pos += 1;
                    break;
                }
                _ => return Err(r.unexpected("',' or '}'")),
            }
        }
    }

    Ok(assemble(&members, object_at, id, method, params, result, error)
        .map_err(|problem| problem.with_id(id.map(|id| id.view(r.buf).into_owned()))))
}

/// Applies the rules that need the whole object.
fn assemble(
    members: &Members<'_>,
    object_at: usize,
    id: Option<IdSpan>,
    method: Option<StrSpan>,
    params: Option<Span>,
    result: Option<Span>,
    error: Option<ErrorSpans>,
) -> Outcome {
    if let Some(problem) = &members.problem {
        return Err(problem.clone());
    }
    let fail = |reason| Err(ParseError::new(reason, object_at));
    if !members.has(Member::Jsonrpc) {
        return fail(Reason::MissingVersion);
    }
    let has_result = members.has(Member::Result);
    let has_error = members.has(Member::Error);
    if let Some(method) = method {
        if has_result || has_error {
            return fail(Reason::MethodWithResult);
        }
        return Ok(match id {
            Some(id) => MessageSpans::Request { id, method, params },
            None => MessageSpans::Notification { method, params },
        });
    }
    if has_result && has_error {
        return fail(Reason::ResultAndError);
    }
    if !has_result && !has_error {
        return fail(Reason::MissingMethod);
    }
    let Some(id) = id else {
        return fail(Reason::MissingId);
    };
    if members.has(Member::Params) {
        return fail(Reason::ParamsInResponse);
    }
    match (result, error) {
        (Some(result), _) => Ok(MessageSpans::Success { id, result }),
        (None, Some(error)) => Ok(MessageSpans::Failure {
            id,
            code: error.code,
            message: error.message,
            data: error.data,
        }),
        (None, None) => fail(Reason::MissingMethod),
    }
}

/// The value of validated JSON number text that must be an `i64` integer.
pub(crate) fn integer(text: &str) -> Result<i64, &'static str> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    let mut value: i64 = 0;
    for &byte in digits.as_bytes() {
        if !byte.is_ascii_digit() {
            return Err("\"code\" must be an integer");
        }
        let digit = i64::from(byte - b'0');
        value = value
            .checked_mul(10)
            .and_then(|v| {
                if negative {
                    v.checked_sub(digit)
                } else {
                    v.checked_add(digit)
                }
            })
            .ok_or("\"code\" is out of range")?;
    }
    Ok(value)
}

/// Parses the `error` object at the reader (which is at `{`).
/// Returns the parts (or what is wrong with them) and the position after the object.
fn error_object(
    buf: &[u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
) -> Result<(Result<ErrorSpans, ParseError>, usize), ParseError> {
    let mut local = Reader::at(buf, pos);
    let r = &mut local;
    let object_at = r.pos;
    let depth = enclosing + 1;
    if depth > max_depth {
        return Err(r.error(Reason::TooDeep { limit: max_depth }));
    }
    let mut members = Members::new(r.buf);
    let mut code: Option<i64> = None;
    let mut message: Option<StrSpan> = None;
    let mut data: Option<Span> = None;

    r.pos += 1;
    r.skip_ws();
    if r.peek() == Some(b'}') {
        r.pos += 1;
    } else {
        loop {
            let value_member = members.key(r, &ERROR_KEYS, error_member)?;
            let value_at = r.pos;
            match value_member {
                Some(Member::Code) => {
                    if matches!(r.peek(), Some(b'-' | b'0'..=b'9')) {
                        let text = r.number()?.text(r.buf);
                        match integer(text) {
                            Ok(value) => code = Some(value),
                            Err(problem) => members.note(Reason::BadErrorObject(problem), value_at),
                        }
                    } else {
                        r.value(depth, max_depth)?;
                        members.note(Reason::BadErrorObject("\"code\" must be an integer"), value_at);
                    }
                }
                Some(Member::Message) => {
                    if r.peek() == Some(b'"') {
                        message = Some(r.string()?);
                    } else {
                        r.value(depth, max_depth)?;
                        members.note(Reason::BadErrorObject("\"message\" must be a string"), value_at);
                    }
                }
                Some(Member::Data) => {
                    r.value(depth, max_depth)?;
                    data = Some(Span::new(value_at, r.pos));
                }
                _ => r.value(depth, max_depth)?,
            }
            r.skip_ws();
            match r.peek() {
                Some(b',') => {
                    r.pos += 1;
                    r.skip_ws();
                }
                Some(b'}') => {
                    r.pos += 1;
                    break;
                }
                _ => return Err(r.unexpected("',' or '}'")),
            }
        }
    }

    let after = r.pos;
    if let Some(problem) = members.problem {
        return Ok((Err(problem), after));
    }
    let parts = match (code, message) {
        (Some(code), Some(message)) => Ok(ErrorSpans { code, message, data }),
        (None, _) => Err(ParseError::new(
            Reason::BadErrorObject("missing \"code\""),
            object_at,
        )),
        (_, None) => Err(ParseError::new(
            Reason::BadErrorObject("missing \"message\""),
            object_at,
        )),
    };
    Ok((parts, after))
}
