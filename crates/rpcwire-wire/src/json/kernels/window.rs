//! `Window`: the bytes needing attention in a 64-byte window of the input, kept while a value
//! is walked.
//!
//! The end of a string inside the window is a shift and a count away, with no vector scan
//! that has to wait for the previous string's end (the next window's address does not depend
//! on where strings end, so the core loads and compares it ahead).

use super::attention::{past_first_chunk, scan_string};
use super::blocks::Blocks;

/// 64 bytes of attention bits from `base` (bit `i` for byte `base + i`), computed by `K`.
pub(crate) struct Window<K: Blocks> {
    base: usize,
    bits: u64,
    blocks: K,
}

impl<K: Blocks> Window<K> {
    /// A window that holds nothing yet: placed so far past any input (inputs are at most
    /// `u32::MAX` bytes) that neither it nor the window after it holds a position.
    #[inline(always)]
    pub(crate) fn new(blocks: K) -> Window<K> {
        Window {
            base: usize::MAX - 127,
            bits: 0,
            blocks,
        }
    }

    /// Points the window at the 64 bytes from `base`; `false` when the input ends before.
    #[inline(always)]
    fn load(&mut self, buf: &[u8], base: usize) -> bool {
        let Some(block) = buf.get(base..).and_then(<[u8]>::first_chunk::<64>) else {
            return false;
        };
        self.base = base;
        self.bits = self.blocks.attention64(block);
        true
    }

    /// [`scan_string`] through the window: `start` is inside a string.
    #[inline(always)]
    pub(crate) fn scan_string<E>(
        &mut self,
        buf: &[u8],
        start: usize,
        rest: impl FnOnce(usize) -> Result<usize, E>,
    ) -> Result<usize, E> {
        let mut offset = start.wrapping_sub(self.base);
        if offset >= 64 {
            // The next window when the string starts in it, else one at the string.
            let next = self.base.wrapping_add(64);
            let base = if start.wrapping_sub(next) < 64 {
                next
            } else {
                start
            };
            if !self.load(buf, base) {
                return scan_string(buf, start, rest);
            }
            offset = start - base;
        }
        let mut from = start;
        let mut bits = self.bits >> offset;
        // Clean to the window's end: the string goes on in the next windows (hashes and
        // addresses end there); past two more, the long-string kernel takes over.
        for _ in 0..2 {
            if bits != 0 {
                break;
            }
            let next = self.base + 64;
            if !self.load(buf, next) {
                return rest(past_first_chunk(buf, next));
            }
            from = next;
            bits = self.bits;
        }
        if bits == 0 {
            return rest(past_first_chunk(buf, self.base + 64));
        }
        let end = from + bits.trailing_zeros() as usize;
        if buf.get(end) == Some(&b'"') {
            return Ok(end + 1);
        }
        rest(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Along a walk over strings of every length (inside the window, across its edge, past
    /// it, near the input's end), the window finds what `scan_string` finds, with every
    /// kind of mask this CPU has.
    #[test]
    fn agrees_with_next_attention_along_a_walk() {
        check_walk(super::super::blocks::Baseline);
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = super::super::blocks::Avx2::detect() {
            check_walk(avx2);
        }
    }

    fn check_walk<K: Blocks>(blocks: K) {
        let mut input = Vec::new();
        let mut starts = Vec::new();
        for len in (0..200).chain((0..200).rev()).step_by(3) {
            input.push(b'"');
            starts.push(input.len());
            input.extend(std::iter::repeat_n(b'x', len));
            input.extend_from_slice(if len % 5 == 0 { b"\\n\"," } else { b"\"," });
        }
        let mut window = Window::new(blocks);
        for &start in &starts {
            // A closing quote may be answered `Ok` by one tier and left to the grammar by
            // another: compare the positions found.
            let at = |found: Result<usize, usize>| found.map_or_else(|at| at, |after| after - 1);
            assert_eq!(
                at(window.scan_string(&input, start, Err::<usize, usize>)),
                at(scan_string(&input, start, Err::<usize, usize>)),
                "string at {start}"
            );
        }
    }
}
