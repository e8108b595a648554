//! `Credentials`: what the Streamable HTTP client adds to each request for its authorizer
//! (`auth` feature) — the token and DPoP proof each request carries, and what a refusal
//! (`401`, `403 insufficient_scope`) leads to. Without the feature, or without an authorizer,
//! nothing. Why an authorization failed is kept (the last failure) for
//! [`ConnectError::Authorization`](crate::ConnectError), and said to the calls it failed as
//! [`UNAUTHORIZED`](crate::codes::UNAUTHORIZED) errors.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http::{Request, StatusCode};

use crate::message::ErrorObject;

/// How many refusals of one request are answered by authorizing again.
pub(crate) const MAX_REFUSALS: u32 = 3;

/// A client's authorizer, with the URL of the server it authorizes for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Credentials {
    #[cfg(feature = "auth")]
    authorizer: Option<(crate::auth::Authorizer, url::Url)>,
    /// Why the last authorization failed, until it is taken.
    #[cfg(feature = "auth")]
    failure: std::sync::Arc<std::sync::Mutex<Option<crate::auth::AuthError>>>,
}

/// Why no credentials could be given to a request: the authorization's failure, in words
/// that hold no credential.
#[derive(Debug)]
pub(crate) struct Unauthorized(pub String);

impl Unauthorized {
    /// Error answers with [`UNAUTHORIZED`](crate::codes::UNAUTHORIZED) and this reason for
    /// the requests in `sent`; `None` when it held only notifications.
    pub fn answer(&self, sent: &[u8]) -> Option<Bytes> {
        let error = ErrorObject::new(crate::codes::UNAUTHORIZED, self.0.clone());
        crate::transport::http::client::error_answer(sent, &error)
    }

    /// Gives `frames` the [`answer`](Unauthorized::answer) for the requests in `sent`.
    pub fn tell(&self, sent: &[u8], frames: &tokio::sync::mpsc::UnboundedSender<Bytes>) {
        if let Some(answer) = self.answer(sent) {
            let _ = frames.send(answer);
        }
    }
}

impl Credentials {
    /// Credentials from `authorizer` for the server at `url`.
    #[cfg(feature = "auth")]
    pub fn new(
        authorizer: crate::auth::Authorizer,
        url: &http::Uri,
    ) -> Result<Credentials, crate::transport::AddressError> {
        let parsed = url::Url::parse(&url.to_string())
            .map_err(|e| crate::transport::AddressError::new(url.to_string(), format!("not a URL: {e}")))?;
        Ok(Credentials {
            authorizer: Some((authorizer, parsed)),
            failure: Default::default(),
        })
    }

    /// Why the last authorization failed, if one did since the last time this was asked.
    #[cfg(feature = "auth")]
    pub fn take_failure(&self) -> Option<crate::auth::AuthError> {
        crate::sync::lock_unpoisoned(&self.failure).take()
    }

    /// `failure`, kept for [`take_failure`](Credentials::take_failure) and said in words.
    #[cfg(feature = "auth")]
    fn failed(&self, failure: crate::auth::AuthError) -> Unauthorized {
        let said = Unauthorized(failure.to_string());
        *crate::sync::lock_unpoisoned(&self.failure) = Some(failure);
        said
    }

    /// Whether there is an authorizer (a refused request may then be sent again).
    pub fn is_active(&self) -> bool {
        #[cfg(feature = "auth")]
        return self.authorizer.is_some();
        #[cfg(not(feature = "auth"))]
        false
    }

    /// Adds what `request` carries; the `Authorization` value sent, if any (`None` without an
    /// authorizer). An error is why none could be got (a refresh refused, a key that cannot
    /// sign).
    pub async fn add<B>(&self, request: &mut Request<B>) -> Result<Option<HeaderValue>, Unauthorized> {
        #[cfg(feature = "auth")]
        if let Some((authorizer, url)) = &self.authorizer {
            let headers = authorizer
                .credentials(request.method().as_str(), url)
                .await
                .map_err(|e| self.failed(e))?;
            for (name, value) in headers {
                request.headers_mut().insert(name, value);
            }
            return Ok(request.headers().get(http::header::AUTHORIZATION).cloned());
        }
        let _ = request;
        Ok(None)
    }

    /// After a refusal with `status` and `headers` of a request that carried `sent`: `None`
    /// when that is not for the authorizer (there is none, or the status is neither `401`
    /// nor a `403` asking for a scope), else whether the request is worth sending again
    /// (`Err`: why not).
    pub async fn refused(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        sent: Option<&HeaderValue>,
    ) -> Option<Result<(), Unauthorized>> {
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return None;
        }
        #[cfg(feature = "auth")]
        if let Some((authorizer, url)) = &self.authorizer {
            if !crate::auth::Authorizer::concerns(status, headers) {
                return None;
            }
            return Some(
                authorizer
                    .refused(url, status, headers, sent)
                    .await
                    .map_err(|e| self.failed(e)),
            );
        }
        let _ = (headers, sent);
        None
    }

    /// A request got through (its answer's `headers`).
    pub fn accepted(&self, headers: &HeaderMap) {
        #[cfg(feature = "auth")]
        if let Some((authorizer, _)) = &self.authorizer {
            authorizer.accepted(headers);
        }
        let _ = headers;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authorization_that_failed_answers_each_request_unauthorized() {
        let why = Unauthorized("authorization refused: invalid_grant".into());
        let single = why
            .answer(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#)
            .unwrap();
        let single: serde_json::Value = serde_json::from_slice(&single).unwrap();
        assert_eq!(single["id"], 7);
        assert_eq!(single["error"]["code"], crate::codes::UNAUTHORIZED);
        assert_eq!(single["error"]["message"], "authorization refused: invalid_grant");
        let batch = why
            .answer(br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"b"}]"#)
            .unwrap();
        let batch: serde_json::Value = serde_json::from_slice(&batch).unwrap();
        let ids: Vec<_> = batch
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].clone())
            .collect();
        assert_eq!(ids, [serde_json::json!(1), serde_json::json!("b")]);
        assert!(why
            .answer(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .is_none());
    }

    #[tokio::test]
    async fn without_an_authorizer_nothing_is_added_and_no_refusal_is_taken() {
        let credentials = Credentials::default();
        assert!(!credentials.is_active());
        let mut request = Request::new(());
        assert!(credentials.add(&mut request).await.unwrap().is_none());
        assert!(request.headers().is_empty());
        let headers = HeaderMap::new();
        assert!(credentials
            .refused(StatusCode::UNAUTHORIZED, &headers, None)
            .await
            .is_none());
        assert!(credentials
            .refused(StatusCode::BAD_GATEWAY, &headers, None)
            .await
            .is_none());
        #[cfg(feature = "auth")]
        assert!(credentials.take_failure().is_none());
    }
}
