//! `scan_string` and `next_attention`: from a position inside a string, the next byte the
//! string grammar must look at, found in tiers sized for JSON-RPC's strings.
//!
//! - 16 bytes inline: keys, methods, ids and most values end there;
//! - within 16 bytes of the input's end (the last string of a message): the input's last
//!   16 bytes, shifted, instead of a padded copy;
//! - inputs shorter than 16 bytes: a copy padded with quotes;
//! - past the first 16 bytes, out of line: up to 64 more bytes 16 at a time (addresses,
//!   32-byte hashes in hex: 66 bytes), then the kernel chosen for this CPU.

use super::{attention16, string_run};

/// From `pos` inside a string: `Ok` with the position after the closing quote when the next
/// byte needing attention is that quote (the usual case, answered inline), else what `rest`
/// (the grammar) makes of the position of that byte, or of the input's end.
#[inline(always)]
pub(crate) fn scan_string<E>(
    buf: &[u8],
    pos: usize,
    rest: impl FnOnce(usize) -> Result<usize, E>,
) -> Result<usize, E> {
    if let Some(chunk) = buf.get(pos..).and_then(<[u8]>::first_chunk::<16>) {
        let bits = attention16(chunk);
        if bits == 0 {
            return rest(past_first_chunk(buf, pos + 16));
        }
        let first = bits.trailing_zeros() as usize;
        if chunk[first] == b'"' {
            return Ok(pos + first + 1);
        }
        return rest(pos + first);
    }
    // Within 16 bytes of the end: the input's last 16 bytes, shifted so that bit 0 is
    // `pos`; a bit just past the end stands for "none".
    if let (Some(last), Some(tail)) = (buf.last_chunk::<16>(), buf.get(pos..)) {
        let bits = (attention16(last) >> (16 - tail.len())) | (1 << tail.len());
        let first = bits.trailing_zeros() as usize;
        if first < tail.len() && tail[first] == b'"' {
            return Ok(pos + first + 1);
        }
        return rest(pos + first);
    }
    rest(short_input(buf, pos))
}

/// The first position at or after `pos` whose byte needs attention inside a string (`"`,
/// `\`, a control byte or a non-ASCII byte), or `buf.len()` when there is none. `pos` is at
/// most `buf.len()`.
#[inline(always)]
pub(crate) fn next_attention(buf: &[u8], pos: usize) -> usize {
    if let Some(chunk) = buf.get(pos..).and_then(<[u8]>::first_chunk::<16>) {
        let bits = attention16(chunk);
        if bits == 0 {
            return past_first_chunk(buf, pos + 16);
        }
        return pos + bits.trailing_zeros() as usize;
    }
    // Within 16 bytes of the end: the input's last 16 bytes, shifted so that bit 0 is
    // `pos`; a bit just past the end stands for "none".
    if let (Some(last), Some(tail)) = (buf.last_chunk::<16>(), buf.get(pos..)) {
        let bits = (attention16(last) >> (16 - tail.len())) | (1 << tail.len());
        return pos + bits.trailing_zeros() as usize;
    }
    short_input(buf, pos)
}

/// [`next_attention`] in an input shorter than 16 bytes: the tail padded with quotes (a
/// quote found in the padding means "none").
#[inline(never)]
fn short_input(buf: &[u8], pos: usize) -> usize {
    let tail = buf.get(pos..).unwrap_or_default();
    let mut block = [b'"'; 16];
    block[..tail.len()].copy_from_slice(tail);
    let first = attention16(&block).trailing_zeros() as usize;
    pos + first.min(tail.len())
}

/// [`next_attention`] past a clean first chunk: up to 64 more bytes inline, 32 at a time (one
/// branch for an address's or a hash's rest), then the cached kernel over the rest.
#[inline(never)]
pub(crate) fn past_first_chunk(buf: &[u8], mut pos: usize) -> usize {
    for _ in 0..2 {
        let Some((low, high)) = buf
            .get(pos..)
            .and_then(<[u8]>::first_chunk::<32>)
            .map(|pair| pair.split_at(16))
        else {
            break;
        };
        let (Ok(low), Ok(high)) = (<&[u8; 16]>::try_from(low), <&[u8; 16]>::try_from(high)) else {
            break;
        };
        let bits = attention16(low) | (attention16(high) << 16);
        if bits != 0 {
            return pos + bits.trailing_zeros() as usize;
        }
        pos += 32;
    }
    pos + string_run(buf.get(pos..).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: one byte at a time.
    fn reference(buf: &[u8], pos: usize) -> usize {
        pos + super::super::portable::string_run_scalar(&buf[pos..])
    }

    #[test]
    fn agrees_with_the_reference_at_every_start_and_length() {
        // Under Miri (thousands of times slower) the lengths at the tiers' edges only.
        let lengths: Vec<usize> = if cfg!(miri) {
            vec![0, 1, 15, 16, 17, 31, 32, 33, 65]
        } else {
            (0..150).collect()
        };
        for len in lengths {
            let mut buf: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            for special_at in [None, Some(0), Some(15), Some(16), Some(17), Some(70), Some(100)] {
                if let Some(at) = special_at.filter(|&at| at < len) {
                    buf[at] = b'"';
                }
                for pos in 0..=len {
                    assert_eq!(
                        next_attention(&buf, pos),
                        reference(&buf, pos),
                        "len {len} special {special_at:?} pos {pos}"
                    );
                }
                if let Some(at) = special_at.filter(|&at| at < len) {
                    buf[at] = b'a';
                }
            }
        }
    }
}
