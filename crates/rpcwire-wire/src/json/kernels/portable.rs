//! Portable kernels: the byte-at-a-time reference and SWAR (eight bytes in a `u64`).

/// `true` for the bytes a string scan must stop at.
#[inline]
pub(crate) fn needs_attention(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || !(0x20..0x80).contains(&byte)
}

/// The reference: one byte at a time.
pub(crate) fn string_run_scalar(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&b| needs_attention(b))
        .unwrap_or(bytes.len())
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `word` that needs attention. Bits above the lowest set one
/// may be false positives (borrows propagate upward), so only the lowest set bit is used.
#[inline]
fn attention_mask(word: u64) -> u64 {
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    (has_quote | has_backslash | below_space | word) & HIGHS
}

/// Eight bytes at a time; the tail one byte at a time.
#[inline]
pub(crate) fn string_run_swar(bytes: &[u8]) -> usize {
    let mut offset = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = attention_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return offset + (mask.trailing_zeros() / 8) as usize;
        }
        offset += 8;
    }
    offset + string_run_scalar(chunks.remainder())
}

/// Bit `i` set when byte `i` of `chunk` needs attention.
#[inline]
pub(crate) fn attention_bits16(chunk: &[u8; 16]) -> u32 {
    chunk.iter().enumerate().fold(0, |bits, (i, &byte)| {
        bits | (u32::from(needs_attention(byte)) << i)
    })
}
