//! The single-pass strict parser: bytes → [`Parsed`] (one [`Message`] or a [`Batch`]).
//!
//! The JSON-RPC layer on top of [`json`](crate::json), which does the JSON itself:
//!
//! - `envelope`: the JSON-RPC 2.0 rules for one message object, read member by member
//!   (`members`, with the `error` object in `error_object`), producing `spans` (offsets into
//!   the input, no lifetime); `compact`: its fast path for the layout nearly every peer
//!   writes, and `any_order`: its fast path for the known members in any order and spacing,
//!   each of which hands anything else to the general rules;
//! - `parser`: [`Parser`] with its [`Limits`], the top level and the batch loop;
//! - `spans`, `batch`, `parsed_frame`: turning offsets back into borrowed views;
//! - `deserialize`: serde's `Deserialize` for the message types, through this parser.

mod any_order;
mod batch;
mod compact;
mod deserialize;
mod envelope;
mod error;
mod error_object;
mod limits;
mod members;
mod parsed_frame;
mod parser;
mod spans;

pub use batch::{Batch, BatchIter};
pub use error::{ParseError, ParseErrorKind};
pub use limits::Limits;
pub use parsed_frame::ParsedFrame;
pub use parser::{BatchScratch, Parser, TopLevel};

use crate::message::Message;

/// The result of parsing one input: a single message or a batch.
///
/// ```
/// use rpcwire_wire::Parsed;
/// match rpcwire_wire::parse(br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"result":0}]"#).unwrap() {
///     Parsed::Batch(batch) => assert_eq!(batch.len(), 2),
///     Parsed::Single(_) => unreachable!(),
/// }
/// ```
#[derive(Debug)]
pub enum Parsed<'a> {
    /// A single message (the input was a JSON object).
    Single(Message<'a>),
    /// A batch (the input was a non-empty JSON array); each element is a message or the
    /// reason it is not one.
    Batch(Batch<'a>),
}

impl<'a> Parsed<'a> {
    /// The single message, or `None` for a batch.
    ///
    /// ```
    /// let parsed = rpcwire_wire::parse(br#"{"jsonrpc":"2.0","method":"a"}"#).unwrap();
    /// assert_eq!(parsed.single().unwrap().method(), Some("a"));
    /// ```
    pub fn single(self) -> Option<Message<'a>> {
        match self {
            Parsed::Single(message) => Some(message),
            Parsed::Batch(_) => None,
        }
    }

    /// The batch, or `None` for a single message.
    ///
    /// ```
    /// let parsed = rpcwire_wire::parse(br#"[1]"#).unwrap();
    /// assert!(parsed.batch().unwrap().get(0).unwrap().is_err());
    /// ```
    pub fn batch(self) -> Option<Batch<'a>> {
        match self {
            Parsed::Single(_) => None,
            Parsed::Batch(batch) => Some(batch),
        }
    }
}

/// Parses one JSON-RPC 2.0 message or batch with the default [`Limits`].
///
/// Everything is validated, also the params and results that stay raw text. Errors say what
/// was wrong, at which byte, and which code a server answers with.
///
/// ```
/// use rpcwire_wire::{Message, Parsed};
/// let input = br#"{"jsonrpc":"2.0","id":42,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#;
/// let Parsed::Single(Message::Request(req)) = rpcwire_wire::parse(input).unwrap() else { panic!() };
/// assert_eq!(req.method(), "eth_getBalance");
/// assert_eq!(req.id().as_u64(), Some(42));
/// let (address, block): (&str, &str) = req.params().unwrap().decode().unwrap();
/// assert_eq!(block, "latest");
///
/// let err = rpcwire_wire::parse(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,]}"#).unwrap_err();
/// assert_eq!(err.code().code(), -32700);
/// ```
pub fn parse(input: &[u8]) -> Result<Parsed<'_>, ParseError> {
    Parser::default().parse(input)
}
