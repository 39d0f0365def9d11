//! Opening a GPU: driver, device, context, module.

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};
use cudarc::nvrtc::Ptx;

use super::module::{Kernels, PTX};
use crate::error::{Error, Result};

/// An open GPU: its context, the loaded kernels and a stream for the blocking calls.
///
/// Cheap to clone (an `Arc`), and `Send + Sync`: share one between threads and give each
/// thread its own [`Stream`](crate::Stream) for concurrent work.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// let gpu = match cuimg::Gpu::new() {
///     Ok(gpu) => gpu,
///     Err(e) if e.is_no_gpu() => return Ok(()), // no GPU here: nothing to show
///     Err(e) => return Err(e),
/// };
/// println!("{} with {} multiprocessors", gpu.name(), gpu.multiprocessors());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub ctx: Arc<CudaContext>,
    pub kernels: Kernels,
    /// The stream behind the blocking calls on [`Gpu`].
    pub stream: Arc<CudaStream>,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub multiprocessors: u32,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("name", &self.inner.name)
            .field("compute_capability", &self.inner.compute_capability)
            .field("multiprocessors", &self.inner.multiprocessors)
            .finish()
    }
}

/// Whether the CUDA driver library can be loaded on this machine.
///
/// ```
/// // Never panics, with or without a driver.
/// let _ = cuimg::driver_available();
/// ```
pub fn driver_available() -> bool {
    // SAFETY: this only tries to dlopen libcuda (running its initialisers, which the driver
    // requires to be safe) and closes it again; no symbol is called.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

impl Gpu {
    /// Opens GPU 0.
    pub fn new() -> Result<Gpu> {
        Gpu::with_device(0)
    }

    /// Opens GPU `ordinal`. Without a driver this returns [`Error::NoDriver`] (cudarc would
    /// panic), and without that device [`Error::NoDevice`].
    pub fn with_device(ordinal: usize) -> Result<Gpu> {
        if !driver_available() {
            return Err(Error::NoDriver("libcuda.so (the NVIDIA driver library) was not found".into()));
        }
        let count = CudaContext::device_count()
            .map_err(|e| Error::NoDevice(format!("the driver found no usable GPU ({e})")))?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::NoDevice(format!("GPU {ordinal} was asked for, but the driver sees {count}")));
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| Error::NoDevice(format!("GPU {ordinal} could not be opened: {e}")))?;
        // SAFETY: cudarc's own tracking keeps one read event per buffer, which lets a write
        // or a free overtake a read on a third stream. Every allocation of this context is
        // made after this line and wrapped in `tracked::Tracked`/`TrackedHost`, which order
        // all reads, writes and frees across streams themselves (see `tracked.rs`).
        unsafe { ctx.disable_event_tracking() };
        let name = ctx.name()?;
        let compute_capability = ctx.compute_capability()?;
        let multiprocessors = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let ptx_error = |source| Error::PtxLoad {
            device: name.clone(),
            major: compute_capability.0,
            minor: compute_capability.1,
            source,
        };
        let module = ctx.load_module(Ptx::from_src(PTX)).map_err(ptx_error)?;
        let kernels = Kernels::load(&module).map_err(ptx_error)?;
        let stream = ctx.new_stream()?;
        Ok(Gpu { inner: Arc::new(Inner { ctx, kernels, stream, name, compute_capability, multiprocessors }) })
    }

    /// The device's name, such as "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// `(major, minor)`, such as `(9, 0)` for Hopper.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.inner.compute_capability
    }

    /// Streaming multiprocessors; the kernels size their grids from it.
    pub fn multiprocessors(&self) -> u32 {
        self.inner.multiprocessors
    }

    /// `(free, total)` device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        Ok(self.inner.ctx.mem_get_info()?)
    }
}
