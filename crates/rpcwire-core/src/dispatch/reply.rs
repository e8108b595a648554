//! `Reply`: where a raw handler writes its result, and the `Written` token proving it did.

use bytes::{BufMut, BytesMut};
use serde::Serialize;

use crate::message::{ErrorObject, RawJson};

/// The place a raw handler writes its result: the router has already written
/// `{"jsonrpc":"2.0","id":…,"result":` and closes the object after the handler returns.
/// Consuming `self`, each method writes exactly one JSON value and returns the [`Written`]
/// token the handler must return.
///
/// ```
/// use rpcwire_core::dispatch::{Reply, Router};
/// use rpcwire_core::Params;
///
/// let mut router = Router::new();
/// // Echo: the params go back unchanged, without being decoded or copied into a value.
/// router.raw_method("echo", |params: Option<Params<'_>>, reply: Reply<'_>| {
///     Ok(match params {
///         Some(params) => reply.raw(&params.raw()),
///         None => reply.null(),
///     })
/// });
/// let mut out = bytes::BytesMut::new();
/// router.handle(br#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":[1]}}"#, &mut out);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}"#);
/// ```
#[derive(Debug)]
pub struct Reply<'r> {
    dst: &'r mut BytesMut,
}

/// Proof that a [`Reply`] was written: only `Reply`'s methods make one.
#[derive(Debug)]
pub struct Written(());

impl<'r> Reply<'r> {
    pub(crate) fn new(dst: &'r mut BytesMut) -> Reply<'r> {
        Reply { dst }
    }

    /// Serializes `value` as the result, with serde straight into the output buffer. A value
    /// that fails to serialize becomes an internal error (-32603) with serde's reason.
    ///
    /// ```
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.raw_method("len", |params: Option<rpcwire_core::Params<'_>>, reply: rpcwire_core::dispatch::Reply<'_>| {
    ///     reply.json(&params.map_or(0, |p| p.len()))
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(br#"{"jsonrpc":"2.0","id":1,"method":"len","params":[7,8]}"#, &mut out);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":2}"#);
    /// ```
    pub fn json<T: Serialize + ?Sized>(self, value: &T) -> Result<Written, ErrorObject<'static>> {
        crate::encode::write_json(self.dst, value)
            .map(|()| Written(()))
            .map_err(|error| ErrorObject::internal_error(format_args!("result did not serialize: {error}")))
    }

    /// Writes JSON text that is already validated as the result.
    ///
    /// ```
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.raw_method("one", |_: Option<rpcwire_core::Params<'_>>, reply: rpcwire_core::dispatch::Reply<'_>| {
    ///     Ok(reply.raw(&rpcwire_core::RawJson::new("[1]").unwrap()))
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(br#"{"jsonrpc":"2.0","id":1,"method":"one"}"#, &mut out);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":[1]}"#);
    /// ```
    pub fn raw(self, value: &RawJson<'_>) -> Written {
        self.dst.put_slice(value.get().as_bytes());
        Written(())
    }

    /// Writes `null` as the result.
    ///
    /// ```
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.raw_method("nothing", |_: Option<rpcwire_core::Params<'_>>, reply: rpcwire_core::dispatch::Reply<'_>| {
    ///     Ok(reply.null())
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(br#"{"jsonrpc":"2.0","id":1,"method":"nothing"}"#, &mut out);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":null}"#);
    /// ```
    pub fn null(self) -> Written {
        self.dst.put_slice(b"null");
        Written(())
    }
}
