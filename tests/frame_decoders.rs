//! Framing rules, both framings: what real peers send, limits, errors and recovery, end of
//! input, encoder round trips, and (proptest) that any split of the input into reads gives
//! the same frames and errors.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;
use rpcwire::frame::{
    encode_content_length, encode_ndjson, ContentLengthDecoder, FrameDecoder, FrameError, Framing,
    HeaderError, NdjsonDecoder, ParseFramingError, DEFAULT_MAX_FRAME, DEFAULT_MAX_HEADER,
};

/// What decoding produced: a frame, or an error's text (which carries its sizes and offset).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Out {
    Frame(Vec<u8>),
    Error(String),
}

fn frame(body: &[u8]) -> Out {
    Out::Frame(body.to_vec())
}

fn error(e: FrameError) -> Out {
    Out::Error(e.to_string())
}

/// Feeds `input` to `decoder` in reads of the given sizes (cycled; 0 counts as 1), decoding
/// after every read, then `decode_eof` until nothing is left. Stops at a fatal error.
fn decode_in_chunks(mut decoder: FrameDecoder, input: &[u8], sizes: &[usize]) -> Vec<Out> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes.get(i % sizes.len().max(1)).copied().unwrap_or(usize::MAX);
        let n = n.clamp(1, rest.len());
        i += 1;
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(f)) => out.push(frame(&f)),
                Ok(None) => break,
                Err(e) if e.is_recoverable() => out.push(error(e)),
                Err(e) => {
                    out.push(error(e));
                    return out;
                }
            }
        }
    }
    loop {
        match decoder.decode_eof(&mut buf) {
            Ok(Some(f)) => out.push(frame(&f)),
            Ok(None) => break,
            Err(e) if e.is_recoverable() => out.push(error(e)),
            Err(e) => {
                out.push(error(e));
                return out;
            }
        }
    }
    assert!(buf.is_empty(), "decode_eof left {} bytes", buf.len());
    out
}

fn ndjson(input: &[u8]) -> Vec<Out> {
    decode_in_chunks(FrameDecoder::new(Framing::Ndjson), input, &[])
}

fn ndjson_max(max: usize, input: &[u8]) -> Vec<Out> {
    decode_in_chunks(FrameDecoder::new(Framing::Ndjson).with_max_frame(max), input, &[])
}

fn cl(input: &[u8]) -> Vec<Out> {
    decode_in_chunks(FrameDecoder::new(Framing::ContentLength), input, &[])
}

/// The same result one byte at a time and in reads of 3 bytes as in one read.
fn same_in_every_split(decoder: FrameDecoder, input: &[u8]) -> Vec<Out> {
    let whole = decode_in_chunks(decoder.clone(), input, &[]);
    assert_eq!(
        decode_in_chunks(decoder.clone(), input, &[1]),
        whole,
        "byte at a time"
    );
    assert_eq!(decode_in_chunks(decoder, input, &[3, 1, 7]), whole, "3, 1, 7");
    whole
}

fn too_large(len: usize, limit: usize, offset: u64) -> Out {
    error(FrameError::TooLarge { len, limit, offset })
}

fn bad_header(reason: HeaderError, offset: u64) -> Out {
    error(FrameError::BadHeader { reason, offset })
}

fn truncated(expected: Option<usize>, got: usize, offset: u64) -> Out {
    error(FrameError::Truncated {
        expected,
        got,
        offset,
    })
}

// ---------------------------------------------------------------- Framing, FrameDecoder

#[test]
fn framing_names() {
    assert_eq!("ndjson".parse(), Ok(Framing::Ndjson));
    assert_eq!("NDJSON".parse(), Ok(Framing::Ndjson));
    assert_eq!("content-length".parse(), Ok(Framing::ContentLength));
    assert_eq!("".parse::<Framing>(), Err(ParseFramingError));
    assert_eq!("content_length".parse::<Framing>(), Err(ParseFramingError));
    for framing in [Framing::Ndjson, Framing::ContentLength] {
        assert_eq!(framing.to_string().parse(), Ok(framing));
        assert_eq!(framing.decoder().framing(), framing);
    }
}

#[test]
fn frame_decoder_settings() {
    let d = FrameDecoder::new(Framing::ContentLength).with_max_frame(10);
    assert_eq!(
        (d.framing(), d.max_frame(), d.consumed()),
        (Framing::ContentLength, 10, 0)
    );
    let d = FrameDecoder::from(NdjsonDecoder::new().with_max_frame(5));
    assert_eq!((d.framing(), d.max_frame()), (Framing::Ndjson, 5));
    let d = FrameDecoder::from(ContentLengthDecoder::new());
    assert_eq!(d.max_frame(), DEFAULT_MAX_FRAME);
    assert_eq!(DEFAULT_MAX_FRAME, 1 << 20);
    assert_eq!(ContentLengthDecoder::default().max_header(), DEFAULT_MAX_HEADER);
    assert_eq!(NdjsonDecoder::default().max_frame(), DEFAULT_MAX_FRAME);
}

#[test]
fn errors_say_what_and_where() {
    let e = FrameError::TooLarge {
        len: 10,
        limit: 4,
        offset: 7,
    };
    assert!(e.is_recoverable());
    assert_eq!(e.offset(), Some(7));
    assert_eq!(
        e.to_string(),
        "frame of 10 bytes at stream offset 7 exceeds the limit of 4 bytes"
    );
    let e = FrameError::Truncated {
        expected: Some(5),
        got: 2,
        offset: 3,
    };
    assert!(!e.is_recoverable());
    assert_eq!(
        e.to_string(),
        "input ended inside a frame at stream offset 3: expected 5 body bytes, got 2"
    );
    let e = FrameError::Truncated {
        expected: None,
        got: 9,
        offset: 0,
    };
    assert_eq!(
        e.to_string(),
        "input ended inside a frame at stream offset 0: header incomplete after 9 bytes"
    );
    let e = FrameError::BadHeader {
        reason: HeaderError::TooLong { limit: 8 },
        offset: 1,
    };
    assert!(!e.is_recoverable());
    assert_eq!(
        e.to_string(),
        "bad frame header at stream offset 1: header longer than 8 bytes"
    );
    let e = FrameError::from(std::io::Error::other("pipe closed"));
    assert!(!e.is_recoverable());
    assert_eq!(e.offset(), None);
    assert!(e.to_string().contains("pipe closed"));
}

// ---------------------------------------------------------------- NDJSON

#[test]
fn ndjson_several_messages_in_one_read() {
    let input = b"{\"id\":1}\n{\"id\":2}\n[3]\n";
    assert_eq!(
        same_in_every_split(Framing::Ndjson.decoder(), input),
        [frame(b"{\"id\":1}"), frame(b"{\"id\":2}"), frame(b"[3]")]
    );
}

#[test]
fn ndjson_one_message_across_many_reads() {
    let message = br#"{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#;
    let mut decoder = NdjsonDecoder::new();
    let mut buf = BytesMut::new();
    for &b in message.iter() {
        buf.extend_from_slice(&[b]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
    }
    buf.extend_from_slice(b"\n");
    assert_eq!(&decoder.decode(&mut buf).unwrap().unwrap()[..], message);
    assert!(buf.is_empty());
    assert_eq!(decoder.consumed(), message.len() as u64 + 1);
}

#[test]
fn ndjson_crlf_and_blank_lines() {
    let input = b"\n\r\n[1]\r\n   \n\t\r\n\n[2]\n \t \r\n[3]\r\n\r\n";
    assert_eq!(
        same_in_every_split(Framing::Ndjson.decoder(), input),
        [frame(b"[1]"), frame(b"[2]"), frame(b"[3]")]
    );
    // Only the one `\r` before the `\n` is the line ending; whitespace inside a line stays.
    assert_eq!(ndjson(b" [1] \n[2]\r\r\n"), [frame(b" [1] "), frame(b"[2]\r")]);
}

#[test]
fn ndjson_frames_are_split_off_the_buffer_without_copying() {
    let mut buf = BytesMut::from(&b"[1]\n[2]\n"[..]);
    let start = buf.as_ptr();
    let mut decoder = NdjsonDecoder::new();
    let first = decoder.decode(&mut buf).unwrap().unwrap();
    let second = decoder.decode(&mut buf).unwrap().unwrap();
    assert_eq!(first.as_ptr(), start);
    assert_eq!(second.as_ptr(), start.wrapping_add(4));
}

#[test]
fn ndjson_utf8_bodies() {
    let input = "{\"name\":\"żółć — 名前 🦀\"}\n".as_bytes();
    assert_eq!(
        same_in_every_split(Framing::Ndjson.decoder(), input),
        [frame("{\"name\":\"żółć — 名前 🦀\"}".as_bytes())]
    );
}

#[test]
fn ndjson_limit_counts_the_line_without_its_ending() {
    let d = || Framing::Ndjson.decoder().with_max_frame(4);
    assert_eq!(same_in_every_split(d(), b"1234\n"), [frame(b"1234")]);
    assert_eq!(same_in_every_split(d(), b"1234\r\n"), [frame(b"1234")]);
    assert_eq!(same_in_every_split(d(), b"12345\n"), [too_large(5, 4, 0)]);
    assert_eq!(same_in_every_split(d(), b"12345\r\n"), [too_large(5, 4, 0)]);
    assert_eq!(same_in_every_split(d(), b"1234\r\r\n"), [too_large(5, 4, 0)]);
    // At the end of the input too.
    assert_eq!(same_in_every_split(d(), b"1234"), [frame(b"1234")]);
    assert_eq!(same_in_every_split(d(), b"1234\r"), [frame(b"1234")]);
    assert_eq!(same_in_every_split(d(), b"12345"), [too_large(5, 4, 0)]);
    assert_eq!(same_in_every_split(d(), b"123456\r"), [too_large(6, 4, 0)]);
    // A long run of whitespace is too large, not blank.
    assert_eq!(
        same_in_every_split(d(), b"      \n[]\n"),
        [too_large(6, 4, 0), frame(b"[]")]
    );
}

#[test]
fn ndjson_oversized_line_then_a_good_one() {
    let mut input = b"[0]\n".to_vec();
    input.extend_from_slice(&[b'x'; 100]);
    input.extend_from_slice(b"\r\n[1]\n");
    assert_eq!(
        same_in_every_split(Framing::Ndjson.decoder().with_max_frame(10), &input),
        [frame(b"[0]"), too_large(100, 10, 4), frame(b"[1]")]
    );
}

#[test]
fn ndjson_oversized_line_across_reads_is_not_buffered() {
    let mut decoder = NdjsonDecoder::new().with_max_frame(1000);
    let mut buf = BytesMut::with_capacity(4096);
    let chunk = [b'a'; 512];
    for _ in 0..10_000 {
        buf.extend_from_slice(&chunk);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(buf.len() <= 1002, "buffered {} bytes", buf.len());
    }
    assert!(buf.capacity() <= 4096);
    buf.extend_from_slice(b"tail\n{\"ok\":true}\n");
    let e = decoder.decode(&mut buf).unwrap_err();
    assert!(
        matches!(e, FrameError::TooLarge { len, limit: 1000, offset: 0 } if len == 512 * 10_000 + 4),
        "{e:?}"
    );
    assert_eq!(&decoder.decode(&mut buf).unwrap().unwrap()[..], b"{\"ok\":true}");
    assert_eq!(decoder.consumed(), 512 * 10_000 + 5 + 12);
}

#[test]
fn ndjson_end_of_input() {
    // A last line without `\n` is a frame.
    assert_eq!(ndjson(b"[1]\n[2]"), [frame(b"[1]"), frame(b"[2]")]);
    assert_eq!(ndjson(b"[2]\r"), [frame(b"[2]")]);
    // Nothing, or only blank lines, left: no frame.
    assert_eq!(ndjson(b""), []);
    assert_eq!(ndjson(b"[1]\n  \r"), [frame(b"[1]")]);
    // An oversized last line, being discarded when the input ends.
    let mut input = vec![b'z'; 50];
    input.push(b'\r');
    assert_eq!(ndjson_max(8, &input), [too_large(50, 8, 0)]);
    let mut decoder = NdjsonDecoder::new();
    let mut buf = BytesMut::new();
    assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
    assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
}

#[test]
fn ndjson_error_offsets_count_from_the_stream_start() {
    let input = b"\n[1]\r\n0123456789\n[2]\n0123456789";
    assert_eq!(
        same_in_every_split(Framing::Ndjson.decoder().with_max_frame(5), input),
        [
            frame(b"[1]"),
            too_large(10, 5, 6),
            frame(b"[2]"),
            too_large(10, 5, 21)
        ]
    );
}

// ---------------------------------------------------------------- Content-Length

#[test]
fn cl_vscode_jsonrpc_header() {
    let input = b"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    assert_eq!(
        same_in_every_split(Framing::ContentLength.decoder(), input),
        [frame(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")]
    );
}

#[test]
fn cl_python_lsp_jsonrpc_header() {
    let input = b"Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n{}\
          Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n[]";
    assert_eq!(
        same_in_every_split(Framing::ContentLength.decoder(), input),
        [frame(b"{}"), frame(b"[]")]
    );
}

#[test]
fn cl_names_any_case_values_lenient_other_headers_ignored() {
    let input = b"content-length: 1\r\n\r\n1\
                  CONTENT-LENGTH:1\r\n\r\n2\
                  Content-length: \t 1 \t\r\n\r\n3\
                  X-Request: whatever: really\r\ncontent-type: text/plain\r\nContent-Length: 1\r\n\r\n4\
                  Content-Length: 1\n\n5\
                  Content-Length: 001\r\n\r\n6";
    assert_eq!(
        same_in_every_split(Framing::ContentLength.decoder(), input),
        [
            frame(b"1"),
            frame(b"2"),
            frame(b"3"),
            frame(b"4"),
            frame(b"5"),
            frame(b"6")
        ]
    );
}

#[test]
fn cl_length_counts_bytes() {
    let text = "{\"text\":\"zażółć 🦀\"}";
    let body = text.as_bytes();
    assert_eq!((body.len(), text.chars().count()), (26, 19));
    let mut input = b"Content-Length: 26\r\n\r\n".to_vec();
    input.extend_from_slice(body);
    input.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    assert_eq!(
        same_in_every_split(Framing::ContentLength.decoder(), &input),
        [frame(body), frame(b"")]
    );
}

#[test]
fn cl_bodies_may_hold_anything() {
    let body = b"\r\n\r\nContent-Length: 5\r\n\r\n\n\x00\xff";
    let mut wire = BytesMut::new();
    encode_content_length(body, &mut wire);
    assert_eq!(
        same_in_every_split(Framing::ContentLength.decoder(), &wire),
        [frame(body)]
    );
}

#[test]
fn cl_bad_headers_are_fatal() {
    let cases: [(&[u8], HeaderError); 12] = [
        (b"Content-Type: x\r\n\r\n{}", HeaderError::MissingContentLength),
        (b"\r\n{}", HeaderError::MissingContentLength),
        (
            b"Content-Length: abc\r\n\r\n{}",
            HeaderError::InvalidContentLength,
        ),
        (b"Content-Length: -2\r\n\r\n{}", HeaderError::InvalidContentLength),
        (b"Content-Length: \r\n\r\n{}", HeaderError::InvalidContentLength),
        (
            b"Content-Length: 2 2\r\n\r\n{}",
            HeaderError::InvalidContentLength,
        ),
        (
            b"Content-Length: 0x2\r\n\r\n{}",
            HeaderError::InvalidContentLength,
        ),
        (
            b"Content-Length: 99999999999999999999999\r\n\r\n",
            HeaderError::ContentLengthOverflow,
        ),
        (
            b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            HeaderError::DuplicateContentLength,
        ),
        (
            b"Content-Length: 2\r\ncontent-length: 3\r\n\r\n{}",
            HeaderError::DuplicateContentLength,
        ),
        (b"{\"jsonrpc\":\"2.0\"}\r\n", HeaderError::Malformed),
        (b"Content-Length 2\r\n\r\n{}", HeaderError::Malformed),
    ];
    for (input, reason) in cases {
        assert_eq!(
            same_in_every_split(Framing::ContentLength.decoder(), input),
            [bad_header(reason, 0)],
            "{}",
            String::from_utf8_lossy(input)
        );
    }
    // After a good frame, the offset points at the bad header.
    assert_eq!(
        cl(b"Content-Length: 2\r\n\r\n{}Content-Type: x\r\n\r\n"),
        [frame(b"{}"), bad_header(HeaderError::MissingContentLength, 23)]
    );
    // A fatal error repeats, and nothing more is consumed.
    let mut decoder = ContentLengthDecoder::new();
    let mut buf = BytesMut::from(&b"Content-Length: x\r\n\r\nContent-Length: 2\r\n\r\n{}"[..]);
    let first = decoder.decode(&mut buf).unwrap_err().to_string();
    let left = buf.len();
    assert_eq!(decoder.decode(&mut buf).unwrap_err().to_string(), first);
    assert_eq!(decoder.decode_eof(&mut buf).unwrap_err().to_string(), first);
    assert_eq!(buf.len(), left);
}

#[test]
fn cl_ten_gigabytes_is_an_error_not_an_allocation() {
    let mut decoder = ContentLengthDecoder::new();
    let mut buf = BytesMut::with_capacity(64);
    buf.extend_from_slice(b"Content-Length: 10000000000\r\n\r\n{\"a\"");
    let e = decoder.decode(&mut buf).unwrap_err();
    assert!(
        matches!(e, FrameError::TooLarge { len: 10_000_000_000, limit, offset: 0 } if limit == DEFAULT_MAX_FRAME),
        "{e:?}"
    );
    assert!(e.is_recoverable());
    assert!(buf.capacity() <= 64, "capacity grew to {}", buf.capacity());
    // The body's bytes are dropped as they arrive.
    assert_eq!(decoder.decode(&mut buf).unwrap(), None);
    assert!(buf.is_empty());
    buf.extend_from_slice(&[b'x'; 64]);
    assert_eq!(decoder.decode(&mut buf).unwrap(), None);
    assert!(buf.is_empty() && buf.capacity() <= 64);
    // At the end of the input nothing more is reported: the frame was.
    assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
}

#[test]
fn cl_oversized_body_then_a_good_frame() {
    let mut input = b"Content-Length: 2\r\n\r\n[]Content-Length: 300\r\n\r\n".to_vec();
    input.extend_from_slice(&[b'\n'; 300]);
    input.extend_from_slice(b"Content-Length: 3\r\n\r\n[1]");
    assert_eq!(
        same_in_every_split(Framing::ContentLength.decoder().with_max_frame(100), &input),
        [frame(b"[]"), too_large(300, 100, 23), frame(b"[1]")]
    );
    // The skip holds no more than one read's bytes at a time.
    let mut decoder = ContentLengthDecoder::new().with_max_frame(100);
    let mut buf = BytesMut::new();
    let mut errors = 0;
    for chunk in input.chunks(16) {
        buf.extend_from_slice(chunk);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => errors += 1,
            }
        }
        assert!(buf.len() <= 60);
    }
    assert_eq!(errors, 1);
}

#[test]
fn cl_limit_is_inclusive() {
    let d = || Framing::ContentLength.decoder().with_max_frame(3);
    assert_eq!(
        same_in_every_split(d(), b"Content-Length: 3\r\n\r\n[1]"),
        [frame(b"[1]")]
    );
    assert_eq!(
        same_in_every_split(d(), b"Content-Length: 4\r\n\r\n[12]"),
        [too_large(4, 3, 0)]
    );
}

#[test]
fn cl_endless_header_is_an_error() {
    // One header line that never ends.
    let mut decoder = ContentLengthDecoder::new();
    let mut buf = BytesMut::new();
    let mut result = Ok(None);
    for _ in 0..100 {
        buf.extend_from_slice(&[b'X'; 1000]);
        result = decoder.decode(&mut buf);
        if result.is_err() {
            break;
        }
    }
    let e = result.unwrap_err();
    assert!(
        matches!(
            e,
            FrameError::BadHeader {
                reason: HeaderError::TooLong { limit: 8192 },
                offset: 0
            }
        ),
        "{e:?}"
    );
    assert!(buf.len() <= 9000);
    // Endless short header lines.
    let mut input = Vec::new();
    for _ in 0..2000 {
        input.extend_from_slice(b"X-Spam: 1\r\n");
    }
    assert_eq!(
        same_in_every_split(FrameDecoder::from(ContentLengthDecoder::new()), &input),
        [bad_header(HeaderError::TooLong { limit: 8192 }, 0)]
    );
    // A configurable limit, counting every header byte up to the blank line.
    let header = b"Content-Length: 2\r\n\r\n";
    let d = |limit| FrameDecoder::from(ContentLengthDecoder::new().with_max_header(limit));
    let mut input = header.to_vec();
    input.extend_from_slice(b"{}");
    assert_eq!(same_in_every_split(d(header.len()), &input), [frame(b"{}")]);
    assert_eq!(
        same_in_every_split(d(header.len() - 1), &input),
        [bad_header(HeaderError::TooLong { limit: 20 }, 0)]
    );
}

#[test]
fn cl_end_of_input() {
    assert_eq!(cl(b""), []);
    assert_eq!(cl(b"Content-Length: 2\r\n\r\n{}"), [frame(b"{}")]);
    // Inside the header.
    assert_eq!(cl(b"Content-Len"), [truncated(None, 11, 0)]);
    assert_eq!(cl(b"Content-Length: 2\r\n"), [truncated(None, 19, 0)]);
    assert_eq!(
        cl(b"Content-Length: 2\r\n\r\n{}Content-Length: 2\r\n\r"),
        [frame(b"{}"), truncated(None, 20, 23)]
    );
    // Inside the body.
    assert_eq!(cl(b"Content-Length: 5\r\n\r\n"), [truncated(Some(5), 0, 0)]);
    assert_eq!(cl(b"Content-Length: 5\r\n\r\n[1,"), [truncated(Some(5), 3, 0)]);
    // Every split gives the same.
    let input = b"Content-Length: 2\r\n\r\n{}Content-Length: 10\r\n\r\n{\"a\":";
    assert_eq!(
        same_in_every_split(Framing::ContentLength.decoder(), input),
        [frame(b"{}"), truncated(Some(10), 5, 23)]
    );
    // After a truncation the decoder starts over (a resumable transport).
    let mut decoder = ContentLengthDecoder::new();
    let mut buf = BytesMut::from(&b"Content-Length: 5\r\n\r\n[1,"[..]);
    assert!(decoder.decode_eof(&mut buf).is_err());
    assert!(buf.is_empty());
    assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
    buf.extend_from_slice(b"Content-Length: 1\r\n\r\n7");
    assert_eq!(&decoder.decode(&mut buf).unwrap().unwrap()[..], b"7");
    assert_eq!(decoder.consumed(), 24 + 22);
}

#[test]
fn cl_never_grows_the_buffer_itself() {
    let mut decoder = ContentLengthDecoder::new();
    let mut buf = BytesMut::with_capacity(64);
    buf.extend_from_slice(b"Content-Length: 5000\r\n\r\n{");
    assert_eq!(decoder.decode(&mut buf).unwrap(), None);
    assert_eq!(&buf[..], b"{");
    assert!(buf.capacity() <= 64);
}

// ---------------------------------------------------------------- encoders

#[test]
fn encoder_round_trips() {
    let bodies: [&[u8]; 5] = [
        b"{}",
        br#"{"jsonrpc":"2.0","id":1,"result":[1,2,3]}"#,
        "{\"é\":\"🦀\"}".as_bytes(),
        &[b'7'; 5000],
        b"[\"\\n\"]",
    ];
    for framing in [Framing::Ndjson, Framing::ContentLength] {
        let mut wire = BytesMut::new();
        for body in bodies {
            framing.encode(body, &mut wire);
        }
        let expected: Vec<Out> = bodies.iter().map(|b| frame(b)).collect();
        assert_eq!(
            same_in_every_split(framing.decoder(), &wire),
            expected,
            "{framing}"
        );

        // Written in place, into a buffer already holding earlier frames.
        let mut wire = BytesMut::new();
        for body in bodies {
            let mark = framing.begin(&mut wire);
            wire.extend_from_slice(body);
            framing.finish(&mut wire, mark);
        }
        assert_eq!(
            same_in_every_split(framing.decoder(), &wire),
            expected,
            "{framing} in place"
        );
    }
}

#[test]
fn encoders_write_what_peers_expect() {
    let mut dst = BytesMut::new();
    encode_ndjson(b"[1]", &mut dst);
    encode_content_length(b"[1]", &mut dst);
    assert_eq!(&dst[..], b"[1]\nContent-Length: 3\r\n\r\n[1]");
    // An empty NDJSON body is a blank line, which decoders skip.
    let mut dst = BytesMut::new();
    encode_ndjson(b"", &mut dst);
    assert_eq!(ndjson(&dst), []);
}

#[test]
fn in_place_content_length_frame_is_not_moved_in_an_empty_buffer() {
    let mut dst = BytesMut::with_capacity(1024);
    let mark = Framing::ContentLength.begin(&mut dst);
    let body_at = dst.len();
    dst.extend_from_slice(&[b'x'; 300]);
    let body_ptr = dst[body_at..].as_ptr();
    Framing::ContentLength.finish(&mut dst, mark);
    assert!(dst.starts_with(b"Content-Length: 300\r\n\r\nxxx"));
    assert_eq!(dst.len(), 23 + 300);
    assert_eq!(
        dst[23..].as_ptr(),
        body_ptr,
        "the body stayed where it was written"
    );
}

// ---------------------------------------------------------------- properties

/// One NDJSON line in a generated stream.
#[derive(Clone, Debug)]
enum Line {
    Good(String),
    Oversized(usize),
    Blank(&'static str),
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        4 => "[a-z0-9{}\\[\\]\":, é🦀]{0,30}".prop_map(|s| Line::Good(format!("{{{s}"))),
        1 => (33usize..120).prop_map(Line::Oversized),
        1 => prop::sample::select(&["", "\r", "  ", "\t \r"][..]).prop_map(Line::Blank),
    ]
}

const PROP_MAX: usize = 32;

fn ndjson_stream(lines: &[Line], crlf: bool, final_newline: bool) -> (Vec<u8>, Vec<Out>) {
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let offset = wire.len() as u64;
        match line {
            Line::Good(text) => {
                wire.extend_from_slice(text.as_bytes());
                if text.len() > PROP_MAX {
                    expected.push(too_large(text.len(), PROP_MAX, offset));
                } else {
                    expected.push(frame(text.as_bytes()));
                }
            }
            Line::Oversized(len) => {
                wire.extend_from_slice(&vec![b'o'; *len]);
                expected.push(too_large(*len, PROP_MAX, offset));
            }
            Line::Blank(text) => wire.extend_from_slice(text.as_bytes()),
        }
        if i + 1 < lines.len() || final_newline {
            wire.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
    }
    (wire, expected)
}

/// One Content-Length frame in a generated stream.
#[derive(Clone, Debug)]
enum Message {
    Good(Vec<u8>, u8),
    Oversized(usize),
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        4 => (prop::collection::vec(any::<u8>(), 0..40), 0u8..4).prop_map(|(b, style)| Message::Good(b, style)),
        1 => (33usize..120).prop_map(Message::Oversized),
    ]
}

fn cl_stream(messages: &[Message]) -> (Vec<u8>, Vec<Out>) {
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for message in messages {
        let offset = wire.len() as u64;
        let (body, style) = match message {
            Message::Good(body, style) => (body.clone(), *style),
            Message::Oversized(len) => (vec![b'\n'; *len], 0),
        };
        let n = body.len();
        let header = match style {
            0 => format!("Content-Length: {n}\r\n\r\n"),
            1 => format!(
                "Content-Length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n"
            ),
            2 => format!("content-type: x\r\ncontent-length:{n}  \r\n\r\n"),
            _ => format!("Content-Length: {n}\n\n"),
        };
        wire.extend_from_slice(header.as_bytes());
        wire.extend_from_slice(&body);
        expected.push(if n > PROP_MAX {
            too_large(n, PROP_MAX, offset)
        } else {
            frame(&body)
        });
    }
    (wire, expected)
}

fn splits() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..20, 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn ndjson_any_split_gives_the_same_frames(
        lines in prop::collection::vec(line(), 0..12),
        crlf: bool,
        final_newline: bool,
        sizes in splits(),
    ) {
        let (wire, expected) = ndjson_stream(&lines, crlf, final_newline);
        let decoder = Framing::Ndjson.decoder().with_max_frame(PROP_MAX);
        prop_assert_eq!(&decode_in_chunks(decoder.clone(), &wire, &[]), &expected);
        prop_assert_eq!(&decode_in_chunks(decoder.clone(), &wire, &[1]), &expected);
        prop_assert_eq!(&decode_in_chunks(decoder, &wire, &sizes), &expected);
    }

    #[test]
    fn content_length_any_split_gives_the_same_frames(
        messages in prop::collection::vec(message(), 0..10),
        sizes in splits(),
    ) {
        let (wire, expected) = cl_stream(&messages);
        let decoder = Framing::ContentLength.decoder().with_max_frame(PROP_MAX);
        prop_assert_eq!(&decode_in_chunks(decoder.clone(), &wire, &[]), &expected);
        prop_assert_eq!(&decode_in_chunks(decoder.clone(), &wire, &[1]), &expected);
        prop_assert_eq!(&decode_in_chunks(decoder, &wire, &sizes), &expected);
    }

    #[test]
    fn content_length_cut_anywhere_ends_in_a_clear_error(
        messages in prop::collection::vec(message(), 1..6),
        cut in any::<prop::sample::Index>(),
        sizes in splits(),
    ) {
        let (wire, _) = cl_stream(&messages);
        let cut = cut.index(wire.len());
        let decoder = Framing::ContentLength.decoder().with_max_frame(PROP_MAX);
        let whole = decode_in_chunks(decoder.clone(), &wire[..cut], &[]);
        prop_assert_eq!(&decode_in_chunks(decoder, &wire[..cut], &sizes), &whole);
        // What the whole stream gives, up to the cut; then at most one error about the cut.
        let (_, full) = cl_stream(&messages);
        let mut got = whole.as_slice();
        if let Some((Out::Error(last), before)) = got.split_last() {
            if last.starts_with("input ended inside a frame") {
                got = before;
            }
        }
        prop_assert!(full.starts_with(got), "{:?} is not a prefix of {:?}", got, full);
        if cut == wire.len() {
            prop_assert_eq!(&whole, &full);
        }
    }

    #[test]
    fn arbitrary_bytes_decode_the_same_in_any_split(
        input in prop::collection::vec(prop_oneof![
            4 => any::<u8>(),
            2 => Just(b'\n'),
            1 => Just(b'\r'),
            1 => Just(b':'),
        ], 0..300),
        header in prop::collection::vec(any::<u8>(), 0..10),
        sizes in splits(),
    ) {
        // Prefix a plausible header so bodies are reached, not only header errors.
        let mut wire = b"Content-Length: 7\r\n".to_vec();
        wire.extend_from_slice(&header);
        wire.extend_from_slice(&input);
        for decoder in [
            Framing::Ndjson.decoder().with_max_frame(16),
            FrameDecoder::from(ContentLengthDecoder::new().with_max_frame(16).with_max_header(64)),
        ] {
            let whole = decode_in_chunks(decoder.clone(), &wire, &[]);
            prop_assert_eq!(&decode_in_chunks(decoder.clone(), &wire, &[1]), &whole);
            prop_assert_eq!(&decode_in_chunks(decoder, &wire, &sizes), &whole);
        }
    }
}

#[test]
fn bytes_frames_outlive_the_buffer() {
    let mut decoder = NdjsonDecoder::new();
    let frames: Vec<Bytes> = {
        let mut buf = BytesMut::from(&b"[1]\n[2]\n"[..]);
        std::iter::from_fn(|| decoder.decode(&mut buf).unwrap()).collect()
    };
    assert_eq!(frames, [Bytes::from_static(b"[1]"), Bytes::from_static(b"[2]")]);
}
