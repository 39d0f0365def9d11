//! Benchmark-only tuning knobs and the reference copy kernel (feature `bench-knobs`; not part
//! of the library's API). The defaults are the measured best.

use cuimg_abi::copy::{CopyFlat, CopyFlatKernel};

pub use crate::runtime::knobs::{
    EQUALIZE_ONE_LAUNCH, EQUALIZE_REVERSE_APPLY, GRAY_HISTOGRAM, GRID_CAP, GRID_WAVES, KEPT_TABLES, take_host_spans,
};
use crate::{DeviceBuffer, Result, Stream};

/// The plain copy kernel over `bytes` (a multiple of 16) of two device buffers: the
/// benchmark's reference for SM-driven streaming with equal reads and writes.
///
/// # Panics
/// When the buffers differ in length or the length is not a multiple of 16.
pub fn copy_kernel(stream: &Stream, src: &DeviceBuffer<u8>, dst: &mut DeviceBuffer<u8>) -> Result<()> {
    assert_eq!(src.len(), dst.len());
    assert!(src.len().is_multiple_of(16));
    let vectors = (src.len() / 16) as u64;
    let cfg = stream.linear::<CopyFlatKernel>(vectors / 4, 0)?;
    let read = src.buf.read(&stream.raw)?;
    let mut write = dst.buf.write(&stream.raw)?;
    let params = CopyFlat { src: read.ptr(), dst: write.ptr(), vectors };
    // SAFETY: both buffers hold 16 * vectors bytes (asserted) in separate 256-byte aligned
    // allocations, ordered by the guards; 1-D launch, no shared memory.
    unsafe { stream.launch::<CopyFlatKernel>(cfg, params) }
}
