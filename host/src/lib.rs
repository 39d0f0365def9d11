//! # cuimg: GPU image kernels written in Rust
//!
//! Grayscale, 256-bin histograms, histogram equalization, lookup tables and gather, as CUDA
//! kernels written in Rust (compiled to PTX by rustc's NVPTX backend and embedded here),
//! driven through a typed, safe API. Every operation has a CPU reference in [`cpu`] that
//! gives the same bytes.
//!
//! - Pixel formats are types ([`Gray8`], [`La8`], [`Rgb8`], [`Bgr8`], [`Rgba8`], [`Bgra8`]),
//!   sealed, so the wrong layout is a compile error; bad sizes, pitches, regions and indices are typed
//!   [`Error`]s, found before anything is launched.
//! - Blocking calls on [`Gpu`] for one-off work; [`Stream`]s with device images, regions
//!   and pinned host memory for pipelines.
//! - Needs only the NVIDIA driver at run time (loaded dynamically) and stable Rust to build.
//!
//! ```
//! use cuimg::{cpu, Gpu, GrayWeights};
//!
//! # fn main() -> Result<(), cuimg::Error> {
//! let photo = cuimg::io::sample_rgb();
//! let gray = match Gpu::new() {
//!     Ok(gpu) => gpu.grayscale(&photo.view(), GrayWeights::Bt601)?,
//!     Err(e) if e.is_no_gpu() => cpu::grayscale(&photo.view(), GrayWeights::Bt601)?,
//!     Err(e) => return Err(e),
//! };
//! assert_eq!(gray, cpu::grayscale(&photo.view(), GrayWeights::Bt601)?);
//! # Ok(()) }
//! ```
//!
//! The layers, as the source tree shows them: `kernels-gpu/` (device code, its own crate) and
//! `abi/` (the parameter structs both sides compile against) → [`runtime`] (GPU, memory,
//! streams, cross-stream ordering, launches) → [`ops`] (one folder per operation: its types,
//! its launches as methods of [`Gpu`]/[`Stream`], its CPU reference, re-exported in [`cpu`],
//! and on all cores in [`par`]) → `io` (files and the `image` crate's types; the default
//! feature `io`).

#[cfg(feature = "bench-knobs")]
pub mod bench;
pub mod codec;
pub mod cpu;
mod device;
#[cfg(feature = "dlpack")]
pub mod dlpack;
mod error;
#[cfg(feature = "io")]
pub mod files;
mod image;
#[cfg(feature = "io")]
mod image_crate;
#[cfg(feature = "io")]
pub mod io;
pub mod limits;
pub mod ops;
pub mod par;
pub mod pipeline;
mod pixel;
pub mod registry;
pub mod runtime;
mod validate;

/// nvJPEG, the GPU's JPEG codec ([`codec::jpeg`], by its short name).
pub use crate::codec::jpeg;
pub use crate::device::Device;
pub use crate::error::{Error, Result, Source};
pub use crate::image::{Dimensions, Image, ImageView, ImageViewMut, PlanarView, Rect};
#[cfg(feature = "io")]
pub use crate::image_crate::DynamicView;
pub use crate::limits::Limits;
pub use crate::ops::border::{Border, Padding};
pub use crate::ops::clahe::Clahe;
pub use crate::ops::equalize::EqualizeMode;
pub use crate::ops::gather::GatherCheck;
pub use crate::ops::grayscale::GrayWeights;
pub use crate::ops::histogram::{DeviceHistogram, DeviceHistograms, Histogram};
pub use crate::ops::lut::{DeviceLuts, Lut};
pub use crate::ops::orient::Orientation;
pub use crate::ops::resize::{CvInterpolation, Filter, PilFilter, ResizeLayout, Sizing, SourceBox};
pub use crate::ops::tensor::{DType, DeviceTensor, Normalize, Tensor, TensorLayout, TensorShape, TensorSpec};
pub use crate::ops::warp::{Warp, WarpFilter};
pub use crate::ops::yuv::{DeviceYuvFrame, YuvFrame, YuvLayout, YuvMatrix, YuvPixel, YuvRange, YuvSpec};
pub use crate::pipeline::{GpuPool, Pipeline};
pub use crate::pixel::{Bgr8, Bgra8, Color, Gray, Gray8, La8, Pixel, Rgb8, Rgba8};
pub use crate::runtime::{
    AsDeviceView, AsDeviceViewMut, Code, DeviceBatch, DeviceBuffer, DeviceImage, DeviceView, DeviceViewMut, Gpu, Mark,
    PinnedImage, Registered, Startup, Stream, StreamPriority, driver_available,
};

/// The README's Rust examples, compiled and run with the documentation tests, so that what a
/// new user pastes from it compiles and works.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;
