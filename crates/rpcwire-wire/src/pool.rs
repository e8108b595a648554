//! Lock-free, bounded object pools: [`Pool`] for any type, [`BufferPool`] for
//! [`BytesMut`] read and write buffers.
//!
//! A pool keeps at most `capacity` idle objects in a crossbeam [`ArrayQueue`]. [`Pool::get`]
//! pops one (a *hit*) or creates a fresh one (a *miss*); the returned guard derefs to the
//! object and, when dropped, resets it and pushes it back (a *return*), or drops it when
//! the pool is already full or the object should not be kept (a *discard*). Neither side
//! takes a lock, and in steady state neither allocates: popping and pushing move the value
//! in and out of the queue's fixed slots, and the guard's handle on the pool is an `Arc`
//! clone.
//!
//! ```
//! use rpcwire_wire::pool::BufferPool;
//!
//! let pool = BufferPool::new(64, 4096, 64 * 1024);
//! {
//!     let mut buf = pool.get(); // a miss: the pool starts empty
//!     buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n");
//! } // cleared and returned here
//! let buf = pool.get(); // a hit: the same buffer, empty again
//! assert!(buf.is_empty() && buf.capacity() >= 4096);
//! assert_eq!((pool.stats().hits, pool.stats().misses, pool.stats().returns), (1, 1, 1));
//! ```

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;

/// Decides, when a guard is dropped, whether its object goes back to the pool: resets the
/// object and answers `true` to keep it.
type Recycle<T> = Box<dyn Fn(&mut T) -> bool + Send + Sync>;

/// A cheaply clonable handle on a bounded, lock-free pool of `T`.
///
/// Clones share the same pool. `Pool<T>` is `Send + Sync` whenever `T: Send`, so one pool can
/// serve every thread of a server.
///
/// ```
/// use rpcwire_wire::pool::Pool;
///
/// let pool = Pool::with_reset(8, || Vec::<u32>::with_capacity(16), Vec::clear);
/// let mut ids = pool.get();
/// ids.push(7);
/// drop(ids);
/// assert_eq!(pool.idle(), 1);
/// assert!(pool.get().is_empty()); // reset before it was pooled again
/// ```
pub struct Pool<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    idle: ArrayQueue<T>,
    create: Box<dyn Fn() -> T + Send + Sync>,
    recycle: Recycle<T>,
    counters: Counters,
}

/// One cache line per counter: threads bumping different counters do not contend.
#[derive(Default)]
struct Counters {
    hits: CachePadded<AtomicU64>,
    misses: CachePadded<AtomicU64>,
    returns: CachePadded<AtomicU64>,
    discards: CachePadded<AtomicU64>,
}

/// A snapshot of a pool's counters, from [`Pool::stats`] or [`BufferPool::stats`].
///
/// The counters are updated with relaxed atomics: each is exact, but a snapshot taken while
/// other threads use the pool may mix moments.
///
/// ```
/// let pool = rpcwire_wire::pool::Pool::new(1, String::new);
/// let (a, b) = (pool.get(), pool.get());
/// drop((a, b)); // the second one finds the pool full
/// let stats = pool.stats();
/// assert_eq!((stats.hits, stats.misses, stats.returns, stats.discards), (0, 2, 1, 1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// `get` calls served by an idle object.
    pub hits: u64,
    /// `get` calls that had to create a new object.
    pub misses: u64,
    /// Objects put back into the pool when their guard was dropped.
    pub returns: u64,
    /// Objects dropped instead of returned: the pool was full, or (for [`BufferPool`]) the
    /// buffer had grown past the retained maximum.
    pub discards: u64,
}

impl<T> Pool<T> {
    /// A pool keeping at most `capacity` idle objects, creating new ones with `create`.
    /// Objects go back as they are, without a reset; see [`Pool::with_reset`].
    ///
    /// # Panics
    ///
    /// If `capacity` is zero (crossbeam's `ArrayQueue` needs at least one slot).
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::Pool::new(4, || [0u8; 64]);
    /// assert_eq!(pool.capacity(), 4);
    /// ```
    pub fn new(capacity: usize, create: impl Fn() -> T + Send + Sync + 'static) -> Pool<T> {
        Pool::build(capacity, Box::new(create), Box::new(|_: &mut T| true))
    }

    /// A pool that calls `reset` on every object before putting it back, so that
    /// [`get`](Pool::get) always hands out a clean one.
    ///
    /// # Panics
    ///
    /// If `capacity` is zero.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::Pool::with_reset(4, String::new, String::clear);
    /// pool.get().push_str("scratch");
    /// assert_eq!(*pool.get(), "");
    /// ```
    pub fn with_reset(
        capacity: usize,
        create: impl Fn() -> T + Send + Sync + 'static,
        reset: impl Fn(&mut T) + Send + Sync + 'static,
    ) -> Pool<T> {
        let recycle = move |value: &mut T| {
            reset(value);
            true
        };
        Pool::build(capacity, Box::new(create), Box::new(recycle))
    }

    fn build(capacity: usize, create: Box<dyn Fn() -> T + Send + Sync>, recycle: Recycle<T>) -> Pool<T> {
        Pool {
            inner: Arc::new(Inner {
                idle: ArrayQueue::new(capacity),
                create,
                recycle,
                counters: Counters::default(),
            }),
        }
    }

    /// An idle object, or a new one if none is idle. The guard puts it back when dropped.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::Pool::new(2, || vec![0u8; 4]);
    /// let mut block = pool.get();
    /// block[0] = 1;
    /// assert_eq!(*block, [1, 0, 0, 0]);
    /// ```
    pub fn get(&self) -> Pooled<T> {
        let counters = &self.inner.counters;
        let value = match self.inner.idle.pop() {
            Some(value) => {
                bump(&counters.hits);
                value
            }
            None => {
                bump(&counters.misses);
                (self.inner.create)()
            }
        };
        Pooled {
            value: Some(value),
            pool: self.clone(),
        }
    }

    /// The number of idle objects waiting in the pool.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::Pool::new(2, String::new);
    /// drop(pool.get());
    /// assert_eq!(pool.idle(), 1);
    /// ```
    pub fn idle(&self) -> usize {
        self.inner.idle.len()
    }

    /// The most idle objects the pool keeps.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::pool::Pool::new(3, String::new).capacity(), 3);
    /// ```
    pub fn capacity(&self) -> usize {
        self.inner.idle.capacity()
    }

    /// A snapshot of the hit, miss, return and discard counters.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::Pool::new(2, String::new);
    /// drop(pool.get());
    /// drop(pool.get());
    /// assert_eq!(pool.stats().hits, 1);
    /// ```
    pub fn stats(&self) -> PoolStats {
        let c = &self.inner.counters;
        PoolStats {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            returns: c.returns.load(Ordering::Relaxed),
            discards: c.discards.load(Ordering::Relaxed),
        }
    }

    /// Resets `value` and pushes it back, or drops it.
    fn put_back(&self, mut value: T) {
        let counters = &self.inner.counters;
        if (self.inner.recycle)(&mut value) && self.inner.idle.push(value).is_ok() {
            bump(&counters.returns);
        } else {
            // `push` hands the value back when the queue is full; it is dropped here.
            bump(&counters.discards);
        }
    }
}

impl<T> Clone for Pool<T> {
    fn clone(&self) -> Self {
        Pool {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("idle", &self.idle())
            .field("capacity", &self.capacity())
            .field("stats", &self.stats())
            .finish()
    }
}

/// An object on loan from a [`Pool`]: derefs to `T`, goes back to the pool when dropped.
///
/// ```
/// let pool = rpcwire_wire::pool::Pool::new(2, || String::from("fresh"));
/// let text = pool.get();
/// assert_eq!(text.len(), 5);
/// ```
pub struct Pooled<T> {
    /// Always `Some` until `drop` or `into_inner` takes it.
    value: Option<T>,
    pool: Pool<T>,
}

impl<T> Pooled<T> {
    /// Takes the object out for good: it will not go back to the pool. (An associated
    /// function, not a method, so that it cannot shadow a method of `T`.)
    ///
    /// ```
    /// use rpcwire_wire::pool::{Pool, Pooled};
    /// let pool = Pool::new(2, || vec![1, 2, 3]);
    /// let kept: Vec<i32> = Pooled::into_inner(pool.get());
    /// assert_eq!(kept, [1, 2, 3]);
    /// assert_eq!(pool.idle(), 0);
    /// ```
    pub fn into_inner(mut this: Pooled<T>) -> T {
        match this.value.take() {
            Some(value) => value,
            // `value` is only taken by `into_inner` itself (which consumes the guard) and by
            // `drop`; a live guard always holds its value.
            None => unreachable!("a live Pooled guard always holds its value"),
        }
    }

    /// The pool this object returns to.
    ///
    /// ```
    /// use rpcwire_wire::pool::{Pool, Pooled};
    /// let pool = Pool::new(2, String::new);
    /// let guard = pool.get();
    /// assert_eq!(Pooled::pool(&guard).capacity(), 2);
    /// ```
    pub fn pool(this: &Pooled<T>) -> &Pool<T> {
        &this.pool
    }
}

impl<T> Deref for Pooled<T> {
    type Target = T;

    fn deref(&self) -> &T {
        match &self.value {
            Some(value) => value,
            None => unreachable!("a live Pooled guard always holds its value"),
        }
    }
}

impl<T> DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.value {
            Some(value) => value,
            None => unreachable!("a live Pooled guard always holds its value"),
        }
    }
}

impl<T> Drop for Pooled<T> {
    fn drop(&mut self) {
        if let Some(value) = self.value.take() {
            self.pool.put_back(value);
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Pooled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A pool of [`BytesMut`] buffers for reading frames and writing responses.
///
/// New buffers start with `initial_capacity`. A returned buffer is cleared; one whose
/// capacity grew past `max_retained` (a peer sent one huge message) is dropped instead of
/// kept, so the pool never pins more than `capacity × max_retained` bytes.
///
/// ```
/// use rpcwire_wire::pool::BufferPool;
///
/// let pool = BufferPool::new(16, 1024, 8 * 1024);
/// let mut buf = pool.get();
/// buf.reserve(1 << 20); // grows far past max_retained
/// drop(buf);
/// assert_eq!((pool.idle(), pool.stats().discards), (0, 1));
/// ```
#[derive(Clone)]
pub struct BufferPool {
    pool: Pool<BytesMut>,
    initial_capacity: usize,
    max_retained: usize,
}

impl BufferPool {
    /// A pool of at most `capacity` idle buffers, each created with `initial_capacity`
    /// bytes and dropped on return if its capacity exceeds `max_retained`.
    ///
    /// # Panics
    ///
    /// If `capacity` is zero.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::BufferPool::new(4, 512, 4096);
    /// assert_eq!(pool.initial_capacity(), 512);
    /// assert_eq!(pool.max_retained(), 4096);
    /// ```
    pub fn new(capacity: usize, initial_capacity: usize, max_retained: usize) -> BufferPool {
        let recycle = move |buf: &mut BytesMut| {
            buf.clear();
            buf.capacity() <= max_retained
        };
        BufferPool {
            pool: Pool::build(
                capacity,
                Box::new(move || BytesMut::with_capacity(initial_capacity)),
                Box::new(recycle),
            ),
            initial_capacity,
            max_retained,
        }
    }

    /// An idle buffer (empty), or a new one with the initial capacity.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::BufferPool::new(4, 512, 4096);
    /// let buf = pool.get();
    /// assert!(buf.is_empty() && buf.capacity() >= 512);
    /// ```
    pub fn get(&self) -> PooledBuf {
        PooledBuf { buf: self.pool.get() }
    }

    /// The number of idle buffers waiting in the pool.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::BufferPool::new(4, 512, 4096);
    /// drop(pool.get());
    /// assert_eq!(pool.idle(), 1);
    /// ```
    pub fn idle(&self) -> usize {
        self.pool.idle()
    }

    /// The most idle buffers the pool keeps.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::pool::BufferPool::new(4, 512, 4096).capacity(), 4);
    /// ```
    pub fn capacity(&self) -> usize {
        self.pool.capacity()
    }

    /// The capacity new buffers are created with.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::pool::BufferPool::new(4, 512, 4096).initial_capacity(), 512);
    /// ```
    pub fn initial_capacity(&self) -> usize {
        self.initial_capacity
    }

    /// The largest capacity a returned buffer may have and still be kept.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::pool::BufferPool::new(4, 512, 4096).max_retained(), 4096);
    /// ```
    pub fn max_retained(&self) -> usize {
        self.max_retained
    }

    /// A snapshot of the hit, miss, return and discard counters.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::BufferPool::new(4, 512, 4096);
    /// drop(pool.get());
    /// assert_eq!(pool.stats().returns, 1);
    /// ```
    pub fn stats(&self) -> PoolStats {
        self.pool.stats()
    }
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPool")
            .field("idle", &self.idle())
            .field("capacity", &self.capacity())
            .field("initial_capacity", &self.initial_capacity)
            .field("max_retained", &self.max_retained)
            .field("stats", &self.stats())
            .finish()
    }
}

/// A [`BytesMut`] on loan from a [`BufferPool`]: derefs to the buffer, goes back to the pool
/// (cleared) when dropped.
///
/// ```
/// use bytes::BufMut;
/// let pool = rpcwire_wire::pool::BufferPool::new(4, 512, 4096);
/// let mut buf = pool.get();
/// buf.put_slice(b"hello");
/// assert_eq!(&buf[..], b"hello");
/// ```
pub struct PooledBuf {
    buf: Pooled<BytesMut>,
}

impl PooledBuf {
    /// Takes the buffer out for good: it will not go back to the pool.
    ///
    /// ```
    /// let pool = rpcwire_wire::pool::BufferPool::new(4, 512, 4096);
    /// let mut buf = pool.get();
    /// buf.extend_from_slice(b"kept");
    /// let frame = buf.into_inner().freeze();
    /// assert_eq!(&frame[..], b"kept");
    /// assert_eq!(pool.idle(), 0);
    /// ```
    pub fn into_inner(self) -> BytesMut {
        Pooled::into_inner(self.buf)
    }
}

impl Deref for PooledBuf {
    type Target = BytesMut;

    fn deref(&self) -> &BytesMut {
        &self.buf
    }
}

impl DerefMut for PooledBuf {
    fn deref_mut(&mut self) -> &mut BytesMut {
        &mut self.buf
    }
}

impl AsRef<[u8]> for PooledBuf {
    fn as_ref(&self) -> &[u8] {
        &self.buf[..]
    }
}

impl fmt::Debug for PooledBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.buf, f)
    }
}

/// Adds one to a statistics counter. Relaxed: each counter is exact, a snapshot of several
/// taken while they move may mix moments.
#[inline]
fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_runs_on_return_not_on_get() {
        let pool = Pool::with_reset(2, || vec![9u8], |v: &mut Vec<u8>| v.clear());
        let fresh = pool.get();
        assert_eq!(*fresh, [9]);
        drop(fresh);
        assert!(pool.get().is_empty());
    }

    #[test]
    fn into_inner_does_not_count_a_return() {
        let pool = Pool::new(2, String::new);
        let _owned = Pooled::into_inner(pool.get());
        assert_eq!(
            pool.stats(),
            PoolStats {
                hits: 0,
                misses: 1,
                returns: 0,
                discards: 0
            }
        );
    }

    #[test]
    fn debug_output_names_the_counters() {
        let pool = BufferPool::new(2, 8, 16);
        let text = format!("{pool:?} {:?}", Pool::new(1, || 1u8));
        assert!(
            text.contains("max_retained: 16") && text.contains("hits: 0"),
            "{text}"
        );
        let mut buf = pool.get();
        buf.extend_from_slice(b"ab");
        assert_eq!(format!("{buf:?}"), "b\"ab\"");
        assert_eq!(buf.as_ref(), b"ab");
        assert_eq!(format!("{:?}", Pool::new(1, || 5u8).get()), "5");
    }
}
