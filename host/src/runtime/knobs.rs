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

    pub fn grid_waves() -> u32 {
        GRID_WAVES.load(Relaxed).max(1)
    }

    pub fn gray_histogram_runs() -> bool {
        GRAY_HISTOGRAM.load(Relaxed) == 1
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
}

#[cfg(feature = "bench-knobs")]
pub use imp::{GRAY_HISTOGRAM, GRID_WAVES};
pub(crate) use imp::{gray_histogram_runs, grid_waves};
