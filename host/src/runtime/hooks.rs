//! Test-only hooks (cargo feature `test-hooks`, never in the default build):
//!
//! - a kernel that traps, to provoke the real sticky fault that an out-of-bounds access or a
//!   hardware error would, and to test what every later call then returns
//!   ([`Error::ContextLost`](crate::Error::ContextLost));
//! - a `Gpu` on a context of its own, so that one GPU can test what memory of another
//!   context gets ([`Error::WrongContext`](crate::Error::WrongContext)), which otherwise
//!   needs two GPUs.
//!
//! The kernel is three lines of PTX text here rather than Rust in `kernels-gpu`, so that it
//! is not in the embedded PTX and cubins the library ships: without the feature no code
//! that traps exists in the build at all.

use cudarc::driver::LaunchConfig;
use cudarc::nvrtc::Ptx;

use super::context::Gpu;
use super::stream::Stream;
use crate::error::Result;

const TRAP_PTX: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry cuimg_test_trap() { trap; ret; }
";

impl Stream {
    /// Queues a kernel that traps (test builds only: feature `test-hooks`). The launch
    /// itself returns `Ok`; the fault shows at the next call that waits for the stream, and
    /// from then on every call on this GPU's context returns
    /// [`Error::ContextLost`](crate::Error::ContextLost).
    pub fn trap_for_tests(&self) -> Result<()> {
        let module = self.raw.context().load_module(Ptx::from_src(TRAP_PTX))?;
        let func = module.load_function("cuimg_test_trap")?;
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the kernel takes no parameters and touches no memory; trapping (which
        // poisons the context, the purpose of this function) is all it does.
        unsafe { self.raw.launch_builder(&func).launch(cfg) }?;
        Ok(())
    }
}

impl Gpu {
    /// GPU `ordinal` on a new context of its own, not the device's primary one that
    /// [`Gpu::with_device`] shares (test builds only: feature `test-hooks`).
    pub fn with_own_context_for_tests(ordinal: usize) -> Result<Gpu> {
        Gpu::open(ordinal, true)
    }
}
