//! The step of an authorization that is a person's: the authorization server's page opened,
//! the user signed in and asked, the browser sent to the redirect URI with a code. Behind the
//! [`AuthorizationStep`] trait: [`Headless`] follows the redirects itself (tests, the
//! conformance suite, a server that authorizes without asking), [`Browser`] prints the URL
//! for a person and waits on the loopback redirect URI.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use http::header::{HeaderValue, ACCEPT, COOKIE, SET_COOKIE};
use http::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use url::Url;

use super::error::AuthError;
use super::fetch::Fetcher;

/// What a step gives back: the URL the browser was sent to (the redirect URI with `code`,
/// `state` and perhaps `iss`).
pub type StepFuture<'a> = Pin<Box<dyn Future<Output = Result<Url, AuthError>> + Send + 'a>>;

/// Takes a user through an authorization request.
///
/// ```
/// use rpcwire::mcp::auth::{AuthorizationStep, AuthError, StepFuture};
/// use url::Url;
/// /// Authorizes nothing: a client that must never send a person anywhere.
/// #[derive(Debug)]
/// struct Never;
/// impl AuthorizationStep for Never {
///     fn authorize<'a>(&'a self, _: &'a Url, _: &'a Url) -> StepFuture<'a> {
///         Box::pin(async { Err(AuthError::Unsupported("no person here".into())) })
///     }
/// }
/// # let _ = Never;
/// ```
pub trait AuthorizationStep: Send + Sync + std::fmt::Debug {
    /// Opens `authorization_url` and ends when the authorization server has sent the user
    /// agent to `redirect_uri`: the whole URL it was sent to.
    fn authorize<'a>(&'a self, authorization_url: &'a Url, redirect_uri: &'a Url) -> StepFuture<'a>;
}

/// How many redirects a headless authorization follows at most.
const MAX_REDIRECTS: usize = 20;

/// Follows the authorization server's redirects as a browser would — keeping its cookies —
/// until one leads to the redirect URI, which is not fetched: its code is read from the URL.
/// An authorization server that shows a page (a login form) instead is an error: nobody is
/// there to fill it in.
///
/// ```
/// let step = rpcwire::mcp::auth::Headless::default();
/// # let _ = step;
/// ```
#[derive(Clone, Debug, Default)]
pub struct Headless {
    fetcher: Fetcher,
}

impl Headless {
    /// Speaks TLS through `tls` to an `https://` authorization server.
    ///
    /// ```
    /// let tls = rpcwire::transport::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let step = rpcwire::mcp::auth::Headless::default().with_tls(tls);
    /// # let _ = step;
    /// ```
    pub fn with_tls(mut self, tls: crate::transport::tls::ClientTls) -> Headless {
        self.fetcher = self.fetcher.with_tls(Some(tls));
        self
    }
}

/// Whether `url` is the redirect URI (its scheme, authority and path).
fn is_redirect_uri(url: &Url, redirect_uri: &Url) -> bool {
    url.scheme() == redirect_uri.scheme()
        && url.host_str() == redirect_uri.host_str()
        && url.port_or_known_default() == redirect_uri.port_or_known_default()
        && url.path() == redirect_uri.path()
}

impl AuthorizationStep for Headless {
    fn authorize<'a>(&'a self, authorization_url: &'a Url, redirect_uri: &'a Url) -> StepFuture<'a> {
        Box::pin(async move {
            // Cookies by host: name → value.
            let mut jar: HashMap<String, Vec<(String, String)>> = HashMap::new();
            let mut at = authorization_url.clone();
            for _ in 0..MAX_REDIRECTS {
                if is_redirect_uri(&at, redirect_uri) {
                    return Ok(at);
                }
                let host = at.host_str().unwrap_or_default().to_owned();
                let mut headers = vec![(ACCEPT, HeaderValue::from_static("text/html"))];
                if let Some(cookies) = jar.get(&host).filter(|c| !c.is_empty()) {
                    let line: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    if let Ok(value) = HeaderValue::from_str(&line.join("; ")) {
                        headers.push((COOKIE, value));
                    }
                }
                let fetched = self
                    .fetcher
                    .send(Method::GET, &at, &headers, Default::default())
                    .await?;
                let kept = jar.entry(host).or_default();
                for set in fetched
                    .headers
                    .get_all(SET_COOKIE)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                {
                    let pair = set.split(';').next().unwrap_or_default();
                    if let Some((name, value)) = pair.split_once('=') {
                        let name = name.trim().to_owned();
                        kept.retain(|(k, _)| *k != name);
                        kept.push((name, value.trim().to_owned()));
                    }
                }
                if !fetched.status.is_redirection() {
                    return Err(AuthError::Unsupported(format!(
                        "the authorization server answered {} instead of a redirect: it wants a person \
                         (use a step that opens a browser)",
                        fetched.status
                    )));
                }
                at = fetched.location(&at).ok_or_else(|| {
                    AuthError::fetch(&at, "a redirect without a Location the client can read")
                })?;
            }
            Err(AuthError::Unsupported(format!(
                "more than {MAX_REDIRECTS} redirects during authorization"
            )))
        })
    }
}

/// How long [`Browser`] waits for the person by default.
pub const DEFAULT_BROWSER_WAIT: Duration = Duration::from_secs(300);

/// For a person: prints the authorization URL (on standard error) to open in a browser, and
/// waits on the redirect URI — an `http://127.0.0.1:PORT/…` or `http://localhost:PORT/…`
/// address this side listens on — for the browser to come back with the code, at most
/// [`DEFAULT_BROWSER_WAIT`].
///
/// ```
/// let step = rpcwire::mcp::auth::Browser::default();
/// # let _ = step;
/// ```
#[derive(Clone, Debug)]
pub struct Browser {
    wait: Duration,
}

impl Default for Browser {
    fn default() -> Self {
        Browser {
            wait: DEFAULT_BROWSER_WAIT,
        }
    }
}

impl Browser {
    /// Waits at most `wait` for the person.
    ///
    /// ```
    /// let step = rpcwire::mcp::auth::Browser::default().with_wait(std::time::Duration::from_secs(60));
    /// # let _ = step;
    /// ```
    pub fn with_wait(mut self, wait: Duration) -> Browser {
        self.wait = wait;
        self
    }
}

/// The largest request head read on the loopback redirect URI.
const MAX_HEAD: usize = 16 << 10;

impl AuthorizationStep for Browser {
    fn authorize<'a>(&'a self, authorization_url: &'a Url, redirect_uri: &'a Url) -> StepFuture<'a> {
        Box::pin(async move {
            let loopback = matches!(redirect_uri.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
            if redirect_uri.scheme() != "http" || !loopback {
                return Err(AuthError::Unsupported(format!(
                    "the redirect URI {redirect_uri} is not a loopback http:// address to wait on"
                )));
            }
            let port = redirect_uri.port_or_known_default().unwrap_or(80);
            let host = redirect_uri
                .host_str()
                .unwrap_or("127.0.0.1")
                .trim_matches(['[', ']']);
            let listener = tokio::net::TcpListener::bind((host, port))
                .await
                .map_err(|e| AuthError::Unsupported(format!("cannot listen on {redirect_uri}: {e}")))?;
            eprintln!("Open this address in a browser to authorize:\n\n  {authorization_url}\n");
            let wait = async {
                loop {
                    let Ok((mut stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let line = String::from_utf8_lossy(&head);
                    let target = line
                        .lines()
                        .next()
                        .and_then(|l| l.split(' ').nth(1))
                        .unwrap_or("/");
                    let Ok(back) = redirect_uri.join(target) else {
                        continue;
                    };
                    if !is_redirect_uri(&back, redirect_uri) {
                        let _ = stream
                            .write_all(answer(StatusCode::NOT_FOUND, "Not here.").as_bytes())
                            .await;
                        continue;
                    }
                    let text = "Authorized: you may close this window.";
                    let _ = stream.write_all(answer(StatusCode::OK, text).as_bytes()).await;
                    return back;
                }
            };
            tokio::time::timeout(self.wait, wait)
                .await
                .map_err(|_| AuthError::Unsupported(format!("nobody authorized within {:?}", self.wait)))
        })
    }
}

/// A small HTTP/1.1 answer with a text body, closing the connection.
fn answer(status: StatusCode, text: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A browser's GET of `target` on `port`: the answer's status line.
    async fn visit(port: u16, target: &str) -> String {
        for _ in 0..200 {
            if let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
                let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer).await;
                return answer.lines().next().unwrap_or_default().to_owned();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the loopback redirect URI never listened");
    }

    #[tokio::test]
    async fn the_browser_step_waits_on_the_loopback_redirect_uri() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let redirect: Url = format!("http://127.0.0.1:{port}/callback").parse().unwrap();
        let authorization: Url = "https://as.example/authorize?client_id=x".parse().unwrap();
        let step = Browser::default().with_wait(Duration::from_secs(10));
        let (back, (elsewhere, callback)) = tokio::join!(step.authorize(&authorization, &redirect), async {
            let elsewhere = visit(port, "/favicon.ico").await;
            (elsewhere, visit(port, "/callback?code=c1&state=s1").await)
        });
        assert!(elsewhere.contains("404"), "{elsewhere}");
        assert!(callback.contains("200"), "{callback}");
        let back = back.unwrap();
        assert_eq!(back.query(), Some("code=c1&state=s1"));
    }

    #[tokio::test]
    async fn the_browser_step_refuses_what_it_cannot_wait_on_and_gives_up_in_time() {
        let authorization: Url = "https://as.example/authorize".parse().unwrap();
        let remote: Url = "https://host.example/callback".parse().unwrap();
        let refused = Browser::default()
            .authorize(&authorization, &remote)
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("not a loopback"), "{refused}");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let redirect: Url = format!("http://127.0.0.1:{port}/cb").parse().unwrap();
        let waited = Browser::default()
            .with_wait(Duration::from_millis(50))
            .authorize(&authorization, &redirect)
            .await
            .unwrap_err();
        assert!(waited.to_string().contains("nobody authorized"), "{waited}");
    }

    #[tokio::test]
    async fn headless_refuses_a_page_and_an_endless_redirect() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut head = [0u8; 2048];
                let n = stream.read(&mut head).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&head[..n]).into_owned();
                let answer = if text.starts_with("GET /page") {
                    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nlogin".to_owned()
                } else {
                    "HTTP/1.1 302 Found\r\nlocation: /loop\r\nset-cookie: s=1; path=/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_owned()
                };
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        let redirect: Url = "http://127.0.0.1:1/cb".parse().unwrap();
        let page: Url = format!("http://127.0.0.1:{port}/page").parse().unwrap();
        let refused = Headless::default().authorize(&page, &redirect).await.unwrap_err();
        assert!(refused.to_string().contains("wants a person"), "{refused}");
        let endless: Url = format!("http://127.0.0.1:{port}/loop").parse().unwrap();
        let refused = Headless::default()
            .authorize(&endless, &redirect)
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("redirects"), "{refused}");
    }
}
