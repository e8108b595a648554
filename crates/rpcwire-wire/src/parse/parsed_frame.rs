//! `ParsedFrame`: a parsed message that owns its bytes and can cross threads.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;

use super::batch::{Batch, Slot};
use super::error::ParseError;
use super::parser::{BatchScratch, Parser, Top, TopLevel};
use super::spans::MessageSpans;
use super::Parsed;

#[derive(Clone)]
enum Shape {
    Single(MessageSpans),
    Batch(Vec<Slot>),
}

/// A parsed frame that owns its input (`bytes::Bytes`) and the offsets the parser found.
/// It is `Send + Sync + 'static`, so it can be handed to another task or thread;
/// [`view`](ParsedFrame::view) gives the borrowed [`Parsed`] back without parsing again. A
/// clone shares the bytes and copies the offsets (a batch's: one allocation).
///
/// ```
/// use bytes::Bytes;
/// let frame = rpcwire_wire::ParsedFrame::parse(Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)).unwrap();
/// let method = std::thread::spawn(move || {
///     frame.view().single().unwrap().method().unwrap().to_owned()
/// }).join().unwrap();
/// assert_eq!(method, "ping");
/// ```
#[derive(Clone)]
pub struct ParsedFrame {
    bytes: Bytes,
    shape: Shape,
}

// The owned frame's constructors on the parser's types live here, so that the parser knows
// nothing of the frame it is wrapped in.
impl Parser {
    /// Parses `bytes` into an owned, sendable [`ParsedFrame`].
    ///
    /// ```
    /// let frame = rpcwire_wire::Parser::default()
    ///     .parse_frame(bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"a"}"#))
    ///     .unwrap();
    /// assert_eq!(frame.view().single().unwrap().method(), Some("a"));
    /// ```
    pub fn parse_frame(&self, bytes: Bytes) -> Result<ParsedFrame, ParseError> {
        ParsedFrame::parse_with(self, bytes)
    }
}

impl BatchScratch {
    /// The owned frame of `bytes` as [`Parser::parse_top`] found it; a batch's elements move
    /// into it (the storage grows again on the next batch). `bytes` must be the input
    /// `top` was parsed from (other bytes give a frame whose views are wrong, never undefined
    /// behaviour). See [`Parser::parse_top`] for an example.
    ///
    /// ```
    /// let mut scratch = rpcwire_wire::BatchScratch::default();
    /// let input = bytes::Bytes::from_static(b"[1]");
    /// let top = rpcwire_wire::Parser::default().parse_top(&input, &mut scratch).unwrap();
    /// let frame = scratch.take_frame(input, top);
    /// assert!(frame.view().batch().unwrap().get(0).unwrap().is_err());
    /// ```
    pub fn take_frame(&mut self, bytes: Bytes, top: TopLevel) -> ParsedFrame {
        let top = top.0;
        let slots = match top {
            Top::Single(_) => Vec::new(),
            Top::Batch => std::mem::take(&mut self.slots),
        };
        ParsedFrame::from_top(bytes, top, slots)
    }
}

impl ParsedFrame {
    /// Parses `bytes` with the default limits.
    ///
    /// ```
    /// assert!(rpcwire_wire::ParsedFrame::parse(bytes::Bytes::from_static(b"{")).is_err());
    /// ```
    pub fn parse(bytes: Bytes) -> Result<ParsedFrame, ParseError> {
        ParsedFrame::parse_with(&Parser::default(), bytes)
    }

    /// Parses `bytes` with `parser`'s limits.
    ///
    /// ```
    /// let parser = rpcwire_wire::Parser::default();
    /// let frame = rpcwire_wire::ParsedFrame::parse_with(&parser, bytes::Bytes::from_static(b"[1]")).unwrap();
    /// assert!(frame.view().batch().is_some());
    /// ```
    pub fn parse_with(parser: &Parser, bytes: Bytes) -> Result<ParsedFrame, ParseError> {
        let mut slots = Vec::new();
        let shape = match parser.parse_spans(&bytes, &mut slots)? {
            Top::Single(spans) => Shape::Single(spans),
            Top::Batch => Shape::Batch(slots),
        };
        Ok(ParsedFrame { bytes, shape })
    }

    /// The frame of `bytes` whose top level is `top`, a batch's elements in `slots`.
    pub(crate) fn from_top(bytes: Bytes, top: Top, slots: Vec<Slot>) -> ParsedFrame {
        let shape = match top {
            Top::Single(spans) => Shape::Single(spans),
            Top::Batch => Shape::Batch(slots),
        };
        ParsedFrame { bytes, shape }
    }

    /// The borrowed message or batch.
    ///
    /// ```
    /// let frame = rpcwire_wire::ParsedFrame::parse(bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"a"}"#)).unwrap();
    /// assert_eq!(frame.view().single().unwrap().method(), Some("a"));
    /// ```
    pub fn view(&self) -> Parsed<'_> {
        match &self.shape {
            Shape::Single(spans) => Parsed::Single(spans.view(&self.bytes)),
            Shape::Batch(slots) => Parsed::Batch(Batch::new(&self.bytes, Cow::Borrowed(slots))),
        }
    }

    /// The bytes the frame was parsed from.
    ///
    /// ```
    /// let frame = rpcwire_wire::ParsedFrame::parse(bytes::Bytes::from_static(b"[1]")).unwrap();
    /// assert_eq!(&frame.bytes()[..], b"[1]");
    /// ```
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Gives the bytes back.
    ///
    /// ```
    /// let frame = rpcwire_wire::ParsedFrame::parse(bytes::Bytes::from_static(b"[1]")).unwrap();
    /// assert_eq!(frame.into_bytes().len(), 3);
    /// ```
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }
}

impl fmt::Debug for ParsedFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParsedFrame")
            .field("message", &self.view())
            .finish()
    }
}
