//! `tokio_util::codec` implementations (feature `tokio`): the decoders as `Decoder`s, the
//! encoders as `Encoder<&[u8]>` and `Encoder<Bytes>`.
//!
//! A note on `FramedRead` and errors: after any error from a decoder, `FramedRead` yields
//! that error, then `None` once; a caller who goes on polling after a recoverable
//! [`FrameError::TooLarge`] gets the next frames, but `FramedRead` reads from the transport
//! again before it looks at bytes already buffered. A server that must answer every frame
//! without waiting on the peer can drive [`FrameDecoder`] over its own buffer instead.

use bytes::{Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::content_length::ContentLengthDecoder;
use super::decoder::FrameDecoder;
use super::error::FrameError;
use super::framing::Framing;
use super::ndjson::NdjsonDecoder;
use super::write::{encode_content_length, encode_ndjson};

macro_rules! codec {
    (
        $(#[$doc:meta])*
        $codec:ident($decoder:ident), $example:literal, $encode:expr
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $codec {
            decoder: $decoder,
        }

        impl $codec {
            /// The decoder inside, to read its settings or progress.
            ///
            /// ```
            #[doc = concat!("let codec = ", $example, ";")]
            /// assert_eq!(codec.decoder().max_frame(), rpcwire_wire::frame::DEFAULT_MAX_FRAME);
            /// ```
            pub fn decoder(&self) -> &$decoder {
                &self.decoder
            }
        }

        impl From<$decoder> for $codec {
            fn from(decoder: $decoder) -> Self {
                $codec { decoder }
            }
        }

        impl Decoder for $codec {
            type Item = Bytes;
            type Error = FrameError;

            fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
                self.decoder.decode(src)
            }

            fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
                self.decoder.decode_eof(src)
            }
        }

        impl Encoder<&[u8]> for $codec {
            type Error = FrameError;

            fn encode(&mut self, body: &[u8], dst: &mut BytesMut) -> Result<(), FrameError> {
                let encode: fn(&Self, &[u8], &mut BytesMut) = $encode;
                encode(self, body, dst);
                Ok(())
            }
        }

        impl Encoder<Bytes> for $codec {
            type Error = FrameError;

            fn encode(&mut self, body: Bytes, dst: &mut BytesMut) -> Result<(), FrameError> {
                Encoder::<&[u8]>::encode(self, &body, dst)
            }
        }
    };
}

codec! {
    /// Newline-delimited JSON as a `tokio_util` codec: decodes with [`NdjsonDecoder`], encodes
    /// with [`encode_ndjson`].
    ///
    /// ```
    /// use futures::{SinkExt, StreamExt};
    /// use tokio_util::codec::{FramedRead, FramedWrite};
    /// use rpcwire_wire::frame::{NdjsonCodec, NdjsonDecoder};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut out = FramedWrite::new(Vec::new(), NdjsonCodec::default());
    /// out.send(&b"[1]"[..]).await?;
    /// out.send(bytes::Bytes::from_static(b"[2]")).await?;
    /// let wire = out.into_inner();
    /// assert_eq!(wire, b"[1]\n[2]\n");
    ///
    /// let codec = NdjsonCodec::from(NdjsonDecoder::new().with_max_frame(1024));
    /// let frames: Vec<_> = FramedRead::new(&wire[..], codec).collect().await;
    /// assert_eq!(frames.len(), 2);
    /// assert_eq!(&frames[1].as_ref().unwrap()[..], b"[2]");
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
    /// # }).unwrap();
    /// ```
    #[derive(Default)]
    NdjsonCodec(NdjsonDecoder), "rpcwire_wire::frame::NdjsonCodec::default()", |_, body, dst| encode_ndjson(body, dst)
}

codec! {
    /// Content-Length framing as a `tokio_util` codec: decodes with
    /// [`ContentLengthDecoder`], encodes with [`encode_content_length`].
    ///
    /// ```
    /// use futures::{SinkExt, StreamExt};
    /// use tokio_util::codec::{FramedRead, FramedWrite};
    /// use rpcwire_wire::frame::ContentLengthCodec;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut out = FramedWrite::new(Vec::new(), ContentLengthCodec::default());
    /// out.send(&br#"{"jsonrpc":"2.0","method":"exit"}"#[..]).await?;
    /// let wire = out.into_inner();
    /// assert!(wire.starts_with(b"Content-Length: 33\r\n\r\n"));
    ///
    /// let mut frames = FramedRead::new(&wire[..], ContentLengthCodec::default());
    /// assert_eq!(frames.next().await.unwrap()?.len(), 33);
    /// assert!(frames.next().await.is_none());
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
    /// # }).unwrap();
    /// ```
    #[derive(Default)]
    ContentLengthCodec(ContentLengthDecoder), "rpcwire_wire::frame::ContentLengthCodec::default()", |_, body, dst| encode_content_length(body, dst)
}

codec! {
    /// Either framing, chosen at run time, as a `tokio_util` codec: decodes with
    /// [`FrameDecoder`], encodes with [`Framing::encode`].
    ///
    /// ```
    /// use futures::{SinkExt, StreamExt};
    /// use tokio_util::codec::{FramedRead, FramedWrite};
    /// use rpcwire_wire::frame::{FrameCodec, Framing};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let framing: Framing = "content-length".parse().unwrap();
    /// let mut out = FramedWrite::new(Vec::new(), FrameCodec::new(framing));
    /// out.send(&b"{}"[..]).await?;
    /// let wire = out.into_inner();
    /// let mut frames = FramedRead::new(&wire[..], FrameCodec::new(framing));
    /// assert_eq!(&frames.next().await.unwrap()?[..], b"{}");
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
    /// # }).unwrap();
    /// ```
    FrameCodec(FrameDecoder), "rpcwire_wire::frame::FrameCodec::new(rpcwire_wire::frame::Framing::Ndjson)", |codec, body, dst| codec.decoder.framing().encode(body, dst)
}

impl FrameCodec {
    /// A codec for `framing` with the default limits.
    ///
    /// ```
    /// use rpcwire_wire::frame::{FrameCodec, Framing};
    /// assert_eq!(FrameCodec::new(Framing::Ndjson).decoder().framing(), Framing::Ndjson);
    /// ```
    pub fn new(framing: Framing) -> FrameCodec {
        FrameCodec {
            decoder: FrameDecoder::new(framing),
        }
    }
}
