//! `Pool` and `BufferPool`: reuse, bounds, counters, buffer shrinking, concurrent use, and
//! zero heap allocations per get/drop cycle in steady state (counted by a global allocator,
//! as in `tests/zero_alloc/`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::BufMut;
use rpcwire::pool::{BufferPool, Pool, PoolStats, Pooled};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting<std::alloc::System> = counting_alloc::Counting(std::alloc::System);

use counting_alloc::allocations;

fn stats(hits: u64, misses: u64, returns: u64, discards: u64) -> PoolStats {
    PoolStats {
        hits,
        misses,
        returns,
        discards,
    }
}

#[test]
fn counter_sees_allocations() {
    assert!(allocations(|| Box::new(1u64)) >= 1);
    let pool = Pool::new(1, || vec![0u8; 32]);
    // A miss creates a new object, which allocates.
    assert!(allocations(|| drop(pool.get())) >= 1);
}

#[test]
fn objects_are_reused() {
    let created = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&created);
    let pool = Pool::new(4, move || counter.fetch_add(1, Ordering::Relaxed));
    let first = *pool.get();
    for _ in 0..10 {
        assert_eq!(*pool.get(), first);
    }
    assert_eq!(created.load(Ordering::Relaxed), 1);
    assert_eq!(pool.stats(), stats(10, 1, 11, 0));
}

#[test]
fn a_full_pool_drops_what_comes_back() {
    let pool = Pool::new(2, String::new);
    let guards: Vec<_> = (0..5).map(|_| pool.get()).collect();
    assert_eq!(pool.idle(), 0);
    drop(guards);
    assert_eq!(pool.idle(), 2);
    assert_eq!(pool.stats(), stats(0, 5, 2, 3));
}

#[test]
fn reset_hook_cleans_objects_before_reuse() {
    let pool = Pool::with_reset(2, Vec::<u32>::new, Vec::clear);
    {
        let mut v = pool.get();
        v.extend([1, 2, 3]);
        assert_eq!(v.len(), 3);
    }
    let v = pool.get();
    assert!(v.is_empty());
    assert!(v.capacity() >= 3, "the reset keeps the allocation");
}

#[test]
fn into_inner_takes_the_object_out() {
    let pool = Pool::new(2, || String::from("x"));
    let mut guard = pool.get();
    guard.push('y');
    let owned = Pooled::into_inner(guard);
    assert_eq!(owned, "xy");
    assert_eq!(pool.idle(), 0);
    assert_eq!(pool.stats(), stats(0, 1, 0, 0));
    assert_eq!(Pooled::pool(&pool.get()).capacity(), 2);
}

#[test]
fn clones_share_the_pool() {
    let pool = Pool::new(2, || 0u8);
    let other = pool.clone();
    drop(pool.get());
    assert_eq!(other.idle(), 1);
    drop(other.get());
    assert_eq!(pool.stats().hits, 1);
    // A guard keeps the pool alive after every handle is gone.
    let guard = other.get();
    drop((pool, other));
    drop(guard);
}

#[test]
fn buffers_come_back_cleared() {
    let pool = BufferPool::new(4, 256, 4096);
    let mut buf = pool.get();
    assert!(buf.capacity() >= 256);
    buf.put_slice(b"Content-Length: 2\r\n\r\n{}");
    drop(buf);
    let buf = pool.get();
    assert!(buf.is_empty());
    assert!(buf.capacity() >= 256);
    assert_eq!(pool.stats(), stats(1, 1, 1, 0));
}

#[test]
fn buffers_that_grew_too_large_are_dropped() {
    let pool = BufferPool::new(4, 256, 4096);
    let mut big = pool.get();
    big.extend_from_slice(&[b'x'; 10_000]);
    assert!(big.capacity() > 4096);
    let small = pool.get();
    drop(big);
    drop(small);
    assert_eq!(pool.idle(), 1, "only the small buffer is kept");
    assert!(pool.get().capacity() <= 4096);
    assert_eq!(pool.stats().discards, 1);
    // A buffer that stays within the limit is kept.
    let mut buf = pool.get();
    buf.extend_from_slice(&[b'y'; 200]);
    assert!(buf.capacity() <= 4096);
    drop(buf);
    assert_eq!(pool.idle(), 1);
}

#[test]
fn detached_buffers_do_not_return() {
    let pool = BufferPool::new(4, 64, 1024);
    let mut buf = pool.get();
    buf.extend_from_slice(b"frame");
    let frame = buf.into_inner().freeze();
    assert_eq!(&frame[..], b"frame");
    assert_eq!(pool.idle(), 0);
    assert_eq!(pool.stats(), stats(0, 1, 0, 0));
}

#[test]
fn pools_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Pool<String>>();
    assert_send_sync::<Pooled<String>>();
    assert_send_sync::<BufferPool>();
    assert_send_sync::<rpcwire::pool::PooledBuf>();
}

#[test]
fn concurrent_use_never_shares_an_object() {
    const THREADS: usize = 4;
    // Fewer under Miri, which runs threads thousands of times slower (still interleaved).
    const ROUNDS: usize = if cfg!(miri) { 100 } else { 5_000 };
    // Each object carries an "on loan" flag: two threads holding it at once would find it
    // set; the reset hook checks that nothing comes back while still marked on loan.
    let pool = Pool::with_reset(
        3,
        || Arc::new(AtomicBool::new(false)),
        |flag: &mut Arc<AtomicBool>| assert!(!flag.load(Ordering::SeqCst)),
    );
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                for round in 0..ROUNDS {
                    let guards: Vec<_> = (0..1 + round % 3).map(|_| pool.get()).collect();
                    for flag in &guards {
                        assert!(!flag.swap(true, Ordering::SeqCst), "object handed out twice");
                    }
                    for flag in &guards {
                        flag.store(false, Ordering::SeqCst);
                    }
                    drop(guards);
                }
            });
        }
    });
    let s = pool.stats();
    let gets: u64 = (0..ROUNDS).map(|r| 1 + r as u64 % 3).sum::<u64>() * THREADS as u64;
    assert_eq!(s.hits + s.misses, gets);
    assert_eq!(s.returns + s.discards, gets);
    assert!(s.hits > 0);
    assert!(pool.idle() <= 3);
}

#[test]
fn concurrent_buffer_pool_keeps_its_bounds() {
    // Fewer under Miri, which runs threads thousands of times slower (still interleaved).
    const ROUNDS: usize = if cfg!(miri) { 200 } else { 2_000 };
    let pool = BufferPool::new(8, 128, 1024);
    std::thread::scope(|scope| {
        for t in 0..4usize {
            let pool = pool.clone();
            scope.spawn(move || {
                for i in 0..ROUNDS {
                    let mut buf = pool.get();
                    assert!(buf.is_empty(), "a returned buffer is cleared");
                    let len = if (i + t) % 100 == 0 { 5_000 } else { 64 };
                    buf.put_bytes(b'a', len);
                }
            });
        }
    });
    let s = pool.stats();
    let gets = 4 * ROUNDS as u64;
    let oversized = (0..4usize)
        .flat_map(|t| (0..ROUNDS).map(move |i| (i + t) % 100 == 0))
        .filter(|&big| big)
        .count() as u64;
    assert_eq!(s.hits + s.misses, gets);
    assert_eq!(s.returns + s.discards, gets);
    assert!(
        s.discards >= oversized,
        "every oversized buffer is dropped: {s:?}"
    );
    assert!(pool.idle() <= 8);
    for _ in 0..pool.idle() {
        assert!(pool.get().capacity() <= 1024);
    }
}

#[test]
fn steady_state_get_and_drop_allocates_nothing() {
    let pool = Pool::with_reset(4, || Vec::<u8>::with_capacity(256), Vec::clear);
    let buffers = BufferPool::new(4, 4096, 64 * 1024);
    // Warm up: the first get of each creates the object.
    drop((pool.get(), pool.get()));
    drop((buffers.get(), buffers.get()));
    // Fewer under Miri, which interprets every allocation check thousands of times slower.
    let rounds = if cfg!(miri) { 100 } else { 10_000usize };
    let count = allocations(|| {
        for i in 0..rounds {
            let mut a = pool.get();
            let mut b = pool.get();
            a.extend_from_slice(&i.to_le_bytes());
            b.push(1);
            let mut buf = buffers.get();
            buf.put_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":true}\n");
            buf.put_u64(i as u64);
        }
    });
    assert_eq!(count, 0);
    assert_eq!(pool.stats().misses, 2);
    assert_eq!(buffers.stats().misses, 2);
}
