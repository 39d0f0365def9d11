//! Device support: the small slice of `cuda_std` these kernels need, built on
//! `core::arch::nvptx` because `cuda_std` needs the rustc_codegen_nvvm backend.
//!
//! The names follow `cuda_std` so the kernels read like Rust-CUDA kernels.

pub mod atomic;
pub mod dot;
pub mod shared;
pub mod thread;
pub mod vector;
