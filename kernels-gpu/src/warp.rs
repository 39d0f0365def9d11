//! Warps (`cv2.warpAffine`, `cv2.warpPerspective`): one thread per output pixel of job
//! `blockIdx.z`, all its channels, evaluating `cuimg_abi::warp::pixel` (the CPU reference
//! evaluates the same function). Its fused multiply-adds are `fma.rn.f32`, where OpenCV's
//! are fused; every other product and sum is rounded on its own, as rustc emits them.

use crate::device::thread::{block_idx_z, grid_stride_x, grid_stride_y};
use cuimg_abi::warp::{Float, WarpJob, WarpParams, pixel};

/// The kernels' float operations.
struct Device;

impl Float for Device {
    #[inline(always)]
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        core::f32::math::mul_add(a, b, c)
    }
    #[inline(always)]
    fn floor(v: f32) -> f32 {
        core::f32::math::floor(v)
    }
    #[inline(always)]
    fn round_even(v: f32) -> f32 {
        core::f32::math::round_ties_even(v)
    }
}

/// # Safety
/// `p.jobs` holds `gridDim.z` jobs; each job's planes describe a readable source of at least
/// one pixel and a writable destination, `C` bytes a pixel; 2-D launch.
// The channel loops index their arrays: iterators over arrays do not unroll here, and would
// put the arrays in local memory.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn warp<const C: usize>(p: WarpParams) {
    // SAFETY: blockIdx.z < gridDim.z, the table's length.
    let j = unsafe { *p.jobs.ptr().add(block_idx_z() as usize) };
    let (src, dst) = (j.src.data as usize as *const u8, j.dst.data as usize as *mut u8);
    for y in grid_stride_y(j.dst.height as u64) {
        for x in grid_stride_x(j.dst.width as u64) {
            let fetch = |sx: u32, sy: u32| {
                let at = sy as usize * j.src.pitch as usize + sx as usize * C;
                let mut px = [0u8; C];
                for c in 0..C {
                    // SAFETY: `pixel` fetches only pixels inside the source.
                    px[c] = unsafe { *src.add(at + c) };
                }
                px
            };
            let out = pixel::<Device, C>(&j, x as u32, y as u32, fetch);
            let to = (y * j.dst.pitch + x * C as u64) as usize;
            for c in 0..C {
                // SAFETY: (x, y) lies in the destination.
                unsafe { *dst.add(to + c) = out[c] };
            }
        }
    }
}

macro_rules! warp_kernels {
    ($([$name:ident, $marker:ident, $c:literal]),*) => {
        $(
            /// See [`warp`].
            ///
            /// # Safety
            /// As [`warp`].
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: WarpParams) {
                // SAFETY: forwarded contract.
                unsafe { warp::<$c>(p) }
            }
            abi!(cuimg_abi::warp::$marker, $name);
        )*
    };
}

warp_kernels!([warp_c1, WarpC1, 1], [warp_c3, WarpC3, 3], [warp_c4, WarpC4, 4]);

// The job's size as the host packs it (`host/src/ops/warp/gpu.rs`).
const _: () = assert!(core::mem::size_of::<WarpJob>() == 96);
