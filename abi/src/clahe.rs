//! CLAHE's kernels: one table per tile from the tile's clipped histogram, then each pixel
//! through the four nearest tiles' tables, bilinearly (bit-exact with OpenCV's
//! `createCLAHE(...).apply` on 8-bit gray images).

use crate::{DevPtr, DevPtrMut};

/// Threads per block of [`ClaheLutsKernel`]: one per bin.
pub const LUTS_BLOCK: u32 = 256;
/// Shared memory of [`ClaheLutsKernel`]: the 256 bins and the clipped count.
pub const LUTS_SHARED_BYTES: u32 = 257 * 4;

/// One block per tile (`blockIdx.x = row * tiles_x + column`): its histogram over the image
/// extended by reflection to `tiles * tile` pixels (`BORDER_REFLECT_101`), clipped at `clip`
/// with the excess spread as OpenCV does, and the table
/// `lut[tile * 256 + v] = saturate(rint(f32(running sum) * lut_scale))`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheLuts {
    pub src: DevPtr<u8>,
    pub pitch: u64,
    pub width: u32,
    pub height: u32,
    pub tiles_x: u32,
    pub tile_w: u32,
    pub tile_h: u32,
    /// The most a bin may hold (at least 1).
    pub clip: u32,
    /// `255f / (tile_w * tile_h)`, made on the host in f32 as OpenCV makes it.
    pub lut_scale: f32,
    pub _pad: u32,
    /// `256 * tiles_x * tiles_y` bytes.
    pub luts: DevPtrMut<u8>,
}

/// Each pixel through the tables of the four tiles around it, weighted in f32 exactly as
/// OpenCV's `CLAHE_Interpolation_Body` does.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheApply {
    pub src: DevPtr<u8>,
    pub s_pitch: u64,
    pub dst: DevPtrMut<u8>,
    pub d_pitch: u64,
    pub width: u64,
    pub height: u64,
    pub tiles_x: u32,
    pub tiles_y: u32,
    /// `1f / tile_w` and `1f / tile_h`, made on the host in f32.
    pub inv_tw: f32,
    pub inv_th: f32,
    pub luts: DevPtr<u8>,
}

/// OpenCV's `borderInterpolate(i, len, BORDER_REFLECT_101)` for the extended image CLAHE
/// takes its tables from: mirrored about the last pixel, and again about the first while
/// still outside (an extension may be as long as the image). Shared by the kernel and the
/// CPU reference.
#[inline(always)]
pub fn reflect101(i: u32, len: u32) -> u32 {
    if len == 1 {
        return 0;
    }
    let (mut p, len) = (i as i64, len as i64);
    while p < 0 || p >= len {
        p = if p < 0 { -p } else { 2 * len - 2 - p };
    }
    p as u32
}

kernels! {
    /// The tables; one block of [`LUTS_BLOCK`] threads per tile, [`LUTS_SHARED_BYTES`].
    ClaheLutsKernel = clahe_luts(ClaheLuts);
    /// The bilinear apply; 2-D launch, no shared memory.
    ClaheApplyKernel = clahe_apply(ClaheApply);
}
