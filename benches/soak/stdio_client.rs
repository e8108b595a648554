//! One connection to a server over its stdin and stdout (`spec_server`), in either framing:
//! NDJSON (one message per line) or LSP-style `Content-Length` headers. A writer sends the
//! traffic; a reader task settles the answers; at the end the writer waits for the answers
//! due and closes stdin, and the server exits at the end of its input.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::connection::{close_reader, drain, next_to_send, WRITE_LIMIT};
use crate::ledger::Ledger;
use crate::traffic::Traffic;

/// The largest answer the reader accepts, in bytes (the largest expected is about 64 KiB).
const MAX_ANSWER: usize = 16 << 20;

/// How messages are delimited on the pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StdioFraming {
    /// One message per line.
    Ndjson,
    /// `Content-Length: N\r\n\r\n` before each message.
    ContentLength,
}

impl StdioFraming {
    /// The framing's name on the server's command line (`--framing`).
    pub fn flag(self) -> &'static str {
        match self {
            StdioFraming::Ndjson => "ndjson",
            StdioFraming::ContentLength => "content-length",
        }
    }

    /// `body` framed for the wire.
    fn frame(self, body: &str) -> Vec<u8> {
        match self {
            StdioFraming::Ndjson => {
                let mut wire = Vec::with_capacity(body.len() + 1);
                wire.extend_from_slice(body.as_bytes());
                wire.push(b'\n');
                wire
            }
            StdioFraming::ContentLength => {
                let mut wire = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
                wire.extend_from_slice(body.as_bytes());
                wire
            }
        }
    }
}

/// Sends `traffic` into `input` until `stop`, settling the answers read from `output` in
/// `ledger`; then waits for the answers due and closes `input`.
pub async fn drive<W, R>(
    mut input: W,
    output: R,
    framing: StdioFraming,
    ledger: Arc<Ledger>,
    mut traffic: Traffic,
    mut stop: watch::Receiver<bool>,
) where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin + Send + 'static,
{
    let mut reader: JoinHandle<()> = tokio::spawn(read_answers(output, framing, ledger.clone()));
    let mut broken = false;
    while let Some(message) = next_to_send(&mut traffic, &ledger, &mut stop).await {
        ledger.sent(&message);
        let wire = framing.frame(&message.body);
        let problem = match tokio::time::timeout(WRITE_LIMIT, input.write_all(&wire)).await {
            Ok(Ok(())) if reader.is_finished() => Some("the server's output ended".to_owned()),
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(format!("writing to the server: {error}")),
            Err(_) => Some(format!("a write stalled for {} s", WRITE_LIMIT.as_secs())),
        };
        if let Some(problem) = problem {
            ledger.connection_lost(&problem);
            broken = true;
            break;
        }
    }
    if !broken {
        drain(&ledger, "after the last message").await;
    }
    drop(input); // the server exits at the end of its input
    close_reader(&mut reader, &ledger).await;
}

/// Reads answers until the end of `output`, settling each in `ledger`.
async fn read_answers<R: AsyncRead + Unpin>(output: R, framing: StdioFraming, ledger: Arc<Ledger>) {
    let mut output = BufReader::new(output);
    let mut body = Vec::new();
    loop {
        let next = match framing {
            StdioFraming::Ndjson => read_line(&mut output, &mut body).await,
            StdioFraming::ContentLength => read_frame(&mut output, &mut body).await,
        };
        match next {
            Ok(true) => ledger.answer_text(&body),
            Ok(false) => return,
            Err(problem) => {
                ledger.bad_output(&problem);
                return;
            }
        }
    }
}

/// Reads the next non-empty line into `body` (without its line end); `false` at the end.
async fn read_line<R: AsyncBufReadExt + Unpin>(output: &mut R, body: &mut Vec<u8>) -> Result<bool, String> {
    loop {
        body.clear();
        let read = output
            .read_until(b'\n', body)
            .await
            .map_err(|e| format!("reading the server's output: {e}"))?;
        if read == 0 {
            return Ok(false);
        }
        if body.last() != Some(&b'\n') {
            return Err("the output ended in the middle of a line".to_owned());
        }
        while matches!(body.last(), Some(b'\n' | b'\r')) {
            body.pop();
        }
        if !body.is_empty() {
            return Ok(true);
        }
    }
}

/// Reads the next `Content-Length` frame's body into `body`; `false` at the end.
async fn read_frame<R: AsyncBufReadExt + Unpin>(output: &mut R, body: &mut Vec<u8>) -> Result<bool, String> {
    let Some(length) = read_header(output).await? else {
        return Ok(false);
    };
    if length > MAX_ANSWER {
        return Err(format!("an answer of {length} bytes announced"));
    }
    body.clear();
    body.resize(length, 0);
    output
        .read_exact(body)
        .await
        .map_err(|e| format!("reading a {length}-byte answer: {e}"))?;
    Ok(true)
}

/// Reads a header up to its empty line; its `Content-Length`, or `None` at the end of the
/// output before a header.
async fn read_header<R: AsyncBufReadExt + Unpin>(output: &mut R) -> Result<Option<usize>, String> {
    let mut length = None;
    let mut line = String::new();
    let mut first = true;
    loop {
        line.clear();
        let read = output
            .read_line(&mut line)
            .await
            .map_err(|e| format!("reading a header: {e}"))?;
        if read == 0 {
            return if first {
                Ok(None)
            } else {
                Err("the output ended in a header".to_owned())
            };
        }
        first = false;
        let text = line.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            return length
                .map(Some)
                .ok_or_else(|| "a header without Content-Length".to_owned());
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!("a header line without a colon: {text:?}"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            length = Some(value.parse().map_err(|_| format!("Content-Length {value:?}"))?);
        }
    }
}
