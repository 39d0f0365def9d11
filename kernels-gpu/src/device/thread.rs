//! Thread, block and grid indices, barriers and grid-stride loops.

use core::arch::nvptx;

// SAFETY (for every wrapper below): reading a special register has no preconditions; the
// intrinsics are only `unsafe` because every `core::arch` function is.

#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

#[inline(always)]
pub fn thread_idx_y() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_thread_idx_y() as u32 }
}

#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_block_idx_x() as u32 }
}

#[inline(always)]
pub fn block_idx_y() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_block_idx_y() as u32 }
}

/// The image of a batch launch (`gridDim.z` images).
#[inline(always)]
pub fn block_idx_z() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_block_idx_z() as u32 }
}

#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_block_dim_x() as u32 }
}

#[inline(always)]
pub fn block_dim_y() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_block_dim_y() as u32 }
}

#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

#[inline(always)]
pub fn grid_dim_y() -> u32 {
    // SAFETY: see the module note.
    unsafe { nvptx::_grid_dim_y() as u32 }
}

/// Threads in one block (1-D blocks).
#[inline(always)]
pub fn block_size() -> u32 {
    block_dim_x() * block_dim_y()
}

/// This thread's index within its block, flattened.
#[inline(always)]
pub fn thread_rank() -> u32 {
    thread_idx_y() * block_dim_x() + thread_idx_x()
}

/// This thread's index in a 1-D grid, as `u64` so that images past 2^32 elements index
/// correctly.
#[inline(always)]
pub fn index_1d() -> u64 {
    block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64
}

/// Threads in the whole (1-D) grid: the step of a grid-stride loop.
#[inline(always)]
pub fn grid_size() -> u64 {
    grid_dim_x() as u64 * block_dim_x() as u64
}

/// The lane of this thread in its warp.
#[inline(always)]
pub fn lane_id() -> u32 {
    thread_rank() & 31
}

/// The warp of this thread in its block.
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_rank() >> 5
}

/// `__syncthreads()`: a barrier for every thread of the block.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: every kernel calls this from block-uniform control flow (no thread returns
    // early before a barrier), which is what `bar.sync` requires.
    unsafe { nvptx::_syncthreads() }
}

/// A grid-stride loop over `0..n`: thread `t` of `T` visits `t, t + T, t + 2T, ...`.
///
/// The grid is sized to the GPU (a few blocks per multiprocessor), not to `n`, so the loop
/// is what lets one launch cover any size.
#[inline(always)]
pub fn grid_stride_1d(n: u64) -> Stride {
    Stride { next: index_1d(), step: grid_dim_x() as u64 * block_dim_x() as u64, end: n }
}

/// A grid-stride loop over the rows `0..rows` along the grid's y dimension.
#[inline(always)]
pub fn grid_stride_y(rows: u64) -> Stride {
    Stride {
        next: block_idx_y() as u64 * block_dim_y() as u64 + thread_idx_y() as u64,
        step: grid_dim_y() as u64 * block_dim_y() as u64,
        end: rows,
    }
}

/// A grid-stride loop over the columns `0..cols` along the grid's x dimension.
#[inline(always)]
pub fn grid_stride_x(cols: u64) -> Stride {
    grid_stride_1d(cols)
}

/// A block-stride loop over `0..n`: every thread of one block takes its share.
#[inline(always)]
pub fn block_stride(n: u32) -> Stride {
    Stride { next: thread_rank() as u64, step: block_size() as u64, end: n as u64 }
}

pub struct Stride {
    next: u64,
    step: u64,
    end: u64,
}

impl Iterator for Stride {
    type Item = u64;

    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        if self.next < self.end {
            let i = self.next;
            self.next += self.step;
            Some(i)
        } else {
            None
        }
    }
}
