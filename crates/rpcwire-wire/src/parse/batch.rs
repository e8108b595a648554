//! `Batch`: the elements of a batch, each a message or the reason it is not one.

use std::borrow::Cow;
use std::fmt;

use super::error::ParseError;
use super::spans::MessageSpans;
use crate::message::Message;

/// One batch element as the parser found it.
pub(crate) type Slot = Result<MessageSpans, ParseError>;

/// A parsed batch: a non-empty list of elements, each a [`Message`] or the [`ParseError`]
/// that says why it is not one (always an invalid request, -32600: a syntax error anywhere
/// in a batch fails the whole batch). Good elements stay usable when
/// others are bad.
///
/// ```
/// let input = br#"[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"1"}, {"foo":"boo"}]"#;
/// let batch = rpcwire_wire::parse(input).unwrap().batch().unwrap();
/// assert_eq!(batch.len(), 2);
/// assert_eq!(batch.get(0).unwrap().unwrap().method(), Some("sum"));
/// assert_eq!(batch.get(1).unwrap().unwrap_err().code().code(), -32600);
/// ```
pub struct Batch<'a> {
    input: &'a [u8],
    slots: Cow<'a, [Slot]>,
}

impl<'a> Batch<'a> {
    pub(crate) fn new(input: &'a [u8], slots: Cow<'a, [Slot]>) -> Batch<'a> {
        Batch { input, slots }
    }

    /// The number of elements (at least 1).
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::parse(b"[1,2,3]").unwrap().batch().unwrap().len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// `false`: an empty batch is rejected by the parser. Present for API symmetry.
    ///
    /// ```
    /// assert!(!rpcwire_wire::parse(b"[1]").unwrap().batch().unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Element `index`, when there is one.
    ///
    /// ```
    /// assert!(rpcwire_wire::parse(b"[1]").unwrap().batch().unwrap().get(1).is_none());
    /// ```
    pub fn get(&self, index: usize) -> Option<Result<Message<'a>, &ParseError>> {
        self.slots.get(index).map(|slot| view(self.input, slot))
    }

    /// The elements in order.
    ///
    /// ```
    /// let batch = rpcwire_wire::parse(br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#)
    ///     .unwrap().batch().unwrap();
    /// let methods: Vec<_> = batch.iter().map(|m| m.unwrap().method().unwrap().to_owned()).collect();
    /// assert_eq!(methods, ["a", "b"]);
    /// ```
    pub fn iter(&self) -> BatchIter<'_, 'a> {
        BatchIter {
            input: self.input,
            slots: self.slots.iter(),
        }
    }

    /// The bytes the batch was parsed from.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::parse(b"[1]").unwrap().batch().unwrap().input(), b"[1]");
    /// ```
    pub fn input(&self) -> &'a [u8] {
        self.input
    }
}

#[inline]
fn view<'a, 'b>(input: &'a [u8], slot: &'b Slot) -> Result<Message<'a>, &'b ParseError> {
    match slot {
        Ok(spans) => Ok(spans.view(input)),
        Err(error) => Err(error),
    }
}

impl fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Iterator over a [`Batch`]'s elements.
///
/// ```
/// let batch = rpcwire_wire::parse(b"[1]").unwrap().batch().unwrap();
/// let mut iter: rpcwire_wire::BatchIter<'_, '_> = batch.iter();
/// assert!(iter.next().unwrap().is_err());
/// assert!(iter.next().is_none());
/// ```
pub struct BatchIter<'b, 'a> {
    input: &'a [u8],
    slots: std::slice::Iter<'b, Slot>,
}

impl<'b, 'a> Iterator for BatchIter<'b, 'a> {
    type Item = Result<Message<'a>, &'b ParseError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.slots.next().map(|slot| view(self.input, slot))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl ExactSizeIterator for BatchIter<'_, '_> {}

impl<'b, 'a> IntoIterator for &'b Batch<'a> {
    type Item = Result<Message<'a>, &'b ParseError>;
    type IntoIter = BatchIter<'b, 'a>;

    fn into_iter(self) -> BatchIter<'b, 'a> {
        self.iter()
    }
}
