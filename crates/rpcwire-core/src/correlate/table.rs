//! The shared core of a table: the slots, the free list, and the transitions of the slot
//! state machine (see `slot.rs` for the picture). Everything here is atomics plus the
//! per-slot cell lock, taken only by a call's owner and the one thread that resolved it.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::message::Id;

use super::config::TableConfig;
use super::error::{CallError, Unmatched, UnmatchedReason};
use super::free_list::FreeList;
use super::id_codec::IdCodec;
use super::slot::{
    gen_of, pack, saturating_nanos, state_of, Slot, CANCELLED, COMPLETED, FREE, OWNER_DONE, RESOLVER_DONE,
    TIMED_OUT, WAITING,
};
use super::stats::Counters;
use super::sync::{lock, AtomicBool, Ordering};
use crate::sync::bump;

pub(crate) struct Shared<T> {
    slots: Box<[CachePadded<Slot<T>>]>,
    free: FreeList,
    pub(crate) codec: IdCodec,
    pub(crate) timeout: Duration,
    epoch: Instant,
    closed: CachePadded<AtomicBool>,
    pub(crate) counters: Counters,
}

/// A slot just taken from the free list and published as `WAITING`.
pub(crate) struct Started {
    pub(crate) slot: u32,
    pub(crate) gen: u64,
    pub(crate) deadline: Option<Instant>,
}

impl<T> Shared<T> {
    /// `capacity` is already clamped to at most 2^20.
    pub(crate) fn new(config: &TableConfig, capacity: u32) -> Shared<T> {
        Shared {
            slots: (0..capacity).map(|_| CachePadded::new(Slot::new())).collect(),
            free: FreeList::full(capacity),
            codec: IdCodec::new(config.id_format, capacity),
            timeout: config.timeout,
            epoch: Instant::now(),
            closed: CachePadded::new(AtomicBool::new(false)),
            counters: Counters::default(),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn slot(&self, index: u32) -> &Slot<T> {
        &self.slots[index as usize]
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Takes a free slot and publishes it as `WAITING` at its next generation.
    pub(crate) fn start(&self, timeout: Duration) -> Result<Started, CallError> {
        if self.is_closed() {
            bump(&self.counters.rejected_closed);
            return Err(CallError::ConnectionClosed);
        }
        let Some(index) = self.free.pop() else {
            bump(&self.counters.rejected_full);
            return Err(CallError::TooManyPending {
                capacity: self.capacity(),
            });
        };
        let slot = self.slot(index);
        // The index came off the free list, so this thread alone may write the slot until it
        // publishes WAITING; the pop's Acquire makes the last FREE store visible.
        let gen = self.codec.next_gen(gen_of(slot.word.load(Ordering::Relaxed)));
        let now = Instant::now();
        let deadline = now.checked_add(timeout);
        let deadline_ns = deadline.map_or(u64::MAX, |d| {
            saturating_nanos(d.saturating_duration_since(self.epoch))
        });
        slot.deadline_ns.store(deadline_ns, Ordering::Relaxed);
        slot.timeout_ns
            .store(saturating_nanos(timeout), Ordering::Relaxed);
        // Published with an RMW: `cancel_all` sets `closed` and then does an RMW on every
        // slot word. Both RMWs on this word are ordered: if ours comes first, cancel_all sees
        // the call WAITING; if its comes first, ours reads from it and so sees `closed`. (A
        // plain SeqCst store/load pair would do on hardware, but loom models SeqCst as AcqRel.)
        slot.word.swap(pack(gen, WAITING), Ordering::AcqRel);
        bump(&self.counters.started);
        if self.closed.load(Ordering::Acquire) {
            // cancel_all ran concurrently and may have missed this slot: make sure the call is
            // cancelled (by it or by us), then let the owner side give the slot back.
            self.cancel(index, gen);
            self.discard_owner(index, gen);
            return Err(CallError::ConnectionClosed);
        }
        Ok(Started {
            slot: index,
            gen,
            deadline,
        })
    }

    /// Delivers `value` to the call `id` names.
    pub(crate) fn complete(&self, id: &Id<'_>, value: T) -> Result<(), Unmatched<T>> {
        let Some((slot, gen)) = self.codec.decode(id) else {
            bump(&self.counters.late_or_unmatched);
            return Err(Unmatched::new(value, UnmatchedReason::Foreign));
        };
        if !self.claim(slot, gen, COMPLETED) {
            bump(&self.counters.late_or_unmatched);
            return Err(Unmatched::new(value, UnmatchedReason::NotPending));
        }
        self.deliver(slot, gen, Ok(value));
        Ok(())
    }

    /// The CAS that decides the race: moves `slot` from `WAITING` at `gen` to `state`.
    /// `true` for exactly one claimant of a call, who must then [`deliver`](Self::deliver).
    fn claim(&self, slot: u32, gen: u64, state: u64) -> bool {
        let won = self
            .slot(slot)
            .word
            .compare_exchange(
                pack(gen, WAITING),
                pack(gen, state),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok();
        if won {
            let counter = match state {
                COMPLETED => &self.counters.completed,
                TIMED_OUT => &self.counters.timed_out,
                _ => &self.counters.cancelled,
            };
            bump(counter);
        }
        won
    }

    /// The claimant's hand-off: stores the outcome, wakes the owner, and frees the slot if
    /// the owner is already gone.
    fn deliver(&self, slot: u32, gen: u64, outcome: Result<T, CallError>) {
        let cell = &self.slot(slot).cell;
        let waiter = {
            let mut cell = lock(cell);
            cell.outcome = Some(outcome);
            cell.waiter.take()
        };
        let before = self.slot(slot).word.fetch_or(RESOLVER_DONE, Ordering::AcqRel);
        if before & OWNER_DONE != 0 {
            // The owner dropped the call between our claim and our store: nobody will take
            // the outcome, so drop it here and free the slot.
            let leftover = lock(cell).outcome.take();
            drop(leftover);
            self.free(slot, gen);
        }
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }

    /// Times the call out if it is still waiting at `gen`; `true` if this call did.
    pub(crate) fn time_out(&self, slot: u32, gen: u64) -> bool {
        if !self.claim(slot, gen, TIMED_OUT) {
            return false;
        }
        let after = Duration::from_nanos(self.slot(slot).timeout_ns.load(Ordering::Relaxed));
        self.deliver(slot, gen, Err(CallError::TimedOut { after }));
        true
    }

    fn cancel(&self, slot: u32, gen: u64) -> bool {
        if !self.claim(slot, gen, CANCELLED) {
            return false;
        }
        self.deliver(slot, gen, Err(CallError::ConnectionClosed));
        true
    }

    /// The owner has taken the outcome (so the cell is empty: the resolver stores only once):
    /// frees the slot if the resolver is done too.
    pub(crate) fn release_owner(&self, slot: u32, gen: u64) {
        let before = self.slot(slot).word.fetch_or(OWNER_DONE, Ordering::AcqRel);
        if before & RESOLVER_DONE != 0 {
            self.free(slot, gen);
        }
    }

    /// The owner gives up on the call (its `PendingCall` is dropped before it took an
    /// outcome).
    pub(crate) fn discard_owner(&self, slot: u32, gen: u64) {
        let s = self.slot(slot);
        let abandoned = s
            .word
            .compare_exchange(
                pack(gen, WAITING),
                pack(gen, FREE),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok();
        if abandoned {
            // Still waiting: the CAS above beat every resolver, none will touch the slot
            // again. Drop the waker this call may have registered, then free the slot.
            let waiter = lock(&s.cell).waiter.take();
            bump(&self.counters.dropped);
            self.free.push(slot);
            drop(waiter);
            return;
        }
        // Already resolved. If the resolver is done, its outcome is in the cell (stored
        // before it set RESOLVER_DONE): clear it and free the slot. If not, the resolver sees
        // OWNER_DONE when it finishes and does both itself (see `deliver`).
        let before = s.word.fetch_or(OWNER_DONE, Ordering::AcqRel);
        if before & RESOLVER_DONE != 0 {
            let leftover = {
                let mut cell = lock(&s.cell);
                (cell.outcome.take(), cell.waiter.take())
            };
            self.free(slot, gen);
            drop(leftover);
        }
    }

    /// Both sides are done with the slot: back on the free list at the same generation.
    fn free(&self, slot: u32, gen: u64) {
        self.slot(slot).word.store(pack(gen, FREE), Ordering::Release);
        self.free.push(slot);
    }

    pub(crate) fn expire(&self, now: Instant) -> usize {
        let now_ns = saturating_nanos(now.saturating_duration_since(self.epoch));
        let mut expired = 0;
        for (index, slot) in (0u32..).zip(self.slots.iter()) {
            let word = slot.word.load(Ordering::Acquire);
            if state_of(word) != WAITING {
                continue;
            }
            // Read after the word (Acquire): at least this generation's deadline. If the slot
            // was recycled since, the CAS in `time_out` fails on the generation.
            let deadline = slot.deadline_ns.load(Ordering::Relaxed);
            if deadline != u64::MAX && deadline <= now_ns && self.time_out(index, gen_of(word)) {
                expired += 1;
            }
        }
        expired
    }

    pub(crate) fn cancel_all(&self) -> usize {
        self.closed.store(true, Ordering::Release);
        let mut cancelled = 0;
        for (index, slot) in (0u32..).zip(self.slots.iter()) {
            // An RMW, not a load: see `start` for the pairing that closes the race.
            let word = slot.word.fetch_or(0, Ordering::AcqRel);
            if state_of(word) == WAITING && self.cancel(index, gen_of(word)) {
                cancelled += 1;
            }
        }
        cancelled
    }

    pub(crate) fn pending(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| state_of(slot.word.load(Ordering::Acquire)) == WAITING)
            .count()
    }
}
