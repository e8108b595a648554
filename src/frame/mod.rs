//! Framing: newline-delimited JSON and Content-Length over partial reads.
