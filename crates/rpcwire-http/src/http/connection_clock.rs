//! A connection's clock for hyper's request-head deadline: one tokio timer per connection,
//! moved forward only when it fires.
//!
//! hyper arms a new timer for every request head it waits for (a boxed sleep, registered in
//! tokio's timer wheel when the head is not there at once, taken out again when it comes):
//! on a keep-alive connection that is a registration and a removal per request. Here each
//! request's deadline is only written down; the connection's one timer stays registered at
//! the earliest deadline it has to watch, and when it fires before the deadline now in force
//! (the heads it was set for came in time), it is set again to that deadline. So a timer is
//! registered about once per timeout period per connection, not once per request, and a head
//! that does not come in time still fails at its deadline.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

use crate::sync::lock_unpoisoned;

/// The [`Timer`] of one connection (give each connection its own).
#[derive(Clone)]
pub(super) struct ConnectionClock {
    timer: Arc<Mutex<SharedTimer>>,
}

/// The connection's one tokio timer and the deadline it is set to.
struct SharedTimer {
    sleep: Pin<Box<tokio::time::Sleep>>,
    set_to: Instant,
}

impl ConnectionClock {
    /// A clock whose timer is not armed yet.
    pub(super) fn new() -> ConnectionClock {
        let now = tokio::time::Instant::now();
        ConnectionClock {
            timer: Arc::new(Mutex::new(SharedTimer {
                sleep: Box::pin(tokio::time::sleep_until(now)),
                set_to: now.into_std(),
            })),
        }
    }
}

impl Timer for ConnectionClock {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(Deadline {
            deadline,
            timer: self.timer.clone(),
        })
    }

    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// One deadline on the connection's clock: ready once it has passed.
struct Deadline {
    deadline: Instant,
    timer: Arc<Mutex<SharedTimer>>,
}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        if tokio::time::Instant::now().into_std() >= deadline {
            return Poll::Ready(());
        }
        let mut timer = lock_unpoisoned(&self.timer);
        // Set later than this deadline (an earlier request's, longer timeout): bring it back.
        if timer.set_to > deadline {
            timer.set_to = deadline;
            timer.sleep.as_mut().reset(deadline.into());
        }
        // It fires before this deadline, or has fired (set for a deadline already past):
        // then move it to this one. Pending is the usual answer; the waker is registered.
        while timer.sleep.as_mut().poll(cx).is_ready() {
            if timer.set_to >= deadline {
                return Poll::Ready(());
            }
            timer.set_to = deadline;
            timer.sleep.as_mut().reset(deadline.into());
        }
        Poll::Pending
    }
}

impl Sleep for Deadline {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits for `sleep`, failing the test rather than hanging if it never fires.
    async fn fires(sleep: Pin<Box<dyn Sleep>>) {
        tokio::time::timeout(Duration::from_secs(10), sleep)
            .await
            .expect("the deadline never fired");
    }

    #[tokio::test]
    async fn each_deadline_fires_at_its_time_on_one_timer() {
        let clock = ConnectionClock::new();
        let timeout = Duration::from_millis(200);
        // Request heads that come in time: their deadlines do not fire, though the first
        // one's passes while the third is waited for.
        for _ in 0..3 {
            let mut deadline = clock.sleep(timeout);
            let early = tokio::time::timeout(Duration::from_millis(90), deadline.as_mut()).await;
            assert!(early.is_err(), "a deadline fired before its time");
        }
        // The last one is waited for: it fires at its own deadline, not at an earlier one.
        let set = Instant::now();
        fires(clock.sleep(timeout)).await;
        assert!(set.elapsed() >= timeout, "fired after {:?}", set.elapsed());
    }

    #[tokio::test]
    async fn an_earlier_deadline_after_a_later_one_fires_at_its_own_time() {
        let clock = ConnectionClock::new();
        let mut later = clock.sleep(Duration::from_secs(3));
        assert!(poll_once(later.as_mut()).is_pending());
        let set = Instant::now();
        fires(clock.sleep(Duration::from_millis(100))).await;
        let waited = set.elapsed();
        assert!(waited >= Duration::from_millis(100), "fired after {waited:?}");
        assert!(
            waited < Duration::from_secs(2),
            "waited for the later deadline: {waited:?}"
        );
        assert!(
            poll_once(later.as_mut()).is_pending(),
            "the later deadline fired early"
        );
    }

    #[tokio::test]
    async fn a_deadline_already_past_is_ready_at_once() {
        let clock = ConnectionClock::new();
        let past = clock.now() - Duration::from_millis(1);
        assert!(poll_once(clock.sleep_until(past).as_mut()).is_ready());
    }

    fn poll_once(sleep: Pin<&mut dyn Sleep>) -> Poll<()> {
        sleep.poll(&mut Context::from_waker(futures::task::noop_waker_ref()))
    }
}
