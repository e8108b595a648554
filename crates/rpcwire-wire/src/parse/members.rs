//! The members of a JSON-RPC object (the message, or its `error` object): which are known,
//! which were seen, duplicates (also when spelled with escapes), the first JSON-RPC problem,
//! and the one loop that reads an object member by member.

use std::borrow::Cow;
use std::collections::HashSet;

use smallvec::SmallVec;

use super::error::{ParseError, ParseErrorKind};
use crate::json::cursor::Cursor;
use crate::json::string::StrSpan;
use crate::json::unescape::unescape;
use crate::json::SyntaxError;

/// The members the parser knows, as bits of a "seen" mask.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Member {
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

pub(super) fn envelope_member(key: &[u8]) -> Option<Member> {
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

pub(super) fn error_member(key: &[u8]) -> Option<Member> {
    match key {
        b"code" => Some(Member::Code),
        b"message" => Some(Member::Message),
        b"data" => Some(Member::Data),
        _ => None,
    }
}

/// A known key with its closing quote as a little-endian word: `(pattern, mask, length
/// including the quote, member)`.
pub(super) type QuickKey = (u64, u64, usize, Member);

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

pub(super) const ENVELOPE_KEYS: [QuickKey; 6] = [
    quick(b"jsonrpc\"", Member::Jsonrpc),
    quick(b"id\"", Member::Id),
    quick(b"method\"", Member::Method),
    quick(b"params\"", Member::Params),
    quick(b"result\"", Member::Result),
    quick(b"error\"", Member::Error),
];

pub(super) const ERROR_KEYS: [QuickKey; 3] = [
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
pub(super) struct Members<'a> {
    buf: &'a [u8],
    seen: u16,
    unknown: SmallVec<[StrSpan; 4]>,
    /// The unescaped names of the unknown members, once there are more than
    /// `UNKNOWN_SCAN_LIMIT` of them.
    unknown_set: Option<HashSet<Cow<'a, str>>>,
    pub(super) problem: Option<ParseError>,
}

impl<'a> Members<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Members<'a> {
        Members {
            buf,
            seen: 0,
            unknown: SmallVec::new(),
            unknown_set: None,
            problem: None,
        }
    }

    /// Remembers the first JSON-RPC problem.
    pub(super) fn note(&mut self, kind: ParseErrorKind, offset: usize) {
        if self.problem.is_none() {
            self.problem = Some(ParseError::new(kind, offset));
        }
    }

    pub(super) fn has(&self, member: Member) -> bool {
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
                    self.note(ParseErrorKind::DuplicateMember(name), key_at);
                }
            }
        }
        member
    }

    /// Records a known member, noting a duplicate.
    #[inline(always)]
    fn mark(&mut self, member: Member, key_at: usize) {
        if self.has(member) {
            self.note(ParseErrorKind::DuplicateMember(member.name().to_owned()), key_at);
        }
        self.seen |= member as u16;
    }

    /// Reads the key at the reader (at its opening quote) and its colon, and classifies it.
    /// The usual spelling of a known key (no escapes) is recognised by one word compare;
    /// anything else takes the general path.
    #[inline(always)]
    fn key(
        &mut self,
        r: &mut Cursor<'_>,
        quick: &[QuickKey],
        known: fn(&[u8]) -> Option<Member>,
    ) -> Result<Option<Member>, SyntaxError> {
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

    /// Reads the object at the cursor (at its `{`) member by member: classifies each key
    /// with `quick` and `known`, then calls `value` at the member's value, which must step
    /// over it. A member that breaks a JSON-RPC rule is noted and the object is still read
    /// to its end, because a syntax error anywhere wins. Leaves the cursor after the `}`.
    #[inline(always)]
    pub(super) fn read_object(
        &mut self,
        r: &mut Cursor<'a>,
        quick: &[QuickKey],
        known: fn(&[u8]) -> Option<Member>,
        mut value: impl FnMut(&mut Self, &mut Cursor<'a>, Option<Member>) -> Result<(), SyntaxError>,
    ) -> Result<(), SyntaxError> {
        r.pos += 1;
        r.skip_ws();
        if r.peek() == Some(b'}') {
            r.pos += 1;
            return Ok(());
        }
        loop {
            let member = self.key(r, quick, known)?;
            value(self, r, member)?;
            r.skip_ws();
            match r.peek() {
                Some(b',') => {
                    r.pos += 1;
                    r.skip_ws();
                }
                Some(b'}') => {
                    r.pos += 1;
                    return Ok(());
                }
                _ => return Err(r.unexpected("',' or '}'")),
            }
        }
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
