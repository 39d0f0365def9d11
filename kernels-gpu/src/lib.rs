//! The GPU kernels of `cuimg`, compiled by rustc's NVPTX backend into the PTX module that the
//! host crate embeds (`cargo xtask ptx`).
//!
//! Every kernel is `extern "ptx-kernel"` and `#[no_mangle]`, takes one `#[repr(C)]` parameter
//! struct from `cuimg-abi` by value, and is pinned to its ABI marker with [`abi!`] (name and
//! parameter type checked at compile time). The host launches through the same marker (`host/src/runtime/launch.rs`); each kernel documents the
//! contract the host must keep (pointer validity, alignment, launch shape, shared memory).
//!
//! Layers: `device` (thread indices, barriers, shared memory, atomics, vectors: the slice of
//! `cuda_std` these kernels need), `common` (pieces several kernels share), then one file per
//! operation.
//!
//! Indices are `u64` wherever they address image bytes, so images past 2^32 bytes work.
#![no_std]
#![feature(
    abi_ptx,
    asm_experimental_arch,
    stdarch_nvptx,
    core_intrinsics,
    gpu_intrinsics,
    core_float_math,
    gpu_launch_sized_workgroup_mem
)]
#![allow(internal_features)]
#![deny(unsafe_op_in_unsafe_fn)]

/// Pins a kernel to its ABI marker: `abi!(cuimg_abi::lut::LutC1Flat, lut_c1_flat);` after
/// the kernel's definition. It fails to compile unless the kernel's signature is exactly
/// `unsafe extern "ptx-kernel" fn(Marker::Params)` and its name is the marker's, so the host
/// (which launches through the marker) and the kernel cannot disagree on either.
macro_rules! abi {
    ($marker:ty, $name:ident) => {
        const _: unsafe extern "ptx-kernel" fn(<$marker as cuimg_abi::Kernel>::Params) = $name;
        const _: () = assert!(
            cuimg_abi::same_name(<$marker as cuimg_abi::Kernel>::NAME, stringify!($name)),
            concat!("the ABI marker names another kernel than ", stringify!($name))
        );
    };
}

pub mod common;
pub mod device;

pub mod border;
pub mod clahe;
pub mod copy;
pub mod equalize;
pub mod gather;
pub mod grayscale;
pub mod grayscale_histogram;
pub mod histogram;
pub mod lut;
pub mod orient;
pub mod resize;
pub mod tensor;
pub mod warp;
pub mod yuv;

/// A kernel that panics traps: the launch fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION`, which
/// the host reports as a typed error. No formatting machinery is pulled in, so the PTX has no
/// unresolved functions (`cargo xtask verify` checks this).
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
