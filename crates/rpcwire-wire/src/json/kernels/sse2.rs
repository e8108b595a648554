//! SSE2 kernel: 16 bytes at a time. SSE2 is part of the x86_64 baseline, so no run-time
//! check is needed.

use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
};

use super::portable::string_run_swar;

/// Bit `i` set when byte `i` of the 16 at `chunk` needs attention.
#[inline(always)]
pub(crate) fn attention_bits(chunk: &[u8; 16]) -> u32 {
    // SAFETY: SSE2 is always available on x86_64; `chunk` is 16 readable bytes and
    // `_mm_loadu_si128` has no alignment requirement.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Signed compare: bytes 0x00..=0x1f and 0x80..=0xff are both "less than 0x20".
        let special = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), special)) as u32
    }
}

/// 16 bytes at a time; fewer than 16 left go to SWAR.
#[inline]
pub(crate) fn string_run(bytes: &[u8]) -> usize {
    let mut offset = 0;
    let mut chunks = bytes.chunks_exact(16);
    for chunk in &mut chunks {
        let chunk: &[u8; 16] = chunk.try_into().unwrap_or(&[0; 16]);
        let bits = attention_bits(chunk);
        if bits != 0 {
            return offset + bits.trailing_zeros() as usize;
        }
        offset += 16;
    }
    offset + string_run_swar(chunks.remainder())
}
