//! `Challenge`: what a `WWW-Authenticate` header of a refusal (`401`, `403`) asks for — the
//! scheme (`Bearer`, `DPoP`) and its parameters (RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1).

use http::header::{HeaderMap, WWW_AUTHENTICATE};

/// One challenge of a `WWW-Authenticate` header.
///
/// ```
/// use rpcwire::mcp::auth::Challenge;
/// let header = r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#;
/// let challenge = &Challenge::parse(header)[0];
/// assert_eq!(challenge.scheme, "Bearer");
/// assert_eq!(challenge.param("error"), Some("insufficient_scope"));
/// assert_eq!(challenge.param("scope"), Some("files:read files:write"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The scheme, as written (compared without case).
    pub scheme: String,
    /// The parameters, names in lower case, values unquoted.
    pub params: Vec<(String, String)>,
}

/// How many challenges, and parameters in one, are read at most (a header is bounded by the
/// HTTP layer; this bounds the work on it).
const MAX_ITEMS: usize = 64;

impl Challenge {
    /// The value of parameter `name` (lower case).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether this is a challenge of `scheme` (without case).
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The challenges of one header value (RFC 9110 §11.6.1: `scheme param=value, …,
    /// scheme2 …`); what cannot be read ends the list, keeping what came before.
    pub fn parse(header: &str) -> Vec<Challenge> {
        let mut challenges: Vec<Challenge> = Vec::new();
        let mut rest = header;
        while challenges.len() < MAX_ITEMS {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            let token_end = rest.find(|c: char| !is_token_char(c)).unwrap_or(rest.len());
            if token_end == 0 {
                break;
            }
            let token = &rest[..token_end];
            let after = rest[token_end..].trim_start_matches([' ', '\t']);
            if let Some(value_text) = after.strip_prefix('=') {
                // A parameter of the challenge before it (none: the header is not one).
                let Some(current) = challenges.last_mut() else {
                    break;
                };
                let Some((value, after_value)) = read_value(value_text.trim_start_matches([' ', '\t']))
                else {
                    break;
                };
                if current.params.len() < MAX_ITEMS {
                    current.params.push((token.to_ascii_lowercase(), value));
                }
                rest = after_value;
                continue;
            }
            challenges.push(Challenge {
                scheme: token.to_owned(),
                params: Vec::new(),
            });
            // A token68 credential (`Basic dXNlcjpw==`) after the scheme is skipped: nothing
            // here reads one.
            let segment = after.split(',').next().unwrap_or_default().trim();
            rest = if is_token68(segment) {
                &after[after.find(',').unwrap_or(after.len())..]
            } else {
                after
            };
        }
        challenges
    }

    /// Every challenge of every `WWW-Authenticate` header of `headers`.
    pub fn from_headers(headers: &HeaderMap) -> Vec<Challenge> {
        headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(Challenge::parse)
            .take(MAX_ITEMS)
            .collect()
    }
}

/// `tchar` of RFC 9110.
fn is_token_char(c: char) -> bool {
    c.is_ascii() && crate::param_headers::is_token_byte(c as u8)
}

/// `token68` of RFC 9110 (letters, digits, `-._~+/`, then `=`s only at the end).
fn is_token68(text: &str) -> bool {
    let body = text.trim_end_matches('=');
    !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._~+/".contains(c))
}

/// A parameter's value (a token or a quoted string with `\` escapes) and what follows it.
fn read_value(text: &str) -> Option<(String, &str)> {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((at, c)) = chars.next() {
            match c {
                '"' => return Some((value, &quoted[at + 1..])),
                '\\' => value.push(chars.next()?.1),
                c => value.push(c),
            }
        }
        return None;
    }
    let end = text
        .find(|c: char| !is_token_char(c) && c != '/' && c != '=')
        .unwrap_or(text.len());
    Some((text[..end].to_owned(), &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_schemes_parameters_and_quoted_strings() {
        let all = Challenge::parse(
            r#"DPoP error="use_dpop_nonce", error_description="a \"fresh\" nonce", algs="ES256", Bearer realm=mcp, scope="a b""#,
        );
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0].is("dpop"));
        assert_eq!(all[0].param("error_description"), Some("a \"fresh\" nonce"));
        assert_eq!(all[0].param("algs"), Some("ES256"));
        assert_eq!(all[1].param("realm"), Some("mcp"));
        assert_eq!(all[1].param("scope"), Some("a b"));
    }

    #[test]
    fn a_scheme_alone_and_token68_are_challenges_without_parameters() {
        let all = Challenge::parse("Bearer");
        assert_eq!(
            all,
            vec![Challenge {
                scheme: "Bearer".into(),
                params: vec![]
            }]
        );
        let all = Challenge::parse("Basic dXNlcjpwYXNz==, Bearer scope=x");
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(all[1].param("scope"), Some("x"));
    }

    #[test]
    fn what_cannot_be_read_ends_the_list() {
        assert!(Challenge::parse("=x").is_empty());
        let all = Challenge::parse(r#"Bearer scope="unterminated"#);
        assert_eq!(all.len(), 1);
        assert!(all[0].params.is_empty());
        assert!(Challenge::parse("").is_empty());
        let many = "Bearer a=1, ".repeat(200);
        assert!(Challenge::parse(&many).len() <= MAX_ITEMS);
    }
}
