//! `Parser`: the configurable entry point, and the top level of an input (one message or a
//! batch).

use std::borrow::Cow;

use super::batch::{Batch, Slot};
use super::envelope;
use super::error::{ParseError, ParseErrorKind};
use super::limits::Limits;
use super::spans::MessageSpans;
use super::Parsed;
use crate::json::cursor::Cursor;
use crate::json::{SyntaxError, SyntaxErrorKind};

/// Storage for batch elements that is reused from one parse to the next, so that a server
/// parsing batches in a loop does not allocate for each one.
///
/// ```
/// let parser = rpcwire_wire::Parser::default();
/// let mut scratch = rpcwire_wire::BatchScratch::default();
/// for _ in 0..3 {
///     let parsed = parser.parse_reusing(br#"[{"jsonrpc":"2.0","method":"a"}]"#, &mut scratch).unwrap();
///     assert_eq!(parsed.batch().unwrap().len(), 1);
/// }
/// ```
#[derive(Debug, Default)]
pub struct BatchScratch {
    pub(crate) slots: Vec<Slot>,
}

impl BatchScratch {
    /// The borrowed view of `input` as [`Parser::parse_top`] found it (`top`, and the batch
    /// elements kept here).
    ///
    /// ```
    /// use rpcwire_wire::{BatchScratch, Parser};
    /// let mut scratch = BatchScratch::default();
    /// let input = br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#;
    /// let top = Parser::default().parse_top(input, &mut scratch).unwrap();
    /// assert_eq!(scratch.view(input, top).batch().unwrap().len(), 2);
    /// ```
    pub fn view<'a>(&'a self, input: &'a [u8], top: TopLevel) -> Parsed<'a> {
        match top.0 {
            Top::Single(spans) => Parsed::Single(spans.view(input)),
            Top::Batch => Parsed::Batch(Batch::new(input, Cow::Borrowed(&self.slots))),
        }
    }
}

/// What the top level of an input turned out to be; batch elements are in the slot vector.
#[derive(Clone, Copy)]
pub(crate) enum Top {
    Single(MessageSpans),
    Batch,
}

/// The top level of an input as [`Parser::parse_top`] found it, for [`BatchScratch::view`] and
/// [`BatchScratch::take_frame`]; opaque (what it holds is the parser's own layout).
///
/// ```
/// let mut scratch = rpcwire_wire::BatchScratch::default();
/// let top: rpcwire_wire::parse::TopLevel =
///     rpcwire_wire::Parser::default().parse_top(br#"{"jsonrpc":"2.0","method":"a"}"#, &mut scratch).unwrap();
/// # let _ = top;
/// ```
#[derive(Clone, Copy)]
pub struct TopLevel(pub(crate) Top);

/// A parser with configured [`Limits`]. Cheap to copy; holds no state between parses.
///
/// ```
/// let parser = rpcwire_wire::Parser::new(rpcwire_wire::Limits::default().with_max_size(16));
/// let err = parser.parse(br#"{"jsonrpc":"2.0","method":"too_long_for_the_limit"}"#).unwrap_err();
/// assert_eq!(err.code().code(), -32600);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Parser {
    limits: Limits,
}

impl Parser {
    /// A parser enforcing `limits`.
    ///
    /// ```
    /// let parser = rpcwire_wire::Parser::new(rpcwire_wire::Limits::default());
    /// assert_eq!(*parser.limits(), rpcwire_wire::Limits::default());
    /// ```
    pub fn new(limits: Limits) -> Parser {
        Parser { limits }
    }

    /// The limits this parser enforces.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Parser::default().limits().max_depth(), 128);
    /// ```
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Parses one message or batch. A batch's element list is allocated; see
    /// [`parse_reusing`](Parser::parse_reusing) to avoid that.
    ///
    /// ```
    /// let parsed = rpcwire_wire::Parser::default().parse(br#"{"jsonrpc":"2.0","id":"a","result":[]}"#).unwrap();
    /// assert!(parsed.single().is_some());
    /// ```
    pub fn parse<'a>(&self, input: &'a [u8]) -> Result<Parsed<'a>, ParseError> {
        // The usual input, one message in a fixed layout filling it: its view straight from
        // the offsets, without passing them through the general path's result types (whose
        // copies the core cannot forward from the stores that just wrote them).
        let refused = match self.fixed_layout_single(input) {
            Shortcut::Taken(spans) => return Ok(Parsed::Single(spans.view(input))),
            Shortcut::Refused => true,
            Shortcut::NotTried => false,
        };
        let mut slots = Vec::new();
        Ok(match self.parse_spans_from(input, &mut slots, refused)? {
            Top::Single(spans) => Parsed::Single(spans.view(input)),
            Top::Batch => Parsed::Batch(Batch::new(input, Cow::Owned(slots))),
        })
    }

    /// Parses one message or batch, keeping a batch's elements in `scratch`: no allocation
    /// once `scratch` has grown to the largest batch seen.
    ///
    /// ```
    /// let mut scratch = rpcwire_wire::BatchScratch::default();
    /// let parsed = rpcwire_wire::Parser::default().parse_reusing(b"[1, 2]", &mut scratch).unwrap();
    /// assert_eq!(parsed.batch().unwrap().iter().filter(|m| m.is_err()).count(), 2);
    /// ```
    pub fn parse_reusing<'a>(
        &self,
        input: &'a [u8],
        scratch: &'a mut BatchScratch,
    ) -> Result<Parsed<'a>, ParseError> {
        scratch.slots.clear();
        Ok(match self.parse_spans(input, &mut scratch.slots)? {
            Top::Single(spans) => Parsed::Single(spans.view(input)),
            Top::Batch => Parsed::Batch(Batch::new(input, Cow::Borrowed(&scratch.slots))),
        })
    }

    /// Parses `input`, keeping a batch's elements in `scratch`; the result's view is
    /// [`BatchScratch::view`], its owned frame [`BatchScratch::take_frame`].
    /// Like [`parse`](Parser::parse), one message in a fixed layout is read by the shortcut.
    /// The parse in two steps is for a caller that keeps one scratch for many inputs and
    /// decides after the parse whether it needs the borrowed view or the owned frame (a
    /// responder that answers at once or hands the frame to a task): either, without
    /// parsing again.
    ///
    /// ```
    /// use rpcwire_wire::{BatchScratch, Parser};
    /// let parser = Parser::default();
    /// let mut scratch = BatchScratch::default();
    /// let input = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"later"}"#);
    /// let top = parser.parse_top(&input, &mut scratch).unwrap();
    /// assert_eq!(scratch.view(&input, top).single().unwrap().method(), Some("later"));
    /// let frame = scratch.take_frame(input.clone(), top);
    /// assert_eq!(frame.view().single().unwrap().method(), Some("later"));
    /// ```
    pub fn parse_top(&self, input: &[u8], scratch: &mut BatchScratch) -> Result<TopLevel, ParseError> {
        self.find_top(input, scratch).map(TopLevel)
    }

    /// [`parse_top`](Parser::parse_top)'s work.
    #[inline]
    fn find_top(&self, input: &[u8], scratch: &mut BatchScratch) -> Result<Top, ParseError> {
        let refused = match self.fixed_layout_single(input) {
            Shortcut::Taken(spans) => return Ok(Top::Single(spans)),
            Shortcut::Refused => true,
            Shortcut::NotTried => false,
        };
        scratch.slots.clear();
        self.parse_spans_from(input, &mut scratch.slots, refused)
    }

    /// The offsets of `input` when it is one message in one of the fixed layouts, within the
    /// limits, with nothing but whitespace after it. Otherwise the whole parse gives the
    /// answer (the same for these, every error for the rest), told whether the fixed-layout
    /// reader has already refused the object at the start, so that it does not try again.
    #[inline(always)]
    fn fixed_layout_single(&self, input: &[u8]) -> Shortcut {
        if input.len() > self.limits.max_size() {
            return Shortcut::NotTried;
        }
        match super::compact::message(input, 0, 0, self.limits.max_depth()) {
            Some((spans, end)) if crate::json::value::skip_ws_at(input, end) == input.len() => {
                Shortcut::Taken(spans)
            }
            // Bytes after the message: the whole parse reports them.
            Some(_) => Shortcut::NotTried,
            None => Shortcut::Refused,
        }
    }

    /// The parse itself: offsets only. Batch elements are pushed onto `slots`.
    #[inline(always)]
    pub(crate) fn parse_spans(&self, input: &[u8], slots: &mut Vec<Slot>) -> Result<Top, ParseError> {
        self.parse_spans_from(input, slots, false)
    }

    /// [`parse_spans`](Parser::parse_spans); `refused`: the fixed-layout reader has already
    /// refused an object at the start of `input` (see [`fixed_layout_single`](Parser::fixed_layout_single)).
    #[inline(always)]
    fn parse_spans_from(
        &self,
        input: &[u8],
        slots: &mut Vec<Slot>,
        refused: bool,
    ) -> Result<Top, ParseError> {
        let limits = &self.limits;
        if input.len() > limits.max_size() {
            return Err(ParseError::new(
                ParseErrorKind::TooLarge {
                    size: input.len(),
                    limit: limits.max_size(),
                },
                limits.max_size(),
            ));
        }
        let mut r = Cursor::new(input);
        r.skip_ws();
        match r.peek() {
            Some(b'{') => {
                let outcome = if refused && r.pos == 0 {
                    envelope::message_past_fixed_layouts(&mut r, 0, limits.max_depth())?
                } else {
                    envelope::message(&mut r, 0, limits.max_depth())?
                };
                r.finish()?;
                outcome.map(Top::Single)
            }
            Some(b'[') => {
                self.batch(&mut r, slots)??;
                r.finish()?;
                Ok(Top::Batch)
            }
            _ => {
                let at = r.pos;
                r.value(0, limits.max_depth())?;
                r.finish()?;
                Err(ParseError::new(ParseErrorKind::NotAnObject, at))
            }
        }
    }

    /// The elements of a batch; the cursor is at `[`. The outer `Result` carries syntax
    /// errors, the inner one the batch's own problems (empty, too long).
    fn batch(
        &self,
        outer: &mut Cursor<'_>,
        slots: &mut Vec<Slot>,
    ) -> Result<Result<(), ParseError>, SyntaxError> {
        // A local copy of the cursor, so that its position can live in a register.
        let mut local = Cursor::at(outer.buf, outer.pos);
        let result = self.batch_at(&mut local, slots);
        outer.pos = local.pos;
        result
    }

    #[inline(always)]
    fn batch_at(
        &self,
        r: &mut Cursor<'_>,
        slots: &mut Vec<Slot>,
    ) -> Result<Result<(), ParseError>, SyntaxError> {
        let limits = &self.limits;
        let open_at = r.pos;
        if limits.max_depth() == 0 {
            return Err(r.error(SyntaxErrorKind::TooDeep { limit: 0 }));
        }
        r.pos += 1;
        r.skip_ws();
        if r.peek() == Some(b']') {
            r.pos += 1;
            r.finish()?;
            return Ok(Err(ParseError::new(ParseErrorKind::EmptyBatch, open_at)));
        }
        loop {
            if slots.len() == limits.max_batch_len() {
                let at = r.pos;
                return Ok(Err(ParseError::new(
                    ParseErrorKind::BatchTooLong {
                        limit: limits.max_batch_len(),
                    },
                    at,
                )));
            }
            let slot = if r.peek() == Some(b'{') {
                envelope::message(r, 1, limits.max_depth())?
            } else {
                let at = r.pos;
                r.value(1, limits.max_depth())?;
                Err(ParseError::new(ParseErrorKind::NotAnObject, at))
            };
            slots.push(slot);
            r.skip_ws();
            match r.peek() {
                Some(b',') => {
                    r.pos += 1;
                    r.skip_ws();
                }
                Some(b']') => {
                    r.pos += 1;
                    return Ok(Ok(()));
                }
                _ => return Err(r.unexpected("',' or ']'")),
            }
        }
    }
}

/// What [`Parser::fixed_layout_single`] made of an input.
enum Shortcut {
    /// One fixed-layout message filling the input: its offsets.
    Taken(MessageSpans),
    /// The fixed-layout reader refused the input at its first byte: an object there goes
    /// straight to the other paths (anything else, whitespace first included, takes the
    /// whole parse as usual).
    Refused,
    /// Not tried (over the size limit), or a message with bytes after it.
    NotTried,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `parse` answers without its shortcut for single fixed-layout messages.
    fn whole_parse(parser: &Parser, input: &[u8]) -> String {
        let mut slots = Vec::new();
        let parsed = parser.parse_spans(input, &mut slots).map(|top| match top {
            Top::Single(spans) => Parsed::Single(spans.view(input)),
            Top::Batch => Parsed::Batch(Batch::new(input, Cow::Borrowed(&slots))),
        });
        format!("{parsed:?}")
    }

    /// The shortcut, and the whole parse after the shortcut's refusal, answer as the whole
    /// parse does, value or error, on every mutation of messages in the fixed layouts and in
    /// others, with whitespace or other bytes around them, and under limits that they hit.
    #[test]
    fn the_single_message_shortcut_answers_as_the_whole_parse() {
        let texts = [
            r#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"],"id":1}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":[1,{\"b\":null}]}\r\n",
            " {\"id\":7,\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{}} x",
            "{\"jsonrpc\": \"2.0\", \"method\": \"n\", \"params\": [1, 2]}\n",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#,
            // Layouts the fixed-layout reader refuses at the start: the whole parse goes on
            // past it.
            r#"{"method":"subtract","params":[42,23],"jsonrpc":"2.0","id":1}"#,
            "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,\n  \"result\": {\"a\": [1, 2]}\n}\n",
        ];
        for parser in [
            Parser::default(),
            Parser::new(Limits::default().with_max_size(40)),
            Parser::new(Limits::default().with_max_depth(1)),
        ] {
            let agrees = |input: &[u8]| format!("{:?}", parser.parse(input)) == whole_parse(&parser, input);
            let checked = crate::json::mutations::check_mutations(&texts, agrees);
            assert!(checked > 5_000, "{checked}");
        }
    }
}
