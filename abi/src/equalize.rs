//! Histogram equalization's own kernels: the table from the histogram and the luma apply.

use crate::grayscale::Weights;
use crate::{BatchImage, DevPtr, DevPtrMut};

/// Threads per block of [`EqualizeLutKernel`]: one per bin.
pub const LUT_BLOCK: u32 = 256;
/// Shared memory of [`EqualizeLutKernel`]: the 256-entry scan and the first non-empty bin.
pub const LUT_SHARED_BYTES: u32 = 257 * 4;

/// One block per table (`blockIdx.x`): `lut[b * 256 + v]` from `hist[b * 256 + v]`. Tables
/// come in groups of `channels` (one group per image); within a group, channels at or past
/// `colors` (alpha) get the identity.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EqualizeLut {
    pub hist: DevPtr<u32>,
    pub lut: DevPtrMut<u8>,
    pub channels: u32,
    pub colors: u32,
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

/// A batch of color images on luma: image `blockIdx.z` through `lut + z * 256`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EqualizeLumaBatch {
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    pub channels: u64,
    pub rgb: [u64; 3],
    pub weights: Weights,
    pub lut: DevPtr<u8>,
}

kernels! {
    /// The `equalizeHist` tables; one block of [`LUT_BLOCK`] threads per table.
    EqualizeLutKernel = equalize_lut(EqualizeLut);
    /// Color on luma; 2-D launch with one table's shared memory (`lut::shared_bytes(1)`).
    EqualizeLumaKernel = equalize_luma_pitched(EqualizeLuma);
    /// Color batches on luma; 2-D per image, `gridDim.z` images, one table's shared memory.
    EqualizeLumaBatchKernel = equalize_luma_batch(EqualizeLumaBatch);
}
