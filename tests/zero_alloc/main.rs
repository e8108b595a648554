//! Zero heap allocations per message in steady state (DESIGN.md, principle 6), proven with a
//! counting global allocator rather than claimed in a comment: the parser (`parse`), the
//! framings (`frame`) and the serving loop end to end (`serve`), in one test binary.
//!
//! The allocator counts allocations (alloc, alloc_zeroed, realloc) made by the current
//! thread, so tests running in parallel do not disturb each other.

#[path = "../support/counting_alloc.rs"]
mod counting_alloc;
#[path = "../../examples/common/spec_methods.rs"]
mod spec_methods;

mod frame;
mod parse;
mod serve;

#[global_allocator]
static GLOBAL: counting_alloc::Counting<std::alloc::System> = counting_alloc::Counting(std::alloc::System);
