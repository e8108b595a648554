//! `Message`: any one JSON-RPC 2.0 message.

use super::{Id, Notification, Request, Response};

/// One JSON-RPC 2.0 message: a request, a notification or a response.
///
/// ```
/// use rpcwire_wire::{Message, Parsed};
/// let parsed = rpcwire_wire::parse(br#"{"jsonrpc":"2.0","method":"tick"}"#).unwrap();
/// let Parsed::Single(Message::Notification(n)) = parsed else { panic!() };
/// assert_eq!(n.method(), "tick");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// A call that expects a response.
    Request(Request<'a>),
    /// A call that expects no response.
    Notification(Notification<'a>),
    /// The answer to a request.
    Response(Response<'a>),
}

impl<'a> Message<'a> {
    /// The id of a request or a response; `None` for a notification.
    ///
    /// ```
    /// let m = rpcwire_wire::Message::from(rpcwire_wire::Request::new(9u64, "m"));
    /// assert_eq!(m.id().unwrap().as_u64(), Some(9));
    /// ```
    pub fn id(&self) -> Option<&Id<'a>> {
        match self {
            Message::Request(request) => Some(request.id()),
            Message::Notification(_) => None,
            Message::Response(response) => Some(response.id()),
        }
    }

    /// The method of a request or a notification; `None` for a response.
    ///
    /// ```
    /// let m = rpcwire_wire::Message::from(rpcwire_wire::Notification::new("n"));
    /// assert_eq!(m.method(), Some("n"));
    /// ```
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(request) => Some(request.method()),
            Message::Notification(notification) => Some(notification.method()),
            Message::Response(_) => None,
        }
    }

    /// Detaches the message from the buffer it was parsed from.
    ///
    /// ```
    /// let m: rpcwire_wire::Message<'static> = rpcwire_wire::Message::from(rpcwire_wire::Notification::new("n")).into_owned();
    /// assert!(m.id().is_none());
    /// ```
    pub fn into_owned(self) -> Message<'static> {
        match self {
            Message::Request(request) => Message::Request(request.into_owned()),
            Message::Notification(notification) => Message::Notification(notification.into_owned()),
            Message::Response(response) => Message::Response(response.into_owned()),
        }
    }
}

impl<'a> From<Request<'a>> for Message<'a> {
    fn from(request: Request<'a>) -> Self {
        Message::Request(request)
    }
}

impl<'a> From<Notification<'a>> for Message<'a> {
    fn from(notification: Notification<'a>) -> Self {
        Message::Notification(notification)
    }
}

impl<'a> From<Response<'a>> for Message<'a> {
    fn from(response: Response<'a>) -> Self {
        Message::Response(response)
    }
}
