//! The DNS-rebinding check: a request's `Host`, and its `Origin` when it has one, must name
//! one of the hosts the server answers for (any port).

use http::header::{HOST, ORIGIN};
use http::HeaderMap;

/// The hosts a server bound to a loopback address answers for.
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Whether `headers` name an allowed host (`allowed`: host names, lowercase, IPv6 in
/// brackets). A request without `Host` (HTTP/2 puts it in the URI) is judged by `authority`.
pub(crate) fn allowed(headers: &HeaderMap, authority: Option<&str>, allowed: &[String]) -> bool {
    let host = match headers.get(HOST).map(|value| value.to_str()) {
        Some(Ok(host)) => host,
        Some(Err(_)) => return false,
        None => match authority {
            Some(authority) => authority,
            None => return false,
        },
    };
    if !allowed_host(host, allowed) {
        return false;
    }
    match headers.get(ORIGIN).map(|value| value.to_str()) {
        None => true,
        Some(Ok(origin)) => match origin.split_once("://") {
            Some(("http" | "https", rest)) => allowed_host(rest.trim_end_matches('/'), allowed),
            _ => false,
        },
        Some(Err(_)) => false,
    }
}

/// Whether `authority` (`host` or `host:port`) names an allowed host.
fn allowed_host(authority: &str, allowed: &[String]) -> bool {
    let host = if authority.starts_with('[') {
        match authority.find(']') {
            Some(end) => {
                let rest = &authority[end + 1..];
                if !(rest.is_empty() || is_port(rest)) {
                    return false;
                }
                &authority[..=end]
            }
            None => return false,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if is_port_number(port) => host,
            Some(_) => return false,
            None => authority,
        }
    };
    allowed.iter().any(|name| name.eq_ignore_ascii_case(host))
}

fn is_port(text: &str) -> bool {
    text.strip_prefix(':').is_some_and(is_port_number)
}

fn is_port_number(digits: &str) -> bool {
    !digits.is_empty() && digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(host: Option<&str>, origin: Option<&str>) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(ORIGIN, origin.parse().unwrap());
        }
        let loopback: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        allowed(&headers, None, &loopback)
    }

    #[test]
    fn loopback_names_pass_and_others_do_not() {
        assert!(check(Some("127.0.0.1:8080"), None));
        assert!(check(Some("localhost"), Some("http://localhost:3000")));
        assert!(check(Some("[::1]:9"), Some("https://[::1]")));
        assert!(check(Some("LOCALHOST:1"), None));
        assert!(!check(Some("evil.example.com"), Some("http://evil.example.com")));
        assert!(!check(Some("127.0.0.1:8080"), Some("http://evil.example.com")));
        assert!(!check(Some("127.0.0.1.evil.com"), None));
        assert!(!check(Some("127.0.0.1:80x"), None));
        assert!(!check(Some("[::1"), None));
        assert!(!check(Some("[::1]x"), None));
        assert!(!check(Some("localhost"), Some("file://localhost")));
        assert!(!check(None, None), "no host at all");
    }
}
