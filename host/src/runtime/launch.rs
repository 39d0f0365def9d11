//! Launch shapes, the checks every operation makes before queuing anything, and the one
//! place kernels are launched.
//!
//! Grids are sized to the GPU, not to the data: at most as many blocks as fit on all
//! multiprocessors at once, with every kernel looping grid-stride over its work. That keeps
//! the per-block setup (zeroing histogram bins, loading tables into shared memory) to once
//! per resident block, whatever the image size.

use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};
use cuimg_abi::{BLOCK, Kernel};

use super::knobs;
use super::memory::{DeviceView, DeviceViewMut};
use super::stream::Stream;
use crate::error::{Error, Result};
use crate::image::check_same_size;
use crate::pixel::Pixel;
use crate::validate;

/// A kernel's parameter struct as cudarc passes it: a pointer to its bytes, which the driver
/// copies as the PTX declares them (`cuimg_abi::KERNELS`, checked against the PTX in CI).
#[repr(transparent)]
struct Arg<P>(P);

// SAFETY: `Arg<P>` is `P` (`repr(transparent)`), a `#[repr(C)]` `Copy` struct of plain
// integers from `cuimg_abi`, whose size and alignment are what the kernel declares.
unsafe impl<P: Copy> DeviceRepr for Arg<P> {}

impl Stream {
    /// Queues kernel `K` with `params`.
    ///
    /// # Safety
    /// The contract documented on the kernel (`kernels-gpu`) holds for `params` and `cfg`:
    /// every address is valid for the bytes it will touch, on this stream's context, ordered
    /// by access guards that live until this returns.
    pub(crate) unsafe fn launch<K: Kernel>(&self, cfg: LaunchConfig, params: K::Params) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_unrecorded::<K>(cfg, params) }?;
        // Kept for replays where a recording runs (`replay.rs`).
        self.record_launch::<K>(cfg, params);
        Ok(())
    }

    /// [`Stream::launch`], not kept by a recording (a replay's).
    ///
    /// # Safety
    /// As [`Stream::launch`].
    pub(super) unsafe fn launch_unrecorded<K: Kernel>(&self, cfg: LaunchConfig, params: K::Params) -> Result<()> {
        let arg = Arg(params);
        let func = &self.gpu.inner.kernels.get::<K>().func;
        let mut builder = self.raw.launch_builder(func);
        builder.arg(&arg);
        // SAFETY: the caller's contract; the parameter's layout is the kernel's (see `Arg`).
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }

    /// Blocks of `K` that fit on the GPU at once with `smem` shared bytes each.
    pub(crate) fn resident_blocks<K: Kernel>(&self, smem: u32) -> Result<u32> {
        // The occupancy query is a plain driver call: it needs this GPU's context current on
        // the calling thread, which a stream made on another thread has not yet bound here.
        self.raw.context().bind_to_thread()?;
        let per_sm = self.gpu.inner.kernels.get::<K>().blocks_per_sm(BLOCK, smem)?;
        let all = self.gpu.multiprocessors() * per_sm;
        Ok(knobs::grid_cap().map_or(all, |cap| all.min(cap)))
    }

    /// A 1-D launch of `K` over `items` units of work (at least one block, for the scalar
    /// tails).
    pub(crate) fn linear<K: Kernel>(&self, items: u64, smem: u32) -> Result<LaunchConfig> {
        let wanted = items.div_ceil(BLOCK as u64).max(1);
        let cap = self.resident_blocks::<K>(smem)? as u64 * knobs::grid_waves() as u64;
        let blocks = wanted.min(cap) as u32;
        Ok(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: smem })
    }

    /// A 2-D launch of `K` over `cols` x `rows` (32 x 8 threads per block).
    pub(crate) fn planar<K: Kernel>(&self, cols: u64, rows: u64, smem: u32) -> Result<LaunchConfig> {
        const X: u32 = 32;
        const Y: u32 = BLOCK / X;
        let cap = self.resident_blocks::<K>(smem)? as u64;
        let gx = cols.div_ceil(X as u64).clamp(1, cap);
        let gy = rows.div_ceil(Y as u64).clamp(1, (cap / gx).clamp(1, 65535));
        Ok(LaunchConfig { grid_dim: (gx as u32, gy as u32, 1), block_dim: (X, Y, 1), shared_mem_bytes: smem })
    }

    /// A source and destination of the same, non-zero size, both on this stream's GPU.
    pub(crate) fn check_pair<P: Pixel, Q: Pixel>(
        &self,
        op: &str,
        src: &DeviceView<'_, P>,
        dst: &DeviceViewMut<'_, Q>,
    ) -> Result<()> {
        validate::non_empty(src.width(), src.height())?;
        // The messages are built only on failure: these checks run on every call.
        if dst.dimensions() != src.dimensions() {
            check_same_size(&format!("the {op} destination"), dst.dimensions(), src.dimensions())?;
        }
        if !self.same_context(src.img.buf.context()) {
            return Err(Error::WrongContext(format!("the {op} source")));
        }
        if !self.same_context(dst.img.buf.context()) {
            return Err(Error::WrongContext(format!("the {op} destination")));
        }
        Ok(())
    }
}
