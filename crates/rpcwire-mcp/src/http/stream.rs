//! `EventStream`: one SSE stream of a session (a POST's answer stream, or the session's GET
//! stream) — its events with their ids, a bounded log of them for a client that reconnects
//! with `Last-Event-ID`, and the connection reading it now, if any.

use std::collections::VecDeque;
use std::sync::Mutex;

use bytes::{BufMut, Bytes, BytesMut};
use tokio::sync::mpsc;

use crate::sync::lock_unpoisoned;

/// Events kept per stream for replay.
const LOG_EVENTS: usize = 256;
/// Bytes of events kept per stream for replay.
const LOG_BYTES: usize = 1 << 20;
/// Events that may wait for a slow reader before it is cut off (it can resume).
const LIVE_QUEUE: usize = 64;

/// One SSE stream.
#[derive(Debug)]
pub(crate) struct EventStream {
    /// Its number in the session: event ids are `<stream>.<seq>`.
    number: u64,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    next_seq: u64,
    log: VecDeque<(u64, Bytes)>,
    log_bytes: usize,
    live: Option<mpsc::Sender<Bytes>>,
    finished: bool,
}

impl EventStream {
    pub(crate) fn new(number: u64) -> EventStream {
        EventStream {
            number,
            inner: Mutex::new(Inner {
                next_seq: 1,
                log: VecDeque::new(),
                log_bytes: 0,
                live: None,
                finished: false,
            }),
        }
    }

    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// A priming event (an id, `retry:`, empty data): it tells the client where to resume
    /// from before anything else is sent (SEP-1699).
    pub(crate) fn prime(&self, retry_ms: u64) {
        self.push_event(None, Some(retry_ms));
    }

    /// Sends one JSON-RPC message on the stream (and logs it for replay).
    pub(crate) fn push(&self, message: &[u8]) {
        self.push_event(Some(message), None);
    }

    fn push_event(&self, message: Option<&[u8]>, retry_ms: Option<u64>) {
        let mut inner = lock_unpoisoned(&self.inner);
        if inner.finished {
            return;
        }
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let event = encode_event(self.number, seq, message, retry_ms);
        if let Some(live) = &inner.live {
            // A reader that lets LIVE_QUEUE events pile up is cut off; it can resume.
            if live.try_send(event.clone()).is_err() {
                inner.live = None;
            }
        }
        inner.log_bytes += event.len();
        inner.log.push_back((seq, event));
        while inner.log.len() > LOG_EVENTS || inner.log_bytes > LOG_BYTES {
            let Some((_, dropped)) = inner.log.pop_front() else {
                break;
            };
            inner.log_bytes -= dropped.len();
        }
    }

    /// A reader for the stream from after event `after` (from the start with `None`): the
    /// logged events after it, then the live ones. A reader already attached is cut off.
    /// `None` when events after `after` are no longer in the log.
    pub(crate) fn attach(&self, after: Option<u64>) -> Option<mpsc::Receiver<Bytes>> {
        let mut inner = lock_unpoisoned(&self.inner);
        let after = after.unwrap_or(0);
        if let Some(&(first, _)) = inner.log.front() {
            if first > after + 1 {
                return None;
            }
        }
        let backlog: Vec<Bytes> = inner
            .log
            .iter()
            .filter(|(seq, _)| *seq > after)
            .map(|(_, event)| event.clone())
            .collect();
        let (sender, receiver) = mpsc::channel(backlog.len() + LIVE_QUEUE);
        for event in backlog {
            let _ = sender.try_send(event);
        }
        inner.live = (!inner.finished).then_some(sender);
        Some(receiver)
    }

    /// A reader for what the stream sends from now on (a GET stream opened again without
    /// `Last-Event-ID`).
    pub(crate) fn attach_from_now(&self) -> mpsc::Receiver<Bytes> {
        let last = lock_unpoisoned(&self.inner).next_seq - 1;
        self.attach(Some(last)).unwrap_or_else(|| mpsc::channel(1).1)
    }

    /// Whether a reader is attached and reading.
    pub(crate) fn is_attached(&self) -> bool {
        lock_unpoisoned(&self.inner)
            .live
            .as_ref()
            .is_some_and(|live| !live.is_closed())
    }

    /// Completes when no reader is attached (none was, or the one there went away or was
    /// cut off).
    pub(crate) async fn reader_gone(&self) {
        loop {
            let live = lock_unpoisoned(&self.inner).live.clone();
            match live {
                None => return,
                Some(live) if live.is_closed() => return,
                Some(live) => live.closed().await,
            }
        }
    }

    /// Closes the connection reading the stream, keeping the stream: the client may resume.
    pub(crate) fn detach(&self) {
        lock_unpoisoned(&self.inner).live = None;
    }

    /// No more events: the reader's body ends after what it has.
    pub(crate) fn finish(&self) {
        let mut inner = lock_unpoisoned(&self.inner);
        inner.finished = true;
        inner.live = None;
    }
}

/// Parses a `Last-Event-ID` this server gave: `(stream, seq)`.
pub(crate) fn parse_event_id(text: &str) -> Option<(u64, u64)> {
    let (stream, seq) = text.split_once('.')?;
    let canonical = |part: &str| part.parse::<u64>().ok().filter(|n| n.to_string() == part);
    Some((canonical(stream)?, canonical(seq)?))
}

/// One SSE event: `id`, an optional `retry`, and the message as its data (one line: a
/// JSON-RPC message written by rpcwire or as the client sent it, with no raw newline; any
/// newline is cut into `data:` lines, as SSE asks).
fn encode_event(stream: u64, seq: u64, message: Option<&[u8]>, retry_ms: Option<u64>) -> Bytes {
    let message = message.unwrap_or_default();
    let mut event = BytesMut::with_capacity(message.len() + 48);
    event.put_slice(b"id: ");
    event.put_slice(stream.to_string().as_bytes());
    event.put_u8(b'.');
    event.put_slice(seq.to_string().as_bytes());
    event.put_u8(b'\n');
    if let Some(retry) = retry_ms {
        event.put_slice(b"retry: ");
        event.put_slice(retry.to_string().as_bytes());
        event.put_u8(b'\n');
    }
    if message.is_empty() {
        event.put_slice(b"data: \n");
    } else {
        event.put_slice(b"event: message\n");
        for line in message.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            event.put_slice(b"data: ");
            event.put_slice(line);
            event.put_u8(b'\n');
        }
    }
    event.put_u8(b'\n');
    event.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_carry_their_ids_and_a_reconnecting_reader_gets_what_it_missed() {
        let stream = EventStream::new(3);
        let mut first = stream.attach(None).unwrap();
        stream.prime(500);
        stream.push(br#"{"a":1}"#);
        assert_eq!(&first.try_recv().unwrap()[..], b"id: 3.1\nretry: 500\ndata: \n\n");
        assert_eq!(
            &first.try_recv().unwrap()[..],
            b"id: 3.2\nevent: message\ndata: {\"a\":1}\n\n"
        );
        stream.detach();
        stream.push(br#"{"b":2}"#);
        assert!(first.try_recv().is_err(), "the first reader was cut off");
        let mut second = stream.attach(parse_event_id("3.1").map(|(_, seq)| seq)).unwrap();
        assert!(second.try_recv().unwrap().starts_with(b"id: 3.2\n"));
        assert!(second.try_recv().unwrap().starts_with(b"id: 3.3\n"));
        stream.finish();
        stream.push(b"{}");
        assert!(second.try_recv().is_err(), "nothing after the end");
    }

    #[test]
    fn a_slow_reader_is_cut_off_and_the_log_stays_bounded() {
        let stream = EventStream::new(1);
        let reader = stream.attach(None).unwrap();
        for _ in 0..LOG_EVENTS + LIVE_QUEUE {
            stream.push(b"{}");
        }
        assert!(!stream.is_attached(), "a reader that does not read is let go");
        drop(reader);
        assert!(
            stream.attach(Some(0)).is_none(),
            "the first events are gone from the log"
        );
        let inner = lock_unpoisoned(&stream.inner);
        assert_eq!(inner.log.len(), LOG_EVENTS);
    }

    #[test]
    fn only_ids_this_server_writes_parse() {
        assert_eq!(parse_event_id("4.17"), Some((4, 17)));
        for bad in ["", "4", "4.", ".1", "04.1", "4.1.2", "a.b", "-1.2"] {
            assert_eq!(parse_event_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn newlines_in_a_message_become_data_lines() {
        let event = encode_event(1, 1, Some(b"{\r\n}"), None);
        assert_eq!(&event[..], b"id: 1.1\nevent: message\ndata: {\ndata: }\n\n");
    }
}
