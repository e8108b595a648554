//! Writing outgoing calls and notifications, and the queue items the writer task takes.

use bytes::{Bytes, BytesMut};
use serde::Serialize;

use super::{PeerError, PeerErrorKind};
use crate::encode;
use crate::message::{Id, RawJson};

/// What the writer task is asked to do.
#[derive(Debug)]
pub(super) enum Outgoing {
    /// Write one frame body; the permit holds its bytes' room in the queue until written.
    Frame(Bytes, Option<tokio::sync::OwnedSemaphorePermit>),
    /// Write out everything before this, then close the write direction.
    Close,
}

/// How the params of an outgoing call are written.
pub(super) enum OutgoingParams<'p, P: ?Sized> {
    /// Serialized with serde; `null` (as `()` and `None` serialize) means no params.
    Serde(&'p P),
    /// Already JSON (validated); `None` means no params.
    Raw(Option<&'p RawJson<'p>>),
}

/// Writes `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` (no `"id"` for a notification).
/// Params must be an array or an object (JSON-RPC 2.0, section 4.2); `null` leaves them out.
pub(super) fn write_call<P: Serialize + ?Sized>(
    dst: &mut BytesMut,
    id: Option<&Id<'_>>,
    method: &str,
    params: OutgoingParams<'_, P>,
) -> Result<(), PeerError> {
    match params {
        OutgoingParams::Serde(params) => encode::write_call(dst, id, method, params),
        OutgoingParams::Raw(params) => encode::write_call_raw(dst, id, method, params),
    }
    .map_err(|error| PeerErrorKind::Params(error).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(
        id: Option<u64>,
        params: OutgoingParams<'_, impl Serialize + ?Sized>,
    ) -> Result<String, PeerError> {
        let mut dst = BytesMut::new();
        let id = id.map(Id::from);
        write_call(&mut dst, id.as_ref(), "m\"x", params)?;
        Ok(String::from_utf8(dst.to_vec()).unwrap())
    }

    #[test]
    fn writes_requests_and_notifications() {
        assert_eq!(
            written(Some(7), OutgoingParams::Serde(&(1, "a"))).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"method":"m\"x","params":[1,"a"]}"#
        );
        assert_eq!(
            written(None, OutgoingParams::Serde(&())).unwrap(),
            r#"{"jsonrpc":"2.0","method":"m\"x"}"#
        );
        let raw = RawJson::new(r#"{"k":null}"#).unwrap();
        assert_eq!(
            written(Some(1), OutgoingParams::<()>::Raw(Some(&raw))).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m\"x","params":{"k":null}}"#
        );
        assert_eq!(
            written(Some(1), OutgoingParams::<()>::Raw(None)).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m\"x"}"#
        );
    }

    #[test]
    fn rejects_scalar_params() {
        let error = written(Some(1), OutgoingParams::Serde(&5)).unwrap_err();
        assert!(error.report().contains("array or an object"), "{error}");
        let raw = RawJson::new("\"text\"").unwrap();
        assert!(written(Some(1), OutgoingParams::<()>::Raw(Some(&raw))).is_err());
    }
}
