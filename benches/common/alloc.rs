//! The benches' global allocator: mimalloc, wrapped to count heap allocations per thread
//! (the counting allocator the zero-allocation tests use).

#[path = "../../tests/support/counting_alloc.rs"]
mod counting_alloc;

pub use counting_alloc::allocation_count as allocations;

/// mimalloc, counting every `alloc`, `alloc_zeroed` and `realloc` made by the current thread.
pub type Counting = counting_alloc::Counting<mimalloc::MiMalloc>;

/// The value to declare as the `#[global_allocator]`.
pub const COUNTING: Counting = counting_alloc::Counting(mimalloc::MiMalloc);
