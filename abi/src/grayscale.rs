//! RGB -> luma in fixed point: `y = clamp((r*wr + g*wg + b*wb + bias) >> shift, 0, 255)`.
//!
//! The host turns every weight set into these five integers (and puts them in byte order for
//! BGR layouts), so the kernels never know the channel order.

use crate::{BatchImage, DevPtr, DevPtrMut};

/// Fixed-point luma weights: the one formula the kernels and the CPU reference evaluate.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    pub r: i32,
    pub g: i32,
    pub b: i32,
    pub bias: i32,
    pub shift: u32,
}

impl Weights {
    /// The luma of `(r, g, b)`, each `0..=255`; the result is `0..=255`.
    #[inline(always)]
    pub fn luma(&self, r: u32, g: u32, b: u32) -> u32 {
        let v = (r as i32 * self.r + g as i32 * self.g + b as i32 * self.b + self.bias) >> self.shift;
        v.clamp(0, 255) as u32
    }
}

/// Contiguous interleaved pixels of 3 or 4 bytes (weights in byte order) to one byte each.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GrayFlat {
    /// `n * channels` bytes, 16-byte aligned.
    pub src: DevPtr<u8>,
    /// `n` bytes, 16-byte aligned.
    pub dst: DevPtrMut<u8>,
    /// Pixels.
    pub n: u64,
    pub weights: Weights,
}

/// The general form: any pitch, any region, interleaved or planar, gray or "black and white"
/// output. Channel `c` of pixel `(x, y)` is read at `src[c] + y * s_pitch + x * s_step`;
/// luma goes to `dst[0]` and, unless null, `dst[1]` and `dst[2]`; when `s_alpha` and
/// `d_alpha` are both non-null, alpha is copied.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GrayPlanes {
    pub src: [DevPtr<u8>; 3],
    pub s_alpha: DevPtr<u8>,
    pub s_pitch: u64,
    pub s_step: u64,
    pub dst: [DevPtrMut<u8>; 3],
    pub d_alpha: DevPtrMut<u8>,
    pub d_pitch: u64,
    pub d_step: u64,
    pub width: u64,
    pub height: u64,
    pub weights: Weights,
}

/// A batch to gray: image `blockIdx.z` of `images` through the contiguous kernel of the
/// launch's channel count (sources `3 * n` or `4 * n` bytes, destinations `n`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GrayBatch {
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    pub weights: Weights,
}

/// A batch to "black and white" (luma into red, green and blue; alpha copied): destinations
/// have the sources' format.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BlackWhiteBatch {
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    /// Bytes per pixel, 3 or 4.
    pub channels: u64,
    /// Byte offsets of red, green and blue.
    pub rgb: [u64; 3],
    /// Byte offset of alpha, or `u64::MAX` for none.
    pub alpha: u64,
    pub weights: Weights,
}

kernels! {
    /// RGB8/BGR8 to gray, contiguous; 1-D launch.
    GrayC3Flat = gray_c3_flat(GrayFlat);
    /// RGBA8/BGRA8 to gray, contiguous; 1-D launch.
    GrayC4Flat = gray_c4_flat(GrayFlat);
    /// Any layout; 2-D launch.
    GrayPlanesKernel = gray_planes(GrayPlanes);
    /// A batch of RGB8/BGR8 to gray; 1-D per image, `gridDim.z` images.
    GrayC3Batch = gray_c3_batch(GrayBatch);
    /// A batch of RGBA8/BGRA8 to gray.
    GrayC4Batch = gray_c4_batch(GrayBatch);
    /// A batch to black and white; 2-D per image, `gridDim.z` images.
    BlackWhiteBatchKernel = black_and_white_batch(BlackWhiteBatch);
}
