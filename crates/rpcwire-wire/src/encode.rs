//! Encoder: messages and responses written straight into a `BytesMut`.
//!
//! Compact JSON (no spaces), `"jsonrpc":"2.0"` first, ids copied from their raw text (so
//! `1.5e3` and `"a\u0062"` go out exactly as they came in), results serialized by serde
//! directly into the buffer: no intermediate `String` or `serde_json::Value`. With a buffer
//! that already has the capacity, writing a response does not allocate.
//!
//! ```
//! use bytes::BytesMut;
//! use rpcwire_wire::{encode, ErrorObject, Id};
//!
//! let mut out = BytesMut::new();
//! encode::write_success(&mut out, &Id::from(1u64), &[1, 2]).unwrap();
//! encode::write_error(&mut out, &Id::null(), &ErrorObject::parse_error());
//! assert_eq!(
//!     &out[..],
//!     br#"{"jsonrpc":"2.0","id":1,"result":[1,2]}{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
//! );
//! ```

use bytes::{BufMut, BytesMut};
use serde::Serialize;

use crate::json::decimal;
use crate::message::{ErrorObject, Id, Message, Notification, RawJson, Request, Response, ResponsePayload};

/// Writes `id` as JSON: numbers and strings exactly as their raw text, `null` as `null`.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_id(&mut out, &rpcwire_wire::Id::number("1.5e3").unwrap());
/// assert_eq!(&out[..], b"1.5e3");
/// ```
#[inline]
pub fn write_id(dst: &mut BytesMut, id: &Id<'_>) {
    for piece in id.json_parts() {
        dst.put_slice(piece.as_bytes());
    }
}

/// Writes `text` as a JSON string, quotes included, escaping what JSON requires.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_str(&mut out, "a\"b\n");
/// assert_eq!(&out[..], br#""a\"b\n""#);
/// ```
pub fn write_str(dst: &mut BytesMut, text: &str) {
    dst.put_u8(b'"');
    crate::json::escape::escaped_pieces(text, |piece| dst.put_slice(piece.as_bytes()));
    dst.put_u8(b'"');
}

/// Writes an integer in decimal.
fn write_i64(dst: &mut BytesMut, value: i64) {
    if value < 0 {
        dst.put_u8(b'-');
    }
    let mut buf = [0; decimal::MAX_DIGITS];
    dst.put_slice(decimal::digits(value.unsigned_abs(), &mut buf));
}

/// Serializes `value` with serde_json straight into `dst`.
///
/// On error `dst` is left as it was before the call.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_json(&mut out, &("hello", 5)).unwrap();
/// assert_eq!(&out[..], br#"["hello",5]"#);
/// ```
pub fn write_json<T: Serialize + ?Sized>(dst: &mut BytesMut, value: &T) -> Result<(), serde_json::Error> {
    let mark = dst.len();
    let result = serde_json::to_writer(dst.writer(), value);
    if result.is_err() {
        dst.truncate(mark);
    }
    result
}

/// The head every response and request starts with: `{"jsonrpc":"2.0","id":` and the id.
#[inline]
fn write_head(dst: &mut BytesMut, id: &Id<'_>) {
    dst.put_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_id(dst, id);
}

/// Writes the start of a success response, up to `"result":`; the caller writes the result
/// value and then calls [`finish_response`].
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::begin_success(&mut out, &rpcwire_wire::Id::from("a"));
/// out.extend_from_slice(b"true");
/// rpcwire_wire::encode::finish_response(&mut out);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":"a","result":true}"#);
/// ```
#[inline]
pub fn begin_success(dst: &mut BytesMut, id: &Id<'_>) {
    write_head(dst, id);
    dst.put_slice(br#","result":"#);
}

/// Closes a response started with [`begin_success`].
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::begin_success(&mut out, &rpcwire_wire::Id::from(1u64));
/// out.extend_from_slice(b"null");
/// rpcwire_wire::encode::finish_response(&mut out);
/// assert!(out.ends_with(b"null}"));
/// ```
#[inline]
pub fn finish_response(dst: &mut BytesMut) {
    dst.put_u8(b'}');
}

/// Writes a success response whose result is `result`, serialized by serde into `dst`.
///
/// On a serialization error `dst` is left as it was before the call.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_success(&mut out, &rpcwire_wire::Id::from(7u64), &19).unwrap();
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":7,"result":19}"#);
/// ```
pub fn write_success<T: Serialize + ?Sized>(
    dst: &mut BytesMut,
    id: &Id<'_>,
    result: &T,
) -> Result<(), serde_json::Error> {
    let mark = dst.len();
    begin_success(dst, id);
    if let Err(error) = write_json(dst, result) {
        dst.truncate(mark);
        return Err(error);
    }
    finish_response(dst);
    Ok(())
}

/// Writes a success response whose result is JSON text that is already validated.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// let result = rpcwire_wire::RawJson::new("[1, 2]").unwrap();
/// rpcwire_wire::encode::write_success_raw(&mut out, &rpcwire_wire::Id::from(1u64), &result);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":[1, 2]}"#);
/// ```
pub fn write_success_raw(dst: &mut BytesMut, id: &Id<'_>, result: &RawJson<'_>) {
    write_success_bytes(dst, id, result.get().as_bytes());
}

/// Writes a success response around `result`, JSON text the caller has validated (it is
/// written as it is: bytes that are not one JSON value make an answer that is not JSON), the
/// room for the whole answer reserved first: a large result (a forwarded block of several MB)
/// is copied once, never into a buffer that then grows again for the closing brace. What a
/// gateway writes around an upstream's result, held as bytes.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_success_bytes(&mut out, &rpcwire_wire::Id::from(1u64), br#"{"n":1.50}"#);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":{"n":1.50}}"#);
/// ```
pub fn write_success_bytes(dst: &mut BytesMut, id: &Id<'_>, result: &[u8]) {
    let head = br#"{"jsonrpc":"2.0","id":,"result":}"#.len();
    let id_len: usize = id.json_parts().iter().map(|piece| piece.len()).sum();
    dst.reserve(head + id_len + result.len());
    begin_success(dst, id);
    dst.put_slice(result);
    finish_response(dst);
}

/// Writes an error object: `code`, `message` and, when present, `data`.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_error_object(&mut out, &rpcwire_wire::ErrorObject::new(-32000, "busy"));
/// assert_eq!(&out[..], br#"{"code":-32000,"message":"busy"}"#);
/// ```
pub fn write_error_object(dst: &mut BytesMut, error: &ErrorObject<'_>) {
    dst.put_slice(br#"{"code":"#);
    write_i64(dst, error.code().code());
    dst.put_slice(br#","message":"#);
    write_str(dst, error.message());
    if let Some(data) = error.data() {
        dst.put_slice(br#","data":"#);
        dst.put_slice(data.get().as_bytes());
    }
    dst.put_u8(b'}');
}

/// Writes an error response.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_error(&mut out, &rpcwire_wire::Id::from("x"), &rpcwire_wire::ErrorObject::invalid_request());
/// assert_eq!(
///     &out[..],
///     br#"{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"Invalid Request"}}"#
/// );
/// ```
pub fn write_error(dst: &mut BytesMut, id: &Id<'_>, error: &ErrorObject<'_>) {
    write_head(dst, id);
    dst.put_slice(br#","error":"#);
    write_error_object(dst, error);
    dst.put_u8(b'}');
}

/// Writes an error response around `error`, an error object's JSON text the caller has
/// validated, as it is (its members, their order and escapes kept: what a gateway passes on
/// from an upstream).
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// let error = br#"{"message":"limit exceeded","code":-32005}"#;
/// rpcwire_wire::encode::write_error_bytes(&mut out, &rpcwire_wire::Id::from("q"), error);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":"q","error":{"message":"limit exceeded","code":-32005}}"#);
/// ```
pub fn write_error_bytes(dst: &mut BytesMut, id: &Id<'_>, error: &[u8]) {
    write_head(dst, id);
    dst.put_slice(br#","error":"#);
    dst.put_slice(error);
    dst.put_u8(b'}');
}

/// Writes a response (success or error).
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// let response = rpcwire_wire::Response::success(1u64, &"ok").unwrap();
/// rpcwire_wire::encode::write_response(&mut out, &response);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":"ok"}"#);
/// ```
pub fn write_response(dst: &mut BytesMut, response: &Response<'_>) {
    match response.payload() {
        ResponsePayload::Result(result) => write_success_raw(dst, response.id(), result),
        ResponsePayload::Error(error) => write_error(dst, response.id(), error),
    }
}

/// Writes `{"jsonrpc":"2.0",`, the id and a comma when there is one, and `"method":…`.
fn write_call_head(dst: &mut BytesMut, id: Option<&Id<'_>>, method: &str) {
    match id {
        Some(id) => {
            write_head(dst, id);
            dst.put_u8(b',');
        }
        None => dst.put_slice(br#"{"jsonrpc":"2.0","#),
    }
    dst.put_slice(br#""method":"#);
    write_str(dst, method);
}

/// Writes `,"params":…` when there are params, and the closing brace.
fn write_call_tail(dst: &mut BytesMut, params: Option<&RawJson<'_>>) {
    if let Some(params) = params {
        dst.put_slice(br#","params":"#);
        dst.put_slice(params.get().as_bytes());
    }
    dst.put_u8(b'}');
}

/// The error for params that are neither an array nor an object.
fn scalar_params() -> serde_json::Error {
    serde::ser::Error::custom("params must be an array or an object (or null / () for none)")
}

/// Writes a request (`id` given) or a notification (`None`) whose params serde serializes
/// straight into `dst`. Params that serialize as `null` (`()`, `None`) are left out; anything
/// else must be an array or an object (JSON-RPC 2.0, section 4.2). On error `dst` is left
/// as it was.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_call(&mut out, Some(&rpcwire_wire::Id::from(1u64)), "sum", &[1, 2])?;
/// rpcwire_wire::encode::write_call(&mut out, None, "ping", &())?;
/// assert_eq!(
///     &out[..],
///     br#"{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}{"jsonrpc":"2.0","method":"ping"}"#
/// );
/// assert!(rpcwire_wire::encode::write_call(&mut out, None, "bad", &5).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn write_call<P: Serialize + ?Sized>(
    dst: &mut BytesMut,
    id: Option<&Id<'_>>,
    method: &str,
    params: &P,
) -> Result<(), serde_json::Error> {
    let mark = dst.len();
    write_call_head(dst, id, method);
    let before_params = dst.len();
    dst.put_slice(br#","params":"#);
    let start = dst.len();
    if let Err(error) = write_json(dst, params) {
        dst.truncate(mark);
        return Err(error);
    }
    match dst[start..].first() {
        Some(b'[' | b'{') => {}
        _ if &dst[start..] == b"null" => dst.truncate(before_params),
        _ => {
            dst.truncate(mark);
            return Err(scalar_params());
        }
    }
    dst.put_u8(b'}');
    Ok(())
}

/// [`write_call`] with params that are JSON text already (`None` or `null`: no params).
/// They must be an array or an object; on error `dst` is left as it was.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// let params = rpcwire_wire::RawJson::new(r#"{"k":null}"#).unwrap();
/// rpcwire_wire::encode::write_call_raw(&mut out, None, "log", Some(&params))?;
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","method":"log","params":{"k":null}}"#);
/// let scalar = rpcwire_wire::RawJson::new("3").unwrap();
/// assert!(rpcwire_wire::encode::write_call_raw(&mut out, None, "log", Some(&scalar)).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn write_call_raw(
    dst: &mut BytesMut,
    id: Option<&Id<'_>>,
    method: &str,
    params: Option<&RawJson<'_>>,
) -> Result<(), serde_json::Error> {
    let params = params.filter(|params| !params.is_null());
    if let Some(params) = params {
        if !matches!(params.get().as_bytes().first(), Some(b'[' | b'{')) {
            return Err(scalar_params());
        }
    }
    write_call_head(dst, id, method);
    write_call_tail(dst, params);
    Ok(())
}

/// Writes a request.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// let request = rpcwire_wire::Request::new(1u64, "sum").with_params(&[1, 2]).unwrap();
/// rpcwire_wire::encode::write_request(&mut out, &request);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}"#);
/// ```
pub fn write_request(dst: &mut BytesMut, request: &Request<'_>) {
    write_call_head(dst, Some(request.id()), request.method());
    write_call_tail(dst, request.raw_params());
}

/// Writes a notification.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_notification(&mut out, &rpcwire_wire::Notification::new("update"));
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","method":"update"}"#);
/// ```
pub fn write_notification(dst: &mut BytesMut, notification: &Notification<'_>) {
    write_call_head(dst, None, notification.method());
    write_call_tail(dst, notification.raw_params());
}

/// Writes any message.
///
/// ```
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::encode::write_message(&mut out, &rpcwire_wire::Notification::new("a").into());
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","method":"a"}"#);
/// ```
pub fn write_message(dst: &mut BytesMut, message: &Message<'_>) {
    match message {
        Message::Request(request) => write_request(dst, request),
        Message::Notification(notification) => write_notification(dst, notification),
        Message::Response(response) => write_response(dst, response),
    }
}

/// Writes a batch array element by element: `[` before the first element, `,` between
/// elements, `]` at the end, and nothing at all when no element was written (a batch of
/// only notifications gets no answer).
///
/// ```
/// use rpcwire_wire::encode::{write_success, BatchWriter};
/// use rpcwire_wire::Id;
///
/// let mut out = bytes::BytesMut::new();
/// let mut batch = BatchWriter::new(&mut out);
/// write_success(batch.element(), &Id::from(1u64), &7).unwrap();
/// write_success(batch.element(), &Id::from(2u64), &8).unwrap();
/// assert_eq!(batch.finish(), 2);
/// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":7},{"jsonrpc":"2.0","id":2,"result":8}]"#);
///
/// let mut out = bytes::BytesMut::new();
/// assert_eq!(BatchWriter::new(&mut out).finish(), 0);
/// assert!(out.is_empty());
/// ```
#[derive(Debug)]
pub struct BatchWriter<'b> {
    dst: &'b mut BytesMut,
    elements: usize,
}

impl<'b> BatchWriter<'b> {
    /// Starts a batch at the end of `dst`. Nothing is written until the first element.
    ///
    /// ```
    /// let mut out = bytes::BytesMut::new();
    /// let batch = rpcwire_wire::encode::BatchWriter::new(&mut out);
    /// assert_eq!(batch.len(), 0);
    /// ```
    pub fn new(dst: &'b mut BytesMut) -> BatchWriter<'b> {
        BatchWriter { dst, elements: 0 }
    }

    /// The buffer to write the next element into, after the `[` or `,` that precedes it.
    /// Write exactly one JSON value there.
    ///
    /// ```
    /// let mut out = bytes::BytesMut::new();
    /// let mut batch = rpcwire_wire::encode::BatchWriter::new(&mut out);
    /// batch.element().extend_from_slice(b"1");
    /// batch.finish();
    /// assert_eq!(&out[..], b"[1]");
    /// ```
    pub fn element(&mut self) -> &mut BytesMut {
        self.dst.put_u8(if self.elements == 0 { b'[' } else { b',' });
        self.elements += 1;
        self.dst
    }

    /// The number of elements started so far.
    ///
    /// ```
    /// let mut out = bytes::BytesMut::new();
    /// let mut batch = rpcwire_wire::encode::BatchWriter::new(&mut out);
    /// batch.element().extend_from_slice(b"1");
    /// assert_eq!(batch.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.elements
    }

    /// `true` when no element was started.
    ///
    /// ```
    /// let mut out = bytes::BytesMut::new();
    /// assert!(rpcwire_wire::encode::BatchWriter::new(&mut out).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.elements == 0
    }

    /// The underlying buffer, without starting an element: for writing into the current
    /// element's place with a function that takes the buffer itself.
    ///
    /// ```
    /// let mut out = bytes::BytesMut::new();
    /// let mut batch = rpcwire_wire::encode::BatchWriter::new(&mut out);
    /// batch.element();
    /// rpcwire_wire::encode::write_success_bytes(batch.dst_mut(), &rpcwire_wire::Id::from(1u64), b"true");
    /// assert_eq!(batch.finish(), 1);
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":true}]"#);
    /// ```
    pub fn dst_mut(&mut self) -> &mut BytesMut {
        self.dst
    }

    /// Closes the array (when anything was written) and returns the number of elements.
    ///
    /// ```
    /// let mut out = bytes::BytesMut::new();
    /// let mut batch = rpcwire_wire::encode::BatchWriter::new(&mut out);
    /// batch.element().extend_from_slice(b"null");
    /// assert_eq!(batch.finish(), 1);
    /// assert_eq!(&out[..], b"[null]");
    /// ```
    pub fn finish(self) -> usize {
        if self.elements > 0 {
            self.dst.put_u8(b']');
        }
        self.elements
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(out: &BytesMut) -> &str {
        std::str::from_utf8(out).unwrap()
    }

    #[test]
    fn a_large_success_is_written_into_one_allocation_of_its_size() {
        // A forwarded result of 300 KB: before, the closing brace made the buffer double.
        let result = format!("[{}1]", "1,".repeat(150_000));
        for id in [
            Id::from(7u64),
            Id::from("a long string id, longer than the head"),
            Id::null(),
        ] {
            let mut out = BytesMut::new();
            write_success_bytes(&mut out, &id, result.as_bytes());
            assert!(out.ends_with(b"1]}") && out.starts_with(br#"{"jsonrpc":"2.0","id":"#));
            assert_eq!(out.capacity(), out.len(), "reserved exactly once for {id}");
        }
    }

    #[test]
    fn integers_in_decimal_including_the_extremes() {
        for value in [0, 7, -7, 10, 1_000_000, -32700, i64::MAX, i64::MIN] {
            let mut out = BytesMut::new();
            write_i64(&mut out, value);
            assert_eq!(text(&out), value.to_string());
        }
    }

    #[test]
    fn ids_keep_their_exact_text() {
        for raw in ["1", "-7", "18446744073709551616", "1.5e3", "-0"] {
            let mut out = BytesMut::new();
            write_id(&mut out, &Id::number(raw).unwrap());
            assert_eq!(text(&out), raw);
        }
        let parsed = crate::parse(br#"{"jsonrpc":"2.0","id":"a\u0062","method":"m"}"#).unwrap();
        let id = parsed.single().unwrap().id().unwrap().clone();
        let mut out = BytesMut::new();
        write_id(&mut out, &id);
        assert_eq!(text(&out), r#""a\u0062""#);
    }

    #[test]
    fn error_objects_escape_their_message_and_keep_data() {
        let error = ErrorObject::new(-32001, "bad \"thing\"\n")
            .with_data(&[1])
            .unwrap();
        let mut out = BytesMut::new();
        write_error(&mut out, &Id::from(3u64), &error);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"bad \"thing\"\n","data":[1]}})
        );
    }

    #[test]
    fn serialization_failure_leaves_the_buffer_unchanged() {
        struct Fails;
        impl Serialize for Fails {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let mut out = BytesMut::from(&b"keep"[..]);
        assert!(write_success(&mut out, &Id::from(1u64), &Fails).is_err());
        assert_eq!(&out[..], b"keep");
        assert!(write_json(&mut out, &Fails).is_err());
        assert_eq!(&out[..], b"keep");
    }

    #[test]
    fn every_message_kind_matches_serde_serialization() {
        let messages: Vec<Message<'static>> = vec![
            Request::new(1u64, "a\"b").with_params(&[1, 2]).unwrap().into(),
            Request::new("x", "m").into(),
            Request::new(Id::null(), "m")
                .with_params(&serde_json::json!({"k": "v"}))
                .unwrap()
                .into(),
            Notification::new("n").with_params(&[true]).unwrap().into(),
            Notification::new("n").into(),
            Response::success(Id::number("1.5e3").unwrap(), &"r")
                .unwrap()
                .into(),
            Response::error(Id::null(), ErrorObject::method_not_found("zz")).into(),
        ];
        for message in &messages {
            let mut out = BytesMut::new();
            write_message(&mut out, message);
            assert_eq!(text(&out), serde_json::to_string(message).unwrap());
        }
    }
}
