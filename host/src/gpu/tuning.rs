//! Knobs for the benchmark's variant sweeps; not part of the API, and the defaults are the
//! measured best.

#![doc(hidden)]

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Grid size of the 1-D kernels, in waves of resident blocks (1 = one block per resident
/// slot, the kernels looping grid-stride).
pub static GRID_WAVES: AtomicU32 = AtomicU32::new(1);

/// The gray histogram kernel: 0 = uniform-vector runs + per-byte atomics, 1 = the generic
/// byte-by-byte run tracking.
pub static GRAY_HISTOGRAM: AtomicU32 = AtomicU32::new(0);

pub(crate) fn grid_waves() -> u32 {
    GRID_WAVES.load(Relaxed).max(1)
}

pub(crate) fn gray_histogram_runs() -> bool {
    GRAY_HISTOGRAM.load(Relaxed) == 1
}

/// The plain copy kernel over `bytes` (a multiple of 16) of two device buffers: the
/// benchmark's reference for SM-driven streaming with equal reads and writes.
pub fn copy_kernel(
    stream: &crate::Stream,
    src: &crate::DeviceBuffer<u8>,
    dst: &mut crate::DeviceBuffer<u8>,
) -> crate::Result<()> {
    assert_eq!(src.len(), dst.len());
    assert!(src.len().is_multiple_of(16));
    let func = &stream.gpu.inner.kernels.copy_flat;
    let vectors = (src.len() / 16) as u64;
    let cfg = super::launch::linear(stream, func, vectors / 4, 0)?;
    let read = src.buf.read(&stream.raw)?;
    let mut write = dst.buf.write(&stream.raw)?;
    let (s, d) = (read.ptr(), write.ptr());
    // SAFETY: both buffers hold 16 * vectors bytes (asserted) in separate 256-byte aligned
    // allocations; 1-D launch.
    unsafe { super::launch::launch!(stream, func, cfg; s, d, vectors) }?;
    Ok(())
}
