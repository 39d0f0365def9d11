//! Launch shapes and the one place kernels are launched.
//!
//! Grids are sized to the GPU, not to the data: at most as many blocks as fit on all
//! multiprocessors at once, with every kernel looping grid-stride over its work. That keeps
//! the per-block setup (zeroing histogram bins, loading tables into shared memory) to once
//! per resident block, whatever the image size.

use cudarc::driver::{CudaFunction, LaunchConfig};

use super::stream::Stream;
use crate::error::Result;

/// Threads per block for every kernel (the shared-memory sizes below assume it).
pub(crate) const BLOCK: u32 = 256;
/// Warps per block.
pub(crate) const WARPS: u32 = BLOCK / 32;

/// Blocks of `func` that fit on the GPU at once, `block` threads and `smem` bytes each.
fn resident_blocks(stream: &Stream, func: &CudaFunction, block: u32, smem: u32) -> Result<u32> {
    let per_sm = func.occupancy_max_active_blocks_per_multiprocessor(block, smem as usize, None)?;
    Ok(stream.gpu.multiprocessors() * per_sm.max(1))
}

/// A 1-D launch over `items` units of work (at least one block, for the scalar tails).
pub(crate) fn linear(stream: &Stream, func: &CudaFunction, items: u64, smem: u32) -> Result<LaunchConfig> {
    let wanted = items.div_ceil(BLOCK as u64).max(1);
    let cap = resident_blocks(stream, func, BLOCK, smem)? as u64 * super::tuning::grid_waves() as u64;
    let blocks = wanted.min(cap) as u32;
    Ok(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: smem })
}

/// A 2-D launch over `cols` x `rows` (32 x 8 threads per block).
pub(crate) fn planar(stream: &Stream, func: &CudaFunction, cols: u64, rows: u64, smem: u32) -> Result<LaunchConfig> {
    let cap = resident_blocks(stream, func, BLOCK, smem)? as u64;
    let gx = cols.div_ceil(32).clamp(1, cap);
    let gy = rows.div_ceil(8).clamp(1, (cap / gx).clamp(1, 65535));
    Ok(LaunchConfig { grid_dim: (gx as u32, gy as u32, 1), block_dim: (32, 8, 1), shared_mem_bytes: smem })
}

/// Queues `func` on `stream` with the given arguments (locals, pushed by reference):
/// `launch!(stream, func, cfg; a, b, c)`. Evaluates to the builder's `unsafe` launch, so
/// each call site states in its `// SAFETY:` line why the kernel's contract holds.
macro_rules! launch {
    ($stream:expr, $func:expr, $cfg:expr; $($arg:ident),* $(,)?) => {{
        use cudarc::driver::PushKernelArg;
        let mut builder = $stream.raw.launch_builder($func);
        $(builder.arg(&$arg);)*
        builder.launch($cfg).map(|_| ())
    }};
}
pub(crate) use launch;
