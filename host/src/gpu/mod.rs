//! The GPU side: opening a device, memory, streams, and each operation's launch.
//!
//! Layers, bottom up: `ptx` (the embedded module and its kernel table), `context` (driver,
//! device, module), `memory` and `stream` (buffers, transfers, ordering), `launch` (launch
//! shapes; the only `unsafe`), then one module per operation holding the asynchronous
//! [`Stream`] method and the blocking [`Gpu`] method.

mod check;
mod context;
mod equalize;
mod gather;
mod grayscale;
mod histogram;
mod launch;
mod lut;
mod memory;
mod ptx;
mod stream;
mod tracked;
pub mod tuning;

pub use context::{Gpu, driver_available};
pub use gather::GatherCheck;
pub use histogram::DeviceHistogram;
pub use lut::DeviceLuts;
pub use memory::{AsDeviceView, AsDeviceViewMut, DeviceBuffer, DeviceImage, DeviceView, DeviceViewMut, PinnedImage};
pub use stream::{Mark, Stream};

/// The embedded PTX text (for inspection and tools).
pub const PTX: &str = ptx::PTX;
