//! `ChildTransport`: the NDJSON transport over a server child's stdout and stdin, on which a
//! line over the size limit ends the connection (and so the child) with an error saying so,
//! instead of being skipped: a request whose answer was that line would otherwise wait for
//! its timeout.

use bytes::Bytes;
use tokio::process::{ChildStdin, ChildStdout};

use crate::frame::{FrameError, Framing};
use crate::transport::{FrameReceiver, StreamReceiver, StreamSender, Transport, TransportError};

/// A child's stdio as a transport.
pub(crate) struct ChildTransport {
    pub(crate) stdout: ChildStdout,
    pub(crate) stdin: ChildStdin,
    /// The longest line the child may write.
    pub(crate) max_line: usize,
}

impl Transport for ChildTransport {
    type Receiver = LineReceiver<ChildStdout>;
    type Sender = StreamSender<ChildStdin>;

    fn split(self) -> (Self::Receiver, Self::Sender) {
        let receiver = LineReceiver {
            inner: StreamReceiver::new(self.stdout, Framing::Ndjson).with_max_frame(self.max_line),
        };
        (receiver, StreamSender::new(self.stdin, Framing::Ndjson))
    }
}

/// Lines from the child; one over the limit is a fatal error.
pub(crate) struct LineReceiver<R> {
    inner: StreamReceiver<R>,
}

impl<R: tokio::io::AsyncRead + Unpin + Send + 'static> FrameReceiver for LineReceiver<R> {
    async fn receive(&mut self) -> Result<Option<Bytes>, TransportError> {
        match self.inner.receive().await {
            Err(TransportError::Frame(FrameError::TooLarge { len, limit, .. })) => {
                Err(TransportError::Io(std::io::Error::other(format!(
                    "the server wrote a line of at least {len} bytes, over the limit of {limit}"
                ))))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_input_with_a_clear_error() {
        let input: &[u8] = b"{\"a\":1}\n{\"too\":\"long line\"}\n{\"b\":2}\n";
        let mut lines = LineReceiver {
            inner: StreamReceiver::new(input, Framing::Ndjson).with_max_frame(10),
        };
        assert_eq!(&lines.receive().await.unwrap().unwrap()[..], b"{\"a\":1}");
        let error = lines.receive().await.unwrap_err();
        assert!(!error.is_recoverable());
        assert!(error.to_string().contains("over the limit of 10"), "{error}");
    }
}
