//! The free list of slot indices: a tagged Treiber stack in one `AtomicU64`.
//!
//! `head` holds `tag << 32 | index` (index `NIL` when empty); `next[i]` links slot `i` to the
//! slot below it. Every successful push or pop bumps the 32-bit tag, so a pop that read a
//! stale `next` (the slot was popped and pushed again in between) fails its CAS instead of
//! corrupting the stack (the ABA problem); a false match needs 2^32 operations to happen
//! while one pop is preempted between two instructions. Lock-free: a CAS fails only because
//! another push or pop succeeded. LIFO, so the slot reused next is the one touched last
//! (warm in cache). Written with the `sync` shim's atomics, so the loom build checks this
//! very code.

use crossbeam_utils::CachePadded;

use super::sync::{AtomicU32, AtomicU64, Ordering};

/// The empty-stack marker (never a slot index: capacity is at most 2^20).
const NIL: u32 = u32::MAX;

pub(crate) struct FreeList {
    head: CachePadded<AtomicU64>,
    next: Box<[AtomicU32]>,
}

impl FreeList {
    /// A stack holding every index `0..len`, `0` on top.
    pub(crate) fn full(len: u32) -> FreeList {
        // Slot i links to i + 1; the last one to NIL.
        let next = (0..len)
            .map(|i| AtomicU32::new(if i + 1 < len { i + 1 } else { NIL }))
            .collect();
        let top = if len == 0 { NIL } else { 0 };
        FreeList {
            head: CachePadded::new(AtomicU64::new(u64::from(top))),
            next,
        }
    }

    /// Takes a free index, or `None` when every slot is in use.
    pub(crate) fn pop(&self) -> Option<u32> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let index = head as u32;
            if index == NIL {
                return None;
            }
            // Acquire pairs with the Release store in `push`: if this reads a `next` written
            // by a later push of `index`, the pop that preceded that push happened before
            // our CAS below, which therefore fails.
            let below = self.next.get(index as usize)?.load(Ordering::Acquire);
            let new = tagged(head, below);
            match self
                .head
                .compare_exchange_weak(head, new, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Some(index),
                Err(actual) => head = actual,
            }
        }
    }

    /// Returns `index` to the stack. The caller owns `index` (popped, not yet pushed back).
    pub(crate) fn push(&self, index: u32) {
        let Some(link) = self.next.get(index as usize) else {
            return;
        };
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            link.store(head as u32, Ordering::Release);
            match self.head.compare_exchange_weak(
                head,
                tagged(head, index),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => head = actual,
            }
        }
    }
}

/// The head word that puts `index` on top, one tag after `head`'s.
fn tagged(head: u64, index: u32) -> u64 {
    let tag = (head >> 32).wrapping_add(1) & u64::from(u32::MAX);
    tag << 32 | u64::from(index)
}

#[cfg(all(test, not(rpcwire_loom)))]
mod tests {
    use super::*;

    #[test]
    fn pops_every_index_once_then_none() {
        let list = FreeList::full(3);
        assert_eq!(
            (list.pop(), list.pop(), list.pop(), list.pop()),
            (Some(0), Some(1), Some(2), None)
        );
        list.push(1);
        list.push(2);
        assert_eq!((list.pop(), list.pop(), list.pop()), (Some(2), Some(1), None));
    }

    #[test]
    fn empty_list_and_out_of_range_push() {
        let list = FreeList::full(0);
        assert_eq!(list.pop(), None);
        list.push(5);
        assert_eq!(list.pop(), None);
    }

    #[test]
    fn tag_wraps_without_overflow() {
        assert_eq!(tagged(u64::MAX, 3), 3);
        assert_eq!(tagged(7 << 32 | 1, 2), 8 << 32 | 2);
    }
}
