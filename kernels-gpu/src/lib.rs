//! The GPU kernels of `cuimg`, compiled by rustc's NVPTX backend into the PTX module that the
//! host crate embeds (`cargo xtask ptx`).
//!
//! Every kernel is `extern "ptx-kernel"` and `#[no_mangle]`: the host finds it by name. The
//! host-side launchers in `host/src/launch/` are the only callers; each kernel documents the
//! contract they must keep (pointer validity, alignment, launch shape, shared-memory bytes).
//!
//! Indices are `u64` wherever they address image bytes, so images past 2^32 bytes work.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, core_intrinsics, gpu_intrinsics, core_float_math, gpu_launch_sized_workgroup_mem)]
#![allow(internal_features)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod device;

pub mod copy;
pub mod equalize;
pub mod gather;
pub mod grayscale;
pub mod histogram;
pub mod lut;

/// A kernel that panics traps: the launch fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION`, which
/// the host reports as a typed error. No formatting machinery is pulled in, so the PTX has no
/// unresolved functions (`cargo xtask verify` checks this).
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
