//! `LineScan`: the search for the next `\n` in a buffer that grows between reads, resumed
//! where the last search stopped, so that a long line arriving in many small reads is
//! scanned once, not once per read. Shared by both decoders (NDJSON lines, Content-Length
//! header lines).

/// How many bytes at the front of the buffer are known to hold no `\n`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LineScan {
    scanned: usize,
}

impl LineScan {
    /// The offset of the first `\n` in `buf`, searching only the bytes not searched before;
    /// `None` (and everything remembered as searched) when there is none yet.
    pub(super) fn find(&mut self, buf: &[u8]) -> Option<usize> {
        // A buffer shorter than the mark is not the one scanned: start over.
        let from = if self.scanned <= buf.len() {
            self.scanned
        } else {
            0
        };
        match memchr::memchr(b'\n', &buf[from..]) {
            Some(found) => Some(from + found),
            None => {
                self.scanned = buf.len();
                None
            }
        }
    }

    /// How many bytes at the buffer's front are known to hold no `\n`.
    #[cfg(test)]
    pub(super) fn searched(&self) -> usize {
        self.scanned
    }

    /// Forgets what was searched: the buffer's front was consumed.
    pub(super) fn reset(&mut self) {
        self.scanned = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resumes_where_it_stopped_and_starts_over_on_a_shorter_buffer() {
        let mut scan = LineScan::default();
        assert_eq!(scan.find(b"abc"), None);
        assert_eq!(scan.scanned, 3);
        assert_eq!(scan.find(b"abcde\nf"), Some(5));
        // A shorter buffer is not the one scanned.
        assert_eq!(scan.find(b"\n"), Some(0));
        scan.reset();
        assert_eq!(scan.find(b"x\ny"), Some(1));
    }
}
