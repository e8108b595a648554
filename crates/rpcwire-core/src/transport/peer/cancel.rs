//! The cancellation protocols a peer speaks: how a cancel notification is written and read.

use bytes::{Bytes, BytesMut};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dispatch::OnCancel;
use crate::encode;
use crate::message::{Id, Params};

/// How a [`Peer`](super::Peer) cancels requests and hears of cancellations, per
/// [`PeerBuilder::cancel_protocol`](super::PeerBuilder::cancel_protocol).
///
/// With `Lsp` or `Mcp`, a call whose future is dropped before its answer arrives, or that
/// times out, tells the other side with that protocol's notification; a cancellation from
/// the other side fires the [`RequestContext`](crate::dispatch::RequestContext) token of the
/// request it names and stops its async handler.
///
/// ```
/// use rpcwire_core::transport::CancelProtocol;
/// assert_eq!(CancelProtocol::Lsp.method(), Some("$/cancelRequest"));
/// assert_eq!(CancelProtocol::None.method(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CancelProtocol {
    /// No cancellation: a dropped call is only forgotten locally.
    #[default]
    None,
    /// The Language Server Protocol's: `$/cancelRequest` with params `{"id": …}`; the
    /// cancelled request is answered with error -32800 (RequestCancelled).
    Lsp,
    /// The Model Context Protocol's: `notifications/cancelled` with params
    /// `{"requestId": …, "reason": …}`; the cancelled request gets no answer.
    Mcp,
}

impl CancelProtocol {
    /// The method of the protocol's cancel notification.
    ///
    /// ```
    /// assert_eq!(rpcwire_core::transport::CancelProtocol::Mcp.method(), Some("notifications/cancelled"));
    /// ```
    pub fn method(self) -> Option<&'static str> {
        match self {
            CancelProtocol::None => None,
            CancelProtocol::Lsp => Some("$/cancelRequest"),
            CancelProtocol::Mcp => Some("notifications/cancelled"),
        }
    }

    /// What a request the other side cancelled gets.
    pub(super) fn on_cancel(self) -> OnCancel {
        match self {
            CancelProtocol::Mcp => OnCancel::Silent,
            CancelProtocol::None | CancelProtocol::Lsp => OnCancel::Answer,
        }
    }

    /// The cancel notification for the call `id`; `None` without a protocol.
    pub(super) fn notification(self, id: &Id<'_>, reason: &str) -> Option<Bytes> {
        let method = self.method()?;
        let mut frame = BytesMut::with_capacity(96 + reason.len());
        frame.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
        encode::write_str(&mut frame, method);
        match self {
            CancelProtocol::Lsp => frame.extend_from_slice(br#","params":{"id":"#),
            _ => frame.extend_from_slice(br#","params":{"requestId":"#),
        }
        encode::write_id(&mut frame, id);
        if self == CancelProtocol::Mcp {
            frame.extend_from_slice(br#","reason":"#);
            encode::write_str(&mut frame, reason);
        }
        frame.extend_from_slice(b"}}");
        Some(frame.freeze())
    }

    /// The JSON text of the id a cancel notification's params name, if they name one (what
    /// [`Cancellations::cancel`](crate::dispatch::Cancellations::cancel) takes).
    ///
    /// ```
    /// use rpcwire_core::transport::CancelProtocol;
    /// let params = rpcwire_core::Params::new(r#"{"requestId":"a1","reason":"user"}"#);
    /// assert_eq!(CancelProtocol::Mcp.cancelled_id(Some(params)).as_deref(), Some(r#""a1""#));
    /// let params = rpcwire_core::Params::new(r#"{"id":7}"#);
    /// assert_eq!(CancelProtocol::Lsp.cancelled_id(Some(params)).as_deref(), Some("7"));
    /// ```
    pub fn cancelled_id(self, params: Option<Params<'_>>) -> Option<String> {
        #[derive(Deserialize)]
        struct Lsp<'a> {
            #[serde(borrow)]
            id: &'a RawValue,
        }
        #[derive(Deserialize)]
        struct Mcp<'a> {
            #[serde(borrow, rename = "requestId")]
            request_id: &'a RawValue,
        }
        let params = params?;
        let raw = params.raw();
        let text = raw.get();
        let id = match self {
            CancelProtocol::None => return None,
            CancelProtocol::Lsp => serde_json::from_str::<Lsp<'_>>(text).ok()?.id,
            CancelProtocol::Mcp => serde_json::from_str::<Mcp<'_>>(text).ok()?.request_id,
        };
        Some(id.get().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_written_as_each_protocol_says() {
        let id = Id::from(7u64);
        let lsp = CancelProtocol::Lsp.notification(&id, "dropped").unwrap();
        assert_eq!(
            &lsp[..],
            br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}"#
        );
        let mcp = CancelProtocol::Mcp
            .notification(&Id::from("a"), "dropped")
            .unwrap();
        assert_eq!(
            &mcp[..],
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"dropped"}}"#
        );
        assert!(CancelProtocol::None.notification(&id, "x").is_none());
    }

    #[test]
    fn the_cancelled_id_is_read_as_written() {
        let read = |protocol: CancelProtocol, frame: &str| {
            let parsed = crate::parse(frame.as_bytes()).unwrap();
            let Some(crate::Message::Notification(n)) = parsed.single() else {
                panic!("not a notification")
            };
            protocol.cancelled_id(n.params())
        };
        let lsp = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x-1"}}"#;
        assert_eq!(read(CancelProtocol::Lsp, lsp).as_deref(), Some(r#""x-1""#));
        let mcp =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"r","requestId":12}}"#;
        assert_eq!(read(CancelProtocol::Mcp, mcp).as_deref(), Some("12"));
        assert_eq!(read(CancelProtocol::Lsp, mcp), None);
        let no_params = r#"{"jsonrpc":"2.0","method":"$/cancelRequest"}"#;
        assert_eq!(read(CancelProtocol::Lsp, no_params), None);
    }
}
