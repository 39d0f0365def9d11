//! Flips, transposes and quarter turns: the eight EXIF orientations as one mapping. Output
//! pixel `(x, y)` reads source pixel `(sx, sy)`, where `(u, v) = (y, x)` if `swap` else
//! `(x, y)`, `sx = width - 1 - u` if `flip_x` else `u` (source width), and likewise
//! `sy` with `flip_y` and the source height.

use crate::{BatchImage, DevPtr, DevPtrMut};

/// The tiled form (orientations that swap rows and columns): `TILE` x `TILE` output pixels a
/// tile, blocks of `TILE` x `TILE_ROWS` threads.
pub const TILE: u32 = 32;
pub const TILE_ROWS: u32 = 8;
/// Its shared memory: a tile of `u32` pixels with one extra column.
pub const TILED_SHARED_BYTES: u32 = TILE * (TILE + 1) * 4;

/// How the output reads the source (each 0 or 1).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub swap: u32,
    pub flip_x: u32,
    pub flip_y: u32,
}

impl Mapping {
    /// The source pixel output pixel `(x, y)` reads, for a `width` x `height` source: the
    /// formula the kernels and the CPU reference both evaluate.
    #[inline(always)]
    pub const fn source(&self, x: u64, y: u64, width: u64, height: u64) -> (u64, u64) {
        let (u, v) = if self.swap != 0 { (y, x) } else { (x, y) };
        let sx = if self.flip_x != 0 { width - 1 - u } else { u };
        let sy = if self.flip_y != 0 { height - 1 - v } else { v };
        (sx, sy)
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OrientPitched {
    pub src: DevPtr<u8>,
    pub s_pitch: u64,
    /// The source's width and height.
    pub s_width: u64,
    pub s_height: u64,
    pub dst: DevPtrMut<u8>,
    pub d_pitch: u64,
    /// The output's width and height (the source's, swapped when `mapping.swap`).
    pub d_width: u64,
    pub d_height: u64,
    pub mapping: Mapping,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OrientBatch {
    /// Packed images; each output's size is its source's, swapped when `mapping.swap`.
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    pub mapping: Mapping,
}

kernels! {
    /// One output pixel per thread (flips), or tiles through shared memory when the mapping
    /// swaps; 2-D launch over the output.
    OrientC1 = orient_c1(OrientPitched);
    OrientC2 = orient_c2(OrientPitched);
    OrientC3 = orient_c3(OrientPitched);
    OrientC4 = orient_c4(OrientPitched);
    /// Image `blockIdx.z` of a batch; 2-D over the largest output.
    OrientC1Batch = orient_c1_batch(OrientBatch);
    OrientC2Batch = orient_c2_batch(OrientBatch);
    OrientC3Batch = orient_c3_batch(OrientBatch);
    OrientC4Batch = orient_c4_batch(OrientBatch);
}
