//! CLAHE's kernels: one table per tile from the tile's clipped histogram, then each pixel
//! through the four nearest tiles' tables, bilinearly (bit-exact with OpenCV's
//! `createCLAHE(...).apply` on 8-bit gray images; color images per channel or on luma).
//!
//! The tables kernel splits each tile over `gridDim.y` blocks: each adds its share of the
//! tile's histogram to a zeroed global one and counts itself done; the last block of a tile
//! clips, spreads, scans and writes the table. The geometry of an image ([`Geometry`]) is
//! worked out by the same code on the host and, for batches of mixed sizes, on the device.

use crate::grayscale::Weights;
use crate::{BatchImage, DevPtr, DevPtrMut};

/// Threads per block of the tables kernels.
pub const TABLES_BLOCK: u32 = 256;
/// Warps of a tables block, each with a histogram of its own in shared memory.
pub const TABLES_WARPS: u32 = TABLES_BLOCK / 32;
/// Shared memory of the tables kernels: a histogram per warp, then two words (whether this
/// block is the tile's last, and the clipped count).
pub const TABLES_SHARED_BYTES: u32 = (TABLES_WARPS * 256 + 2) * 4;
/// Consecutive pixels of a row one thread of the gray apply takes, with one 8-byte load and
/// store where the row allows (`gridDim.x` covers `ceil(width / APPLY_PIXELS)`): at one
/// byte per thread the kernel kept too few bytes in flight and waited on memory.
pub const APPLY_PIXELS: u64 = 8;

/// Pixels per thread of the color applies (`gridDim.x` covers `ceil(width /
/// APPLY_COLOR_PIXELS)`): 12 or 16 bytes in 4-byte words, with half the gray apply's column
/// weights in registers.
pub const APPLY_COLOR_PIXELS: u64 = 4;
/// `mode` of [`ClaheSource`] that reads the luma of the color channels instead of one channel.
pub const LUMA: u32 = u32::MAX;

/// How CLAHE tiles one image: the tile size over the image extended to a multiple of the
/// grid, the clip limit in pixels per bin, and the factors OpenCV makes in f32.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    pub tile_w: u32,
    pub tile_h: u32,
    /// The most a bin may hold (at least 1).
    pub clip: u32,
    /// `255f / (tile_w * tile_h)`.
    pub lut_scale: f32,
    /// `1f / tile_w` and `1f / tile_h`.
    pub inv_tw: f32,
    pub inv_th: f32,
}

impl Geometry {
    /// OpenCV's geometry for a `width` x `height` image on a `tiles_x` x `tiles_y` grid with
    /// `clip_limit` (finite, > 0): when either side is not a multiple of the grid, both sides
    /// are extended by `tiles - size % tiles` (a side that is a multiple gains a whole tile).
    /// `None` when a side is 0, a grid side is 0 or larger than the image's, or a tile holds
    /// more than `i32::MAX` pixels, or the extended image is wider or taller than `u32::MAX`. The host validates with this; batch kernels call it for
    /// each image, so both always agree.
    #[inline(always)]
    pub fn new(width: u32, height: u32, tiles_x: u32, tiles_y: u32, clip_limit: f64) -> Option<Geometry> {
        if width == 0 || height == 0 || tiles_x == 0 || tiles_y == 0 || tiles_x > width || tiles_y > height {
            return None;
        }
        let (tile_w, tile_h) = if width.is_multiple_of(tiles_x) && height.is_multiple_of(tiles_y) {
            (width / tiles_x, height / tiles_y)
        } else {
            // In u64: the extended sides may pass u32::MAX, which the kernels' u32 pixel
            // coordinates cannot address (refused below).
            let (w, h) = (width as u64 + (tiles_x - width % tiles_x) as u64, height as u64 + (tiles_y - height % tiles_y) as u64);
            if w > u32::MAX as u64 || h > u32::MAX as u64 {
                return None;
            }
            ((w / tiles_x as u64) as u32, (h / tiles_y as u64) as u32)
        };
        let area = tile_w as u64 * tile_h as u64;
        if area > i32::MAX as u64 {
            return None;
        }
        // OpenCV: `static_cast<int>(clipLimit * tileSizeTotal / histSize)`, at least 1.
        let clip = ((clip_limit * area as f64 / 256.0) as i64).clamp(1, i32::MAX as i64) as u32;
        Some(Geometry {
            tile_w,
            tile_h,
            clip,
            // OpenCV: `static_cast<float>(histSize - 1) / tileSizeTotal`.
            lut_scale: 255.0f32 / area as i32 as f32,
            inv_tw: 1.0f32 / tile_w as f32,
            inv_th: 1.0f32 / tile_h as f32,
        })
    }
}

/// The grid and clip limit, the same for every image of a launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tiles {
    pub x: u32,
    pub y: u32,
    pub clip_limit: f64,
}

/// What a tables kernel reads of each pixel: channel `mode` of `channels` interleaved bytes
/// (gray: 1 and 0; per channel: `blockIdx.z` is added to `mode`), or with `mode` = [`LUMA`]
/// the luma of the channels at offsets `rgb`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheSource {
    pub channels: u32,
    pub mode: u32,
    pub rgb: [u32; 3],
    pub weights: Weights,
}

/// The tables of one image: `gridDim = (tiles, blocks per tile, tables)`; table set `z`
/// (channel `mode + z`) at `luts + z * tiles * 256`, its histograms and counters likewise.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheTables {
    pub src: DevPtr<u8>,
    pub pitch: u64,
    pub width: u32,
    pub height: u32,
    pub source: ClaheSource,
    pub tiles: Tiles,
    pub geometry: Geometry,
    pub _pad: u32,
    /// `256 * tiles * gridDim.z` u32, zeroed before the launch.
    pub hist: DevPtrMut<u32>,
    /// `tiles * gridDim.z` u32, zeroed before the launch.
    pub done: DevPtrMut<u32>,
    /// `256 * tiles * gridDim.z` bytes.
    pub luts: DevPtrMut<u8>,
}

/// The tables of a gray batch: image `blockIdx.z` of the table, each with its own geometry
/// (`Geometry::new` on the device), its tables at `luts + z * tiles * 256`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheTablesBatch {
    pub src: DevPtr<BatchImage>,
    pub tiles: Tiles,
    pub hist: DevPtrMut<u32>,
    pub done: DevPtrMut<u32>,
    pub luts: DevPtrMut<u8>,
}

/// The tables of a color batch (packed images of `source.channels` bytes per pixel):
/// `gridDim.z` = images x `sets`, layer `z` reads image `z / sets` as [`ClaheTables`] reads
/// its set `z % sets` (channel `source.mode + z % sets`, or the luma), into set `z` of the
/// buffers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheTablesColorBatch {
    pub src: DevPtr<BatchImage>,
    /// `256 * tiles * gridDim.z` u32, zeroed before the launch.
    pub hist: DevPtrMut<u32>,
    /// `tiles * gridDim.z` u32, zeroed before the launch.
    pub done: DevPtrMut<u32>,
    /// `256 * tiles * gridDim.z` bytes.
    pub luts: DevPtrMut<u8>,
    pub tiles: Tiles,
    pub source: ClaheSource,
    /// Sets of tables per image: 3 per channel, 1 on luma.
    pub sets: u32,
    pub _pad: u32,
}

/// Each pixel of a gray image through the tables of the four tiles around it, weighted in
/// f32 exactly as OpenCV's `CLAHE_Interpolation_Body` does.
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
    pub geometry: Geometry,
    pub _pad: u32,
    /// `256 * tiles_x * tiles_y` bytes.
    pub luts: DevPtr<u8>,
}

/// A color image: per channel, channel `c` of `rgb` through table set `c`; on luma
/// (`source.mode` = [`LUMA`]), `out = clamp(in + clahe(y) - y)` per color channel, `y` the
/// luma. Alpha (a fourth byte) is copied.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheApplyColor {
    pub image: ClaheApply,
    pub source: ClaheSource,
}

/// A gray batch: image `blockIdx.z` through its tables.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheApplyBatch {
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    pub tiles: Tiles,
    pub luts: DevPtr<u8>,
}

/// A color batch: image `blockIdx.z` through its sets of tables (3 per channel, 1 on luma,
/// as `source.mode` says) at `luts + z * sets * tiles * 256`, as [`ClaheApplyColor`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ClaheApplyColorBatch {
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    pub luts: DevPtr<u8>,
    pub tiles: Tiles,
    pub source: ClaheSource,
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
    /// The tables of one image; blocks of [`TABLES_BLOCK`], [`TABLES_SHARED_BYTES`].
    ClaheTablesKernel = clahe_tables(ClaheTables);
    /// The tables of a gray batch; as above, `gridDim.z` images.
    ClaheTablesBatchKernel = clahe_tables_batch(ClaheTablesBatch);
    /// The bilinear apply, gray; 2-D launch over [`APPLY_PIXELS`]-pixel groups, no shared memory.
    ClaheApplyKernel = clahe_apply(ClaheApply);
    /// The bilinear apply, color (per channel or on luma); 2-D launch over
    /// [`APPLY_COLOR_PIXELS`]-pixel groups, no shared memory.
    ClaheApplyColorKernel = clahe_apply_color(ClaheApplyColor);
    /// The bilinear apply of a gray batch; as the gray apply per image, `gridDim.z` images.
    ClaheApplyBatchKernel = clahe_apply_batch(ClaheApplyBatch);
    /// The tables of a color batch; as the tables of one image, `gridDim.z` = images x sets.
    ClaheTablesColorBatchKernel = clahe_tables_color_batch(ClaheTablesColorBatch);
    /// The bilinear apply of a color batch; as the color apply per image, `gridDim.z` images.
    ClaheApplyColorBatchKernel = clahe_apply_color_batch(ClaheApplyColorBatch);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The geometry as OpenCV's `CLAHE_Impl::apply` writes it, in wide integers, for the
    /// cases where it is defined.
    fn opencv(w: u64, h: u64, tx: u64, ty: u64) -> (u64, u64) {
        if w.is_multiple_of(tx) && h.is_multiple_of(ty) { (w / tx, h / ty) } else { ((w + tx - w % tx) / tx, (h + ty - h % ty) / ty) }
    }

    #[test]
    fn geometry_is_opencvs() {
        for w in 1..40u32 {
            for h in [1u32, 2, 7, 33] {
                for tx in 1..=w.min(9) {
                    for ty in 1..=h.min(5) {
                        let g = Geometry::new(w, h, tx, ty, 2.0).expect("valid");
                        let (tw, th) = opencv(w as u64, h as u64, tx as u64, ty as u64);
                        assert_eq!((g.tile_w as u64, g.tile_h as u64), (tw, th), "{w}x{h} on {tx}x{ty}");
                        let area = tw * th;
                        assert_eq!(g.clip as u64, ((2.0 * area as f64 / 256.0) as u64).max(1));
                        assert_eq!(g.lut_scale, 255.0f32 / area as f32);
                        assert_eq!((g.inv_tw, g.inv_th), (1.0 / tw as f32, 1.0 / th as f32));
                    }
                }
            }
        }
    }

    #[test]
    fn geometry_refuses_what_the_kernels_cannot_address() {
        // No pixels, no tiles, more tiles than pixels.
        assert!(Geometry::new(0, 5, 1, 1, 2.0).is_none());
        assert!(Geometry::new(5, 5, 0, 1, 2.0).is_none());
        assert!(Geometry::new(5, 5, 6, 1, 2.0).is_none());
        assert!(Geometry::new(5, 5, 1, 6, 2.0).is_none());
        // A tile of more than i32::MAX pixels.
        assert!(Geometry::new(65536, 65536, 1, 1, 2.0).is_none());
        assert!(Geometry::new(65536, 32768, 1, 1, 2.0).is_none());
        assert!(Geometry::new(65535, 32768, 1, 1, 2.0).is_some());
        // An extension past u32::MAX: refused, not wrapped.
        assert!(Geometry::new(u32::MAX, 3, 2, 2, 2.0).is_none());
        // Clip limits: huge ones saturate, tiny ones give at least 1.
        assert_eq!(Geometry::new(64, 64, 1, 1, 1e300).unwrap().clip, i32::MAX as u32);
        assert_eq!(Geometry::new(64, 64, 1, 1, 1e-9).unwrap().clip, 1);
    }

    #[test]
    fn reflect101_mirrors_like_opencv() {
        assert_eq!([0, 1, 2, 3, 4, 5, 6, 7].map(|i| reflect101(i, 3)), [0, 1, 2, 1, 0, 1, 2, 1]);
        assert_eq!(reflect101(5, 1), 0);
        assert_eq!(reflect101(4, 4), 2);
    }
}
