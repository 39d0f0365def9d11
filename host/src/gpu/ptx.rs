//! The embedded PTX module and the table of its kernels.
//!
//! `cuimg_kernels.ptx` is built from `kernels-gpu/` by `cargo xtask ptx` and committed, so
//! users need neither the nightly toolchain nor the CUDA toolkit; `cargo xtask verify` fails
//! when it is stale.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, DriverError};

/// The kernels, as PTX text.
pub(crate) const PTX: &str = include_str!("../ptx/cuimg_kernels.ptx");

macro_rules! kernel_table {
    ($($name:ident),* $(,)?) => {
        /// Every kernel of the module, resolved once when the GPU is opened.
        pub(crate) struct Kernels {
            $(pub $name: CudaFunction,)*
        }

        impl Kernels {
            pub fn load(module: &Arc<CudaModule>) -> Result<Kernels, DriverError> {
                Ok(Kernels { $($name: module.load_function(stringify!($name))?,)* })
            }
        }
    };
}

kernel_table!(
    gray_c3_flat,
    gray_c4_flat,
    gray_planes,
    histogram_c1_flat,
    histogram_c1_runs,
    histogram_c2_flat,
    histogram_c3_flat,
    histogram_c4_flat,
    histogram_pitched,
    histogram_luma_pitched,
    equalize_lut,
    equalize_luma_pitched,
    lut_c1_flat,
    lut_c2_flat,
    lut_c3_flat,
    lut_c4_flat,
    lut_pitched,
    gather_b1,
    gather_b2,
    gather_b4,
    gather_b8,
    gather_b16,
    gather_bytes,
    copy_flat,
);
