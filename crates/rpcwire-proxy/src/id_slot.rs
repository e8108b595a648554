//! `IdSlot`: where a message's id lies in its bytes, to put another id there.

use std::ops::Range;

use bytes::{Bytes, BytesMut};

use crate::json::iter::member_value_range;
use crate::message::{id_range_within, Id, IdKind, Message};

/// A message's bytes with the place of its id: the id's exact JSON text can be read from it,
/// and the same bytes with another id in that place built from it (the bytes before and after
/// the id copied as they are; nothing is parsed or encoded again).
///
/// ```
/// use bytes::Bytes;
/// let text = Bytes::from_static(br#"{"id": "a\u00e9", "jsonrpc":"2.0","method":"m"}"#);
/// let message = rpcwire::parse(&text).unwrap().single().unwrap();
/// let slot = rpcwire::proxy::IdSlot::find(&text, &message).unwrap();
/// assert_eq!(slot.id_text(), br#""a\u00e9""#);
/// assert_eq!(&slot.replace(b"null")[..], br#"{"id": null, "jsonrpc":"2.0","method":"m"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdSlot {
    text: Bytes,
    id: Range<usize>,
}

impl IdSlot {
    /// Finds the id of `message` (a request or a response) in `text`, the bytes it was parsed
    /// from: a single message's frame, or one element of a batch as [`batch_elements`]
    /// gives it (`message` parsed from that element). `None` for a notification, or when
    /// `message` was not parsed from `text`.
    ///
    /// [`batch_elements`]: super::batch_elements
    ///
    /// ```
    /// use bytes::Bytes;
    /// let text = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"note"}"#);
    /// let message = rpcwire::parse(&text).unwrap().single().unwrap();
    /// assert!(rpcwire::proxy::IdSlot::find(&text, &message).is_none());
    /// ```
    pub fn find(text: &Bytes, message: &Message<'_>) -> Option<IdSlot> {
        IdSlot::of_id(text, message.id()?)
    }

    /// [`find`](IdSlot::find) for the message whose id is `id` (parsed from `text`).
    pub(crate) fn of_id(text: &Bytes, id: &Id<'_>) -> Option<IdSlot> {
        // A parsed id borrows its text from the input: its place follows from its address;
        // `null` has no text of its own to point at: read the object's members.
        let range = match id.kind() {
            IdKind::Null => null_id_range(text)?,
            _ => id_range_within(text, id)?,
        };
        Some(IdSlot {
            text: text.clone(),
            id: range,
        })
    }

    /// `text` whose id's JSON text lies at `id` (a range found by the parser).
    #[cfg(feature = "http")]
    pub(crate) fn at(text: Bytes, id: Range<usize>) -> IdSlot {
        IdSlot { text, id }
    }

    /// The id's exact JSON text (a string with its quotes and escapes).
    ///
    /// ```
    /// use bytes::Bytes;
    /// let text = Bytes::from_static(br#"{"jsonrpc":"2.0","id":-0,"result":1}"#);
    /// let message = rpcwire::parse(&text).unwrap().single().unwrap();
    /// assert_eq!(rpcwire::proxy::IdSlot::find(&text, &message).unwrap().id_text(), b"-0");
    /// ```
    pub fn id_text(&self) -> &[u8] {
        &self.text[self.id.clone()]
    }

    /// Where the id's text lies in [`text`](IdSlot::text).
    ///
    /// ```
    /// use bytes::Bytes;
    /// let text = Bytes::from_static(br#"{"jsonrpc":"2.0","id":12,"result":1}"#);
    /// let message = rpcwire::parse(&text).unwrap().single().unwrap();
    /// assert_eq!(rpcwire::proxy::IdSlot::find(&text, &message).unwrap().id_range(), 22..24);
    /// ```
    pub fn id_range(&self) -> Range<usize> {
        self.id.clone()
    }

    /// The message's bytes.
    ///
    /// ```
    /// use bytes::Bytes;
    /// let text = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":1}"#);
    /// let message = rpcwire::parse(&text).unwrap().single().unwrap();
    /// assert_eq!(rpcwire::proxy::IdSlot::find(&text, &message).unwrap().text(), &text);
    /// ```
    pub fn text(&self) -> &Bytes {
        &self.text
    }

    /// The bytes before and after the id, as slices of the message's bytes (no copy): for a
    /// writer that sends `before`, the new id and `after` without joining them.
    ///
    /// ```
    /// use bytes::Bytes;
    /// let text = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":1}"#);
    /// let message = rpcwire::parse(&text).unwrap().single().unwrap();
    /// let (before, after) = rpcwire::proxy::IdSlot::find(&text, &message).unwrap().around();
    /// assert_eq!((&before[..], &after[..]), (&br#"{"jsonrpc":"2.0","id":"#[..], &br#","result":1}"#[..]));
    /// ```
    pub fn around(&self) -> (Bytes, Bytes) {
        (self.text.slice(..self.id.start), self.text.slice(self.id.end..))
    }

    /// The message's bytes with `id` (JSON text, written as given: the caller vouches for it)
    /// in place of its id.
    ///
    /// ```
    /// use bytes::Bytes;
    /// let text = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#);
    /// let message = rpcwire::parse(&text).unwrap().single().unwrap();
    /// let slot = rpcwire::proxy::IdSlot::find(&text, &message).unwrap();
    /// assert_eq!(&slot.replace(br#""gw-9""#)[..], br#"{"jsonrpc":"2.0","id":"gw-9","method":"m","params":[1]}"#);
    /// ```
    pub fn replace(&self, id: &[u8]) -> Bytes {
        let mut out = BytesMut::with_capacity(self.text.len() - self.id.len() + id.len());
        out.extend_from_slice(&self.text[..self.id.start]);
        out.extend_from_slice(id);
        out.extend_from_slice(&self.text[self.id.end..]);
        out.freeze()
    }
}

/// Where the value of the (last) `"id"` member of the object in `text` lies.
fn null_id_range(text: &Bytes) -> Option<Range<usize>> {
    member_value_range(text, "id")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::range_within;

    fn slot(text: &'static [u8]) -> Option<IdSlot> {
        let text = Bytes::from_static(text);
        let message = crate::parse(&text).unwrap().single().unwrap();
        IdSlot::find(&text, &message)
    }

    #[test]
    fn null_ids_are_found_by_their_member_even_with_an_escaped_key() {
        let found = slot(br#" { "jsonrpc":"2.0", "\u0069d" : null ,"method":"m"} "#).unwrap();
        assert_eq!(found.id_text(), b"null");
        assert_eq!(
            &found.replace(b"3")[..],
            br#" { "jsonrpc":"2.0", "\u0069d" : 3 ,"method":"m"} "#
        );
        let found = slot(br#"{"id":null,"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#).unwrap();
        assert_eq!(found.id_range(), 6..10);
    }

    #[test]
    fn a_message_from_other_bytes_has_no_slot_here() {
        let text = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
        let other = Bytes::from(text.to_vec());
        let message = crate::parse(&other).unwrap().single().unwrap();
        assert_eq!(IdSlot::find(&text, &message), None);
        assert_eq!(range_within(b"abc", b"abcd"), None);
    }
}
