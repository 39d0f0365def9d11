//! 256-entry u8 lookup tables, one per channel.

use crate::{BatchImage, DevPtr, DevPtrMut};

/// Shared bytes per channel of the kernels' replicated tables: each table is copied once per
/// lane (`byte(c, v, lane) = c * 8192 + ((v >> 2) * 32 + lane) * 4 + (v & 3)`), so a warp's
/// 32 lookups never conflict.
pub const TABLE_BYTES: u32 = 8192;

/// Shared memory of a kernel that loads `channels` tables.
pub const fn shared_bytes(channels: u32) -> u32 {
    TABLE_BYTES * channels
}

/// Contiguous pixels of the kernel's channel count.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LutFlat {
    /// `n * channels` bytes, 16-byte aligned.
    pub src: DevPtr<u8>,
    /// `n * channels` bytes, 16-byte aligned.
    pub dst: DevPtrMut<u8>,
    /// Pixels.
    pub n: u64,
    /// `256 * channels` bytes.
    pub lut: DevPtr<u8>,
}

/// Any pitch or region: byte `x` of row `y` uses table `x % channels`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LutPitched {
    pub src: DevPtr<u8>,
    pub s_pitch: u64,
    pub dst: DevPtrMut<u8>,
    pub d_pitch: u64,
    pub row_bytes: u64,
    pub height: u64,
    pub lut: DevPtr<u8>,
    /// 1 to 4.
    pub channels: u32,
}

/// A batch: image `blockIdx.z` through the tables at `lut + z * lut_stride` (`lut_stride`
/// 0: one set of tables for every image).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LutBatch {
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    pub lut: DevPtr<u8>,
    pub lut_stride: u64,
}

kernels! {
    /// Gray, contiguous.
    LutC1Flat = lut_c1_flat(LutFlat);
    /// Gray, contiguous, from the last vector to the first (after a pass that read the
    /// image from the first, the part still in L2 comes first).
    LutC1FlatReversed = lut_c1_flat_reversed(LutFlat);
    /// Gray + alpha, contiguous.
    LutC2Flat = lut_c2_flat(LutFlat);
    /// Three channels, contiguous.
    LutC3Flat = lut_c3_flat(LutFlat);
    /// Four channels, contiguous.
    LutC4Flat = lut_c4_flat(LutFlat);
    /// Any pitch or region; 2-D launch.
    LutPitchedKernel = lut_pitched(LutPitched);
    /// Batches of 1 to 4 channels; 1-D per image, `gridDim.z` images.
    LutC1Batch = lut_c1_batch(LutBatch);
    LutC2Batch = lut_c2_batch(LutBatch);
    LutC3Batch = lut_c3_batch(LutBatch);
    LutC4Batch = lut_c4_batch(LutBatch);
}
