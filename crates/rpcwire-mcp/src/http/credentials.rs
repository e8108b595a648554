//! `Credentials`: what the Streamable HTTP client adds to each request for its authorizer
//! (`auth` feature) — the token and DPoP proof each request carries, and what a refusal
//! (`401`, `403 insufficient_scope`) leads to. Without the feature, or without an authorizer,
//! nothing.

use http::header::{HeaderMap, HeaderValue};
use http::{Request, StatusCode};

/// How many refusals of one request are answered by authorizing again.
pub(crate) const MAX_REFUSALS: u32 = 3;

/// A client's authorizer, with the URL of the server it authorizes for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Credentials {
    #[cfg(feature = "auth")]
    authorizer: Option<(crate::auth::Authorizer, url::Url)>,
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
        })
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
    pub async fn add<B>(&self, request: &mut Request<B>) -> Result<Option<HeaderValue>, String> {
        #[cfg(feature = "auth")]
        if let Some((authorizer, url)) = &self.authorizer {
            let headers = authorizer
                .credentials(request.method().as_str(), url)
                .await
                .map_err(|e| e.to_string())?;
            for (name, value) in headers {
                request.headers_mut().insert(name, value);
            }
            return Ok(request.headers().get(http::header::AUTHORIZATION).cloned());
        }
        let _ = request;
        Ok(None)
    }

    /// After a refusal with `status` and `headers` of a request that carried `sent`: `None`
    /// when that is not for the authorizer (there is none, or the status is not `401` or
    /// `403`), else whether the request is worth sending again (`Err`: why not).
    pub async fn refused(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        sent: Option<&HeaderValue>,
    ) -> Option<Result<(), String>> {
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return None;
        }
        #[cfg(feature = "auth")]
        if let Some((authorizer, url)) = &self.authorizer {
            return Some(
                authorizer
                    .refused(url, status, headers, sent)
                    .await
                    .map_err(|e| e.to_string()),
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
