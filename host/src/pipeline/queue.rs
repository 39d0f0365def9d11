//! The pipeline's plumbing between its threads: the bounded work queue, the window of
//! images in flight, and host copies on a pool of their own.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

use rayon::prelude::*;

/// A bounded multi-consumer queue of work: the reader pushes (waiting while it is full),
/// workers pop without holding the lock while they wait.
pub(super) struct WorkQueue<T> {
    /// The items, whether the feeder is done, and whether the workers are all gone.
    state: Mutex<(VecDeque<T>, bool, bool)>,
    not_empty: Condvar,
    not_full: Condvar,
    cap: usize,
}

/// What a pop found.
pub(super) enum Pop<T> {
    Item(T),
    Empty,
    Closed,
}

impl<T> WorkQueue<T> {
    pub(super) fn new(cap: usize) -> WorkQueue<T> {
        WorkQueue {
            state: Mutex::new((VecDeque::new(), false, false)),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            cap,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (VecDeque<T>, bool, bool)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `item`, waiting while the queue is full; false (the item dropped) once no
    /// worker is left to take it.
    pub(super) fn push(&self, item: T) -> bool {
        let mut st = self.lock();
        while st.0.len() >= self.cap && !st.2 {
            st = self.not_full.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.2 {
            return false;
        }
        st.0.push_back(item);
        self.not_empty.notify_one();
        true
    }

    /// No worker is left: what is queued is dropped, and pushes fail from now on.
    pub(super) fn abandon(&self) {
        let mut st = self.lock();
        st.2 = true;
        st.0.clear();
        self.not_full.notify_all();
    }

    pub(super) fn close(&self) {
        self.lock().1 = true;
        self.not_empty.notify_all();
    }

    /// The next item; with `wait`, blocks until there is one or the queue is closed.
    pub(super) fn pop(&self, wait: bool) -> Pop<T> {
        let mut st = self.lock();
        loop {
            if let Some(item) = st.0.pop_front() {
                self.not_full.notify_one();
                return Pop::Item(item);
            }
            if st.1 {
                return Pop::Closed;
            }
            if !wait {
                return Pop::Empty;
            }
            st = self.not_empty.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A counting semaphore: how many images may be between the reader and the collector.
pub(super) struct Window {
    free: Mutex<usize>,
    cv: Condvar,
}

impl Window {
    /// A window of `size` images.
    pub(super) fn new(size: usize) -> Window {
        Window { free: Mutex::new(size), cv: Condvar::new() }
    }

    pub(super) fn acquire(&self) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
    }

    pub(super) fn release(&self) {
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cv.notify_one();
    }
}

/// Copies `src` into `dst` (same length) on all cores when it is large, on a thread pool of
/// the pipeline's own: the caller's input iterator may be fed by tasks of rayon's global
/// pool that block until the pipeline takes their images (a decoder sending into a bounded
/// channel), and a copy waiting for those threads would never run.
pub(super) fn copy_parallel(dst: &mut [u8], src: &[u8]) {
    const CHUNK: usize = 1 << 20;
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let n = std::thread::available_parallelism().map_or(4, |n| n.get()).min(8);
        rayon::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("cuimg-copy-{i}")).build().ok()
    });
    match pool {
        Some(pool) if src.len() >= 2 * CHUNK => pool
            .install(|| dst.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s))),
        _ => dst.copy_from_slice(src),
    }
}
