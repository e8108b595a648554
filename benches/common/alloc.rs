//! The benches' global allocator: mimalloc, wrapped to count heap allocations per thread.

// A global allocator is unsafe by nature: the crate denies `unsafe_code`, this module allows it.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

use mimalloc::MiMalloc;

thread_local! {
    // `const` initialisation and no destructor: safe to touch from inside the allocator.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// mimalloc, counting every `alloc`, `alloc_zeroed` and `realloc` made by the current thread.
pub struct Counting;

#[inline(always)]
fn count() {
    ALLOCATIONS.with(|n| n.set(n.get() + 1));
}

/// Allocations (including reallocations) made by this thread so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: every call is forwarded unchanged to mimalloc, which upholds `GlobalAlloc`'s
// contract; the counter is a plain thread-local that never allocates.
unsafe impl GlobalAlloc for Counting {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.realloc(ptr, layout, new_size) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }
}
