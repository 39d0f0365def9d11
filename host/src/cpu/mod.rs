//! CPU reference implementations of every operation: the oracle the GPU tests compare
//! against, bit for bit, and a fallback for machines without a GPU.
//!
//! Each is a plain serial loop, written for obviousness rather than speed; they validate
//! their inputs exactly as the GPU API does.
//!
//! ```
//! use cuimg::{cpu, GrayWeights, Image, Rgb8};
//! let img = Image::<Rgb8>::filled(3, 2, 200);
//! let gray = cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap();
//! assert!(gray.pixels().iter().all(|p| p.0 == [200]));
//! ```

mod equalize;
mod gather;
mod grayscale;
mod histogram;
mod lut;

pub use equalize::{equalize, equalize_color};
pub use gather::gather;
pub use grayscale::{black_and_white, grayscale, grayscale_planar};
pub use histogram::histogram;
pub use lut::{apply_lut, apply_luts};
