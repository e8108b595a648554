//! `Response`: the answer to a request, a result or an error, never both.

use serde::Serialize;

use super::{BuildError, ErrorObject, Id, RawJson};

/// What a response carries: a result or an error.
///
/// ```
/// use rpcwire_wire::{Response, ResponsePayload};
/// let resp = Response::success(1u64, &19).unwrap();
/// assert!(matches!(resp.payload(), ResponsePayload::Result(r) if r.get() == "19"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponsePayload<'a> {
    /// The call succeeded; the result as JSON text.
    Result(RawJson<'a>),
    /// The call failed.
    Error(ErrorObject<'a>),
}

/// The answer to a [`Request`](crate::Request): the request's id and exactly one of a result
/// or an error.
///
/// ```
/// use rpcwire_wire::{ErrorObject, Id, Response};
/// let ok = Response::success(1u64, &19).unwrap();
/// assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"jsonrpc":"2.0","id":1,"result":19}"#);
///
/// let err = Response::error(Id::null(), ErrorObject::parse_error());
/// assert_eq!(serde_json::to_string(&err).unwrap(),
///            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response<'a> {
    id: Id<'a>,
    payload: ResponsePayload<'a>,
}

impl<'a> Response<'a> {
    /// A successful response whose result is `result`, serialized with serde_json.
    ///
    /// ```
    /// let r = rpcwire_wire::Response::success("x", &vec!["a"]).unwrap();
    /// assert_eq!(r.result().unwrap().get(), r#"["a"]"#);
    /// ```
    pub fn success<T: Serialize + ?Sized>(
        id: impl Into<Id<'a>>,
        result: &T,
    ) -> Result<Response<'a>, BuildError> {
        let id = id.into();
        if id.is_null() {
            return Err(BuildError::NullIdSuccess);
        }
        let result = RawJson::from_value(result).map_err(BuildError::Serialize)?;
        Ok(Response::success_parts(id, result))
    }

    /// A successful response whose result is already JSON text. Fails with
    /// [`BuildError::NullIdSuccess`] for a `null` id: only error responses may have one.
    ///
    /// ```
    /// let r = rpcwire_wire::Response::success_raw(1u64, rpcwire_wire::RawJson::new("true").unwrap()).unwrap();
    /// assert!(r.is_success());
    /// assert!(rpcwire_wire::Response::success_raw(rpcwire_wire::Id::null(), rpcwire_wire::RawJson::new("1").unwrap()).is_err());
    /// ```
    pub fn success_raw(id: impl Into<Id<'a>>, result: RawJson<'a>) -> Result<Response<'a>, BuildError> {
        let id = id.into();
        if id.is_null() {
            return Err(BuildError::NullIdSuccess);
        }
        Ok(Response::success_parts(id, result))
    }

    /// A successful response from parts already checked (the parser refuses a null id).
    pub(crate) fn success_parts(id: Id<'a>, result: RawJson<'a>) -> Response<'a> {
        Response {
            id,
            payload: ResponsePayload::Result(result),
        }
    }

    /// A failed response.
    ///
    /// ```
    /// let r = rpcwire_wire::Response::error(3u64, rpcwire_wire::ErrorObject::internal_error("boom"));
    /// assert_eq!(r.error_object().unwrap().code().code(), -32603);
    /// ```
    pub fn error(id: impl Into<Id<'a>>, error: ErrorObject<'a>) -> Response<'a> {
        Response {
            id: id.into(),
            payload: ResponsePayload::Error(error),
        }
    }

    /// The id of the request this answers (`null` when it could not be read).
    ///
    /// ```
    /// assert!(rpcwire_wire::Response::error(rpcwire_wire::Id::null(), rpcwire_wire::ErrorObject::parse_error()).id().is_null());
    /// ```
    pub fn id(&self) -> &Id<'a> {
        &self.id
    }

    /// The result or the error.
    ///
    /// ```
    /// let r = rpcwire_wire::Response::success(1u64, &1).unwrap();
    /// assert!(matches!(r.payload(), rpcwire_wire::ResponsePayload::Result(_)));
    /// ```
    pub fn payload(&self) -> &ResponsePayload<'a> {
        &self.payload
    }

    /// `true` when the response carries a result.
    ///
    /// ```
    /// assert!(rpcwire_wire::Response::success(1u64, &1).unwrap().is_success());
    /// ```
    pub fn is_success(&self) -> bool {
        matches!(self.payload, ResponsePayload::Result(_))
    }

    /// The result, when the call succeeded.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Response::success(1u64, &1).unwrap().result().unwrap().get(), "1");
    /// ```
    pub fn result(&self) -> Option<&RawJson<'a>> {
        match &self.payload {
            ResponsePayload::Result(result) => Some(result),
            ResponsePayload::Error(_) => None,
        }
    }

    /// The error, when the call failed.
    ///
    /// ```
    /// assert!(rpcwire_wire::Response::success(1u64, &1).unwrap().error_object().is_none());
    /// ```
    pub fn error_object(&self) -> Option<&ErrorObject<'a>> {
        match &self.payload {
            ResponsePayload::Result(_) => None,
            ResponsePayload::Error(error) => Some(error),
        }
    }

    /// Splits the response into its id and payload.
    ///
    /// ```
    /// let (id, _payload) = rpcwire_wire::Response::success(1u64, &1).unwrap().into_parts();
    /// assert_eq!(id.as_u64(), Some(1));
    /// ```
    pub fn into_parts(self) -> (Id<'a>, ResponsePayload<'a>) {
        (self.id, self.payload)
    }

    /// Detaches the response from the buffer it was parsed from.
    ///
    /// ```
    /// let r: rpcwire_wire::Response<'static> = rpcwire_wire::Response::success(1u64, &1).unwrap().into_owned();
    /// assert!(r.is_success());
    /// ```
    pub fn into_owned(self) -> Response<'static> {
        Response {
            id: self.id.into_owned(),
            payload: match self.payload {
                ResponsePayload::Result(result) => ResponsePayload::Result(result.into_owned()),
                ResponsePayload::Error(error) => ResponsePayload::Error(error.into_owned()),
            },
        }
    }
}
