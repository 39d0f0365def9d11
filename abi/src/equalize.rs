//! Histogram equalization's own kernels: the table from the histogram and the luma apply.

use crate::grayscale::Weights;
use crate::{DevPtr, DevPtrMut};

/// Threads per block of [`EqualizeLutKernel`]: one per bin.
pub const LUT_BLOCK: u32 = 256;
/// Shared memory of [`EqualizeLutKernel`]: the 256-entry scan and the first non-empty bin.
pub const LUT_SHARED_BYTES: u32 = 257 * 4;

/// One block per channel (`blockIdx.x`): `lut[c * 256 + v]` from `hist[c * 256 + v]`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EqualizeLut {
    pub hist: DevPtr<u32>,
    pub lut: DevPtrMut<u8>,
}

/// `out = clamp(in + lut[y] - y)` per color channel, `y` the luma; alpha copied.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EqualizeLuma {
    pub src: DevPtr<u8>,
    pub s_pitch: u64,
    pub dst: DevPtrMut<u8>,
    pub d_pitch: u64,
    pub width: u64,
    pub height: u64,
    /// 3 or 4 (alpha is the byte that is none of `rgb`).
    pub channels: u64,
    pub rgb: [u64; 3],
    pub weights: Weights,
    /// 256 bytes.
    pub lut: DevPtr<u8>,
}

kernels! {
    /// The `equalizeHist` table; `channels` blocks of [`LUT_BLOCK`] threads.
    EqualizeLutKernel = equalize_lut(EqualizeLut);
    /// Color on luma; 2-D launch with one table's shared memory (`lut::shared_bytes(1)`).
    EqualizeLumaKernel = equalize_luma_pitched(EqualizeLuma);
}
