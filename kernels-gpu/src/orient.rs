//! Flips, transposes and quarter turns (`cuimg_abi::orient`): each thread copies one output
//! pixel from the source pixel the mapping names.

use crate::common::batch_image;
use crate::device::thread::{grid_stride_x, grid_stride_y};
use cuimg_abi::orient::{Mapping, OrientBatch, OrientPitched};

/// Output rows `0..d_height` of `d_width` pixels of `C` bytes, each read from the source
/// pixel `mapping.source` names.
///
/// # Safety
/// `src` holds `s_height` rows of `s_width` pixels at `s_pitch`; `dst` holds `d_height`
/// rows of `d_width` pixels at `d_pitch`; the sizes are equal, or swapped when
/// `mapping.swap`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn orient<const C: usize>(
    src: *const u8,
    s_pitch: u64,
    (s_width, s_height): (u64, u64),
    dst: *mut u8,
    d_pitch: u64,
    (d_width, d_height): (u64, u64),
    mapping: Mapping,
) {
    for y in grid_stride_y(d_height) {
        for x in grid_stride_x(d_width) {
            let (sx, sy) = mapping.source(x, y, s_width, s_height);
            let from = (sy * s_pitch + sx * C as u64) as usize;
            let to = (y * d_pitch + x * C as u64) as usize;
            for c in 0..C {
                // SAFETY: (x, y) is inside the output and (sx, sy) inside the source (the
                // mapping maps one rectangle onto the other).
                unsafe { *dst.add(to + c) = *src.add(from + c) };
            }
        }
    }
}

macro_rules! orient_kernels {
    ($single:ident, $marker:ident, $batch:ident, $batch_marker:ident, $c:literal) => {
        /// See [`orient`]; 2-D launch over the output.
        ///
        /// # Safety
        /// As [`orient`], for the parameters' views.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $single(p: OrientPitched) {
            // SAFETY: forwarded contract.
            unsafe {
                orient::<$c>(
                    p.src.ptr(),
                    p.s_pitch,
                    (p.s_width, p.s_height),
                    p.dst.ptr(),
                    p.d_pitch,
                    (p.d_width, p.d_height),
                    p.mapping,
                )
            }
        }
        abi!(cuimg_abi::orient::$marker, $single);

        /// Image `blockIdx.z` of a batch: packed images, each output its source's size
        /// (swapped when `mapping.swap`).
        ///
        /// # Safety
        /// Both tables hold `gridDim.z` entries of matching sizes; 2-D launch.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $batch(p: OrientBatch) {
            // SAFETY: forwarded contract; blockIdx.z < gridDim.z.
            unsafe {
                let ((src, sw, sh), (dst, dw, dh)) = (batch_image(p.src), batch_image(p.dst));
                orient::<$c>(src, sw * $c, (sw, sh), dst, dw * $c, (dw, dh), p.mapping)
            }
        }
        abi!(cuimg_abi::orient::$batch_marker, $batch);
    };
}

orient_kernels!(orient_c1, OrientC1, orient_c1_batch, OrientC1Batch, 1);
orient_kernels!(orient_c2, OrientC2, orient_c2_batch, OrientC2Batch, 2);
orient_kernels!(orient_c3, OrientC3, orient_c3_batch, OrientC3Batch, 3);
orient_kernels!(orient_c4, OrientC4, orient_c4_batch, OrientC4Batch, 4);
