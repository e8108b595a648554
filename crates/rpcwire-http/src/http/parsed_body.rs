//! `ParsedBody`: a request body a layer in front of an [`HttpService`](super::HttpService)
//! parsed already, handed on in the request's extensions so that the body is parsed once.

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::parse::{Limits, ParsedFrame};
use crate::sync::lock_unpoisoned;

/// A request's body as a layer in front parsed it (the API-key and rate-limit layer of the
/// proxy crate reads each request's methods): put in the `http::Request`'s extensions, it
/// lets [`HttpService`](super::HttpService) answer the body without parsing it again — when
/// the body it reads is the same bytes and the parse was made with the same limits as its
/// router's (anything else is parsed as usual). Taken once; clones share it.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire_http::http::{HttpService, ParsedBody};
/// use tower_service::Service;
///
/// let mut router = rpcwire_core::dispatch::Router::new();
/// router.method("add", |(a, b): (i64, i64)| Ok(a + b));
/// let body = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#);
/// let parsed = ParsedBody::parse(router.parser(), body.clone()).unwrap();
/// assert_eq!(parsed.methods(), ["add"]);
/// let mut request = http::Request::post("/")
///     .header("content-type", "application/json")
///     .body(http_body_util::Full::new(body))
///     .unwrap();
/// request.extensions_mut().insert(parsed);
/// let mut service = HttpService::new(router);
/// assert_eq!(service.call(request).await.unwrap().status(), 200);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct ParsedBody {
    frame: Arc<Mutex<Option<ParsedFrame>>>,
    limits: Limits,
}

impl ParsedBody {
    /// Parses `bytes` with `parser` (give it the router's, so that the service behind
    /// takes the parse).
    ///
    /// ```
    /// let parser = rpcwire_core::Parser::default();
    /// assert!(rpcwire_http::http::ParsedBody::parse(&parser, bytes::Bytes::from_static(b"{")).is_err());
    /// ```
    pub fn parse(
        parser: &crate::parse::Parser,
        bytes: Bytes,
    ) -> Result<ParsedBody, crate::parse::ParseError> {
        Ok(ParsedBody::new(parser.parse_frame(bytes)?, *parser.limits()))
    }

    /// `frame`, parsed with `limits`.
    ///
    /// ```
    /// use rpcwire_core::{Limits, ParsedFrame};
    /// let frame = ParsedFrame::parse(bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"a"}"#)).unwrap();
    /// let parsed = rpcwire_http::http::ParsedBody::new(frame, Limits::default());
    /// assert_eq!(parsed.methods(), ["a"]);
    /// ```
    pub fn new(frame: ParsedFrame, limits: Limits) -> ParsedBody {
        ParsedBody {
            frame: Arc::new(Mutex::new(Some(frame))),
            limits,
        }
    }

    /// Calls `read` with the parsed frame, while it has not been taken.
    ///
    /// ```
    /// let parser = rpcwire_core::Parser::default();
    /// let parsed = rpcwire_http::http::ParsedBody::parse(&parser, bytes::Bytes::from_static(b"[1]")).unwrap();
    /// assert_eq!(parsed.with(|frame| frame.view().batch().is_some()), Some(true));
    /// ```
    pub fn with<T>(&self, read: impl FnOnce(&ParsedFrame) -> T) -> Option<T> {
        lock_unpoisoned(&self.frame).as_ref().map(read)
    }

    /// The methods of its requests and notifications, in order (a batch's invalid elements
    /// left out); empty once taken.
    ///
    /// ```
    /// let parser = rpcwire_core::Parser::default();
    /// let body = bytes::Bytes::from_static(br#"[{"jsonrpc":"2.0","method":"a"},1,{"jsonrpc":"2.0","id":2,"method":"b"}]"#);
    /// assert_eq!(rpcwire_http::http::ParsedBody::parse(&parser, body).unwrap().methods(), ["a", "b"]);
    /// ```
    pub fn methods(&self) -> Vec<String> {
        self.with(|frame| {
            let method = |message: &crate::message::Message<'_>| message.method().map(str::to_owned);
            match frame.view() {
                crate::parse::Parsed::Single(message) => method(&message).into_iter().collect(),
                crate::parse::Parsed::Batch(batch) => batch
                    .iter()
                    .filter_map(|element| element.ok().and_then(|message| method(&message)))
                    .collect(),
            }
        })
        .unwrap_or_default()
    }

    /// The parsed frame, taken, when `body` is its bytes and `limits` its parse's: what the
    /// service behind answers.
    pub(crate) fn take_for(&self, body: &Bytes, limits: &Limits) -> Option<ParsedFrame> {
        if self.limits != *limits {
            return None;
        }
        let mut frame = lock_unpoisoned(&self.frame);
        let parsed = frame.as_ref()?.bytes();
        // The same bytes (a clone of the body parsed) are not compared byte by byte.
        let shared = parsed.as_ptr() == body.as_ptr() && parsed.len() == body.len();
        if !shared && parsed[..] != body[..] {
            return None;
        }
        frame.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Router;
    use crate::http::HttpService;
    use http_body_util::{BodyExt, Full};
    use tower_service::Service;

    const ADD: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#;

    async fn answer(router: Router, body: &'static [u8], parsed: &ParsedBody) -> Bytes {
        let mut request = http::Request::post("/")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(body)))
            .unwrap();
        request.extensions_mut().insert(parsed.clone());
        let response = HttpService::new(router).call(request).await.unwrap();
        response.into_body().collect().await.unwrap().to_bytes()
    }

    fn router(limits: Limits) -> Router {
        let mut router = Router::with_limits(limits);
        router.method("add", |(a, b): (i64, i64)| Ok(a + b));
        router
    }

    #[tokio::test]
    async fn the_service_takes_the_parse_of_its_own_body_made_with_its_limits_only() {
        let limits = Limits::default();
        let parsed = ParsedBody::parse(&crate::parse::Parser::new(limits), Bytes::from_static(ADD)).unwrap();
        let expected = br#"{"jsonrpc":"2.0","id":1,"result":3}"#;
        assert_eq!(answer(router(limits), ADD, &parsed).await, &expected[..]);
        assert!(parsed.with(|_| ()).is_none(), "taken by the service");
        assert!(parsed.methods().is_empty());

        // Parsed with other limits: parsed again behind, with the router's.
        let parsed = ParsedBody::parse(&crate::parse::Parser::new(limits), Bytes::from_static(ADD)).unwrap();
        let stricter = limits.with_max_size(16);
        let refused = answer(router(stricter), ADD, &parsed).await;
        assert!(
            refused.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#),
            "{refused:?}"
        );
        assert!(parsed.with(|_| ()).is_some(), "not taken");

        // A body other than the one parsed (a layer between changed it): its own answer.
        let other = br#"{"jsonrpc":"2.0","id":2,"method":"add","params":[2,2]}"#;
        let answered = answer(router(limits), other, &parsed).await;
        assert_eq!(answered, &br#"{"jsonrpc":"2.0","id":2,"result":4}"#[..]);
        assert!(parsed.with(|_| ()).is_some(), "not taken");
    }
}
