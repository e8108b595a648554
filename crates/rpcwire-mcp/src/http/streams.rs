//! `SessionStreams`: the SSE streams of one session — those kept for resumption (the oldest
//! go first), and the one the client opened with GET for messages not tied to a request.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::stream::EventStream;
use crate::sync::lock_unpoisoned;

/// SSE streams of a session kept for resumption (the oldest go first).
const KEPT_STREAMS: usize = 32;

/// The streams of one session.
#[derive(Debug)]
pub(crate) struct SessionStreams {
    kept: Mutex<VecDeque<Arc<EventStream>>>,
    /// The stream the client opened with GET, for messages not tied to a request.
    standalone: Mutex<Option<Arc<EventStream>>>,
    next_stream: AtomicU64,
}

impl Default for SessionStreams {
    fn default() -> SessionStreams {
        SessionStreams {
            kept: Mutex::new(VecDeque::new()),
            standalone: Mutex::new(None),
            next_stream: AtomicU64::new(1),
        }
    }
}

impl SessionStreams {
    /// A new SSE stream, kept for resumption.
    pub(crate) fn new_stream(&self) -> Arc<EventStream> {
        let stream = Arc::new(EventStream::new(self.next_stream.fetch_add(1, Ordering::Relaxed)));
        let mut kept = lock_unpoisoned(&self.kept);
        if kept.len() >= KEPT_STREAMS {
            kept.pop_front();
        }
        kept.push_back(stream.clone());
        stream
    }

    /// The stream numbered `number`, if it is still kept.
    pub(crate) fn stream(&self, number: u64) -> Option<Arc<EventStream>> {
        lock_unpoisoned(&self.kept)
            .iter()
            .find(|stream| stream.number() == number)
            .cloned()
    }

    /// The GET stream, and whether it was made now: a new one when there is none; `None`
    /// while one is being read.
    pub(crate) fn open_standalone(&self) -> Option<(Arc<EventStream>, bool)> {
        let mut standalone = lock_unpoisoned(&self.standalone);
        match &*standalone {
            Some(stream) if stream.is_attached() => None,
            Some(stream) => Some((stream.clone(), false)),
            None => {
                let stream = self.new_stream();
                *standalone = Some(stream.clone());
                Some((stream, true))
            }
        }
    }

    /// The GET stream, if the client opened one.
    pub(crate) fn standalone(&self) -> Option<Arc<EventStream>> {
        lock_unpoisoned(&self.standalone).clone()
    }

    /// Ends every stream: their readers' bodies end after what they have.
    pub(crate) fn finish_all(&self) {
        for stream in lock_unpoisoned(&self.kept).drain(..) {
            stream.finish();
        }
        if let Some(stream) = lock_unpoisoned(&self.standalone).take() {
            stream.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_numbered_kept_boundedly_and_one_get_stream_is_read_at_a_time() {
        let streams = SessionStreams::default();
        let first = streams.new_stream();
        assert_eq!(first.number(), 1);
        assert!(streams.stream(1).is_some());
        for _ in 0..KEPT_STREAMS {
            streams.new_stream();
        }
        assert!(streams.stream(1).is_none(), "the oldest went first");
        assert!(streams.standalone().is_none());
        let (get, made) = streams.open_standalone().unwrap();
        assert!(made);
        let reader = get.attach(None).unwrap();
        assert!(streams.open_standalone().is_none(), "one reader at a time");
        drop(reader);
        let (again, made) = streams.open_standalone().unwrap();
        assert!(!made && Arc::ptr_eq(&get, &again));
        let mut late = again.attach(None).unwrap();
        streams.finish_all();
        assert!(streams.standalone().is_none());
        assert!(late.try_recv().is_err());
    }
}
