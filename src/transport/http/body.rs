//! Reading a whole HTTP body under a size limit, without copying a body that comes in one
//! piece (what both the server's requests and the client's responses need).

use std::pin::Pin;

use bytes::{Buf, Bytes, BytesMut};
use http_body::Body;
use http_body_util::BodyExt;

/// Why a body was not read whole.
#[derive(Debug)]
pub(super) enum ReadError {
    /// More than the limit: the reading stopped at the piece that went over (dropped).
    TooLarge,
    /// The body failed (the connection broke, or its framing was invalid): what it said.
    Broken(String),
}

/// Reads `body` whole, never holding more than `max` bytes: each piece is counted before it
/// is kept, and a body in one piece (the usual case: hyper hands a small body over in one
/// piece) comes back as it came, without a copy. Trailers are skipped.
pub(super) async fn read_limited<B>(mut body: Pin<&mut B>, max: usize) -> Result<Bytes, ReadError>
where
    B: Body,
    B::Error: std::fmt::Display,
{
    let mut whole = Gathered::default();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| ReadError::Broken(error.to_string()))?;
        let Ok(mut data) = frame.into_data() else {
            continue;
        };
        if whole.len() + data.remaining() > max {
            return Err(ReadError::TooLarge);
        }
        let piece = data.copy_to_bytes(data.remaining());
        whole.push(piece);
    }
    Ok(whole.into_bytes())
}

/// The pieces of a body read so far: the first kept as it came, the rest (rare) copied
/// after it.
#[derive(Default)]
enum Gathered {
    #[default]
    Nothing,
    One(Bytes),
    Many(BytesMut),
}

impl Gathered {
    fn len(&self) -> usize {
        match self {
            Gathered::Nothing => 0,
            Gathered::One(bytes) => bytes.len(),
            Gathered::Many(bytes) => bytes.len(),
        }
    }

    fn push(&mut self, piece: Bytes) {
        if piece.is_empty() {
            return;
        }
        *self = match std::mem::take(self) {
            Gathered::Nothing => Gathered::One(piece),
            Gathered::One(first) => {
                let mut many = BytesMut::with_capacity(first.len() + piece.len());
                many.extend_from_slice(&first);
                many.extend_from_slice(&piece);
                Gathered::Many(many)
            }
            Gathered::Many(mut many) => {
                many.extend_from_slice(&piece);
                Gathered::Many(many)
            }
        };
    }

    fn into_bytes(self) -> Bytes {
        match self {
            Gathered::Nothing => Bytes::new(),
            Gathered::One(bytes) => bytes,
            Gathered::Many(bytes) => bytes.freeze(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full, StreamBody};

    fn pieces(parts: &[&'static [u8]]) -> impl Body<Data = Bytes, Error = std::convert::Infallible> {
        let frames: Vec<Result<http_body::Frame<Bytes>, std::convert::Infallible>> = parts
            .iter()
            .map(|part| Ok(http_body::Frame::data(Bytes::from_static(part))))
            .collect();
        StreamBody::new(futures::stream::iter(frames))
    }

    #[tokio::test]
    async fn one_piece_comes_back_without_a_copy() {
        let text = Bytes::from_static(b"[1,2,3]");
        let mut body = Full::new(text.clone());
        let read = read_limited(Pin::new(&mut body), 7).await.unwrap();
        assert_eq!(read.as_ptr(), text.as_ptr());
    }

    #[tokio::test]
    async fn pieces_are_joined_in_order_and_empty_ones_skipped() {
        let mut body = std::pin::pin!(pieces(&[b"", b"[1,", b"", b"2,", b"3]"]));
        assert_eq!(&read_limited(body.as_mut(), 7).await.unwrap()[..], b"[1,2,3]");
        let mut nothing = std::pin::pin!(pieces(&[]));
        assert!(read_limited(nothing.as_mut(), 0).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn one_byte_over_the_limit_is_too_large_in_any_piece() {
        let mut body = std::pin::pin!(pieces(&[b"[1,", b"2,", b"3]"]));
        assert!(matches!(
            read_limited(body.as_mut(), 6).await,
            Err(ReadError::TooLarge)
        ));
        let mut body = Full::new(Bytes::from_static(b"[1,2,3]"));
        assert!(matches!(
            read_limited(Pin::new(&mut body), 6).await,
            Err(ReadError::TooLarge)
        ));
    }

    #[tokio::test]
    async fn a_failing_body_says_why() {
        let failing = http_body_util::StreamBody::new(futures::stream::iter(vec![
            Ok(http_body::Frame::data(Bytes::from_static(b"[1"))),
            Err("connection reset"),
        ]));
        let mut failing = std::pin::pin!(failing);
        match read_limited(failing.as_mut(), 100).await {
            Err(ReadError::Broken(reason)) => assert_eq!(reason, "connection reset"),
            other => panic!("{other:?}"),
        }
        // The reading stops at the piece refused (dropped): the rest stays in the body.
        let mut body = std::pin::pin!(pieces(&[b"[1,", b"2]"]));
        assert!(matches!(
            read_limited(body.as_mut(), 2).await,
            Err(ReadError::TooLarge)
        ));
        let rest = body.as_mut().collect().await.unwrap().to_bytes();
        assert_eq!(&rest[..], b"2]");
    }
}
