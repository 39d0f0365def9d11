//! Atomics and fences on shared and global memory.
//!
//! LLVM picks `atom.shared.*` or `atom.global.*` from the pointer's provenance, so one
//! function serves both address spaces.

use core::sync::atomic::{
    AtomicU32, AtomicU64,
    Ordering::{AcqRel, Acquire, Relaxed, SeqCst},
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

/// `atomicMin` on a `u64`.
///
/// # Safety
/// `p` must be valid, 8-byte aligned and only accessed atomically while others may touch it.
#[inline(always)]
pub unsafe fn min_u64(p: *mut u64, v: u64) {
    // SAFETY: the caller's contract.
    unsafe { AtomicU64::from_ptr(p) }.fetch_min(v, Relaxed);
}

/// `atomicAdd` on a `u32` that returns the old value, ordered as acquire + release: the
/// "last block done" count, after which the last block reads what the others wrote.
///
/// # Safety
/// As for [`add_u32`].
#[inline(always)]
pub unsafe fn fetch_add_acq_rel_u32(p: *mut u32, v: u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { AtomicU32::from_ptr(p) }.fetch_add(v, AcqRel)
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

/// `__threadfence()`: this thread's writes before it are seen by every other thread of the
/// GPU before its writes after it.
#[inline(always)]
pub fn fence() {
    core::sync::atomic::fence(SeqCst);
}
