//! Where the tiled kernels' output pixels go: an 8-bit image (with its letterbox), or a
//! float tensor, normalized as `to_tensor` normalizes (`cuimg_abi::resize::ResizeSeparableTensor`).
//! The tile loops are the same for both; only the first step (the frame) and the last (the
//! store of four pixels) differ, so the image kernels compile as they did without a sink.

use super::{frame, store4};
use crate::device::thread::{grid_stride_x, grid_stride_y};
use crate::tensor::{element, put_element};
use cuimg_abi::resize::{Plane, ResizeJob};
use cuimg_abi::tensor::TensorFormat;

/// A tiled kernel's output.
pub(super) trait Sink: Copy {
    /// What lies around the job's output (see [`frame`]).
    ///
    /// # Safety
    /// Where `j.outer.data` is not 0, it describes the writable memory around `j.dst`.
    unsafe fn frame<const C: usize>(&self, j: &ResizeJob);

    /// Four output pixels of row `y` from `x0`, the first `n` of them, as [`store4`]
    /// takes them.
    ///
    /// # Safety
    /// Pixels `x0 .. x0 + n` of row `y` are in `dst`; where `aligned`, its data and pitch
    /// are multiples of 4.
    unsafe fn store4<const C: usize>(&self, dst: Plane, x0: u64, y: u64, n: u64, words: &[u32; C], aligned: bool);
}

/// The 8-bit image `dst` (and its letterbox).
#[derive(Clone, Copy)]
pub(super) struct ToImage;

impl Sink for ToImage {
    #[inline(always)]
    unsafe fn frame<const C: usize>(&self, j: &ResizeJob) {
        // SAFETY: the caller's contract.
        unsafe { frame::<C>(j) }
    }

    #[inline(always)]
    unsafe fn store4<const C: usize>(&self, dst: Plane, x0: u64, y: u64, n: u64, words: &[u32; C], aligned: bool) {
        // SAFETY: the caller's contract.
        unsafe { store4::<C>(dst, x0, y, n, words, aligned) }
    }
}

/// A tensor's image at `dst.data`, laid out as `format` says: output pixel `(x, y)` is
/// tensor pixel `(x, y)` (`(width - 1 - x, y)` where flipped), each byte normalized; the
/// frame (`outer`, the tensor's image) holds `format.fill` outside the output.
#[derive(Clone, Copy)]
pub(super) struct ToTensor {
    pub format: TensorFormat,
}

impl Sink for ToTensor {
    #[inline(always)]
    unsafe fn frame<const C: usize>(&self, j: &ResizeJob) {
        if j.outer.data == 0 {
            return;
        }
        let f = &self.format;
        let (w, h) = (j.dst.width as u64, j.dst.height as u64);
        for y in grid_stride_y(j.outer.height as u64) {
            for x in grid_stride_x(j.outer.width as u64) {
                if x < w && y < h {
                    continue;
                }
                for c in 0..C {
                    // SAFETY: (x, y) inside the tensor's image at `outer.data` (the
                    // caller's contract), an aligned element.
                    unsafe { put_element(f.dtype, j.outer.data + element::<C>(f, x, y, c), f.fill) };
                }
            }
        }
    }

    #[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
    #[inline(always)]
    unsafe fn store4<const C: usize>(&self, dst: Plane, x0: u64, y: u64, n: u64, words: &[u32; C], _aligned: bool) {
        let f = &self.format;
        for q in 0..4 {
            if (q as u64) < n {
                let x = x0 + q as u64;
                let tx = if f.flip != 0 { dst.width as u64 - 1 - x } else { x };
                for c in 0..C {
                    let k = q * C + c;
                    let v = f.affine.forward((words[k / 4] >> (8 * (k % 4))) as u8, c);
                    // SAFETY: (tx, y) is a pixel of the tensor's image at `dst.data` (the
                    // caller's contract: x < width), an aligned element.
                    unsafe { put_element(f.dtype, dst.data + element::<C>(f, tx, y, f.channel(C, c)), v) };
                }
            }
        }
    }
}
