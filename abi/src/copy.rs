//! A plain 16-byte copy: the benchmark's reference for SM-driven streaming.

use crate::{DevPtr, DevPtrMut};

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CopyFlat {
    /// `16 * vectors` bytes, 16-byte aligned.
    pub src: DevPtr<u8>,
    pub dst: DevPtrMut<u8>,
    pub vectors: u64,
}

kernels! {
    /// `dst = src`; 1-D launch.
    CopyFlatKernel = copy_flat(CopyFlat);
}
