//! Refused handshakes told in words: which certificate check failed, or which side did not
//! speak TLS.

use std::io;

use rustls::{CertificateError, Error};

/// Why a client's handshake with `host` failed, in words a user can act on; `roots` is how
/// many authorities the client trusts (none is said, as the likely cause).
///
/// ```
/// use rpcwire_http::tls::describe_client_failure;
/// let refused = std::io::Error::new(
///     std::io::ErrorKind::InvalidData,
///     rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
/// );
/// let reason = describe_client_failure(&refused, "node.example", 140);
/// assert!(reason.contains("not issued by an authority this client trusts"), "{reason}");
/// ```
pub fn describe_client_failure(error: &io::Error, host: &str, roots: usize) -> String {
    let rustls = error.get_ref().and_then(|inner| inner.downcast_ref::<Error>());
    match rustls {
        Some(Error::InvalidCertificate(refused)) => describe_certificate(refused, host, roots),
        Some(Error::InvalidMessage(_)) | Some(Error::InappropriateMessage { .. }) => format!(
            "TLS handshake with {host} failed: the server did not answer in TLS (is it a plain-HTTP port? use http:// or ws://)"
        ),
        Some(Error::AlertReceived(alert)) => refused_with(host, &format!("{alert:?}")),
        Some(other) => format!("TLS handshake with {host} failed: {other}"),
        // Read after the handshake (a client certificate refused once the first request is
        // read), the alert comes as text.
        None if error.to_string().starts_with(ALERT) => refused_with(host, &error.to_string()[ALERT.len()..]),
        None if error.kind() == io::ErrorKind::UnexpectedEof => format!(
            "TLS handshake with {host} failed: the server closed the connection (is it a TLS port? does it require a client certificate?)"
        ),
        None => format!("TLS handshake with {host} failed: {error}"),
    }
}

/// Whether `error` is rustls refusing the connection (an error of its own, or an alert
/// received, as text).
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub fn is_tls_refusal(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<Error>()) || error.to_string().starts_with(ALERT)
}

/// How rustls says that the other side sent an alert, before the alert's name.
const ALERT: &str = "received fatal alert: ";

/// The server refused the handshake with the alert called `alert`.
fn refused_with(host: &str, alert: &str) -> String {
    let why = match alert {
        "CertificateRequired" => " (it requires a client certificate)",
        "UnknownCA" | "BadCertificate" => " (it did not accept the client certificate)",
        "NoApplicationProtocol" => {
            " (it speaks none of the protocols asked for in ALPN: HTTP/2 only, or HTTP/1.1 only?)"
        }
        _ => "",
    };
    format!("TLS handshake with {host} failed: the server refused it with alert {alert}{why}")
}

/// A certificate check that failed, said plainly.
fn describe_certificate(refused: &CertificateError, host: &str, roots: usize) -> String {
    let what = match refused {
        CertificateError::UnknownIssuer if roots == 0 => {
            "is not issued by an authority this client trusts: it trusts none (the system's store is empty; \
             set SSL_CERT_FILE, add a CA or use the webpki roots)"
                .to_owned()
        }
        CertificateError::UnknownIssuer => {
            "is not issued by an authority this client trusts (unknown issuer; add its CA)".to_owned()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => "has expired".to_owned(),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "is not valid yet".to_owned()
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            format!("is not valid for the name {host}")
        }
        CertificateError::Revoked => "has been revoked".to_owned(),
        CertificateError::BadSignature => "has a bad signature".to_owned(),
        other => format!("was refused: {other}"),
    };
    format!("TLS handshake with {host} failed: the server's certificate {what}")
}

/// Whether the first bytes a TLS server read are not a TLS handshake record: a client
/// speaking plain HTTP (or anything else) to the TLS port. A handshake record starts with
/// content type 22.
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub fn is_plain_http(first: u8) -> bool {
    first != 22
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::AlertDescription;

    fn certificate(refused: CertificateError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, Error::InvalidCertificate(refused))
    }

    #[test]
    fn each_certificate_check_is_said_in_its_own_words() {
        let cases = [
            (CertificateError::UnknownIssuer, 5, "unknown issuer"),
            (CertificateError::UnknownIssuer, 0, "it trusts none"),
            (CertificateError::Expired, 5, "has expired"),
            (CertificateError::NotValidYet, 5, "is not valid yet"),
            (
                CertificateError::NotValidForName,
                5,
                "is not valid for the name h.example",
            ),
            (CertificateError::Revoked, 5, "has been revoked"),
            (CertificateError::BadSignature, 5, "bad signature"),
            (CertificateError::BadEncoding, 5, "was refused"),
        ];
        for (refused, roots, expected) in cases {
            let reason = describe_client_failure(&certificate(refused), "h.example", roots);
            assert!(
                reason.starts_with("TLS handshake with h.example failed"),
                "{reason}"
            );
            assert!(reason.contains(expected), "{reason} lacks {expected}");
        }
    }

    #[test]
    fn the_other_side_not_speaking_tls_is_said() {
        let garbage = io::Error::new(
            io::ErrorKind::InvalidData,
            Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
        );
        assert!(describe_client_failure(&garbage, "h", 1).contains("plain-HTTP port"));
        let closed = io::Error::from(io::ErrorKind::UnexpectedEof);
        assert!(describe_client_failure(&closed, "h", 1).contains("closed the connection"));
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert!(describe_client_failure(&reset, "h", 1).contains("failed"));
        let required = io::Error::new(
            io::ErrorKind::InvalidData,
            Error::AlertReceived(AlertDescription::CertificateRequired),
        );
        assert!(describe_client_failure(&required, "h", 1).contains("requires a client certificate"));
        let unknown_ca = io::Error::new(
            io::ErrorKind::InvalidData,
            Error::AlertReceived(AlertDescription::UnknownCA),
        );
        assert!(
            describe_client_failure(&unknown_ca, "h", 1).contains("did not accept the client certificate")
        );
        let no_protocol = io::Error::new(
            io::ErrorKind::InvalidData,
            Error::AlertReceived(AlertDescription::NoApplicationProtocol),
        );
        assert!(describe_client_failure(&no_protocol, "h", 1).contains("ALPN"));
        let as_text = io::Error::new(
            io::ErrorKind::InvalidData,
            "received fatal alert: CertificateRequired",
        );
        assert!(describe_client_failure(&as_text, "h", 1).contains("requires a client certificate"));
        assert!(is_tls_refusal(&as_text) && is_tls_refusal(&required));
        assert!(!is_tls_refusal(&io::Error::new(
            io::ErrorKind::InvalidData,
            "bad chunk"
        )));
        let other = io::Error::new(io::ErrorKind::InvalidData, Error::DecryptError);
        assert!(describe_client_failure(&other, "h", 1).contains("failed: "));
    }

    #[test]
    fn a_handshake_record_is_told_from_plain_text() {
        assert!(!is_plain_http(22));
        assert!(is_plain_http(b'P'));
        assert!(is_plain_http(b'G'));
    }
}
