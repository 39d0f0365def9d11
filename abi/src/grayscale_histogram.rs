//! Grayscale and the gray image's histogram in one pass: each source byte read once, the
//! gray image written once, and never read back for its histogram.

use crate::grayscale::{GrayFlat, Weights};
use crate::{DevPtr, DevPtrMut};

/// Contiguous interleaved pixels of 3 or 4 bytes to gray, as [`GrayFlat`], and the gray
/// image's histogram added to `hist` in the same pass.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GrayHistogramFlat {
    pub image: GrayFlat,
    /// 256 bins, added to.
    pub hist: DevPtrMut<u32>,
}

/// The histogram of the luma of contiguous interleaved pixels of 3 or 4 bytes, without
/// writing the luma: the first step of equalizing a color image on its luma.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LumaHistogramFlat {
    /// `n * channels` bytes, 16-byte aligned.
    pub src: DevPtr<u8>,
    /// Pixels.
    pub n: u64,
    pub weights: Weights,
    /// 256 bins, added to.
    pub hist: DevPtrMut<u32>,
}

kernels! {
    /// RGB8/BGR8 to gray and its histogram, contiguous; 1-D launch with
    /// `histogram::shared_bytes(1)` bytes of shared memory.
    GrayHistogramC3Flat = gray_histogram_c3_flat(GrayHistogramFlat);
    /// RGBA8/BGRA8 to gray and its histogram; as above.
    GrayHistogramC4Flat = gray_histogram_c4_flat(GrayHistogramFlat);
    /// The luma histogram of RGB8/BGR8, contiguous; as above.
    LumaHistogramC3Flat = luma_histogram_c3_flat(LumaHistogramFlat);
    /// The luma histogram of RGBA8/BGRA8, contiguous; as above.
    LumaHistogramC4Flat = luma_histogram_c4_flat(LumaHistogramFlat);
}
