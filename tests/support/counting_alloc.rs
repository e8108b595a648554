//! A counting global allocator for the zero-allocation tests: every call is forwarded to the
//! system allocator, and allocations (alloc, alloc_zeroed, realloc) are counted per thread,
//! so tests running in parallel do not disturb each other.

// A global allocator is unsafe by nature: the crate denies `unsafe_code`, this module allows it.
#![allow(unsafe_code)]
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

pub struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counting touches
// only a const-initialised thread-local `Cell`, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The number of allocations this thread makes while running `f` (its result is dropped
/// after counting).
pub fn allocations<R>(f: impl FnOnce() -> R) -> usize {
    allocations_and(f).0
}

/// The number of allocations this thread makes while running `f`, and `f`'s result.
pub fn allocations_and<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = black_box(f());
    let after = ALLOCATIONS.with(Cell::get);
    (after - before, result)
}
