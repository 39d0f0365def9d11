//! Where the tiled kernels' output pixels go: an 8-bit image (with its letterbox), or a
//! float tensor, normalized as `to_tensor` normalizes (`cuimg_abi::resize::ResizeSeparableTensor`).
//! The tile loops are the same for both; only the first step (the frame) and the last (the
//! store of four pixels) differ, so the image kernels compile as they did without a sink.

use super::{frame, store4};
use crate::device::thread::{grid_stride_x, grid_stride_y};
use crate::tensor::{element, put_element};
use cuimg_abi::resize::TensorOut;
use cuimg_abi::resize::{Plane, ResizeJob};
use cuimg_abi::tensor::{DTYPE_F32, dtype_bytes};

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

/// A tensor's image at `dst.data`, laid out as `out.format` says: output pixel `(x, y)` is
/// tensor pixel `(x, y)` (`(width - 1 - x, y)` where flipped), each byte the element
/// `out.table` gives it; the frame (`outer`, the tensor's image) holds `format.fill`
/// outside the output.
#[derive(Clone, Copy)]
pub(super) struct ToTensor {
    pub out: TensorOut,
}

impl ToTensor {
    /// The bits of the element byte `b` of channel `c` becomes.
    ///
    /// # Safety
    /// `out.table` holds [`cuimg_abi::resize::TENSOR_TABLE_LEN`] entries.
    #[inline(always)]
    unsafe fn bits(&self, b: u8, c: usize) -> u32 {
        // SAFETY: b * 4 + c < 1024 (c < 4), the caller's table.
        unsafe { *self.out.table.ptr().add(b as usize * 4 + c) }
    }
}

impl Sink for ToTensor {
    #[inline(always)]
    unsafe fn frame<const C: usize>(&self, j: &ResizeJob) {
        if j.outer.data == 0 {
            return;
        }
        let f = &self.out.format;
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
        let f = &self.out.format;
        let flip = f.flip != 0;
        let byte = |q: usize, c: usize| (words[(q * C + c) / 4] >> (8 * ((q * C + c) % 4))) as u8;
        if n == 4 {
            // The four pixels are four tensor pixels side by side (mirrored where flipped):
            // their elements are 4 a channel plane (NCHW) or 4 * C in a row (NHWC), written
            // four at a time, as one 8- or 16-byte store where aligned.
            let left = if flip { dst.width as u64 - 4 - x0 } else { x0 };
            // Every index below is a constant once unrolled (a flip or a reversal is a choice
            // between constants): an array indexed at run time would live in local memory.
            let mut vals = [[0u32; C]; 4];
            for q in 0..4 {
                for c in 0..C {
                    // SAFETY: the table's entries (the caller's contract).
                    vals[q][c] = unsafe { self.bits(byte(q, c), c) };
                }
            }
            let at_slot = |s: usize| if flip { vals[3 - s] } else { vals[s] };
            if f.planar != 0 {
                for c in 0..C {
                    let v = [at_slot(0)[c], at_slot(1)[c], at_slot(2)[c], at_slot(3)[c]];
                    // SAFETY: pixels `left .. left + 4` of row `y` of the tensor's image at
                    // `dst.data` (the caller's contract), channel plane `channel(c)`.
                    unsafe { put4(f.dtype, dst.data + element::<C>(f, left, y, f.channel(C, c)), v) };
                }
            } else {
                let reverse = f.reverse != 0 && C >= 3;
                // Element `p` of the 4 * C in a row: pixel slot `p / C`, tensor channel `p % C`.
                let elem = |p: usize| {
                    let (px, tc) = (at_slot(p / C), p % C);
                    if reverse && tc < 3 { px[2 - tc] } else { px[tc] }
                };
                let at = dst.data + element::<C>(f, left, y, 0);
                for k in 0..C {
                    let v = [elem(4 * k), elem(4 * k + 1), elem(4 * k + 2), elem(4 * k + 3)];
                    // SAFETY: the 4 * C elements of pixels `left .. left + 4` of row `y`,
                    // consecutive in an NHWC image (the caller's contract).
                    unsafe { put4(f.dtype, at + 4 * k as u64 * dtype_bytes(f.dtype), v) };
                }
            }
            return;
        }
        for q in 0..4 {
            if (q as u64) < n {
                let x = x0 + q as u64;
                let tx = if flip { dst.width as u64 - 1 - x } else { x };
                for c in 0..C {
                    // SAFETY: (tx, y) is a pixel of the tensor's image at `dst.data` (the
                    // caller's contract: x < width), an aligned element; the table's entry.
                    unsafe {
                        put_bits(f.dtype, dst.data + element::<C>(f, tx, y, f.channel(C, c)), self.bits(byte(q, c), c))
                    };
                }
            }
        }
    }
}

/// Four `u32` as one 16-byte store.
#[repr(C, align(16))]
struct U32x4([u32; 4]);

/// Writes element bits `v` (f32 bits, or a half's in the low 16) at `at`.
///
/// # Safety
/// `at` is a writable element of `dtype`, aligned to it.
#[inline(always)]
unsafe fn put_bits(dtype: u32, at: u64, v: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        if dtype == DTYPE_F32 {
            *(at as usize as *mut u32) = v;
        } else {
            *(at as usize as *mut u16) = v as u16;
        }
    }
}

/// Four consecutive elements of `dtype` from `at` (their bits): one 16-byte (f32) or 8-byte
/// (halves) store where `at` is aligned to it, else one element at a time.
///
/// # Safety
/// The four elements at `at` are writable, each aligned to its type.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn put4(dtype: u32, at: u64, v: [u32; 4]) {
    let bytes = dtype_bytes(dtype);
    // SAFETY: the caller's contract; the wide stores only at their alignment.
    unsafe {
        if at.is_multiple_of(4 * bytes) {
            if dtype == DTYPE_F32 {
                *(at as usize as *mut U32x4) = U32x4(v);
            } else {
                let h = |x: u32| (x & 0xFFFF) as u64;
                *(at as usize as *mut u64) = h(v[0]) | h(v[1]) << 16 | h(v[2]) << 32 | h(v[3]) << 48;
            }
        } else {
            // (Indexed: an array's iterator would keep it in local memory.)
            for i in 0..4 {
                put_bits(dtype, at + i as u64 * bytes, v[i]);
            }
        }
    }
}
