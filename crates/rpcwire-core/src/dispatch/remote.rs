//! `Remote` (`tokio` feature): the other side of the connection a request came on, as the
//! transport serving it hands it to handlers through their
//! [`RequestContext`](super::RequestContext) — a small trait object defined here, so that
//! dispatch never names (or downcasts to) a transport's types.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::message::{ErrorObject, JsonBytes, RawJson};

/// A boxed future of a [`Remote`]'s call or notification.
pub type RemoteFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, RemoteError>> + Send + 'a>>;

/// Calls and notifications back to the other side of the connection a request came on
/// (progress reports, requests to the client). A [`Peer`](crate::transport::Peer) gives its
/// handlers its [`PeerLink`](crate::transport::PeerLink); a handler reaches it with
/// [`RequestContext::remote`](super::RequestContext::remote). It does not keep the
/// connection open.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use rpcwire_core::dispatch::{Remote, RemoteError, RemoteFuture};
/// use rpcwire_core::{ErrorObject, JsonBytes, RawJson};
///
/// /// A remote that is gone.
/// struct Gone;
/// impl Remote for Gone {
///     fn call_raw<'a>(&'a self, _: &'a str, _: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, JsonBytes> {
///         Box::pin(async { Err(RemoteError::closed("gone")) })
///     }
///     fn notify_raw<'a>(&'a self, _: &'a str, _: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, ()> {
///         Box::pin(async { Err(RemoteError::closed("gone")) })
///     }
///     fn is_open(&self) -> bool {
///         false
///     }
///     fn closed(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
///         Box::pin(async {})
///     }
/// }
/// let remote: &dyn Remote = &Gone;
/// assert!(remote.notify("progress", [50]).await.unwrap_err().is_closed());
/// # });
/// ```
pub trait Remote: Send + Sync + 'static {
    /// Calls `method` with `params` (JSON text, sent as it is); the result's JSON as it came.
    fn call_raw<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a RawJson<'a>>,
    ) -> RemoteFuture<'a, JsonBytes>;

    /// Sends a notification of `method` with `params` (JSON text, sent as it is).
    fn notify_raw<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, ()>;

    /// Whether the connection is still open.
    fn is_open(&self) -> bool;

    /// Completes once the connection has closed (at once when it is closed already).
    fn closed(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::pending())
    }

    /// Closes the connection this request's answer travels on, when the transport lets the
    /// client resume it later (MCP's Streamable HTTP: the client reconnects with
    /// `Last-Event-ID` and gets the rest); `false` (nothing done) elsewhere.
    fn detach(&self) -> bool {
        false
    }

    /// Closes the connection (a server dropping a client too slow to read what it is
    /// sent); `false` (nothing done) when the transport cannot.
    fn close(&self) -> bool {
        false
    }
}

impl dyn Remote {
    /// Calls `method` with `params` serialized by serde (`()` for none) and decodes the
    /// result into `R`.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{Remote, RemoteError, RemoteFuture};
    /// struct Adder;
    /// impl Remote for Adder {
    ///     fn call_raw<'a>(&'a self, _: &'a str, params: Option<&'a rpcwire_core::RawJson<'a>>) -> RemoteFuture<'a, rpcwire_core::JsonBytes> {
    ///         let sum: i64 = params.unwrap().decode::<Vec<i64>>().unwrap().iter().sum();
    ///         Box::pin(async move { Ok(rpcwire_core::RawJson::from_value(&sum).unwrap().into()) })
    ///     }
    ///     fn notify_raw<'a>(&'a self, _: &'a str, _: Option<&'a rpcwire_core::RawJson<'a>>) -> RemoteFuture<'a, ()> {
    ///         Box::pin(async { Ok(()) })
    ///     }
    ///     fn is_open(&self) -> bool { true }
    /// }
    /// let remote: &dyn Remote = &Adder;
    /// assert_eq!(remote.call::<_, i64>("add", [1, 2]).await.unwrap(), 3);
    /// # });
    /// ```
    pub async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, RemoteError> {
        let params = serialized(&params)?;
        let result = self.call_raw(method, params.as_ref()).await?;
        serde_json::from_slice(&result).map_err(|error| {
            let object = ErrorObject::internal_error(format_args!("the result did not decode: {error}"));
            RemoteError::new(error, object, false)
        })
    }

    /// Sends a notification of `method` with `params` serialized by serde (`()` for none).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// # use rpcwire_core::dispatch::{Remote, RemoteError, RemoteFuture};
    /// # struct Quiet;
    /// # impl Remote for Quiet {
    /// #     fn call_raw<'a>(&'a self, _: &'a str, _: Option<&'a rpcwire_core::RawJson<'a>>) -> RemoteFuture<'a, rpcwire_core::JsonBytes> { unimplemented!() }
    /// #     fn notify_raw<'a>(&'a self, _: &'a str, p: Option<&'a rpcwire_core::RawJson<'a>>) -> RemoteFuture<'a, ()> {
    /// #         assert_eq!(p.unwrap().get(), r#"{"done":50}"#);
    /// #         Box::pin(async { Ok(()) })
    /// #     }
    /// #     fn is_open(&self) -> bool { true }
    /// # }
    /// let remote: &dyn Remote = &Quiet;
    /// remote.notify("progress", serde_json::json!({"done": 50})).await.unwrap();
    /// # });
    /// ```
    pub async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), RemoteError> {
        let params = serialized(&params)?;
        self.notify_raw(method, params.as_ref()).await
    }
}

impl fmt::Debug for dyn Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote").field("open", &self.is_open()).finish()
    }
}

/// `params` as JSON text (`None` for `()` and `null`).
fn serialized<P: Serialize>(params: &P) -> Result<Option<RawJson<'static>>, RemoteError> {
    let raw = RawJson::from_value(params).map_err(|error| {
        let object = ErrorObject::invalid_params(format_args!("params did not serialize: {error}"));
        RemoteError::new(error, object, false)
    })?;
    Ok((raw.get() != "null").then_some(raw))
}

/// Why a call or notification through a [`Remote`] failed: whether the connection is
/// closed, the error object a handler can answer with, and the cause.
///
/// ```
/// let error = rpcwire_core::dispatch::RemoteError::closed("the connection closed");
/// assert!(error.is_closed());
/// assert_eq!(error.to_error_object().code().code(), -32603);
/// assert_eq!(error.to_string(), "the connection closed");
/// ```
#[derive(Debug)]
pub struct RemoteError {
    closed: bool,
    object: ErrorObject<'static>,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl RemoteError {
    /// A failure caused by `source`, answered with `object`; `closed`: the connection is
    /// closed (nothing more will reach the other side).
    ///
    /// ```
    /// let answer = rpcwire_core::ErrorObject::new(-32005, "busy");
    /// let error = rpcwire_core::dispatch::RemoteError::new(std::fmt::Error, answer.clone(), false);
    /// assert_eq!(error.to_error_object(), answer);
    /// ```
    pub fn new(
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
        object: ErrorObject<'static>,
        closed: bool,
    ) -> RemoteError {
        RemoteError {
            closed,
            object,
            source: source.into(),
        }
    }

    /// The connection is closed: `reason` says why.
    ///
    /// ```
    /// assert!(rpcwire_core::dispatch::RemoteError::closed("gone").is_closed());
    /// ```
    pub fn closed(reason: &str) -> RemoteError {
        let object = ErrorObject::internal_error(reason);
        RemoteError::new(reason.to_owned(), object, true)
    }

    /// Whether the connection is closed.
    ///
    /// ```
    /// let error = rpcwire_core::dispatch::RemoteError::new(std::fmt::Error, rpcwire_core::ErrorObject::new(1, "x"), false);
    /// assert!(!error.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The error object a handler can answer its own request with: the other side's own
    /// when it answered with one.
    ///
    /// ```
    /// let error = rpcwire_core::dispatch::RemoteError::closed("gone");
    /// assert_eq!(error.to_error_object().message(), "Internal error");
    /// ```
    pub fn to_error_object(&self) -> ErrorObject<'static> {
        self.object.clone()
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.source, f)
    }
}

impl std::error::Error for RemoteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remote that answers every call with `answer` and records what it was sent.
    struct Scripted {
        answer: &'static str,
        sent: std::sync::Mutex<Vec<(String, Option<String>)>>,
    }

    impl Remote for Scripted {
        fn call_raw<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, JsonBytes> {
            self.sent
                .lock()
                .unwrap()
                .push((method.to_owned(), params.map(|p| p.get().to_owned())));
            let answer = RawJson::new(self.answer).unwrap().into_owned();
            Box::pin(async move { Ok(answer.into()) })
        }

        fn notify_raw<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, ()> {
            self.sent
                .lock()
                .unwrap()
                .push((method.to_owned(), params.map(|p| p.get().to_owned())));
            Box::pin(async { Ok(()) })
        }

        fn is_open(&self) -> bool {
            true
        }
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn typed_calls_serialize_params_and_decode_results() {
        let scripted = Scripted {
            answer: r#"{"n":3}"#,
            sent: Default::default(),
        };
        let remote: &dyn Remote = &scripted;
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct N {
            n: u8,
        }
        assert_eq!(block_on(remote.call::<_, N>("sum", [1, 2])).unwrap(), N { n: 3 });
        block_on(remote.notify("note", ())).unwrap();
        let sent = scripted.sent.lock().unwrap().clone();
        assert_eq!(
            sent,
            [
                ("sum".to_owned(), Some("[1,2]".to_owned())),
                ("note".to_owned(), None)
            ]
        );
        assert!(format!("{remote:?}").contains("open: true"));
        // A result that does not decode into the type asked for.
        let error = block_on(remote.call::<_, String>("sum", ())).unwrap_err();
        assert!(!error.is_closed());
        assert_eq!(error.to_error_object().code().code(), -32603);
        assert!(std::error::Error::source(&error).is_some());
        assert!(error.to_string().contains("invalid type"), "{error}");
    }

    #[test]
    fn params_that_do_not_serialize_fail_before_anything_is_sent() {
        struct Unserializable;
        impl Serialize for Unserializable {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let scripted = Scripted {
            answer: "1",
            sent: Default::default(),
        };
        let remote: &dyn Remote = &scripted;
        let error = block_on(remote.notify("note", Unserializable)).unwrap_err();
        assert_eq!(error.to_error_object().code().code(), -32602);
        assert!(scripted.sent.lock().unwrap().is_empty());
        // The default `closed` never completes for a remote that does not say.
        let closed = block_on(async {
            tokio::select! {
                biased;
                () = remote.closed() => true,
                () = std::future::ready(()) => false,
            }
        });
        assert!(!closed);
    }

    #[test]
    fn a_closed_remote_says_so() {
        let error = RemoteError::closed("gone");
        assert!(error.is_closed());
        assert_eq!(error.to_string(), "gone");
        assert_eq!(error.to_error_object().data().unwrap().get(), r#""gone""#);
    }
}
