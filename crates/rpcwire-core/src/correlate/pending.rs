//! `PendingCall`: the caller's handle on one outgoing call.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::message::Id;

use super::error::CallError;
use super::slot::{state_of, Waiter, WAITING};
use super::sync::{self, lock, Arc, Ordering};
use super::table::{Shared, Started};

/// One call waiting for its response: await it, [`wait`](PendingCall::wait) on it, or poll it
/// with [`try_wait`](PendingCall::try_wait).
///
/// It ends with the value given to [`CorrelationTable::complete`](super::CorrelationTable::complete)
/// for its [`id`](PendingCall::id), or with [`CallError::TimedOut`] or
/// [`CallError::ConnectionClosed`]. It holds its slot of the table until it has handed out
/// that outcome or is dropped; dropping it while it still waits frees the slot at once, and
/// a response arriving later for its id is rejected and counted as late.
///
/// As a `Future` it works on any executor. It times out when the table's
/// [`expire`](super::CorrelationTable::expire) finds it past its deadline, or by itself when
/// it is polled after its deadline; [`wait`](PendingCall::wait) needs no one else to time out.
///
/// ```
/// use rpcwire_core::correlate::{TableConfig, CorrelationTable};
/// let table = CorrelationTable::<&str>::new(TableConfig::default());
/// let call = table.start()?;
/// let id = call.id().clone(); // goes into the outgoing request
/// let responder = {
///     let table = table.clone();
///     std::thread::spawn(move || table.complete(&id, "pong").unwrap())
/// };
/// assert_eq!(futures::executor::block_on(call), Ok("pong"));
/// responder.join().unwrap();
/// # Ok::<(), rpcwire_core::correlate::CallError>(())
/// ```
pub struct PendingCall<T> {
    shared: Arc<Shared<T>>,
    id: Id<'static>,
    slot: u32,
    gen: u64,
    deadline: Option<Instant>,
    /// The outcome was handed out (or the call given up): the slot is no longer ours.
    finished: bool,
}

impl<T> PendingCall<T> {
    pub(crate) fn new(shared: Arc<Shared<T>>, started: Started) -> PendingCall<T> {
        PendingCall {
            id: shared.codec.encode(started.slot, started.gen),
            shared,
            slot: started.slot,
            gen: started.gen,
            deadline: started.deadline,
            finished: false,
        }
    }

    /// The id to send in the request; a response carrying it completes this call.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// let (a, b) = (table.start()?, table.start()?);
    /// assert_ne!(a.id(), b.id());
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn id(&self) -> &Id<'static> {
        &self.id
    }

    /// When the call times out (`None` when its timeout is too large to represent).
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<()>::new(TableConfig::default());
    /// assert!(table.start()?.deadline().unwrap() > std::time::Instant::now());
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The outcome if the call has ended, without blocking; gives the call back otherwise.
    ///
    /// Does not check the deadline: a call past its deadline stays pending until
    /// [`expire`](super::CorrelationTable::expire) runs or the call is awaited or waited on.
    ///
    /// ```
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<u32>::new(TableConfig::default());
    /// let call = table.start()?;
    /// let id = call.id().clone();
    /// let call = call.try_wait().unwrap_err(); // no response yet
    /// table.complete(&id, 5).unwrap();
    /// assert_eq!(call.try_wait().ok(), Some(Ok(5)));
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn try_wait(mut self) -> Result<Result<T, CallError>, PendingCall<T>> {
        if state_of(self.shared.slot(self.slot).word.load(Ordering::Acquire)) == WAITING {
            return Err(self);
        }
        match self.take_or_register(|_| None) {
            Some(outcome) => Ok(outcome),
            None => Err(self),
        }
    }

    /// Blocks the current thread until the call ends; times the call out by itself at its
    /// deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<u32>::new(TableConfig::default());
    /// let call = table.start_with_timeout(Duration::from_millis(1))?;
    /// assert_eq!(call.wait(), Err(CallError::TimedOut { after: Duration::from_millis(1) }));
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn wait(self) -> Result<T, CallError> {
        match self.wait_until(None) {
            Ok(outcome) => outcome,
            // Unreachable: without a limit `wait_until` returns only with an outcome.
            Err(_) => Err(CallError::ConnectionClosed),
        }
    }

    /// Like [`wait`](PendingCall::wait), but gives the call back if it is still pending after
    /// `timeout` (which may be shorter than the call's own deadline).
    ///
    /// ```
    /// use std::time::Duration;
    /// # use rpcwire_core::correlate::*;
    /// let table = CorrelationTable::<u32>::new(TableConfig::default());
    /// let call = table.start()?;
    /// let call = call.wait_timeout(Duration::from_millis(1)).unwrap_err();
    /// table.complete(&call.id().clone(), 9).unwrap();
    /// assert_eq!(call.wait_timeout(Duration::from_secs(1)).ok(), Some(Ok(9)));
    /// # Ok::<(), CallError>(())
    /// ```
    pub fn wait_timeout(self, timeout: Duration) -> Result<Result<T, CallError>, PendingCall<T>> {
        let limit = Instant::now().checked_add(timeout);
        self.wait_until(limit)
    }

    fn wait_until(mut self, limit: Option<Instant>) -> Result<Result<T, CallError>, PendingCall<T>> {
        if self.finished {
            return Err(self);
        }
        let me = sync::current();
        loop {
            let registered = self.take_or_register(|current| match current {
                Some(Waiter::Thread(thread)) if thread.id() == me.id() => None,
                _ => Some(Waiter::Thread(me.clone())),
            });
            if let Some(outcome) = registered {
                return Ok(outcome);
            }
            let now = Instant::now();
            if self.deadline.is_some_and(|deadline| now >= deadline) {
                if !self.shared.time_out(self.slot, self.gen) {
                    // Someone else resolved the call; they wake us once the outcome is in.
                    sync::park();
                }
                continue;
            }
            if limit.is_some_and(|limit| now >= limit) {
                return Err(self);
            }
            match [self.deadline, limit].into_iter().flatten().min() {
                Some(until) => sync::park_timeout(until - now),
                None => sync::park(),
            }
        }
    }

    /// Takes the outcome if it is there; otherwise registers the waiter `register` returns
    /// (`None`: keep the current one). Both under the cell lock, which the resolver takes to
    /// store the outcome and take the waiter, so a wake-up cannot be missed.
    fn take_or_register(
        &mut self,
        register: impl FnOnce(&Option<Waiter>) -> Option<Waiter>,
    ) -> Option<Result<T, CallError>> {
        if self.finished {
            return None;
        }
        let slot = self.shared.slot(self.slot);
        let mut cell = lock(&slot.cell);
        match cell.outcome.take() {
            Some(outcome) => {
                let stale = cell.waiter.take();
                drop(cell);
                drop(stale);
                self.finished = true;
                self.shared.release_owner(self.slot, self.gen);
                Some(outcome)
            }
            None => {
                if let Some(waiter) = register(&cell.waiter) {
                    cell.waiter = Some(waiter);
                }
                None
            }
        }
    }
}

impl<T> Future for PendingCall<T> {
    type Output = Result<T, CallError>;

    /// Ready with the outcome once the call has ended. Polling again after that returns
    /// `Pending` forever (like a fused future).
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            let registered = this.take_or_register(|current| match current {
                Some(Waiter::Task(waker)) if waker.will_wake(cx.waker()) => None,
                _ => Some(Waiter::Task(cx.waker().clone())),
            });
            if let Some(outcome) = registered {
                return Poll::Ready(outcome);
            }
            let past_deadline = this.deadline.is_some_and(|deadline| Instant::now() >= deadline);
            // If we time it out ourselves the outcome is in the cell now: take it. Otherwise
            // whoever resolves it wakes the waker just registered.
            if !(past_deadline && !this.finished && this.shared.time_out(this.slot, this.gen)) {
                return Poll::Pending;
            }
        }
    }
}

impl<T> Drop for PendingCall<T> {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            self.shared.discard_owner(self.slot, self.gen);
        }
    }
}

impl<T> fmt::Debug for PendingCall<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingCall")
            .field("id", &self.id)
            .field("deadline", &self.deadline)
            .field("finished", &self.finished)
            .finish()
    }
}
