//! The `tokio_util` codecs (feature `tokio`): `FramedRead` over a reader and a duplex pipe
//! written in small pieces, `FramedWrite` round trips, errors surfacing through the stream.
#![cfg(feature = "tokio")]

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use rpcwire::frame::{
    ContentLengthCodec, ContentLengthDecoder, FrameCodec, FrameError, Framing, HeaderError, NdjsonCodec,
    NdjsonDecoder,
};
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use tokio_util::codec::{Decoder, Encoder, FramedRead, FramedWrite};

const BODIES: [&[u8]; 3] = [
    br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
    "{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":[\"żółw 🐢\"]}".as_bytes(),
    br#"{"jsonrpc":"2.0","id":1,"result":null}"#,
];

async fn write_all<C>(codec: C) -> Vec<u8>
where
    C: for<'a> Encoder<&'a [u8], Error = FrameError> + Encoder<Bytes, Error = FrameError>,
{
    let mut out = FramedWrite::new(Vec::new(), codec);
    out.send(BODIES[0]).await.unwrap();
    out.send(Bytes::from_static(BODIES[1])).await.unwrap();
    out.send(BODIES[2]).await.unwrap();
    out.into_inner()
}

#[tokio::test]
async fn ndjson_round_trip() {
    let wire = write_all(NdjsonCodec::default()).await;
    assert_eq!(wire.iter().filter(|&&b| b == b'\n').count(), 3);
    let frames: Vec<Bytes> = FramedRead::new(&wire[..], NdjsonCodec::default())
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(frames, BODIES);
}

#[tokio::test]
async fn content_length_round_trip() {
    let wire = write_all(ContentLengthCodec::default()).await;
    let header = format!("Content-Length: {}\r\n\r\n", BODIES[0].len());
    assert!(wire.starts_with(header.as_bytes()));
    let frames: Vec<Bytes> = FramedRead::new(&wire[..], ContentLengthCodec::default())
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(frames, BODIES);
}

#[tokio::test]
async fn frame_codec_round_trip_over_a_duplex_pipe_in_small_writes() {
    for framing in [Framing::Ndjson, Framing::ContentLength] {
        let wire = write_all(FrameCodec::new(framing)).await;
        let (mut tx, rx) = tokio::io::duplex(16);
        let writer = tokio::spawn(async move {
            for piece in wire.chunks(5) {
                tx.write_all(piece).await.unwrap();
            }
        });
        let frames: Vec<Bytes> = FramedRead::new(rx, FrameCodec::new(framing))
            .map(Result::unwrap)
            .collect()
            .await;
        writer.await.unwrap();
        assert_eq!(frames, BODIES, "{framing}");
    }
}

#[tokio::test]
async fn errors_come_through_the_stream() {
    // Truncated Content-Length frame at the end of the input.
    let mut frames = FramedRead::new(
        &b"Content-Length: 2\r\n\r\n{}Content-Length: 9\r\n\r\n{"[..],
        ContentLengthCodec::default(),
    );
    assert_eq!(&frames.next().await.unwrap().unwrap()[..], b"{}");
    let e = frames.next().await.unwrap().unwrap_err();
    assert!(
        matches!(
            e,
            FrameError::Truncated {
                expected: Some(9),
                got: 1,
                offset: 23
            }
        ),
        "{e:?}"
    );
    assert!(frames.next().await.is_none());

    // A bad header.
    let mut frames = FramedRead::new(&b"Content-Length: ten\r\n\r\n"[..], ContentLengthCodec::default());
    let e = frames.next().await.unwrap().unwrap_err();
    assert!(matches!(
        e,
        FrameError::BadHeader {
            reason: HeaderError::InvalidContentLength,
            ..
        }
    ));
}

#[tokio::test]
async fn polling_on_after_a_recoverable_error_gets_the_next_frames() {
    let codec = NdjsonCodec::from(NdjsonDecoder::new().with_max_frame(8));
    let mut frames = FramedRead::new(&b"[1]\n[1,2,3,4,5]\n[2]\n"[..], codec);
    assert_eq!(&frames.next().await.unwrap().unwrap()[..], b"[1]");
    let e = frames.next().await.unwrap().unwrap_err();
    assert!(matches!(
        e,
        FrameError::TooLarge {
            len: 11,
            limit: 8,
            offset: 4
        }
    ));
    // `FramedRead` yields `None` once after an error, then goes on.
    assert!(frames.next().await.is_none());
    assert_eq!(&frames.next().await.unwrap().unwrap()[..], b"[2]");
    assert!(frames.next().await.is_none());

    let codec = ContentLengthCodec::from(ContentLengthDecoder::new().with_max_frame(2));
    assert_eq!(codec.decoder().max_frame(), 2);
    let wire = b"Content-Length: 3\r\n\r\n[1]Content-Length: 2\r\n\r\n{}";
    let results: Vec<_> = FramedRead::new(&wire[..], codec).collect().await;
    assert!(matches!(results[..], [Err(FrameError::TooLarge { len: 3, .. })]));
}

/// A reader that fails.
struct Broken;

impl AsyncRead for Broken {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(Err(std::io::Error::other("connection reset")))
    }
}

#[tokio::test]
async fn read_errors_are_io_errors() {
    let mut frames = FramedRead::new(Broken, FrameCodec::new(Framing::Ndjson));
    let e = frames.next().await.unwrap().unwrap_err();
    assert!(matches!(&e, FrameError::Io(io) if io.to_string() == "connection reset"));
    assert!(!e.is_recoverable());
}

#[test]
fn codecs_delegate_to_their_decoders() {
    let mut codec = FrameCodec::new(Framing::ContentLength);
    assert_eq!(codec.decoder().framing(), Framing::ContentLength);
    let mut buf = BytesMut::new();
    Encoder::<&[u8]>::encode(&mut codec, b"[7]", &mut buf).unwrap();
    assert_eq!(&buf[..], b"Content-Length: 3\r\n\r\n[7]");
    assert_eq!(
        &Decoder::decode(&mut codec, &mut buf).unwrap().unwrap()[..],
        b"[7]"
    );
    assert_eq!(Decoder::decode_eof(&mut codec, &mut buf).unwrap(), None);
    let codec = FrameCodec::from(rpcwire::frame::FrameDecoder::new(Framing::Ndjson).with_max_frame(3));
    assert_eq!(codec.decoder().max_frame(), 3);
}
