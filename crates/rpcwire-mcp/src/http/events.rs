//! Reading an SSE stream (the client side of Streamable HTTP): bytes in, events out, each
//! with its id, its data and a `retry:` delay when it sets one; comments and unknown fields
//! skipped, as the SSE specification says. Bounded: an event larger than the limit is an
//! error, never a growing buffer.

use bytes::{Buf, BytesMut};

/// One SSE event.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) id: Option<String>,
    pub(crate) data: String,
    pub(crate) retry_ms: Option<u64>,
}

/// Cuts an SSE byte stream into events.
#[derive(Debug)]
pub(crate) struct EventReader {
    buffer: BytesMut,
    max_event: usize,
}

/// An event larger than the limit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct EventTooLarge;

impl EventReader {
    pub(crate) fn new(max_event: usize) -> EventReader {
        EventReader {
            buffer: BytesMut::new(),
            max_event,
        }
    }

    /// Takes the next piece of the stream: an error when what is buffered holds no end of
    /// an event within the limit.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), EventTooLarge> {
        self.buffer.extend_from_slice(bytes);
        match self.find_end() {
            Some((end, _)) if end > self.max_event => Err(EventTooLarge),
            None if self.buffer.len() > self.max_event.saturating_add(2) => Err(EventTooLarge),
            _ => Ok(()),
        }
    }

    /// The next whole event, if one has arrived (events with no data, no id and no `retry`
    /// skipped); an error for an event over the limit.
    pub(crate) fn next_event(&mut self) -> Result<Option<Event>, EventTooLarge> {
        loop {
            let Some((end, separator)) = self.find_end() else {
                return Ok(None);
            };
            if end > self.max_event {
                return Err(EventTooLarge);
            }
            let block = self.buffer.split_to(end);
            self.buffer.advance(separator);
            let event = parse_block(&block);
            if event.id.is_some() || !event.data.is_empty() || event.retry_ms.is_some() {
                return Ok(Some(event));
            }
        }
    }

    fn find_end(&self) -> Option<(usize, usize)> {
        find_end(&self.buffer)
    }
}

/// Where the first event in `buffer` ends: its length and the blank line's.
fn find_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let mut at = 0;
    while let Some(offset) = memchr::memchr2(b'\n', b'\r', &buffer[at..]) {
        let newline = at + offset;
        let after = match (buffer[newline], buffer.get(newline + 1)) {
            (b'\r', Some(b'\n')) => newline + 2,
            (b'\r', None) => return None, // a \n may follow
            _ => newline + 1,
        };
        match buffer.get(after) {
            Some(b'\n') => return Some((newline, after + 1 - newline)),
            Some(b'\r') => match buffer.get(after + 1) {
                Some(b'\n') => return Some((newline, after + 2 - newline)),
                Some(_) => return Some((newline, after + 1 - newline)),
                None => return None,
            },
            _ => at = after,
        }
        if at >= buffer.len() {
            return None;
        }
    }
    None
}

fn parse_block(block: &[u8]) -> Event {
    let text = String::from_utf8_lossy(block);
    let mut event = Event::default();
    let mut data_lines = 0;
    for line in text.split(['\n', '\r']) {
        if line.is_empty() || line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if data_lines > 0 {
                    event.data.push('\n');
                }
                event.data.push_str(value);
                data_lines += 1;
            }
            "id" if !value.contains('\0') => event.id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    event.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
    }
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_whole_whatever_the_pieces() {
        let stream = b"id: 1.1\nretry: 500\ndata: \n\n: a comment\n\nid: 1.2\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata:x\rdata: y\r\rfield\n\n";
        for piece in [1, 2, 3, 7, stream.len()] {
            let mut reader = EventReader::new(1024);
            let mut events = Vec::new();
            for chunk in stream.chunks(piece) {
                reader.push(chunk).unwrap();
                while let Some(event) = reader.next_event().unwrap() {
                    events.push(event);
                }
            }
            assert_eq!(events.len(), 3, "pieces of {piece}: {events:?}");
            assert_eq!(
                events[0],
                Event {
                    id: Some("1.1".into()),
                    data: String::new(),
                    retry_ms: Some(500)
                }
            );
            assert_eq!(events[1].id.as_deref(), Some("1.2"));
            assert_eq!(events[1].data, "{\"a\":\n1}");
            assert_eq!(events[2].data, "x\ny");
        }
    }

    #[test]
    fn an_event_past_the_limit_is_an_error() {
        let mut reader = EventReader::new(16);
        assert!(reader.push(b"data: 0123456789").is_ok());
        assert_eq!(reader.push(b"0123456789"), Err(EventTooLarge));
        let mut reader = EventReader::new(16);
        reader.push(b"data: 12\n\ndata: 0123456789").unwrap();
        assert_eq!(reader.next_event().unwrap().unwrap().data, "12");
        assert_eq!(reader.push(b"012345678901234"), Err(EventTooLarge));
        let mut reader = EventReader::new(16);
        reader.push(b"data: 1\n\ndata: 0123456789012345\n\n").unwrap();
        assert_eq!(reader.next_event().unwrap().unwrap().data, "1");
        assert_eq!(
            reader.next_event(),
            Err(EventTooLarge),
            "a whole event past the limit"
        );
    }
}
