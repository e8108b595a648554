//! `RawCall` (`tokio` feature): a request or notification as a raw async handler gets it.

use crate::message::JsonBytes;

/// A request or notification as a raw async handler
/// ([`Router::raw_method_async`](super::Router::raw_method_async),
/// [`Router::fallback_async`](super::Router::fallback_async)) gets it: the method, and the
/// params as validated JSON in `Bytes` — a slice of the received frame where the transport
/// hands frames over as `Bytes` (the `Peer`, the HTTP service), never decoded or validated
/// again — ready to be passed on as they came.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut router = rpcwire_core::dispatch::Router::new();
/// router.raw_method_async("echo", |call: rpcwire_core::dispatch::RawCall| async move {
///     assert_eq!(call.method(), "echo");
///     assert!(!call.is_notification());
///     Ok(call.into_params().unwrap())
/// });
/// let mut out = bytes::BytesMut::new();
/// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a": [1.50]}}"#, &mut out).await;
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":{"a": [1.50]}}"#);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct RawCall {
    method: Box<str>,
    params: Option<JsonBytes>,
    notification: bool,
}

impl RawCall {
    pub(crate) fn new(method: &str, params: Option<JsonBytes>, notification: bool) -> RawCall {
        RawCall {
            method: method.into(),
            params,
            notification,
        }
    }

    /// The method called.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.fallback_async(|call: rpcwire_core::dispatch::RawCall| async move {
    ///     Ok(rpcwire_core::RawJson::from_value(call.method()).unwrap().into())
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"any"}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":"any"}"#);
    /// # });
    /// ```
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params as they came, `None` when there were none.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.raw_method_async("count", |call: rpcwire_core::dispatch::RawCall| async move {
    ///     let n = call.params().map_or(0, |p| p.len());
    ///     Ok(rpcwire_core::RawJson::from_value(&n).unwrap().into())
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"count","params":[1, 2]}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":6}"#);
    /// # });
    /// ```
    pub fn params(&self) -> Option<&JsonBytes> {
        self.params.as_ref()
    }

    /// Whether this is a notification (nothing will be answered; the handler's result is
    /// dropped) — a forwarding handler sends it on as a notification too.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use std::sync::{Arc, Mutex};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.fallback_async(move |call: rpcwire_core::dispatch::RawCall| {
    ///     log.lock().unwrap().push(call.is_notification());
    ///     async { Ok(rpcwire_core::RawJson::new("null").unwrap().into()) }
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","method":"note"}"#, &mut out).await;
    /// assert!(out.is_empty());
    /// assert_eq!(*seen.lock().unwrap(), [true]);
    /// # });
    /// ```
    pub fn is_notification(&self) -> bool {
        self.notification
    }

    /// The method and the params.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.raw_method_async("m", |call: rpcwire_core::dispatch::RawCall| async move {
    ///     let (method, params) = call.into_parts();
    ///     assert_eq!(&*method, "m");
    ///     Ok(params.unwrap())
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":[]}"#);
    /// # });
    /// ```
    pub fn into_parts(self) -> (Box<str>, Option<JsonBytes>) {
        (self.method, self.params)
    }

    /// The params, `None` when there were none.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.raw_method_async("m", |call: rpcwire_core::dispatch::RawCall| async move { Ok(call.into_params().unwrap()) });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    /// # });
    /// ```
    pub fn into_params(self) -> Option<JsonBytes> {
        self.params
    }
}
