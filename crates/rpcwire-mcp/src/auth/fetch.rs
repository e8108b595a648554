//! `Fetcher`: the few HTTP exchanges of authorization — metadata documents read with GET,
//! forms and JSON posted to an authorization server's endpoints — each on a connection of
//! its own (there are a handful per authorization), bounded in time and in body size, with
//! redirects not followed (the caller decides what a `Location` means).

use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use http::{Method, Request, StatusCode};
use http_body_util::Full;
use url::Url;

use super::error::AuthError;
use super::metadata::{server_metadata_urls, ServerMetadata};
use crate::transport::http::body::ReadError;
use crate::transport::http::connections::Connections;
use crate::transport::tls::ClientTls;
use rpcwire_http::endpoint::Endpoint;

/// The largest body read from an authorization server or a metadata document.
pub(crate) const MAX_BODY: usize = 1 << 20;

/// How long one exchange may take, connecting included.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// What came back (no `Debug`: a token response's body is a credential).
pub(crate) struct Fetched {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Fetched {
    /// The body as JSON of type `T` when the status is a success.
    pub fn json<T: serde::de::DeserializeOwned>(&self, url: &Url) -> Result<T, AuthError> {
        if !self.status.is_success() {
            return Err(AuthError::fetch(url, format_args!("HTTP status {}", self.status)));
        }
        serde_json::from_slice(&self.body)
            .map_err(|e| AuthError::fetch(url, format_args!("not the JSON expected: {e}")))
    }

    /// The `error` (and `error_description`) of an OAuth error body, for error texts.
    pub fn oauth_error(&self) -> String {
        let body: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_default();
        let code = body
            .get("error")
            .and_then(|v| v.as_str())
            .unwrap_or("no error code");
        match body.get("error_description").and_then(|v| v.as_str()) {
            Some(description) => format!("HTTP status {} {code}: {description}", self.status),
            None => format!("HTTP status {} {code}", self.status),
        }
    }

    /// The `Location` header, resolved against `base`.
    pub fn location(&self, base: &Url) -> Option<Url> {
        let location = self.headers.get(http::header::LOCATION)?.to_str().ok()?;
        base.join(location).ok()
    }
}

/// `Authorization: Basic` with a client's id and secret, each form-encoded first (RFC 6749
/// §2.3.1), marked sensitive (never shown by `Debug`); `None` when they cannot be sent.
pub(crate) fn basic_credentials(id: &str, secret: &str) -> Option<HeaderValue> {
    use base64::Engine;
    let encoded = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encoded(id), encoded(secret));
    let mut value = HeaderValue::from_str(&format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    ))
    .ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// The metadata of the authorization server `issuer`, from the first of its well-known URLs
/// that has some ([`server_metadata_urls`]), its `issuer` exactly `issuer` (RFC 8414 §3.3)
/// unless `any_issuer`; `Ok(None)` when none has any, with the URLs tried in `tried`.
pub(crate) async fn server_metadata(
    fetcher: &Fetcher,
    issuer: &str,
    any_issuer: bool,
    tried: &mut Vec<String>,
) -> Result<Option<ServerMetadata>, AuthError> {
    let issuer_url =
        Url::parse(issuer).map_err(|e| AuthError::Discovery(format!("issuer {issuer:?}: {e}")))?;
    for candidate in server_metadata_urls(&issuer_url) {
        let fetched = fetcher.get(&candidate, &[]).await?;
        if !fetched.status.is_success() {
            tried.push(format!("{candidate} ({})", fetched.status));
            continue;
        }
        let metadata: ServerMetadata = fetched.json(&candidate)?;
        if metadata.issuer != issuer && !any_issuer {
            return Err(AuthError::Mismatch(format!(
                "the metadata at {candidate} is of issuer {:?}, not {issuer:?}",
                metadata.issuer
            )));
        }
        return Ok(Some(metadata));
    }
    Ok(None)
}

/// The HTTP client of authorization.
#[derive(Clone, Debug)]
pub(crate) struct Fetcher {
    tls: Option<ClientTls>,
    timeout: Duration,
}

impl Default for Fetcher {
    fn default() -> Self {
        Fetcher {
            tls: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl Fetcher {
    pub fn with_tls(mut self, tls: Option<ClientTls>) -> Fetcher {
        self.tls = tls;
        self
    }

    /// GET `url`, asking for JSON.
    pub async fn get(&self, url: &Url, headers: &[(HeaderName, HeaderValue)]) -> Result<Fetched, AuthError> {
        let mut all = vec![(ACCEPT, HeaderValue::from_static("application/json"))];
        all.extend_from_slice(headers);
        self.send(Method::GET, url, &all, Bytes::new()).await
    }

    /// POST `pairs` to `url` as `application/x-www-form-urlencoded`.
    pub async fn post_form(
        &self,
        url: &Url,
        headers: &[(HeaderName, HeaderValue)],
        pairs: &[(&str, &str)],
    ) -> Result<Fetched, AuthError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        let mut all = vec![
            (ACCEPT, HeaderValue::from_static("application/json")),
            (
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            ),
        ];
        all.extend_from_slice(headers);
        self.send(Method::POST, url, &all, Bytes::from(body)).await
    }

    /// POST `body` to `url` as JSON.
    pub async fn post_json(&self, url: &Url, body: &serde_json::Value) -> Result<Fetched, AuthError> {
        let all = [
            (ACCEPT, HeaderValue::from_static("application/json")),
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
        ];
        let body = serde_json::to_vec(body).map_err(|e| AuthError::fetch(url, e))?;
        self.send(Method::POST, url, &all, Bytes::from(body)).await
    }

    /// One exchange: `method` to `url` with `headers` and `body`, the answer read whole.
    pub async fn send(
        &self,
        method: Method,
        url: &Url,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
    ) -> Result<Fetched, AuthError> {
        let uri: http::Uri = url.as_str().parse().map_err(|e| AuthError::fetch(url, e))?;
        let endpoint = Endpoint::http(&uri).map_err(|e| AuthError::fetch(url, e))?;
        let connections = Connections::new(endpoint).with_tls(self.tls.clone());
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        for (name, value) in headers {
            request.headers_mut().append(name.clone(), value.clone());
        }
        let exchange = async {
            let (response, _lease) = connections
                .send(request)
                .await
                .map_err(|failure| AuthError::fetch(url, failure.reason))?;
            let (parts, mut body) = response.into_parts();
            let body = crate::transport::http::body::read_limited(std::pin::Pin::new(&mut body), MAX_BODY)
                .await
                .map_err(|e| match e {
                    ReadError::TooLarge => {
                        AuthError::fetch(url, format_args!("a body over {MAX_BODY} bytes"))
                    }
                    ReadError::Broken(why) => AuthError::fetch(url, why),
                })?;
            Ok(Fetched {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| AuthError::fetch(url, format_args!("no answer in {:?}", self.timeout)))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server answering every request with `answer`: its URL.
    async fn answering(answer: String) -> Url {
        let address = crate::auth::loopback::serve(move |_| answer.clone()).await;
        format!("http://{address}/x").parse().unwrap()
    }

    #[tokio::test]
    async fn answers_are_read_within_their_bounds() {
        let fetcher = Fetcher::default();
        let big = "x".repeat(MAX_BODY + 1);
        let url = answering(format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{big}",
            big.len()
        ))
        .await;
        let refused = fetcher.get(&url, &[]).await.err().expect("too large");
        assert!(refused.to_string().contains("bytes"), "{refused}");
        let body = r#"{"error":"invalid_request","error_description":"no"}"#;
        let url = answering(format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nlocation: /elsewhere\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ))
        .await;
        let fetched = fetcher
            .post_json(&url, &serde_json::json!({"a": 1}))
            .await
            .unwrap();
        assert_eq!(
            fetched.oauth_error(),
            "HTTP status 400 Bad Request invalid_request: no"
        );
        assert!(fetched.json::<serde_json::Value>(&url).is_err(), "not a success");
        assert_eq!(fetched.location(&url).unwrap().path(), "/elsewhere");
        let unreachable: Url = "http://127.0.0.1:9/".parse().unwrap();
        assert!(fetcher.get(&unreachable, &[]).await.is_err());
        let not_http: Url = "ftp://example/".parse().unwrap();
        assert!(fetcher.get(&not_http, &[]).await.is_err());
    }
}
