//! `PostOutput`: where a POST's answer goes. A handler that sends nothing before its result
//! is answered with plain JSON, no stream made; the first message it sends before its result
//! (progress, a log message, a request to the client) turns the answer into an SSE stream —
//! made then, primed, and kept for resumption — on which the rest follows.

use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use tokio::sync::{mpsc, Notify};

use super::stream::EventStream;
use super::streams::SessionStreams;
use crate::sync::lock_unpoisoned;

/// The answer of one POST, as JSON or as a stream.
pub(crate) struct PostOutput {
    streams: Arc<SessionStreams>,
    /// The `retry:` of the priming event, when the revision has one.
    prime_retry_ms: Option<u64>,
    stream: OnceLock<Arc<EventStream>>,
    /// The stream's reader, until the POST takes it.
    reader: Mutex<Option<mpsc::Receiver<Bytes>>>,
    /// The whole answer, when it came before any stream.
    json: Mutex<Option<Bytes>>,
    streaming: Notify,
    /// Told when the stream is made.
    made: Notify,
}

/// How the POST is answered.
pub(crate) enum Outcome {
    /// The answer, alone (`None`: nothing to answer, a silent cancellation).
    Json(Option<Bytes>),
    /// An SSE stream.
    Events(mpsc::Receiver<Bytes>),
}

impl PostOutput {
    pub(crate) fn new(streams: Arc<SessionStreams>, prime_retry_ms: Option<u64>) -> PostOutput {
        PostOutput {
            streams,
            prime_retry_ms,
            stream: OnceLock::new(),
            reader: Mutex::new(None),
            json: Mutex::new(None),
            streaming: Notify::new(),
            made: Notify::new(),
        }
    }

    /// The stream, made (and primed, and announced to the POST) the first time.
    pub(crate) fn stream(&self) -> &Arc<EventStream> {
        self.stream.get_or_init(|| {
            let stream = self.streams.new_stream();
            *lock_unpoisoned(&self.reader) = stream.attach(None);
            if let Some(retry) = self.prime_retry_ms {
                stream.prime(retry);
            }
            self.streaming.notify_one();
            self.made.notify_waiters();
            stream
        })
    }

    /// Completes once the answer has become a stream; the stream.
    pub(crate) async fn made(&self) -> &Arc<EventStream> {
        loop {
            let made = self.made.notified();
            if let Some(stream) = self.stream.get() {
                return stream;
            }
            made.await;
        }
    }

    /// The handler is done: its answer (`None`: none) goes on the stream if there is one,
    /// else it is kept for the POST to answer with as JSON.
    pub(crate) fn complete(&self, answer: Option<Bytes>) {
        match self.stream.get() {
            Some(stream) => {
                if let Some(answer) = answer {
                    stream.push(&answer);
                }
                stream.finish();
            }
            None => *lock_unpoisoned(&self.json) = answer,
        }
    }

    /// How to answer, once the handler is done.
    pub(crate) fn outcome(&self) -> Outcome {
        match lock_unpoisoned(&self.reader).take() {
            Some(reader) => Outcome::Events(reader),
            None => Outcome::Json(lock_unpoisoned(&self.json).take()),
        }
    }

    /// Completes once the answer has become a stream; its reader.
    pub(crate) async fn streaming(&self) -> mpsc::Receiver<Bytes> {
        loop {
            if let Some(reader) = lock_unpoisoned(&self.reader).take() {
                return reader;
            }
            self.streaming.notified().await;
        }
    }
}
