//! `out[i] = src[idx[i]]` with bounds checks on the device.
//!
//! An index `>= src_len` is never dereferenced: its output element is zeroed and its
//! position `p` goes into `*bad` as `!p` through an atomic maximum, so after the launch
//! `*bad` holds `!first` for the first bad position (the host zeroes it: 0 means none).
//!
//! Each thread moves four elements per step: one 16-byte load of indices and one store of
//! four elements, so identity gathers run at copy speed.

use crate::device::atomic;
use crate::device::thread::{grid_stride_1d, index_1d};
use cuimg_abi::gather::{Gather, GatherBytes};

/// An element type the vector path moves; `Quad` is four of them with the alignment a single
/// store of all four needs (which the host guarantees for `out`).
pub trait Elem: Copy {
    type Quad: Copy;
    const ZERO: Self;
    fn quad(v: [Self; 4]) -> Self::Quad;
}

macro_rules! elem {
    ($t:ty, $q:ident, $align:literal) => {
        #[derive(Clone, Copy)]
        #[repr(C, align($align))]
        pub struct $q(pub [$t; 4]);

        impl Elem for $t {
            type Quad = $q;
            const ZERO: Self = 0;
            #[inline(always)]
            fn quad(v: [Self; 4]) -> $q {
                $q(v)
            }
        }
    };
}

elem!(u8, Q1, 4);
elem!(u16, Q2, 8);
elem!(u32, Q4, 16);
elem!(u64, Q8, 16);
elem!(u128, Q16, 16);

/// One bounds-checked element.
///
/// # Safety
/// `src` holds `src_len` elements; `bad` is a valid u64.
#[inline(always)]
unsafe fn fetch<T: Elem>(src: *const T, src_len: u64, j: u32, pos: u64, bad: *mut u64) -> T {
    if (j as u64) < src_len {
        // SAFETY: j < src_len.
        unsafe { *src.add(j as usize) }
    } else {
        // SAFETY: `bad` is valid by contract.
        unsafe { atomic::max_u64(bad, !pos) };
        T::ZERO
    }
}

/// # Safety
/// `src` holds `src_len` elements; `idx` holds `n` u32 and is 16-byte aligned; `out` holds
/// `n` elements and is aligned for `T::Quad`; `bad` is a valid u64; 1-D launch.
#[inline(always)]
unsafe fn gather<T: Elem>(src: *const T, src_len: u64, idx: *const u32, n: u64, out: *mut T, bad: *mut u64) {
    let quads = n / 4;
    for q in grid_stride_1d(quads) {
        // SAFETY: quad q < n / 4 lies inside `idx`, which is 16-byte aligned.
        let j = unsafe { *(idx as *const [u32; 4] as *const crate::device::vector::V16).add(q as usize) }.0;
        let base = q * 4;
        // SAFETY: fetch's contract is this function's.
        let v = unsafe {
            [
                fetch(src, src_len, j[0], base, bad),
                fetch(src, src_len, j[1], base + 1, bad),
                fetch(src, src_len, j[2], base + 2, bad),
                fetch(src, src_len, j[3], base + 3, bad),
            ]
        };
        // SAFETY: quad q lies inside `out`, which is aligned for T::Quad.
        unsafe { *(out as *mut T::Quad).add(q as usize) = T::quad(v) };
    }
    let i = quads * 4 + index_1d();
    if i < n {
        // SAFETY: i < n lies inside `idx` and `out`.
        unsafe { *out.add(i as usize) = fetch(src, src_len, *idx.add(i as usize), i, bad) };
    }
}

macro_rules! gather_kernel {
    ($name:ident, $marker:ident, $t:ty) => {
        /// Gather of elements of this width. See the module note.
        ///
        /// # Safety
        /// As for the generic `gather`, with `src` and `out` holding elements of this width.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: Gather) {
            let (src, out) = (p.src.ptr() as *const $t, p.out.ptr() as *mut $t);
            // SAFETY: forwarded contract.
            unsafe { gather(src, p.src_len, p.idx.ptr(), p.n, out, p.bad.ptr()) }
        }
        abi!(cuimg_abi::gather::$marker, $name);
    };
}

gather_kernel!(gather_b1, GatherB1, u8);
gather_kernel!(gather_b2, GatherB2, u16);
gather_kernel!(gather_b4, GatherB4, u32);
gather_kernel!(gather_b8, GatherB8, u64);
gather_kernel!(gather_b16, GatherB16, u128);

/// Elements of any size (`elem_size` bytes) and any alignment, one element per thread step:
/// the path for types the vector kernels don't cover.
///
/// # Safety
/// `src` holds `src_len * elem_size` bytes; `idx` holds `n` u32; `out` holds
/// `n * elem_size` bytes; `bad` is a valid u64; 1-D launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gather_bytes(p: GatherBytes) {
    let GatherBytes { gather: Gather { src, src_len, idx, n, out, bad }, elem_size } = p;
    let (src, idx, out, bad) = (src.ptr(), idx.ptr(), out.ptr(), bad.ptr());
    for i in grid_stride_1d(n) {
        // SAFETY: i < n.
        let j = unsafe { *idx.add(i as usize) } as u64;
        let o = i * elem_size;
        if j < src_len {
            for b in 0..elem_size {
                // SAFETY: j < src_len and b < elem_size keep both sides in bounds.
                unsafe { *out.add((o + b) as usize) = *src.add((j * elem_size + b) as usize) };
            }
        } else {
            // SAFETY: `bad` is valid by contract.
            unsafe { atomic::max_u64(bad, !i) };
            for b in 0..elem_size {
                // SAFETY: as above.
                unsafe { *out.add((o + b) as usize) = 0 };
            }
        }
    }
}
abi!(cuimg_abi::gather::GatherBytesKernel, gather_bytes);
