//! `JsonBytes`: validated JSON held in `bytes::Bytes` — a slice of a received frame, passed
//! on without being copied or validated again.

use std::fmt;
use std::ops::{Deref, Range};

use bytes::Bytes;
use serde::de::DeserializeOwned;

use super::RawJson;
use crate::json::SyntaxError;

/// One valid JSON value in a [`Bytes`]: what a proxy takes out of one frame and puts into
/// another — a call's result (`Peer::call_raw`), a
/// request's params in a raw async handler — without copying it or validating it again.
/// The owned, reference-counted sibling of [`RawJson`].
///
/// ```
/// use bytes::Bytes;
/// use rpcwire_wire::JsonBytes;
///
/// let value = JsonBytes::new(Bytes::from_static(b" {\"a\": [1, 2]} ")).unwrap();
/// assert_eq!(&value[..], b"{\"a\": [1, 2]}");
/// assert_eq!(value.to_raw_json().get(), "{\"a\": [1, 2]}");
/// assert!(JsonBytes::new(Bytes::from_static(b"{\"a\":")).is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonBytes {
    bytes: Bytes,
}

impl JsonBytes {
    /// Validates `bytes` as one JSON value; surrounding whitespace is sliced off (no copy).
    ///
    /// ```
    /// let value = rpcwire_wire::JsonBytes::new(bytes::Bytes::from("\n 42 \n")).unwrap();
    /// assert_eq!(value.as_str(), "42");
    /// ```
    pub fn new(bytes: Bytes) -> Result<JsonBytes, SyntaxError> {
        crate::json::validate(&bytes)?;
        let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        let start = bytes.iter().position(|b| !is_space(b)).unwrap_or(0);
        let end = bytes
            .iter()
            .rposition(|b| !is_space(b))
            .map_or(start, |at| at + 1);
        Ok(JsonBytes::from_validated(bytes.slice(start..end)))
    }

    /// Bytes the caller has validated as one JSON value without surrounding whitespace (the
    /// parser's slices, serde_json's output): not checked again, so bytes that are not JSON
    /// make answers that are not JSON (never undefined behaviour). [`new`](JsonBytes::new)
    /// checks.
    ///
    /// ```
    /// let value = rpcwire_wire::JsonBytes::from_validated(bytes::Bytes::from_static(b"[1]"));
    /// assert_eq!(value.as_str(), "[1]");
    /// ```
    pub fn from_validated(bytes: Bytes) -> JsonBytes {
        JsonBytes { bytes }
    }

    /// `raw` as a slice of `frame` when it lies inside it (it does when it was parsed from
    /// it: no copy), a copy otherwise. Never validated again.
    ///
    /// ```
    /// use bytes::Bytes;
    /// let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":[1,2]}"#);
    /// let Some(rpcwire_wire::Message::Response(response)) = rpcwire_wire::parse(&frame).unwrap().single() else { panic!() };
    /// let result = response.result().unwrap();
    /// let value = rpcwire_wire::JsonBytes::slice_of(&frame, result);
    /// assert_eq!(value.as_str(), "[1,2]");
    /// assert_eq!(value.as_ptr(), frame[33..].as_ptr()); // the frame's own bytes
    /// ```
    pub fn slice_of(frame: &Bytes, raw: &RawJson<'_>) -> JsonBytes {
        let text = raw.get().as_bytes();
        let bytes = match range_within(frame, text) {
            Some(range) => frame.slice(range),
            None => Bytes::copy_from_slice(text),
        };
        JsonBytes::from_validated(bytes)
    }

    /// The JSON text. Checks that it is UTF-8 again (it always is: it was validated), a
    /// fast pass over the bytes; what only writes the value out can use the bytes instead.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::JsonBytes::from(rpcwire_wire::RawJson::new("[true]").unwrap()).as_str(), "[true]");
    /// ```
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes).unwrap_or_default()
    }

    /// A [`RawJson`] view of the same text (no copy), for APIs that take one.
    ///
    /// ```
    /// let value = rpcwire_wire::JsonBytes::new(bytes::Bytes::from_static(b"[1]")).unwrap();
    /// assert_eq!(value.to_raw_json().decode::<Vec<u8>>().unwrap(), [1]);
    /// ```
    pub fn to_raw_json(&self) -> RawJson<'_> {
        RawJson::from_validated(self.as_str())
    }

    /// Decodes the value into `T` with serde_json.
    ///
    /// ```
    /// let value = rpcwire_wire::JsonBytes::new(bytes::Bytes::from_static(b"[1,2]")).unwrap();
    /// assert_eq!(value.decode::<(u8, u8)>().unwrap(), (1, 2));
    /// ```
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.bytes)
    }

    /// The bytes.
    ///
    /// ```
    /// let value = rpcwire_wire::JsonBytes::new(bytes::Bytes::from_static(b"null")).unwrap();
    /// assert_eq!(value.into_bytes(), bytes::Bytes::from_static(b"null"));
    /// ```
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }
}

/// Where `part` lies in `outer`, when it is a slice of it (a parsed view's text lies in the
/// bytes it was parsed from): compared by address, never by content.
///
/// ```
/// let outer = br#"{"jsonrpc":"2.0","method":"m"}"#;
/// assert_eq!(rpcwire_wire::message::range_within(outer, &outer[12..17]), Some(12..17));
/// assert_eq!(rpcwire_wire::message::range_within(outer, b"2.0"), None);
/// ```
pub fn range_within(outer: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= outer.len()).then_some(start..end)
}

/// Where a parsed id's JSON text lies in `outer`, the bytes it was parsed from (a string with
/// its quotes); `None` for `null`, which has no text of its own to point at, or an id not
/// parsed from `outer`. What a gateway uses to put a client's id back exactly as written.
///
/// ```
/// let frame = br#"{"jsonrpc":"2.0","id":"q1","method":"m"}"#;
/// let message = rpcwire_wire::parse(frame).unwrap().single().unwrap();
/// let range = rpcwire_wire::message::id_range_within(frame, message.id().unwrap()).unwrap();
/// assert_eq!(&frame[range], br#""q1""#);
/// ```
pub fn id_range_within(outer: &[u8], id: &super::Id<'_>) -> Option<Range<usize>> {
    match id.kind() {
        super::IdKind::Number => range_within(outer, id.raw().as_bytes()),
        super::IdKind::String => {
            let inner = range_within(outer, id.raw().as_bytes())?;
            // The quotes around it are in the input too.
            Some(inner.start.checked_sub(1)?..inner.end + 1)
        }
        super::IdKind::Null => None,
    }
}

impl Deref for JsonBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl AsRef<[u8]> for JsonBytes {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// Owned text moves into the `Bytes` without a copy; borrowed text is copied.
impl From<RawJson<'_>> for JsonBytes {
    fn from(raw: RawJson<'_>) -> JsonBytes {
        JsonBytes::from_validated(Bytes::from(raw.into_owned().into_string()))
    }
}

impl fmt::Debug for JsonBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonBytes").field(&self.as_str()).finish()
    }
}

impl fmt::Display for JsonBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_when_the_value_is_not_in_the_frame() {
        let frame = Bytes::from_static(b"[1]");
        let elsewhere = RawJson::new("[2]").unwrap();
        let value = JsonBytes::slice_of(&frame, &elsewhere);
        assert_eq!(&value[..], b"[2]");
        assert_eq!(format!("{value} {value:?}"), "[2] JsonBytes(\"[2]\")");
        assert_eq!(value.as_ref(), b"[2]");
    }

    #[test]
    fn validated_trimmed_viewed_and_decoded() {
        let value = JsonBytes::new(Bytes::from_static(b" \n[1, {\"a\": null}]\t")).unwrap();
        assert_eq!(value.as_str(), "[1, {\"a\": null}]");
        assert_eq!(value.to_raw_json().get(), value.as_str());
        let decoded: (u8, serde_json::Value) = value.decode().unwrap();
        assert_eq!(decoded.0, 1);
        assert_eq!(
            value.clone().into_bytes(),
            Bytes::from_static(b"[1, {\"a\": null}]")
        );
        assert!(JsonBytes::new(Bytes::from_static(b"[1,")).is_err());
        assert!(JsonBytes::new(Bytes::from_static(b"")).is_err());
        let owned = JsonBytes::from(RawJson::from_value(&[1, 2]).unwrap());
        assert_eq!(&owned[..], b"[1,2]");
    }
}
