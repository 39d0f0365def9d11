//! Benchmark-only tuning knobs. With the `bench-knobs` feature they are statics the
//! benchmark sweeps (through `cuimg::bench`); without it, constants: the measured best.

#[cfg(feature = "bench-knobs")]
mod imp {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

    /// Grid size of the 1-D kernels, in waves of resident blocks (1 = one block per resident
    /// slot, the kernels looping grid-stride).
    pub static GRID_WAVES: AtomicU32 = AtomicU32::new(1);

    /// The gray histogram kernel: 0 = uniform-vector runs + per-byte atomics, 1 = the
    /// generic byte-by-byte run tracking.
    pub static GRAY_HISTOGRAM: AtomicU32 = AtomicU32::new(0);

    /// At most this many blocks per launch (0: no cap). The sanitizer tests set it so that
    /// small images, which instrumented kernels can afford, still take every kernel's
    /// grid-stride loop round many times.
    pub static GRID_CAP: AtomicU32 = AtomicU32::new(0);

    /// Gray equalization of whole images: 1 = the histogram and its table in one launch
    /// (the last block builds the table), 0 = the histogram, then a one-block table kernel.
    pub static EQUALIZE_ONE_LAUNCH: AtomicU32 = AtomicU32::new(1);

    /// Gray equalization's apply on whole images: 1 = from the last vector to the first
    /// (the part of the image the histogram read last, still in L2, first), 0 = forward.
    pub static EQUALIZE_REVERSE_APPLY: AtomicU32 = AtomicU32::new(1);

    /// Session 15's host path for launch tables: 1 = the stream's kept table buffer, and a
    /// batch's groups of plans launched smallest first; 0 = a buffer of its own each launch,
    /// groups in the order first seen (as before), to time both in one run.
    pub static KEPT_TABLES: AtomicU32 = AtomicU32::new(1);

    pub fn grid_waves() -> u32 {
        GRID_WAVES.load(Relaxed).max(1)
    }

    pub fn kept_tables() -> bool {
        KEPT_TABLES.load(Relaxed) == 1
    }

    pub fn gray_histogram_runs() -> bool {
        GRAY_HISTOGRAM.load(Relaxed) == 1
    }

    pub fn grid_cap() -> Option<u32> {
        Some(GRID_CAP.load(Relaxed)).filter(|&c| c > 0)
    }

    pub fn equalize_one_launch() -> bool {
        EQUALIZE_ONE_LAUNCH.load(Relaxed) == 1
    }

    /// The bytes of the module file named by `CUIMG_MODULE` (a cubin or PTX with the same
    /// kernels), loaded instead of the embedded code: kernel variants built by `cargo xtask
    /// ptx` on a branch, timed with one benchmark binary. Unreadable: a panic, not a silent
    /// fallback to the embedded kernels.
    pub fn module_file() -> Option<Vec<u8>> {
        let path = std::env::var_os("CUIMG_MODULE")?;
        let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("CUIMG_MODULE={}: {e}", path.display()));
        if !bytes.starts_with(b"\x7fELF") {
            bytes.push(0); // PTX text goes to the driver NUL-terminated
        }
        Some(bytes)
    }

    pub fn equalize_apply_reversed() -> bool {
        EQUALIZE_REVERSE_APPLY.load(Relaxed) == 1
    }

    /// Host time by named span, summed since the last [`take_host_spans`]: (name,
    /// nanoseconds, calls), in first-seen order.
    static SPANS: std::sync::Mutex<Vec<(&'static str, u64, u64)>> = std::sync::Mutex::new(Vec::new());

    /// `f`, its host time added to span `name` (where the host's part of a call goes).
    pub fn host_span<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let r = f();
        host_span_end(name, start);
        r
    }

    /// The start of a span that does not fit one closure (see [`host_span_end`]).
    pub fn host_span_start() -> std::time::Instant {
        std::time::Instant::now()
    }

    /// The host time since `start` added to span `name`, as one call.
    pub fn host_span_end(name: &'static str, start: std::time::Instant) {
        let ns = start.elapsed().as_nanos() as u64;
        let mut spans = SPANS.lock().unwrap_or_else(|e| e.into_inner());
        match spans.iter_mut().find(|s| s.0 == name) {
            Some(s) => (s.1, s.2) = (s.1 + ns, s.2 + 1),
            None => spans.push((name, ns, 1)),
        }
    }

    /// The spans summed since the last call, reset.
    pub fn take_host_spans() -> Vec<(&'static str, u64, u64)> {
        std::mem::take(&mut *SPANS.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(not(feature = "bench-knobs"))]
mod imp {
    pub fn grid_waves() -> u32 {
        1
    }

    pub fn gray_histogram_runs() -> bool {
        false
    }

    pub fn grid_cap() -> Option<u32> {
        None
    }

    pub fn equalize_one_launch() -> bool {
        true
    }

    pub fn equalize_apply_reversed() -> bool {
        true
    }

    pub fn module_file() -> Option<Vec<u8>> {
        None
    }

    pub fn kept_tables() -> bool {
        true
    }

    #[inline(always)]
    pub fn host_span<T>(_: &'static str, f: impl FnOnce() -> T) -> T {
        f()
    }

    #[inline(always)]
    pub fn host_span_start() {}

    #[inline(always)]
    pub fn host_span_end(_: &'static str, _: ()) {}
}

#[cfg(feature = "bench-knobs")]
pub use imp::{
    EQUALIZE_ONE_LAUNCH, EQUALIZE_REVERSE_APPLY, GRAY_HISTOGRAM, GRID_CAP, GRID_WAVES, KEPT_TABLES, take_host_spans,
};
pub(crate) use imp::{
    equalize_apply_reversed, equalize_one_launch, gray_histogram_runs, grid_cap, grid_waves, host_span, host_span_end,
    host_span_start, kept_tables, module_file,
};
