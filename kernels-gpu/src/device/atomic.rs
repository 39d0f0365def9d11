//! Atomics and fences on shared and global memory.
//!
//! LLVM picks `atom.shared.*` or `atom.global.*` from the pointer's provenance, so one
//! function serves both address spaces.

use core::sync::atomic::{
    AtomicU32, AtomicU64,
    Ordering::{Acquire, Relaxed},
};

/// `atomicAdd` on a `u32`.
///
/// # Safety
/// `p` must be valid, 4-byte aligned and only accessed atomically while others may touch it.
#[inline(always)]
pub unsafe fn add_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { AtomicU32::from_ptr(p) }.fetch_add(v, Relaxed);
}

/// `atomicMin` on a `u32`.
///
/// # Safety
/// As for [`add_u32`].
#[inline(always)]
pub unsafe fn min_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { AtomicU32::from_ptr(p) }.fetch_min(v, Relaxed);
}

/// `atomicMax` on a `u64`.
///
/// # Safety
/// `p` must be valid, 8-byte aligned and only accessed atomically while others may touch it.
#[inline(always)]
pub unsafe fn max_u64(p: *mut u64, v: u64) {
    // SAFETY: the caller's contract.
    unsafe { AtomicU64::from_ptr(p) }.fetch_max(v, Relaxed);
}

/// A load that goes to the coherence point (L2), not a non-coherent L1 copy: for values
/// other blocks added atomically.
///
/// # Safety
/// As for [`add_u32`].
#[inline(always)]
pub unsafe fn load_u32(p: *mut u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { AtomicU32::from_ptr(p) }.load(Acquire)
}

/// `fence.acq_rel.gpu`: a release of every write this thread has made or seen (through a
/// barrier, the fence being cumulative) before it, and an acquire for what it reads after it,
/// at GPU scope.
///
/// Written out because rustc's NVPTX backend lowers `core::sync::atomic::fence(SeqCst)` to
/// `fence.sc.sys`, and the orderings of atomic read-modify-writes to nothing: a system-scope
/// fence in every thread of every block cost 8 to 9 us per 8K histogram on the H100 (ncu,
/// `docs/BENCHMARKS.md`).
#[inline(always)]
pub fn fence_acq_rel_gpu() {
    // SAFETY: a fence reads and writes no memory of its own; PTX 6.0, sm_70 (the kernels
    // target PTX 7.0, sm_75).
    unsafe { core::arch::asm!("fence.acq_rel.gpu;", options(nostack, preserves_flags)) }
}

/// The "last block done" count (CUDA's threadFenceReduction; cooperative groups' grid
/// barrier): after every thread of the block has made its global additions, thread 0
/// releases them (barrier, then a cumulative GPU-scope fence) and counts the block done at
/// `counter`. The block that counts last acquires every other block's additions and gets
/// `true`, every thread of it (block-uniform); the others get `false`. Its threads then read
/// those additions with [`load_u32`].
///
/// # Safety
/// Every thread of the block (1-D or 2-D) calls this from block-uniform control flow; `counter` is a
/// global u32 that only this launch's blocks touch, `blocks - 1` or less before the first
/// call; `flag` is a shared u32 that no thread reads or writes around the call.
#[inline(always)]
pub unsafe fn last_block_done(counter: *mut u32, blocks: u32, flag: *mut u32) -> bool {
    use crate::device::thread::{sync_threads, thread_idx_x, thread_idx_y};
    sync_threads();
    if thread_idx_x() == 0 && thread_idx_y() == 0 {
        fence_acq_rel_gpu();
        // SAFETY: the caller's contract.
        let last = unsafe { AtomicU32::from_ptr(counter) }.fetch_add(1, Relaxed) == blocks - 1;
        if last {
            fence_acq_rel_gpu();
        }
        // SAFETY: the caller's contract; read after the barrier below.
        unsafe { *flag = last as u32 };
    }
    sync_threads();
    // SAFETY: written before the barrier above.
    unsafe { *flag != 0 }
}
