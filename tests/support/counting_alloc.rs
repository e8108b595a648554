//! A counting allocator, shared by the zero-allocation tests and the benches: `Counting`
//! forwards every call to the allocator it wraps (the system's in tests, mimalloc in
//! benches) and counts allocations (alloc, alloc_zeroed, realloc) per thread, so tests
//! running in parallel do not disturb each other. Each user declares its own
//! `#[global_allocator]` with it.

// A global allocator is unsafe by nature: the crate denies `unsafe_code`, this module allows it.
#![allow(unsafe_code)]
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::hint::black_box;

/// `A`, counting the allocations each thread makes.
pub struct Counting<A>(pub A);

thread_local! {
    // `const` initialisation and no destructor: safe to touch from inside the allocator.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

#[inline(always)]
fn count_one() {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the wrapped allocator, which upholds
// `GlobalAlloc`'s contract; the counting touches only a const-initialised thread-local
// `Cell`, which neither allocates nor unwinds.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { self.0.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { self.0.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { self.0.dealloc(ptr, layout) }
    }
}

/// Allocations (including reallocations) this thread has made so far.
pub fn allocation_count() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// The number of allocations this thread makes while running `f` (its result is dropped
/// after counting).
pub fn allocations<R>(f: impl FnOnce() -> R) -> usize {
    allocations_and(f).0
}

/// The number of allocations this thread makes while running `f`, and `f`'s result.
pub fn allocations_and<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = allocation_count();
    let result = black_box(f());
    let after = allocation_count();
    ((after - before) as usize, result)
}
