//! AVX2 kernel: 32 bytes at a time, for CPUs that have it (checked at run time).

use std::arch::x86_64::{
    __m256i, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
    _mm256_set1_epi8,
};

/// Bit `i` set when byte `i` of the 32 at `chunk` needs attention.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn attention_bits(chunk: &[u8; 32]) -> u32 {
    // SAFETY: `chunk` is 32 readable bytes and `_mm256_loadu_si256` has no alignment
    // requirement; this function is only reachable when AVX2 is enabled (target_feature).
    unsafe {
        let v = _mm256_loadu_si256(chunk.as_ptr().cast::<__m256i>());
        let quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8));
        let backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8));
        // Signed compare: 0x20 > b holds for 0x00..=0x1f and for 0x80..=0xff.
        let special = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v);
        _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(quote, backslash), special)) as u32
    }
}

/// 32 bytes at a time; fewer than 32 left go to SSE2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn string_run(bytes: &[u8]) -> usize {
    let mut offset = 0;
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        let chunk: &[u8; 32] = chunk.try_into().unwrap_or(&[0; 32]);
        let bits = attention_bits(chunk);
        if bits != 0 {
            return offset + bits.trailing_zeros() as usize;
        }
        offset += 32;
    }
    offset + super::sse2::string_run(chunks.remainder())
}

/// The AVX2 kernel when this CPU has AVX2, for tests and benchmarks.
pub(crate) fn string_run_checked(bytes: &[u8]) -> Option<usize> {
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: guarded by the feature check just above.
        Some(unsafe { string_run(bytes) })
    } else {
        None
    }
}
