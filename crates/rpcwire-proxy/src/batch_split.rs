//! A batch's elements as slices of its bytes, and a batch joined again from such slices.

use bytes::{Bytes, BytesMut};

use crate::json::iter::ArrayIter;

/// The elements of the batch (a JSON array) in `frame`, each a slice of it (no copy), in
/// order; `None` when `frame` does not hold a valid JSON array. Each element can be parsed
/// on its own, sent upstream on its own, or joined with others by [`join_batch`].
///
/// ```
/// use bytes::Bytes;
/// let frame = Bytes::from_static(br#"[ {"jsonrpc":"2.0","id":1,"method":"a"} , {"jsonrpc":"2.0","method":"b"} ]"#);
/// let elements = rpcwire::proxy::batch_elements(&frame).unwrap();
/// assert_eq!(&elements[1][..], br#"{"jsonrpc":"2.0","method":"b"}"#);
/// assert!(rpcwire::proxy::batch_elements(&Bytes::from_static(b"{}")).is_none());
/// ```
pub fn batch_elements(frame: &Bytes) -> Option<Vec<Bytes>> {
    // Anything but an array is told by its first byte, before the whole frame is validated.
    let first = frame
        .iter()
        .find(|&&byte| !crate::json::is_whitespace_char(char::from(byte)));
    if first != Some(&b'[') {
        return None;
    }
    crate::json::validate(frame).ok()?;
    let text = std::str::from_utf8(frame).ok()?;
    Some(
        ArrayIter::new(text)
            .map(|element| frame.slice_ref(element.as_bytes()))
            .collect(),
    )
}

/// A batch frame, `[e1,e2,…]`, from elements' bytes (each one JSON value, as
/// [`batch_elements`] gives them or as upstreams answered). An empty list gives `[]`, which
/// is not a valid batch to send: leave it out instead.
///
/// ```
/// use bytes::Bytes;
/// let joined = rpcwire::proxy::join_batch(&[Bytes::from_static(b"{\"a\":1}"), Bytes::from_static(b"2")]);
/// assert_eq!(&joined[..], b"[{\"a\":1},2]");
/// ```
pub fn join_batch(elements: &[Bytes]) -> Bytes {
    let length = 2 + elements.iter().map(|e| e.len() + 1).sum::<usize>();
    let mut out = BytesMut::with_capacity(length);
    out.extend_from_slice(b"[");
    for (index, element) in elements.iter().enumerate() {
        if index > 0 {
            out.extend_from_slice(b",");
        }
        out.extend_from_slice(element);
    }
    out.extend_from_slice(b"]");
    out.freeze()
}
