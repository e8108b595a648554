//! `Request` (expects an answer) and `Notification` (does not).

use std::borrow::Cow;

use serde::Serialize;

use super::{BuildError, Id, Params, RawJson};

/// A call that expects a response: it has an `id` (which may be `null`).
///
/// ```
/// use rpcwire_wire::Request;
/// let req = Request::new(1u64, "subtract").with_params(&[42, 23]).unwrap();
/// assert_eq!(req.method(), "subtract");
/// let (a, b): (i64, i64) = req.params().unwrap().decode().unwrap();
/// assert_eq!(a - b, 19);
/// assert_eq!(serde_json::to_string(&req).unwrap(),
///            r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    id: Id<'a>,
    method: Cow<'a, str>,
    params: Option<RawJson<'a>>,
}

/// A call that expects no response: it has no `id`.
///
/// ```
/// use rpcwire_wire::Notification;
/// let n = Notification::new("update").with_params(&[1, 2]).unwrap();
/// assert_eq!(serde_json::to_string(&n).unwrap(),
///            r#"{"jsonrpc":"2.0","method":"update","params":[1,2]}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification<'a> {
    method: Cow<'a, str>,
    params: Option<RawJson<'a>>,
}

/// Serializes `params` and checks that it is an array or an object.
fn structured_params<T: Serialize + ?Sized>(params: &T) -> Result<RawJson<'static>, BuildError> {
    let raw = RawJson::from_value(params).map_err(BuildError::Serialize)?;
    match raw.get().as_bytes().first() {
        Some(b'[') | Some(b'{') => Ok(raw),
        _ => Err(BuildError::ParamsNotStructured),
    }
}

/// Checks that already-encoded params are an array or an object.
fn check_raw_params(params: RawJson<'_>) -> Result<RawJson<'_>, BuildError> {
    match params.get().trim_start().as_bytes().first() {
        Some(b'[') | Some(b'{') => Ok(params),
        _ => Err(BuildError::ParamsNotStructured),
    }
}

impl<'a> Request<'a> {
    /// A request with an id and a method, without params.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new("a-1", "ping");
    /// assert!(req.params().is_none());
    /// ```
    pub fn new(id: impl Into<Id<'a>>, method: impl Into<Cow<'a, str>>) -> Request<'a> {
        Request {
            id: id.into(),
            method: method.into(),
            params: None,
        }
    }

    /// Parser entry.
    pub(crate) fn from_parts(id: Id<'a>, method: Cow<'a, str>, params: Option<RawJson<'a>>) -> Request<'a> {
        Request { id, method, params }
    }

    /// Sets the params, serialized with serde_json; they must serialize to an array or an
    /// object.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&serde_json::json!({"a": 1})).unwrap();
    /// assert_eq!(req.raw_params().unwrap().get(), r#"{"a":1}"#);
    /// ```
    pub fn with_params<T: Serialize + ?Sized>(mut self, params: &T) -> Result<Request<'a>, BuildError> {
        self.params = Some(structured_params(params)?);
        Ok(self)
    }

    /// Sets params that are already JSON text; they must be an array or an object.
    ///
    /// ```
    /// let params = rpcwire_wire::RawJson::new("[1]").unwrap();
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_raw_params(params).unwrap();
    /// assert_eq!(req.raw_params().unwrap().get(), "[1]");
    /// ```
    pub fn with_raw_params(mut self, params: RawJson<'a>) -> Result<Request<'a>, BuildError> {
        self.params = Some(check_raw_params(params)?);
        Ok(self)
    }

    /// The id, echoed exactly in the response.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Request::new(5u64, "m").id().as_u64(), Some(5));
    /// ```
    pub fn id(&self) -> &Id<'a> {
        &self.id
    }

    /// The method name (unescaped).
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Request::new(5u64, "m").method(), "m");
    /// ```
    pub fn method(&self) -> &str {
        &self.method
    }

    /// A view of the params, absent when the request has none (or `"params": null`).
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[7]).unwrap();
    /// assert_eq!(req.params().unwrap().decode::<[u8; 1]>().unwrap(), [7]);
    /// ```
    pub fn params(&self) -> Option<Params<'_>> {
        self.params.as_ref().map(|raw| Params::new(raw.get()))
    }

    /// The params as JSON text.
    ///
    /// ```
    /// assert!(rpcwire_wire::Request::new(1u64, "m").raw_params().is_none());
    /// ```
    pub fn raw_params(&self) -> Option<&RawJson<'a>> {
        self.params.as_ref()
    }

    /// Splits the request into its id, method and params.
    ///
    /// ```
    /// let (id, method, params) = rpcwire_wire::Request::new(1u64, "m").into_parts();
    /// assert_eq!((id.as_u64(), method.as_ref(), params), (Some(1), "m", None));
    /// ```
    pub fn into_parts(self) -> (Id<'a>, Cow<'a, str>, Option<RawJson<'a>>) {
        (self.id, self.method, self.params)
    }

    /// Detaches the request from the buffer it was parsed from.
    ///
    /// ```
    /// let req: rpcwire_wire::Request<'static> = rpcwire_wire::Request::new(1u64, "m").into_owned();
    /// assert_eq!(req.method(), "m");
    /// ```
    pub fn into_owned(self) -> Request<'static> {
        Request {
            id: self.id.into_owned(),
            method: Cow::Owned(self.method.into_owned()),
            params: self.params.map(RawJson::into_owned),
        }
    }
}

impl<'a> Notification<'a> {
    /// A notification with a method, without params.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Notification::new("tick").method(), "tick");
    /// ```
    pub fn new(method: impl Into<Cow<'a, str>>) -> Notification<'a> {
        Notification {
            method: method.into(),
            params: None,
        }
    }

    /// Parser entry.
    pub(crate) fn from_parts(method: Cow<'a, str>, params: Option<RawJson<'a>>) -> Notification<'a> {
        Notification { method, params }
    }

    /// Sets the params, serialized with serde_json; they must serialize to an array or an
    /// object.
    ///
    /// ```
    /// assert!(rpcwire_wire::Notification::new("m").with_params("no").is_err());
    /// ```
    pub fn with_params<T: Serialize + ?Sized>(mut self, params: &T) -> Result<Notification<'a>, BuildError> {
        self.params = Some(structured_params(params)?);
        Ok(self)
    }

    /// Sets params that are already JSON text; they must be an array or an object.
    ///
    /// ```
    /// let params = rpcwire_wire::RawJson::new("{}").unwrap();
    /// assert!(rpcwire_wire::Notification::new("m").with_raw_params(params).is_ok());
    /// ```
    pub fn with_raw_params(mut self, params: RawJson<'a>) -> Result<Notification<'a>, BuildError> {
        self.params = Some(check_raw_params(params)?);
        Ok(self)
    }

    /// The method name (unescaped).
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Notification::new("m").method(), "m");
    /// ```
    pub fn method(&self) -> &str {
        &self.method
    }

    /// A view of the params, absent when there are none.
    ///
    /// ```
    /// assert!(rpcwire_wire::Notification::new("m").params().is_none());
    /// ```
    pub fn params(&self) -> Option<Params<'_>> {
        self.params.as_ref().map(|raw| Params::new(raw.get()))
    }

    /// The params as JSON text.
    ///
    /// ```
    /// assert!(rpcwire_wire::Notification::new("m").raw_params().is_none());
    /// ```
    pub fn raw_params(&self) -> Option<&RawJson<'a>> {
        self.params.as_ref()
    }

    /// Splits the notification into its method and params.
    ///
    /// ```
    /// let (method, params) = rpcwire_wire::Notification::new("m").into_parts();
    /// assert_eq!((method.as_ref(), params), ("m", None));
    /// ```
    pub fn into_parts(self) -> (Cow<'a, str>, Option<RawJson<'a>>) {
        (self.method, self.params)
    }

    /// Detaches the notification from the buffer it was parsed from.
    ///
    /// ```
    /// let n: rpcwire_wire::Notification<'static> = rpcwire_wire::Notification::new("m").into_owned();
    /// assert_eq!(n.method(), "m");
    /// ```
    pub fn into_owned(self) -> Notification<'static> {
        Notification {
            method: Cow::Owned(self.method.into_owned()),
            params: self.params.map(RawJson::into_owned),
        }
    }
}
