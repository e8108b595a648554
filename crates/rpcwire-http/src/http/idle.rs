//! The request-head deadline of an HTTP/1.1 connection: a connection on which no request
//! head completes and nothing is under way for a whole header timeout is closed — the
//! slow-head (slowloris) protection, and the end of a keep-alive connection left idle.
//!
//! hyper has its own (`header_read_timeout`), but it costs every request one more turn of
//! the connection's loop: once an answer is written, hyper reads again only to arm the
//! deadline. Over TLS that turn is a read through rustls and a flush, about 1,500
//! instructions a request of the 20,000 the report's TLS server spends (callgrind, 64
//! connections). Here the connection counts its own activity instead — one atomic addition
//! when a request head is read (hyper calls the service) and one when its answer's body is
//! dropped (written whole, or abandoned) — and one timer per connection looks at the count
//! once per header timeout. So a head that does not complete is cut after one period (and a
//! grace of at most a second), and a connection idle after its last answer between one and
//! two periods after it; a request under way (a slow handler, a long answer stream) keeps its
//! connection.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

/// One connection's activity in one word: the number of events (heads read, answers done)
/// in the high 32 bits, the requests under way in the low 32.
#[derive(Debug, Default)]
pub(super) struct Activity(AtomicU64);

/// A request head read: one more event, one more under way.
const STARTED: u64 = (1 << 32) + 1;
/// An answer done: one more event, one fewer under way (the carry of the low half's
/// wrap-around adds the event).
const ENDED: u64 = (1 << 32) - 1;

impl Activity {
    fn now(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// How long a connection asked to close may take to (an idle one closes at once).
const GRACE: Duration = Duration::from_secs(1);

/// Counts one request under way until dropped.
#[derive(Debug)]
struct UnderWay(Arc<Activity>);

impl UnderWay {
    fn start(activity: &Arc<Activity>) -> UnderWay {
        activity.0.fetch_add(STARTED, Ordering::Relaxed);
        UnderWay(activity.clone())
    }
}

impl Drop for UnderWay {
    fn drop(&mut self) {
        self.0 .0.fetch_add(ENDED, Ordering::Relaxed);
    }
}

/// Serves `connection` until it ends, or until a whole `period` passes with no event and
/// nothing under way on `activity`: then `shut_down` asks it to close (hyper's graceful
/// shutdown: a keep-alive connection idle after its answers is shut down in good order, with
/// TLS's `close_notify`), and [`GRACE`] (or the period, if shorter) later it is dropped if it
/// has not — as one in the middle of a head, which hyper does not close, is.
pub(super) async fn serve_watched<C: Future>(
    connection: C,
    activity: &Activity,
    period: Duration,
    shut_down: impl FnOnce(Pin<&mut C>),
) {
    tokio::pin!(connection);
    let timer = tokio::time::sleep(period);
    tokio::pin!(timer);
    let mut seen = 0;
    loop {
        tokio::select! {
            biased;
            _ = &mut connection => return,
            () = &mut timer => {}
        }
        let now = activity.now();
        if now == seen && now as u32 == 0 {
            shut_down(connection.as_mut());
            let _ = tokio::time::timeout(period.min(GRACE), connection).await;
            return;
        }
        seen = now;
        timer.as_mut().reset(tokio::time::Instant::now() + period);
    }
}

/// A hyper service counting its requests into a connection's [`Activity`].
pub(super) struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Watched<S> {
    pub(super) fn new(inner: S, activity: Arc<Activity>) -> Watched<S> {
        Watched { inner, activity }
    }
}

impl<S, B> hyper::service::Service<Request<Incoming>> for Watched<S>
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>,
{
    type Response = Response<WatchedBody<B>>;
    type Error = Infallible;
    type Future = WatchedAnswer<S::Future>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let under_way = UnderWay::start(&self.activity);
        WatchedAnswer {
            inner: self.inner.call(request),
            under_way: Some(under_way),
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of a [`Watched`] service: under way until its body is dropped.
    pub(super) struct WatchedAnswer<F> {
        #[pin]
        inner: F,
        under_way: Option<UnderWay>,
    }
}

impl<F, B> Future for WatchedAnswer<F>
where
    F: Future<Output = Result<Response<B>, Infallible>>,
{
    type Output = Result<Response<WatchedBody<B>>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = match std::task::ready!(this.inner.poll(cx)) {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let under_way = this.under_way.take();
        Poll::Ready(Ok(response.map(|inner| WatchedBody {
            inner,
            _under_way: under_way,
        })))
    }
}

pin_project_lite::pin_project! {
    /// An answer's body, its request under way until it is dropped.
    pub(super) struct WatchedBody<B> {
        #[pin]
        inner: B,
        _under_way: Option<UnderWay>,
    }
}

impl<B: Body> Body for WatchedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        self.project().inner.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Watches `connection` with `period`: how long after the start it was asked to shut
    /// down, if it was.
    async fn asked_after(connection: impl Future, activity: &Activity, period: Duration) -> Option<Duration> {
        let started = tokio::time::Instant::now();
        let mut asked = None;
        serve_watched(connection, activity, period, |_| asked = Some(started.elapsed())).await;
        asked
    }

    #[test]
    fn events_and_requests_under_way_share_one_word() {
        let activity = Arc::new(Activity::default());
        let first = UnderWay::start(&activity);
        let second = UnderWay::start(&activity);
        assert_eq!((activity.now() >> 32, activity.now() as u32), (2, 2));
        drop(first);
        assert_eq!((activity.now() >> 32, activity.now() as u32), (3, 1));
        drop(second);
        assert_eq!((activity.now() >> 32, activity.now() as u32), (4, 0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_with_no_event_for_a_period_is_dropped() {
        let activity = Activity::default();
        let started = tokio::time::Instant::now();
        let asked = asked_after(std::future::pending::<()>(), &activity, Duration::from_secs(1)).await;
        // Asked to shut down after one period; dropped a grace later, as it did not.
        assert_eq!(asked, Some(Duration::from_secs(1)));
        assert_eq!(started.elapsed(), Duration::from_secs(1) + GRACE);
        // With a period shorter than the grace, the period.
        let started = tokio::time::Instant::now();
        let short = Duration::from_millis(300);
        serve_watched(std::future::pending::<()>(), &activity, short, |_| {}).await;
        assert_eq!(started.elapsed(), short * 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_under_way_keeps_its_connection_and_its_end_starts_the_count() {
        let activity = Arc::new(Activity::default());
        let under_way = UnderWay::start(&activity);
        let ended = async {
            // Under way for 5 periods, then done.
            tokio::time::sleep(Duration::from_millis(5_500)).await;
            drop(under_way);
            std::future::pending::<()>().await
        };
        // The end at 5.5 s is an event seen at 6 s; nothing happens until 7 s.
        assert_eq!(
            asked_after(ended, &activity, Duration::from_secs(1)).await,
            Some(Duration::from_secs(7))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_ends_when_asked_is_not_waited_for() {
        let activity = Activity::default();
        let started = tokio::time::Instant::now();
        let (ask, asked) = tokio::sync::oneshot::channel::<()>();
        serve_watched(asked, &activity, Duration::from_secs(1), |_| {
            let _ = ask.send(());
        })
        .await;
        assert_eq!(started.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_ends_ends_the_watch() {
        let activity = Activity::default();
        let started = tokio::time::Instant::now();
        let ends = tokio::time::sleep(Duration::from_millis(300));
        assert_eq!(asked_after(ends, &activity, Duration::from_secs(1)).await, None);
        assert_eq!(started.elapsed(), Duration::from_millis(300));
    }
}
