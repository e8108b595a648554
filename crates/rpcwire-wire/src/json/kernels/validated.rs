//! `Span`: a byte range of an input that the JSON grammar has validated, and the one place
//! where validated bytes become `&str` without being checked again.
//!
//! Only the grammar (`crate::json`) can build a `Span`: its constructor is visible to that
//! module alone, and the grammar builds one only over bytes it has just validated — a
//! string's content, whose UTF-8 sequences it checked one by one, or whole values, whose
//! bytes outside strings the grammar restricts to ASCII. The layers above receive spans
//! from the grammar and turn them back into text with [`Span::text`], with the input the
//! span was found in.

/// A byte range `start..end` of an input, validated as UTF-8 by the grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// The range `start..end`, which the grammar has just validated.
    #[inline(always)]
    pub(in crate::json) fn new(start: usize, end: usize) -> Span {
        // Inputs are at most `u32::MAX` bytes (`Limits` clamps the size), so the casts
        // are exact.
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The offset of the first byte.
    #[inline(always)]
    pub(crate) fn start(self) -> usize {
        self.start as usize
    }

    /// The offset just past the last byte.
    #[inline(always)]
    pub(crate) fn end(self) -> usize {
        self.end as usize
    }

    /// `true` for an empty range (an empty string's content).
    #[inline(always)]
    pub(crate) fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The text this span covers in `input`, the input the grammar found it in.
    #[inline(always)]
    pub(crate) fn text(self, input: &[u8]) -> &str {
        let bytes = &input[self.start()..self.end()];
        debug_assert!(
            std::str::from_utf8(bytes).is_ok(),
            "a span over unvalidated bytes"
        );
        // SAFETY: a `Span` is built only by the JSON grammar (the constructor is visible in
        // `crate::json` alone), over bytes it validated as UTF-8 (see the module docs); the
        // debug assertion re-checks it in every debug build, tests and fuzzing included.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }
}
