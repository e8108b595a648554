//! Byte-scanning kernels: the only `unsafe` code of the crate (the crate denies `unsafe_code`
//! everywhere else). Each answers one narrow question, has a portable version, and is
//! checked against the portable version by tests (`tests.rs`) and by the fuzzers.
//!
//! The one question so far: *where is the next string byte that needs attention?*
//! Inside a JSON string the parser must stop at `"` (end), `\` (escape), a control byte
//! (`< 0x20`, forbidden) and a non-ASCII byte (`>= 0x80`, start of a UTF-8 sequence to
//! validate). Everything else is copied over at vector speed.
//!
//! On x86_64 the AVX2 kernel is chosen at run time when the CPU has it, SSE2 (always
//! present on x86_64) otherwise; the choice is made once and cached (the memchr pattern).
//! Other targets use the portable SWAR kernel.
//!
//! Built on them, and kept here so that the string grammar above reads as grammar:
//! `attention` (the tiers of the search from a position inside a string: 16 bytes inline,
//! the input's last 16 bytes, up to 64 more, then the cached kernel), `window` (64 bytes of
//! attention bits computed ahead while a whole value is walked), and `validated` (the
//! `Span` that only the grammar builds, where checked bytes become `&str`).

mod attention;
mod blocks;
mod portable;
mod structural;
mod validated;
mod window;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod runtime;
#[cfg(target_arch = "x86_64")]
mod sse2;

#[cfg(test)]
mod tests;

pub(crate) use attention::next_attention;
pub(crate) use blocks::{with_blocks, Baseline, Blocks, WithBlocks};
pub(crate) use validated::Span;
pub(crate) use window::Window;

/// Returns the length of the leading run of `bytes` that holds no `"`, no `\`, no byte
/// below `0x20` and no byte at or above `0x80`: the index of the first byte that needs
/// attention, or `bytes.len()` when there is none.
#[inline]
pub(crate) fn string_run(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        runtime::string_run(bytes)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        portable::string_run_swar(bytes)
    }
}

/// Bit `i` set when byte `i` of `chunk` needs attention (same question as [`string_run`],
/// for exactly 16 bytes, inlined into the parser's short-string fast path).
#[inline(always)]
pub(crate) fn attention16(chunk: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::attention_bits(chunk)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        portable::attention_bits16(chunk)
    }
}

/// The kernels, for tests, benchmarks and fuzzers that compare them with each other.
pub mod twins {
    /// The portable reference: one byte at a time.
    pub fn scalar(bytes: &[u8]) -> usize {
        super::portable::string_run_scalar(bytes)
    }

    /// The portable fast path: eight bytes at a time in a `u64`.
    pub fn swar(bytes: &[u8]) -> usize {
        super::portable::string_run_swar(bytes)
    }

    /// SSE2, 16 bytes at a time (x86_64 only; falls back to SWAR elsewhere).
    pub fn sse2(bytes: &[u8]) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            super::sse2::string_run(bytes)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            swar(bytes)
        }
    }

    /// AVX2, 32 bytes at a time, when this CPU has it; `None` otherwise.
    pub fn avx2(bytes: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        {
            super::avx2::string_run_checked(bytes)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = bytes;
            None
        }
    }

    /// The 16-byte attention mask of the parser's short-string fast path, and the portable
    /// one it must equal.
    pub fn attention16(chunk: &[u8; 16]) -> (u32, u32) {
        (
            super::attention16(chunk),
            super::portable::attention_bits16(chunk),
        )
    }

    /// The 64-byte attention mask of a value walk's window: (the baseline's, AVX2's when this
    /// CPU has it, the byte-at-a-time reference's); all three must be equal.
    pub fn attention64(block: &[u8; 64]) -> (u64, Option<u64>, u64) {
        super::blocks::attention64_twins(block)
    }

    pub use super::structural::StageOne;

    /// An experiment the parser does not use (issue 16): the first stage of a two-stage
    /// parser over `input` (classification into bitmasks, strings by prefix XOR, structural
    /// positions counted), portable.
    pub fn stage_one_portable(input: &[u8]) -> StageOne {
        super::structural::stage_one_portable(input)
    }

    /// [`stage_one_portable`] with AVX2 and PCLMULQDQ, when this CPU has both.
    pub fn stage_one_avx2(input: &[u8]) -> Option<StageOne> {
        super::structural::stage_one_avx2(input)
    }

    /// The kernel the parser uses on this machine.
    pub fn selected(bytes: &[u8]) -> usize {
        super::string_run(bytes)
    }

    /// The tiered search the string grammar uses from `pos` (at most `bytes.len()`), and the
    /// position the reference finds: the first byte at or after `pos` that needs attention,
    /// or `bytes.len()`.
    pub fn next_attention(bytes: &[u8], pos: usize) -> (usize, usize) {
        let pos = pos.min(bytes.len());
        (super::next_attention(bytes, pos), pos + scalar(&bytes[pos..]))
    }
}
