//! `out[i] = src[idx[i]]` with the bounds check on the device.

use crate::{DevPtr, DevPtrMut};

/// For the vector kernels, elements of the kernel's width: `out` aligned for four of them.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Gather {
    /// `src_len` elements.
    pub src: DevPtr<u8>,
    pub src_len: u64,
    /// `n` indices, 16-byte aligned.
    pub idx: DevPtr<u32>,
    pub n: u64,
    /// `n` elements.
    pub out: DevPtrMut<u8>,
    /// `!p` (`u64::MAX - p`) for the first out-of-range position `p`, by atomic maximum over
    /// a word the host zeroes (0: every index in range). Zero as "none" lets the host clear
    /// it with an asynchronous memset instead of copying `u64::MAX` from the host per call.
    pub bad: DevPtrMut<u64>,
}

/// Elements of any size, unaligned.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatherBytes {
    pub gather: Gather,
    pub elem_size: u64,
}

kernels! {
    /// 1-byte elements.
    GatherB1 = gather_b1(Gather);
    /// 2-byte elements.
    GatherB2 = gather_b2(Gather);
    /// 4-byte elements.
    GatherB4 = gather_b4(Gather);
    /// 8-byte elements.
    GatherB8 = gather_b8(Gather);
    /// 16-byte elements.
    GatherB16 = gather_b16(Gather);
    /// Any size, one element per thread step.
    GatherBytesKernel = gather_bytes(GatherBytes);
}
