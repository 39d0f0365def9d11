//! CPU reference implementations of every operation: the oracle the GPU tests compare
//! against, bit for bit, and a fallback for machines without a GPU.
//!
//! Each is a plain serial loop, written for obviousness rather than speed; they validate
//! their inputs exactly as the GPU API does. Each lives in its operation's folder
//! (`ops/<op>/cpu.rs`) beside the GPU code.
//!
//! ```
//! use cuimg::{cpu, GrayWeights, Image, Rgb8};
//! let img = Image::<Rgb8>::filled(3, 2, 200);
//! let gray = cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap();
//! assert!(gray.pixels().iter().all(|p| p.0 == [200]));
//! ```

pub use crate::ops::border::cpu::copy_make_border;
pub use crate::ops::clahe::cpu::{clahe, clahe_color};
pub use crate::ops::equalize::cpu::{equalize, equalize_color};
pub use crate::ops::gather::cpu::gather;
pub use crate::ops::grayscale::cpu::{black_and_white, grayscale, grayscale_planar};
pub use crate::ops::grayscale_histogram::cpu::grayscale_histogram;
pub use crate::ops::histogram::cpu::histogram;
pub use crate::ops::lut::cpu::{apply_lut, apply_luts};
pub use crate::ops::orient::cpu::orient;
pub use crate::ops::resize::cpu::{resize, resize_box, resize_layout, resize_planar};
pub use crate::ops::tensor::cpu::{from_tensor, resize_to_tensor, to_tensor, to_tensor_batch, yuv_resize_to_tensor};
pub use crate::ops::warp::cpu::warp;
pub use crate::ops::yuv::cpu::{image_to_yuv, yuv_to_image};
