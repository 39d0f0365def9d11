//! Opening a GPU: driver, device, context, module.

use std::sync::Arc;

use std::time::{Duration, Instant};

use cudarc::driver::sys::{self, CUdevice_attribute};
use cudarc::driver::{CudaContext, CudaStream};
use cudarc::nvrtc::Ptx;

use super::knobs;
use super::module::{CUBINS, Kernels, PTX};
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
    pub startup: Startup,
}

/// The code the kernels run on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// Machine code for `sm_<N>` (compute capability `N / 10`.`N % 10`), loaded as is.
    Sass(u32),
    /// The PTX, JIT-compiled by the driver when the GPU was opened (a GPU newer than the
    /// committed cubins, or a driver that rejects them).
    Ptx,
    /// A module read from the file named by `CUIMG_MODULE` (the `bench-knobs` feature only:
    /// kernel variants timed against each other with the same host binary).
    File,
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Code::Sass(sm) => write!(f, "sm_{sm} SASS"),
            Code::Ptx => f.write_str("PTX, JIT-compiled"),
            Code::File => f.write_str("the module file of CUIMG_MODULE"),
        }
    }
}

/// What opening a GPU took: see [`Gpu::startup`].
#[derive(Clone, Copy, Debug)]
pub struct Startup {
    /// Loading the driver, finding the device, making the context.
    pub open: Duration,
    /// Loading the kernels (SASS, or JIT-compiling the PTX).
    pub load: Duration,
    /// The stream of blocking calls, and the first allocation and copy (so the first real
    /// upload does not pay for the memory pool and the driver's staging).
    pub warm_up: Duration,
    pub code: Code,
}

impl Startup {
    pub fn total(&self) -> Duration {
        self.open + self.load + self.warm_up
    }
}

/// The committed cubin that runs on compute capability `(major, minor)`: its own, else the
/// newest of the same major version not newer than it (SASS runs on later minor versions).
fn cubin_for((major, minor): (i32, i32)) -> Option<(u32, &'static [u8])> {
    let (major, minor) = (major as u32, minor as u32);
    CUBINS.iter().filter(|(sm, _)| sm / 10 == major && sm % 10 <= minor).max_by_key(|(sm, _)| *sm).copied()
}

/// Pays at open what the first upload would: the stream-ordered memory pool (kept from then
/// on: freed memory stays in the pool instead of going back to the driver, so steady-state
/// allocations of a pipeline cost no system calls) and the driver's staging of pageable
/// copies.
///
/// The pool never makes an allocation wait for another stream: by default the driver may
/// hand out memory freed on another stream whose free has not run yet, and makes the
/// allocating stream wait for the freeing one. In the `cuimg` tool that chained a decoder's
/// next image to an encoder's stream, and through it to the hardware decoder's batch: the
/// decoders' kernels started 15 to 35 ms after their launch on a GPU 90% idle (the CUPTI
/// timeline in docs/BENCHMARKS.md). Now such memory waits in the pool, and the pool grows
/// by what is in flight.
fn warm_up(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<()> {
    ctx.bind_to_thread()?;
    if ctx.has_async_alloc() {
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        let mut keep = u64::MAX;
        // SAFETY: plain driver calls on this context's device with valid out-pointers; the
        // release threshold takes a u64, the reuse flag an int.
        unsafe {
            sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()).result()?;
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut keep as *mut u64 as *mut std::ffi::c_void,
            )
            .result()?;
            let mut no: std::ffi::c_int = 0;
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                &mut no as *mut std::ffi::c_int as *mut std::ffi::c_void,
            )
            .result()?;
        }
    }
    let mut probe = stream.alloc_zeros::<u8>(4096)?;
    stream.memcpy_htod(&[0u8; 4096], &mut probe)?;
    drop(probe);
    Ok(stream.synchronize()?)
}

/// The device's primary context (the one the CUDA runtime and other libraries share, so
/// their memory can be used here). After a device fault the driver refuses it, and every
/// other context, to the whole process (tests/tests/fault.rs): that is [`Error::ContextLost`], not
/// "no device".
fn open_context(ordinal: usize) -> Result<Arc<CudaContext>> {
    match CudaContext::new(ordinal).and_then(|ctx| ctx.synchronize().map(|()| ctx)) {
        Ok(ctx) => Ok(ctx),
        Err(e) if crate::error::is_sticky(&e) => Err(Error::ContextLost(Box::new(e))),
        Err(e) => Err(Error::NoDevice(format!("GPU {ordinal} could not be opened: {e}"))),
    }
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
    // By name rather than through cudarc, which offers the check only when it loads the
    // driver at run time: a build in which another crate has cudarc link it
    // (`dynamic-linking`) must find it the same way.
    const NAMES: &[&str] = if cfg!(windows) { &["nvcuda.dll"] } else { &["libcuda.so.1", "libcuda.so"] };
    NAMES.iter().any(|name| {
        // SAFETY: this only dlopens the driver library (running its initialisers, which the
        // driver requires to be safe) and closes it again; no symbol is called.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
}

impl Gpu {
    /// Opens GPU 0.
    pub fn new() -> Result<Gpu> {
        Gpu::with_device(0)
    }

    /// Opens GPU `ordinal`. Without a driver this returns [`Error::NoDriver`] (cudarc would
    /// panic), and without that device [`Error::NoDevice`].
    pub fn with_device(ordinal: usize) -> Result<Gpu> {
        Gpu::open(ordinal, false)
    }

    /// `own_context`: a context of its own instead of the device's primary one (test hooks
    /// only: `runtime/hooks.rs`).
    pub(crate) fn open(ordinal: usize, own_context: bool) -> Result<Gpu> {
        let start = Instant::now();
        if !driver_available() {
            return Err(Error::NoDriver("libcuda.so (the NVIDIA driver library) was not found".into()));
        }
        let count = CudaContext::device_count()
            .map_err(|e| Error::NoDevice(format!("the driver found no usable GPU ({e})")))?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::NoDevice(format!("GPU {ordinal} was asked for, but the driver sees {count}")));
        }
        let ctx = if own_context {
            CudaContext::new_non_primary(ordinal, 0).map_err(Error::from)?
        } else {
            open_context(ordinal)?
        };
        // SAFETY: cudarc's own tracking keeps one read event per buffer, which lets a write
        // or a free overtake a read on a third stream. Every allocation of this context is
        // made after this line and wrapped in `tracked::Tracked`/`TrackedHost` (but for the
        // warm-up probe, used on one stream and synchronized), which order
        // all reads, writes and frees across streams themselves (see `tracked.rs`).
        unsafe { ctx.disable_event_tracking() };
        let name = ctx.name()?;
        let compute_capability = ctx.compute_capability()?;
        let multiprocessors = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let opened = start.elapsed();
        let ptx_error = |source: cudarc::driver::DriverError| Error::PtxLoad {
            device: name.clone(),
            major: compute_capability.0,
            minor: compute_capability.1,
            source: source.into(),
        };
        // The device's own machine code when one of the committed cubins runs on it, so
        // nothing is JIT-compiled (about 210 ms on an H100); the PTX otherwise.
        // `CUIMG_FORCE_PTX=1` skips the SASS: to test and time the JIT fallback.
        let force_ptx = std::env::var_os("CUIMG_FORCE_PTX").is_some_and(|v| v == "1");
        let sass = cubin_for(compute_capability).filter(|_| !force_ptx).and_then(|(sm, deflated)| {
            let cubin = miniz_oxide::inflate::decompress_to_vec(deflated).ok()?;
            let module = ctx.load_module(Ptx::from_binary(cubin)).ok()?;
            Some((module, Code::Sass(sm)))
        });
        let (module, code) = match (knobs::module_file(), sass) {
            (Some(bytes), _) => (ctx.load_module(Ptx::from_binary(bytes)).map_err(ptx_error)?, Code::File),
            (None, Some(found)) => found,
            (None, None) => (ctx.load_module(Ptx::from_src(PTX)).map_err(ptx_error)?, Code::Ptx),
        };
        let kernels = Kernels::load(&module).map_err(ptx_error)?;
        let loaded = start.elapsed();
        let stream = ctx.new_stream()?;
        if std::env::var_os("CUIMG_NO_WARMUP").is_none() {
            warm_up(&ctx, &stream)?;
        }
        let startup = Startup { open: opened, load: loaded - opened, warm_up: start.elapsed() - loaded, code };
        Ok(Gpu { inner: Arc::new(Inner { ctx, kernels, stream, name, compute_capability, multiprocessors, startup }) })
    }

    /// How the GPU was opened: which code the kernels run (SASS or JIT-compiled PTX), and
    /// the time of each step.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// let s = gpu.startup();
    /// println!("{} opened in {:.1} ms ({})", gpu.name(), s.total().as_secs_f64() * 1e3, s.code);
    /// # Ok(()) }
    /// ```
    pub fn startup(&self) -> &Startup {
        &self.inner.startup
    }

    /// Makes this GPU's context current on the calling thread (for libraries called
    /// directly, such as nvJPEG).
    pub(crate) fn bind(&self) -> Result<()> {
        Ok(self.inner.ctx.bind_to_thread()?)
    }

    /// The device's index among the driver's devices (what `CudaContext::new` of cudarc and
    /// `cudaSetDevice` take), for code that shares its context.
    pub fn ordinal(&self) -> usize {
        self.inner.ctx.ordinal()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU older than Turing gets no cubin (and the PTX, built for sm_75, is refused by
    /// its driver); the error says what is needed. The driver's refusal itself needs such a
    /// GPU; this pins the choice and the message.
    #[test]
    fn unsupported_gpus_get_no_cubin_and_a_clear_error() {
        assert_eq!(cubin_for((6, 1)), None);
        assert_eq!(cubin_for((7, 0)), None);
        assert_eq!(cubin_for((7, 5)).map(|c| c.0), Some(75));
        assert_eq!(cubin_for((8, 7)).map(|c| c.0), Some(86), "a later minor version runs its major's SASS");
        assert_eq!(cubin_for((9, 0)).map(|c| c.0), Some(90));
        let e = Error::PtxLoad {
            device: "Tesla P100".into(),
            major: 6,
            minor: 0,
            source: "CUDA_ERROR_NO_BINARY_FOR_GPU".into(),
        };
        let msg = e.to_string();
        assert!(msg.contains("Tesla P100 (compute capability 6.0)"), "{msg}");
        assert!(msg.contains("needs a Turing or newer GPU"), "{msg}");
    }
}
