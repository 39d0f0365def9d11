//! The runtime: opening a GPU, memory, streams, ordering between them, loading the embedded
//! kernels and launching them. Operations (`crate::ops`) build on this module and nothing in
//! it knows about them.
//!
//! Layers, bottom up: `module` (the embedded PTX and its kernel table) → `context` ([`Gpu`]) →
//! `tracked` (cross-stream ordering of every allocation) → `memory` (device and pinned
//! images, buffers, views) → `stream` ([`Stream`], transfers) → `launch` (grid shapes and the
//! one typed, `unsafe` launch) → `replay` (a call's launches recorded and queued again).

mod batch;
mod context;
#[cfg(feature = "test-hooks")]
mod hooks;
pub(crate) mod knobs;
mod launch;
mod memory;
mod module;
mod registered;
mod replay;
mod stream;
mod tracked;

#[doc(hidden)]
pub use batch::describe as describe_batch;
pub(crate) use batch::{Chunk, Entry};
pub use batch::{DeviceBatch, STAGED_CHUNK_BYTES};
pub use context::{Code, Gpu, Startup, driver_available};
pub(crate) use memory::Layout;
pub use memory::{AsDeviceView, AsDeviceViewMut, DeviceBuffer, DeviceImage, DeviceView, DeviceViewMut, PinnedImage};
pub use registered::Registered;
pub(crate) use registered::is_registered;
pub(crate) use replay::Recording;
pub(crate) use stream::Scratch;
pub use stream::{Mark, Stream, StreamPriority};
pub(crate) use tracked::{Tracked, TrackedHost};

/// The embedded PTX text (for inspection and tools).
#[doc(hidden)]
pub const PTX: &str = module::PTX;
