//! Applying 256-entry u8 lookup tables, one per channel, from shared memory in the
//! conflict-free replicated layout of `common::load_tables` (8 KiB per channel).

use crate::common::batch_image;
use crate::common::{load_tables, lookup};
use crate::device::thread::{grid_size, grid_stride_1d, grid_stride_x, grid_stride_y, index_1d};
use crate::device::vector::{self, V16};
use cuimg_abi::lut::{LutBatch, LutFlat, LutPitched};

/// Contiguous pixels of `C` channels, 16 pixels (`C` vectors) per step.
///
/// # Safety
/// `src` and `dst` hold `n * C` bytes, 16-byte aligned; `lut` holds `256 * C` bytes; 1-D
/// launch with `lut::shared_bytes(C)` bytes of shared memory.
#[inline(always)]
unsafe fn lut_flat<const C: usize, const REVERSE: bool>(src: *const u8, dst: *mut u8, n: u64, lut: *const u8) {
    // SAFETY: the launch contract.
    let t = unsafe { load_tables(lut, C as u32) };
    let groups = n / 16;
    if C == 1 {
        // SAFETY: the launch contract; tables from load_tables with one channel.
        unsafe { lut_gray_vectors::<REVERSE>(src, dst, groups, t) };
    } else {
        // SAFETY: the launch contract.
        unsafe { lut_interleaved::<C>(src, dst, groups, t) };
    }
    let i = groups * 16 + index_1d();
    if i < n {
        for c in 0..C {
            let at = i as usize * C + c;
            // SAFETY: pixel i < n lies inside both buffers.
            unsafe { *dst.add(at) = lookup(t, c as u32, *src.add(at) as u32) as u8 };
        }
    }
}

/// One channel: four 16-byte vectors in flight per thread (loads first, lookups after), each
/// of the four warp-wide loads coalesced; one vector per step left too little in flight to
/// cover memory latency (0.68 of copy bandwidth). `REVERSE` walks the vectors from the last
/// (each warp's loads still contiguous): after a pass that read the image from the first, the
/// most recently read part, still in L2, comes first.
///
/// # Safety
/// `src`, `dst`: `16 * vectors` bytes, 16-byte aligned; `t` from [`load_tables`].
#[inline(always)]
unsafe fn lut_gray_vectors<const REVERSE: bool>(src: *const u8, dst: *mut u8, vectors: u64, t: *const u8) {
    let at = |i: u64| if REVERSE { vectors - 1 - i } else { i };
    let step = grid_size();
    let mut base = index_1d();
    while base < vectors {
        let mut v = [V16::ZERO; 4];
        for (k, slot) in v.iter_mut().enumerate() {
            let i = base + k as u64 * step;
            if i < vectors {
                // SAFETY: i < vectors, so at(i) < vectors.
                *slot = unsafe { vector::load(src, at(i)) };
            }
        }
        for (k, slot) in v.iter().enumerate() {
            let i = base + k as u64 * step;
            if i < vectors {
                let mut out = [0u32; 16];
                for (j, o) in out.iter_mut().enumerate() {
                    // SAFETY: byte values are < 256; one table.
                    *o = unsafe { lookup(t, 0, slot.byte(j)) };
                }
                // SAFETY: i < vectors, so at(i) < vectors.
                unsafe { vector::store(dst, at(i), V16::from_bytes(&out)) };
            }
        }
        base += 4 * step;
    }
}

/// `C` interleaved channels: one group of 16 pixels (`C` vectors, loaded together) per step.
///
/// # Safety
/// `src`, `dst`: `16 * C * groups` bytes, 16-byte aligned; `t` from [`load_tables`] with `C`.
#[inline(always)]
unsafe fn lut_interleaved<const C: usize>(src: *const u8, dst: *mut u8, groups: u64, t: *const u8) {
    for g in grid_stride_1d(groups) {
        for k in 0..C {
            let at = g * C as u64 + k as u64;
            // SAFETY: vector `at` lies inside both buffers since g < n / 16.
            let v = unsafe { vector::load(src, at) };
            let mut out = [0u32; 16];
            for (i, o) in out.iter_mut().enumerate() {
                // The channel of byte i of vector k is (16k + i) % C: a constant once unrolled.
                // SAFETY: byte values are < 256.
                *o = unsafe { lookup(t, ((16 * k + i) % C) as u32, v.byte(i)) };
            }
            // SAFETY: as for the load.
            unsafe { vector::store(dst, at, V16::from_bytes(&out)) };
        }
    }
}

/// Gray8, contiguous. See [`lut_flat`].
///
/// # Safety
/// See [`lut_flat`] with `C = 1`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn lut_c1_flat(p: LutFlat) {
    // SAFETY: forwarded contract.
    unsafe { lut_flat::<1, false>(p.src.ptr(), p.dst.ptr(), p.n, p.lut.ptr()) }
}
abi!(cuimg_abi::lut::LutC1Flat, lut_c1_flat);

/// Gray8, contiguous, the vectors taken from the last to the first: equalization's apply,
/// right after the histogram read the image from the first. See [`lut_gray_vectors`].
///
/// # Safety
/// See [`lut_flat`] with `C = 1`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn lut_c1_flat_reversed(p: LutFlat) {
    // SAFETY: forwarded contract.
    unsafe { lut_flat::<1, true>(p.src.ptr(), p.dst.ptr(), p.n, p.lut.ptr()) }
}
abi!(cuimg_abi::lut::LutC1FlatReversed, lut_c1_flat_reversed);

/// Two channels (gray + alpha), contiguous. See [`lut_flat`].
///
/// # Safety
/// See [`lut_flat`] with `C = 2`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn lut_c2_flat(p: LutFlat) {
    // SAFETY: forwarded contract.
    unsafe { lut_flat::<2, false>(p.src.ptr(), p.dst.ptr(), p.n, p.lut.ptr()) }
}
abi!(cuimg_abi::lut::LutC2Flat, lut_c2_flat);

/// Three channels, contiguous. See [`lut_flat`].
///
/// # Safety
/// See [`lut_flat`] with `C = 3`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn lut_c3_flat(p: LutFlat) {
    // SAFETY: forwarded contract.
    unsafe { lut_flat::<3, false>(p.src.ptr(), p.dst.ptr(), p.n, p.lut.ptr()) }
}
abi!(cuimg_abi::lut::LutC3Flat, lut_c3_flat);

/// Four channels, contiguous. See [`lut_flat`].
///
/// # Safety
/// See [`lut_flat`] with `C = 4`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn lut_c4_flat(p: LutFlat) {
    // SAFETY: forwarded contract.
    unsafe { lut_flat::<4, false>(p.src.ptr(), p.dst.ptr(), p.n, p.lut.ptr()) }
}
abi!(cuimg_abi::lut::LutC4Flat, lut_c4_flat);

/// Any pitch or ROI: byte `x` of row `y` uses table `x % channels`.
///
/// # Safety
/// Rows `0..height` of `row_bytes` bytes are readable at `src` (pitch `s_pitch`) and
/// writable at `dst` (pitch `d_pitch`); `lut` holds `256 * channels` bytes; `channels` is
/// 1..=4; 2-D launch with `lut::shared_bytes(channels)` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn lut_pitched(p: LutPitched) {
    let LutPitched { src, s_pitch, dst, d_pitch, row_bytes, height, lut, channels } = p;
    let (src, dst) = (src.ptr(), dst.ptr());
    // SAFETY: the launch contract.
    let t = unsafe { load_tables(lut.ptr(), channels) };
    for y in grid_stride_y(height) {
        for x in grid_stride_x(row_bytes) {
            let c = (x % channels as u64) as u32;
            // SAFETY: (x, y) is inside both views; c < channels.
            unsafe {
                let v = *src.add((y * s_pitch + x) as usize) as u32;
                *dst.add((y * d_pitch + x) as usize) = lookup(t, c, v) as u8;
            }
        }
    }
}
abi!(cuimg_abi::lut::LutPitchedKernel, lut_pitched);

macro_rules! lut_batch {
    ($name:ident, $marker:ident, $c:literal) => {
        /// Tables on a batch: image `blockIdx.z` through the tables at
        /// `lut + z * lut_stride`. See [`lut_flat`].
        ///
        /// # Safety
        /// `src` and `dst` hold `gridDim.z` entries of equal sizes, `channels * width * height` bytes at
        /// both ends, 16-byte aligned; every image's tables (`256 * channels` bytes) are
        /// readable; 1-D over x with `lut::shared_bytes(channels)` bytes of shared memory.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: LutBatch) {
            let z = crate::device::thread::block_idx_z() as u64;
            // SAFETY: forwarded contract.
            unsafe {
                let ((src, width, height), (dst, ..)) = (batch_image(p.src), batch_image(p.dst));
                lut_flat::<$c, false>(src, dst, width * height, p.lut.offset(z * p.lut_stride).ptr())
            }
        }
        abi!(cuimg_abi::lut::$marker, $name);
    };
}

lut_batch!(lut_c1_batch, LutC1Batch, 1);
lut_batch!(lut_c2_batch, LutC2Batch, 2);
lut_batch!(lut_c3_batch, LutC3Batch, 3);
lut_batch!(lut_c4_batch, LutC4Batch, 4);
