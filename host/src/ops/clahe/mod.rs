//! CLAHE (contrast-limited adaptive histogram equalization), bit-exact with OpenCV's
//! `createCLAHE(clipLimit, tileGridSize).apply` on 8-bit gray images: a histogram per tile,
//! clipped at the limit with the excess spread over all bins, a table per tile from the
//! clipped histogram's running sum, and each pixel mapped through the four nearest tiles'
//! tables, bilinearly. An image whose size is not a multiple of the grid is extended by
//! reflection (OpenCV's `BORDER_REFLECT_101`) for the tables only.
//!
//! The CPU reference is `cpu.rs` (re-exported as [`crate::cpu::clahe`]); the launches
//! ([`Stream::clahe`](crate::Stream::clahe), [`Gpu::clahe`](crate::Gpu::clahe)) are
//! `gpu.rs`, the kernels `kernels-gpu/src/clahe.rs`.

pub(crate) mod cpu;
mod gpu;

use crate::error::{Error, Result};

/// CLAHE's parameters, as OpenCV's `createCLAHE` takes them.
///
/// ```
/// let p = cuimg::Clahe::new(2.0, (8, 8)).unwrap();
/// assert_eq!(p, cuimg::Clahe::default());
/// assert!(cuimg::Clahe::new(0.0, (8, 8)).is_err());
/// assert!(cuimg::Clahe::new(2.0, (0, 8)).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clahe {
    clip_limit: f64,
    tiles: (u32, u32),
}

impl Default for Clahe {
    /// A clip limit of 2 and an 8x8 grid: what most uses of OpenCV's CLAHE pass.
    fn default() -> Clahe {
        Clahe { clip_limit: 2.0, tiles: (8, 8) }
    }
}

impl Clahe {
    /// `clip_limit`: how many times the average bin count a bin may hold before it is clipped
    /// (finite and > 0); `tiles`: the grid, `(columns, rows)`, each at least 1.
    pub fn new(clip_limit: f64, tiles: (u32, u32)) -> Result<Clahe> {
        if !(clip_limit.is_finite() && clip_limit > 0.0) {
            return Err(Error::InvalidParameter {
                what: "CLAHE clip limit".into(),
                why: format!("{clip_limit} is not a finite number above 0"),
            });
        }
        if tiles.0 == 0 || tiles.1 == 0 {
            return Err(Error::InvalidParameter {
                what: "CLAHE tile grid".into(),
                why: format!("{}x{} has no tiles", tiles.0, tiles.1),
            });
        }
        Ok(Clahe { clip_limit, tiles })
    }

    pub fn clip_limit(&self) -> f64 {
        self.clip_limit
    }

    pub fn tiles(&self) -> (u32, u32) {
        self.tiles
    }

    /// The geometry for a `width` x `height` image: the tile size (over the image extended
    /// to a multiple of the grid) and the clip limit in pixels per bin. A grid with more
    /// columns or rows than the image has pixels is an error.
    pub(crate) fn plan(&self, width: u32, height: u32) -> Result<Plan> {
        crate::validate::non_empty(width, height)?;
        let (tx, ty) = self.tiles;
        if tx > width || ty > height {
            return Err(Error::InvalidParameter {
                what: "CLAHE tile grid".into(),
                why: format!("{tx}x{ty} tiles do not fit a {width}x{height} image (at most one tile per pixel)"),
            });
        }
        // OpenCV extends only when either side is not a multiple of the grid, and then both
        // sides by `tiles - size % tiles`: a side that is a multiple gains a whole tile.
        let tile = if width.is_multiple_of(tx) && height.is_multiple_of(ty) {
            (width / tx, height / ty)
        } else {
            ((width + tx - width % tx) / tx, (height + ty - height % ty) / ty)
        };
        let area = tile.0 as u64 * tile.1 as u64;
        if area > i32::MAX as u64 {
            return Err(Error::TooLarge { what: "a CLAHE tile".into(), size: area, limit: i32::MAX as u64 });
        }
        // OpenCV: `static_cast<int>(clipLimit * tileSizeTotal / histSize)`, at least 1.
        let clip = ((self.clip_limit * area as f64 / 256.0) as i64).clamp(1, i32::MAX as i64) as u32;
        // OpenCV: `static_cast<float>(histSize - 1) / tileSizeTotal`, in f32.
        let lut_scale = 255.0f32 / area as i32 as f32;
        Ok(Plan { tiles: self.tiles, tile, clip, lut_scale })
    }
}

/// What [`Clahe::plan`] works out for one image size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Plan {
    pub tiles: (u32, u32),
    /// Width and height of a tile, over the extended image.
    pub tile: (u32, u32),
    /// The most a bin may hold.
    pub clip: u32,
    pub lut_scale: f32,
}
