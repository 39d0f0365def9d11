//! 256-bin histograms with per-warp privatized shared-memory bins.

use crate::grayscale::Weights;
use crate::{BatchImage, DevPtr, DevPtrMut, WARPS};

/// Shared memory of every histogram kernel: one private copy of the bins per warp.
pub const fn shared_bytes(channels: u32) -> u32 {
    WARPS * 256 * channels * 4
}

/// Contiguous pixels of the kernel's channel count.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HistogramFlat {
    /// `n * channels` bytes, 16-byte aligned.
    pub src: DevPtr<u8>,
    /// Pixels.
    pub n: u64,
    /// `256 * channels` bins, added to.
    pub hist: DevPtrMut<u32>,
}

/// Any pitch or region: byte `x` of row `y` (at `src + y * pitch + x`) counts for channel
/// `x % channels`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HistogramPitched {
    pub src: DevPtr<u8>,
    pub pitch: u64,
    pub row_bytes: u64,
    pub height: u64,
    pub hist: DevPtrMut<u32>,
    /// 1 to 4.
    pub channels: u32,
}

/// The histogram of the luma of interleaved pixels of `channels` bytes (red, green and blue
/// at byte offsets `rgb`): the first step of equalizing a color image on its luma.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HistogramLuma {
    pub src: DevPtr<u8>,
    pub pitch: u64,
    pub width: u64,
    pub height: u64,
    pub channels: u64,
    pub rgb: [u64; 3],
    pub weights: Weights,
    /// 256 bins, added to.
    pub hist: DevPtrMut<u32>,
}

/// A batch: image `blockIdx.z` counts into `hist + z * 256 * channels` (added to).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HistogramBatch {
    pub src: DevPtr<BatchImage>,
    pub hist: DevPtrMut<u32>,
}

/// A batch of color images: the luma histogram of image `blockIdx.z` into `hist + z * 256`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HistogramLumaBatch {
    pub src: DevPtr<BatchImage>,
    pub channels: u64,
    pub rgb: [u64; 3],
    pub weights: Weights,
    pub hist: DevPtrMut<u32>,
}

kernels! {
    /// Gray, contiguous: uniform 16-byte vectors as runs, else one shared atomic per byte.
    HistogramC1Flat = histogram_c1_flat(HistogramFlat);
    /// Gray, contiguous, through the generic run-tracking kernel (kept for comparison).
    HistogramC1Runs = histogram_c1_runs(HistogramFlat);
    /// Gray + alpha, contiguous.
    HistogramC2Flat = histogram_c2_flat(HistogramFlat);
    /// Three channels, contiguous.
    HistogramC3Flat = histogram_c3_flat(HistogramFlat);
    /// Four channels, contiguous.
    HistogramC4Flat = histogram_c4_flat(HistogramFlat);
    /// Any pitch or region; 2-D launch.
    HistogramPitchedKernel = histogram_pitched(HistogramPitched);
    /// Luma of color pixels; 2-D launch, shared memory for one channel.
    HistogramLumaKernel = histogram_luma_pitched(HistogramLuma);
    /// Batches of 1 to 4 channels; 1-D per image, `gridDim.z` images.
    HistogramC1Batch = histogram_c1_batch(HistogramBatch);
    HistogramC2Batch = histogram_c2_batch(HistogramBatch);
    HistogramC3Batch = histogram_c3_batch(HistogramBatch);
    HistogramC4Batch = histogram_c4_batch(HistogramBatch);
    /// Luma histograms of a color batch; 2-D per image, `gridDim.z` images.
    HistogramLumaBatchKernel = histogram_luma_batch(HistogramLumaBatch);
}
