//! CLAHE (contrast-limited adaptive histogram equalization), bit-exact with OpenCV's
//! `createCLAHE(clipLimit, tileGridSize).apply` on 8-bit gray images: a histogram per tile,
//! clipped at the limit with the excess spread over all bins, a table per tile from the
//! clipped histogram's running sum, and each pixel mapped through the four nearest tiles'
//! tables, bilinearly. An image whose size is not a multiple of the grid is extended by
//! reflection (OpenCV's `BORDER_REFLECT_101`) for the tables only.
//!
//! Color images go through it per channel or on their luma ([`EqualizeMode`](crate::EqualizeMode)),
//! as equalization does.
//!
//! The CPU reference is `cpu.rs` (re-exported as [`crate::cpu::clahe`] and
//! [`crate::cpu::clahe_color`]); the launches ([`Stream::clahe`](crate::Stream::clahe),
//! [`Stream::clahe_color`](crate::Stream::clahe_color), [`Stream::clahe_batch`](crate::Stream::clahe_batch)
//! and the blocking forms on [`Gpu`](crate::Gpu)) are `gpu.rs`, the kernels
//! `kernels-gpu/src/clahe.rs`, their parameters `abi/src/clahe.rs`.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

use cuimg_abi::clahe::{Geometry, Tiles};

/// Bytes of tables a tile takes on the GPU, per channel: a 256-bin `u32` histogram, its
/// counter and its 256-byte table (the CPU takes the table alone).
pub const TABLE_BYTES_PER_TILE: u64 = 256 * 4 + 4 + 256;
/// The tables may take at most this many bytes per pixel of the image, and
/// [`FREE_TABLE_BYTES`] more: past it, [`Error::TooLarge`] before anything is allocated.
/// A tile then holds at least 160 pixels unless the tables are small anyway; OpenCV's
/// default 8x8 grid fits any image of 64 pixels or more.
pub const MAX_TABLE_BYTES_PER_PIXEL: u64 = 8;
/// Tables of this size are always allowed (1 MiB: 816 tiles).
pub const FREE_TABLE_BYTES: u64 = 1 << 20;

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

    /// The geometry for a `width` x `height` image (`cuimg_abi::clahe::Geometry`, which the
    /// batch kernels work out again on the device): the tile size over the image extended to
    /// a multiple of the grid, and the clip limit in pixels per bin. A grid with more columns
    /// or rows than the image has pixels is an error.
    pub(crate) fn plan(&self, width: u32, height: u32) -> Result<Geometry> {
        crate::validate::non_empty(width, height)?;
        let (tx, ty) = self.tiles;
        if tx > width || ty > height {
            return Err(Error::InvalidParameter {
                what: "CLAHE tile grid".into(),
                why: format!("{tx}x{ty} tiles do not fit a {width}x{height} image (at most one tile per pixel)"),
            });
        }
        // The tables never outgrow the image: a grid of one tile per pixel on a 12-megapixel
        // photo asked for 3.1 GB of them.
        let tables = u64::from(tx) * u64::from(ty) * TABLE_BYTES_PER_TILE;
        let allowed = MAX_TABLE_BYTES_PER_PIXEL * u64::from(width) * u64::from(height) + FREE_TABLE_BYTES;
        if tables > allowed {
            return Err(Error::TooLarge {
                what: format!(
                    "CLAHE's tables for a {tx}x{ty} grid on a {width}x{height} image ({TABLE_BYTES_PER_TILE} bytes a tile, \
                     at most {MAX_TABLE_BYTES_PER_PIXEL} a pixel and 1 MiB); use fewer tiles"
                ),
                size: tables,
                limit: allowed,
            });
        }
        Geometry::new(width, height, tx, ty, self.clip_limit).ok_or_else(|| Error::TooLarge {
            what: format!("a CLAHE tile of a {width}x{height} image on a {tx}x{ty} grid"),
            size: width as u64 * height as u64 / (tx as u64 * ty as u64),
            limit: i32::MAX as u64,
        })
    }

    /// What the kernels take: the grid and the clip limit.
    pub(crate) fn abi(&self) -> Tiles {
        Tiles { x: self.tiles.0, y: self.tiles.1, clip_limit: self.clip_limit }
    }
}
