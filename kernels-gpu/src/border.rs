//! Borders (`cv2.copyMakeBorder`): each output pixel from the source pixel
//! `cuimg_abi::border::interpolate` names, or the constant.

use crate::common::batch_image;
use crate::device::thread::{grid_stride_x, grid_stride_y};
use cuimg_abi::border::{BorderBatch, BorderPitched, interpolate};
use cuimg_abi::{DevPtr, DevPtrMut};

/// # Safety
/// `p.src` holds `s_height` rows of `s_width` pixels of `C` bytes at `s_pitch`, `p.dst`
/// `d_height` rows of `d_width` at `d_pitch`; both sizes at least 1; 2-D launch.
#[inline(always)]
unsafe fn border<const C: usize>(p: BorderPitched) {
    let (src, dst) = (p.src.ptr(), p.dst.ptr());
    for y in grid_stride_y(p.d_height) {
        let sy = interpolate(y as i64 - p.top as i64, p.s_height as i64, p.kind);
        for x in grid_stride_x(p.d_width) {
            let sx = interpolate(x as i64 - p.left as i64, p.s_width as i64, p.kind);
            let to = (y * p.d_pitch + x * C as u64) as usize;
            for c in 0..C {
                let v = if sx < 0 || sy < 0 {
                    (p.value >> (8 * c)) as u8
                } else {
                    // SAFETY: `interpolate` returns an index into the axis, or -1 (above).
                    unsafe { *src.add(sy as usize * p.s_pitch as usize + sx as usize * C + c) }
                };
                // SAFETY: (x, y) lies in the output.
                unsafe { *dst.add(to + c) = v };
            }
        }
    }
}

macro_rules! border_kernels {
    ($([$name:ident, $marker:ident, $batch:ident, $batch_marker:ident, $c:literal]),*) => {
        $(
            /// Image `blockIdx.z` of a batch: packed images, each output its source padded.
            ///
            /// # Safety
            /// Both tables hold `gridDim.z` entries, each output its source's size padded by
            /// the parameters; 2-D launch.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $batch(p: BorderBatch) {
                // SAFETY: forwarded contract; blockIdx.z < gridDim.z.
                unsafe {
                    let ((src, sw, sh), (dst, dw, dh)) = (batch_image(p.src), batch_image(p.dst));
                    border::<$c>(BorderPitched {
                        src: DevPtr::new(src as u64),
                        s_pitch: sw * $c,
                        s_width: sw,
                        s_height: sh,
                        dst: DevPtrMut::new(dst as u64),
                        d_pitch: dw * $c,
                        d_width: dw,
                        d_height: dh,
                        left: p.left,
                        top: p.top,
                        kind: p.kind,
                        value: p.value,
                    })
                }
            }
            abi!(cuimg_abi::border::$batch_marker, $batch);

            /// See [`border`].
            ///
            /// # Safety
            /// As [`border`].
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: BorderPitched) {
                // SAFETY: forwarded contract.
                unsafe { border::<$c>(p) }
            }
            abi!(cuimg_abi::border::$marker, $name);
        )*
    };
}

border_kernels!(
    [border_c1, BorderC1, border_c1_batch, BorderC1Batch, 1],
    [border_c2, BorderC2, border_c2_batch, BorderC2Batch, 2],
    [border_c3, BorderC3, border_c3_batch, BorderC3Batch, 3],
    [border_c4, BorderC4, border_c4_batch, BorderC4Batch, 4]
);
