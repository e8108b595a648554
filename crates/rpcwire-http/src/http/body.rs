//! Reading a whole HTTP body under a size limit, without copying a body that comes in one
//! piece (what both the server's requests and the client's responses need).

use std::pin::Pin;

use bytes::{Buf, Bytes, BytesMut};
use http_body::Body;
use http_body_util::BodyExt;

/// `reading` (a body being read), or `None` when it is not done within `limit`. A body
/// already there (the usual case: hyper hands a small body over with its head) is read at the
/// first poll, with no timer made; the deadline is set only for a body still to come.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use rpcwire_http::http::body::within;
///
/// assert_eq!(within(Duration::from_millis(10), async { 7 }).await, Some(7));
/// assert_eq!(within(Duration::from_millis(10), std::future::pending::<u8>()).await, None);
/// # });
/// ```
pub async fn within<F: std::future::Future>(limit: std::time::Duration, reading: F) -> Option<F::Output> {
    let mut reading = std::pin::pin!(reading);
    match std::future::poll_fn(|cx| std::task::Poll::Ready(reading.as_mut().poll(cx))).await {
        std::task::Poll::Ready(read) => Some(read),
        std::task::Poll::Pending => tokio::time::timeout(limit, reading).await.ok(),
    }
}

/// Why a body was not read whole.
#[derive(Debug)]
pub enum ReadError {
    /// More than the limit: the reading stopped at the piece that went over (dropped).
    TooLarge,
    /// The body failed (the connection broke, or its framing was invalid): what it said.
    Broken(String),
}

/// Reads `body` whole, never holding more than `max` bytes: each piece is counted before it
/// is kept, and a body in one piece (the usual case: hyper hands a small body over in one
/// piece) comes back as it came, without a copy. A body in several pieces is copied once
/// into a buffer sized, when the second piece comes, for what the body says is left (its
/// declared length), never more than `max`: it is not grown and copied again piece by
/// piece. Trailers are skipped.
pub async fn read_limited<B>(mut body: Pin<&mut B>, max: usize) -> Result<Bytes, ReadError>
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
        // What the body says is still to come (its declared length less what came).
        let left = usize::try_from(body.size_hint().lower()).unwrap_or(usize::MAX);
        let expected = whole
            .len()
            .saturating_add(piece.len())
            .saturating_add(left)
            .min(max);
        whole.push(piece, expected);
    }
    Ok(whole.into_bytes())
}

/// The pieces of a body read so far: the first kept as it came, the rest copied after it.
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

    /// Keeps `piece`; `expected`: how long the whole body is expected to be (at most the
    /// limit), the capacity reserved when a second piece makes a copy needed.
    fn push(&mut self, piece: Bytes, expected: usize) {
        if piece.is_empty() {
            return;
        }
        *self = match std::mem::take(self) {
            Gathered::Nothing => Gathered::One(piece),
            Gathered::One(first) => {
                let mut many = BytesMut::with_capacity(expected.max(first.len() + piece.len()));
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

    /// A body that declares its length and comes in `parts`.
    struct Declared(std::collections::VecDeque<&'static [u8]>);

    impl Body for Declared {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
            let part = self.0.pop_front();
            std::task::Poll::Ready(part.map(|part| Ok(http_body::Frame::data(Bytes::from_static(part)))))
        }

        fn size_hint(&self) -> http_body::SizeHint {
            http_body::SizeHint::with_exact(self.0.iter().map(|part| part.len() as u64).sum())
        }
    }

    #[tokio::test]
    async fn a_declared_body_in_pieces_is_copied_once_into_a_buffer_of_its_length() {
        let parts: [&'static [u8]; 4] = [b"[1,", b"2,", b"3,", b"4]"];
        let mut body = Declared(parts.into_iter().collect());
        let read = read_limited(Pin::new(&mut body), 100).await.unwrap();
        assert_eq!(&read[..], b"[1,2,3,4]");
        // The buffer the second piece made holds the whole body: never grown.
        let mut whole = Gathered::default();
        whole.push(Bytes::from_static(b"[1,"), 9);
        whole.push(Bytes::from_static(b"2,"), 9);
        let Gathered::Many(ref many) = whole else {
            panic!("two pieces are copied")
        };
        let (at, capacity) = (many.as_ptr(), many.capacity());
        assert!(capacity >= 9, "capacity {capacity}");
        whole.push(Bytes::from_static(b"3,"), 9);
        whole.push(Bytes::from_static(b"4]"), 9);
        let read = whole.into_bytes();
        assert_eq!((&read[..], read.as_ptr()), (&b"[1,2,3,4]"[..], at));
        // Never more than the limit, whatever the body declares.
        let mut whole = Gathered::default();
        whole.push(Bytes::from_static(b"[1,"), 5);
        whole.push(Bytes::from_static(b"2]"), 5);
        let Gathered::Many(many) = whole else {
            panic!("two pieces are copied")
        };
        assert!(many.capacity() < 64, "capacity {}", many.capacity());
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
