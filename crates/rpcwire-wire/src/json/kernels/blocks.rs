//! 64-byte attention masks for the value walk's [`Window`](super::Window), in the widest
//! vectors this CPU has, and the run-time choice of the walk built on them.
//!
//! A whole value (a 64 KB block response, say) is walked by one function; its window loads
//! 64 bytes at a time. With AVX2 that is two compares per byte class instead of four, but
//! AVX2 code only runs inside a function compiled for AVX2 — so the walk is compiled twice:
//! once for the baseline ([`Baseline`]: SSE2 on x86_64, the portable mask elsewhere) and once
//! inside an AVX2 function ([`Avx2`]), and [`with_blocks`] picks one per value (the check is
//! the standard library's cached feature word: a load and a bit test).

use super::attention16;

/// A way to compute the attention mask of 64 bytes (bit `i` for byte `i`: `"`, `\`, a byte
/// below `0x20` or at or above `0x80`). A value of the type is the proof that this CPU can run
/// it.
pub(crate) trait Blocks: Copy {
    /// The attention mask of `block`.
    fn attention64(self, block: &[u8; 64]) -> u64;
}

/// Four 16-byte masks (SSE2 on x86_64, the portable mask elsewhere): every CPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Baseline;

impl Blocks for Baseline {
    #[inline(always)]
    fn attention64(self, block: &[u8; 64]) -> u64 {
        let mut bits = 0u64;
        for (i, chunk) in block.chunks_exact(16).enumerate() {
            let chunk: &[u8; 16] = chunk.try_into().unwrap_or(&[0; 16]);
            bits |= u64::from(attention16(chunk)) << (16 * i);
        }
        bits
    }
}

/// Two 32-byte AVX2 masks; only made by [`Avx2::detect`], on a CPU that has AVX2.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` when this CPU has AVX2.
    #[inline(always)]
    pub(crate) fn detect() -> Option<Avx2> {
        std::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Blocks for Avx2 {
    #[inline(always)]
    fn attention64(self, block: &[u8; 64]) -> u64 {
        let (low, high) = block.split_at(32);
        let low: &[u8; 32] = low.try_into().unwrap_or(&[0; 32]);
        let high: &[u8; 32] = high.try_into().unwrap_or(&[0; 32]);
        // SAFETY: an `Avx2` value exists only after `is_x86_feature_detected!("avx2")` said
        // yes (`detect`, the only constructor), so this CPU runs AVX2 instructions.
        unsafe {
            u64::from(super::avx2::attention_bits(low)) | (u64::from(super::avx2::attention_bits(high)) << 32)
        }
    }
}

/// Work that runs with a [`Blocks`] chosen for this CPU: [`with_blocks`] inlines `run` into a
/// function compiled for that choice.
pub(crate) trait WithBlocks {
    type Output;
    fn run<K: Blocks>(self, blocks: K) -> Self::Output;
}

/// Runs `work` with AVX2 masks when this CPU has AVX2, with the baseline's otherwise.
#[inline(always)]
pub(crate) fn with_blocks<W: WithBlocks>(work: W) -> W::Output {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = Avx2::detect() {
        // SAFETY: `run_avx2` only needs AVX2, and `avx2` proves this CPU has it.
        return unsafe { run_avx2(work, avx2) };
    }
    work.run(Baseline)
}

/// `work` compiled for AVX2, so that the masks' AVX2 code is inlined into it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<W: WithBlocks>(work: W, avx2: Avx2) -> W::Output {
    work.run(avx2)
}

/// The masks of `block` on this CPU: the baseline's, AVX2's when this CPU has it, and the
/// byte-at-a-time reference's.
pub(crate) fn attention64_twins(block: &[u8; 64]) -> (u64, Option<u64>, u64) {
    #[cfg(target_arch = "x86_64")]
    let avx2 = Avx2::detect().map(|avx2| avx2.attention64(block));
    #[cfg(not(target_arch = "x86_64"))]
    let avx2 = None;
    let reference = block.iter().enumerate().fold(0u64, |bits, (i, &byte)| {
        bits | (u64::from(super::portable::needs_attention(byte)) << i)
    });
    (Baseline.attention64(block), avx2, reference)
}
