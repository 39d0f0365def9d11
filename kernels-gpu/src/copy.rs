//! A plain 16-byte-vector copy: not an operation of the library, but the benchmark's
//! reference for what a streaming kernel with equal reads and writes reaches on the SMs,
//! beside the driver's device-to-device copy.

use crate::device::thread::{grid_size, index_1d};
use cuimg_abi::copy::CopyFlat;

/// `dst = src`, `16 * vectors` bytes, four vectors in flight per thread: whole tiles of four
/// load unconditionally, the last partial tile one vector at a time. The vectors are `u128`,
/// a scalar to LLVM: four `V16` aggregates alive at once went to local memory.
///
/// # Safety
/// Both buffers hold `16 * vectors` bytes and are 16-byte aligned; 1-D launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn copy_flat(p: CopyFlat) {
    let (s, d, vectors) = (p.src.ptr() as *const u128, p.dst.ptr() as *mut u128, p.vectors);
    let step = grid_size();
    let mut base = index_1d();
    while base + 3 * step < vectors {
        let [i0, i1, i2, i3] = [0, 1, 2, 3].map(|k| (base + k * step) as usize);
        // SAFETY: i3 < vectors, and i0 < i1 < i2 < i3.
        unsafe {
            let (v0, v1, v2, v3) = (*s.add(i0), *s.add(i1), *s.add(i2), *s.add(i3));
            *d.add(i0) = v0;
            *d.add(i1) = v1;
            *d.add(i2) = v2;
            *d.add(i3) = v3;
        }
        base += 4 * step;
    }
    while base < vectors {
        // SAFETY: base < vectors.
        unsafe { *d.add(base as usize) = *s.add(base as usize) };
        base += step;
    }
}
abi!(cuimg_abi::copy::CopyFlatKernel, copy_flat);
