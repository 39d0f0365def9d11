//! Relaxed atomics on shared and global memory.
//!
//! LLVM picks `atom.shared.*` or `atom.global.*` from the pointer's provenance, so one
//! function serves both address spaces.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

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
