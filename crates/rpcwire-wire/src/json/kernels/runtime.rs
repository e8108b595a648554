//! Picks the best kernel for this CPU once and caches it as a function pointer (the
//! memchr pattern), so that a short string does not pay for feature detection.

use std::sync::atomic::{AtomicPtr, Ordering};

type Kernel = unsafe fn(&[u8]) -> usize;

static SELECTED: AtomicPtr<()> = AtomicPtr::new(detect as Kernel as *mut ());

/// First call: detect, cache, run.
unsafe fn detect(bytes: &[u8]) -> usize {
    let kernel: Kernel = if std::is_x86_feature_detected!("avx2") {
        super::avx2::string_run
    } else {
        sse2_kernel
    };
    SELECTED.store(kernel as *mut (), Ordering::Relaxed);
    // SAFETY: the kernel was chosen by the feature check just above.
    unsafe { kernel(bytes) }
}

unsafe fn sse2_kernel(bytes: &[u8]) -> usize {
    super::sse2::string_run(bytes)
}

/// Checks the first 16 bytes inline (most keys, methods and ids end there), then runs the
/// cached kernel over the rest.
#[inline]
pub(crate) fn string_run(bytes: &[u8]) -> usize {
    let Some((head, rest)) = bytes.split_first_chunk::<16>() else {
        return super::portable::string_run_swar(bytes);
    };
    let bits = super::sse2::attention_bits(head);
    if bits != 0 {
        return bits.trailing_zeros() as usize;
    }
    16 + run_cached(rest)
}

fn run_cached(bytes: &[u8]) -> usize {
    let pointer = SELECTED.load(Ordering::Relaxed);
    // SAFETY: SELECTED only ever holds `detect`, `sse2_kernel` or `avx2::string_run`, all of
    // type `Kernel`; the AVX2 one is stored only after `is_x86_feature_detected!("avx2")`.
    unsafe {
        let kernel: Kernel = std::mem::transmute::<*mut (), Kernel>(pointer);
        kernel(bytes)
    }
}
