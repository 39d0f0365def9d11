//! Histogram equalization's own kernels: the table from the histogram and the luma apply.

use crate::grayscale::Weights;
use crate::{BatchImage, DevPtr, DevPtrMut};

/// Threads per block of [`EqualizeLutKernel`]: one per bin.
pub const LUT_BLOCK: u32 = 256;
/// Shared memory of [`EqualizeLutKernel`]: the 256-entry scan, the 256 bins and the first
/// non-empty bin.
pub const LUT_SHARED_BYTES: u32 = 513 * 4;

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

/// Contiguous color pixels of 3 or 4 bytes on luma, as [`EqualizeLuma`]: the color bytes
/// are 0, 1, 2 (`weights` in byte order), byte 3 of 4 is alpha, copied.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EqualizeLumaFlat {
    /// `n * channels` bytes, 16-byte aligned.
    pub src: DevPtr<u8>,
    /// `n * channels` bytes, 16-byte aligned.
    pub dst: DevPtrMut<u8>,
    /// Pixels.
    pub n: u64,
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

/// Gray8, contiguous: the histogram, and `equalizeHist`'s table from it in the last block
/// to finish.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EqualizeHistTable {
    /// `n` bytes, 16-byte aligned.
    pub src: DevPtr<u8>,
    /// Pixels, at most `u32::MAX`.
    pub n: u64,
    /// 257 u32, zeroed: the bins, then the count of blocks done.
    pub hist: DevPtrMut<u32>,
    /// 256 bytes.
    pub lut: DevPtrMut<u8>,
}

kernels! {
    /// The `equalizeHist` tables; one block of [`LUT_BLOCK`] threads per table.
    EqualizeLutKernel = equalize_lut(EqualizeLut);
    /// Gray histogram and table in one launch; 1-D, blocks of 256, `histogram::shared_bytes(1)`.
    EqualizeHistTableKernel = equalize_hist_table(EqualizeHistTable);
    /// Color on luma; 2-D launch with one table's shared memory (`lut::shared_bytes(1)`).
    EqualizeLumaKernel = equalize_luma_pitched(EqualizeLuma);
    /// RGB8/BGR8 on luma, contiguous; 1-D launch with one table's shared memory.
    EqualizeLumaC3Flat = equalize_luma_c3_flat(EqualizeLumaFlat);
    /// RGBA8/BGRA8 on luma, contiguous; as above.
    EqualizeLumaC4Flat = equalize_luma_c4_flat(EqualizeLumaFlat);
    /// Color batches on luma; 2-D per image, `gridDim.z` images, one table's shared memory.
    EqualizeLumaBatchKernel = equalize_luma_batch(EqualizeLumaBatch);
}
