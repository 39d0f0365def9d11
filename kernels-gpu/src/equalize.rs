//! Histogram equalization's device-side steps: the LUT from the histogram (bit-exact with
//! OpenCV's `equalizeHist`) and the luma-preserving apply for color images. The histogram
//! itself comes from `histogram.rs` and the per-channel apply from `lut.rs`, all on one
//! stream, so nothing returns to the host between the steps.

use crate::common::{batch_image, load_tables, lookup, scan_256};
use crate::device::atomic;
use crate::device::shared;
use crate::device::thread::{
    block_idx_x, grid_dim_x, grid_stride_1d, grid_stride_x, grid_stride_y, index_1d, sync_threads, thread_idx_x,
};
use crate::device::vector::{self, V16};
use cuimg_abi::equalize::{EqualizeHistTable, EqualizeLuma, EqualizeLumaBatch, EqualizeLumaFlat, EqualizeLut};

/// One block of 256 threads per table (`blockIdx.x`; tables in groups of `channels`, one
/// group per image; channels at or past `colors` get the identity): `lut[c*256 + v]` from
/// `hist[c*256 + v]`, exactly as OpenCV's `equalizeHist`:
///
/// ```text
/// i = first non-empty bin; if hist[i] == total { lut = i }
/// scale = 255.0f / (total - hist[i])          (f32)
/// lut[v] = saturate(rint(f32(sum_{i<k<=v} hist[k]) * scale))   for v > i, else 0
/// ```
///
/// # Safety
/// `hist` holds `256 * gridDim.x` u32 whose per-channel sum fits in u32; `lut` holds
/// `256 * gridDim.x` bytes; blocks of exactly 256 threads; `LUT_SHARED_BYTES` of shared
/// memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn equalize_lut(p: EqualizeLut) {
    let (hist, lut) = (p.hist.ptr(), p.lut.ptr());
    let c = block_idx_x() as usize;
    if block_idx_x() % p.channels >= p.colors {
        // Alpha is not a color: its table is the identity. (Block-uniform: no barrier is
        // skipped by only some threads.)
        // SAFETY: c * 256 + t < 256 * gridDim.x.
        unsafe { *lut.add(c * 256 + thread_idx_x() as usize) = thread_idx_x() as u8 };
        return;
    }
    let t = thread_idx_x() as usize;
    // SAFETY: c * 256 + t < 256 * gridDim.x; the shared memory and block the contract gives.
    unsafe { table(shared::dynamic::<u32>(), t, *hist.add(c * 256 + t), lut.add(c * 256)) };
}

/// `equalizeHist`'s table from a histogram whose bin `t` is `h` (thread `t` of 256 holds
/// its own bin), written to `lut[t]`; see [`equalize_lut`] for the formula.
///
/// # Safety
/// Every thread of a block of exactly 256 calls this with its own `t` and bin; `sh` is 513
/// free shared u32 (the scan, the bins, the first non-empty bin), not read by anyone before
/// the call's first barrier; `lut` holds 256 bytes. The bins sum to at most u32::MAX.
#[inline(always)]
pub(crate) unsafe fn table(sh: *mut u32, t: usize, h: u32, lut: *mut u8) {
    // SAFETY: the shared allocation holds 513 u32 (the contract).
    let (cdf, bins, first) = unsafe { (sh, sh.add(256), sh.add(512)) };
    // SAFETY: t < 256; slot 512 exists; written before the barrier below.
    unsafe {
        *cdf.add(t) = h;
        *bins.add(t) = h;
        if t == 0 {
            *first = 256;
        }
    }
    sync_threads();
    if h != 0 {
        // SAFETY: `first` is a shared u32.
        unsafe { atomic::min_u32(first, t as u32) };
    }
    // SAFETY: 256 shared u32, every thread of the block here.
    unsafe { scan_256(cdf, t) };
    // SAFETY: the barrier above ordered every write to these slots.
    let (total, i, cum) = unsafe { (*cdf.add(255), *first, *cdf.add(t)) };
    let value = if i >= 256 {
        // Never reached through the host API, which rejects empty images.
        t as u32
    } else {
        // SAFETY: i < 256.
        let hi = unsafe { *bins.add(i as usize) };
        if hi == total {
            i
        } else if t as u32 <= i {
            0
        } else {
            let scale = 255.0f32 / (total - hi) as f32;
            let y = core::f32::math::round_ties_even((cum - hi) as f32 * scale);
            y.clamp(0.0, 255.0) as u32
        }
    };
    // SAFETY: t < 256.
    unsafe { *lut.add(t) = value as u8 };
}

/// Gray8, contiguous: the histogram (the gray histogram kernel's body) and, in the last
/// block to finish (a counter after the bins), `equalizeHist`'s table, in one launch
/// instead of two.
///
/// # Safety
/// `src` holds `n` bytes, 16-byte aligned, `n <= u32::MAX`; `hist` holds 257 u32, zeroed
/// before the launch (the bins, then the counter); `lut` 256 bytes; 1-D launch of blocks of
/// exactly 256 threads with `histogram::shared_bytes(1)` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn equalize_hist_table(p: EqualizeHistTable) {
    let (hist, lut) = (p.hist.ptr(), p.lut.ptr());
    // SAFETY: the forwarded contract; it ends with every block's bins added to `hist`.
    unsafe { crate::histogram::histogram_gray(p.src.ptr(), p.n, hist) };
    let sh = shared::dynamic::<u32>();
    let t = thread_idx_x() as usize;
    // SAFETY: every thread is here (block-uniform); the counter after the bins, which only
    // this launch touches (zeroed with them); shared word 513 of the 2048, past the table's
    // 513 and unused by the histogram after its merge.
    if !unsafe { atomic::last_block_done(hist.add(256), grid_dim_x(), sh.add(513)) } {
        return;
    }
    // SAFETY: bin t, complete now: every block added to it before counting itself done.
    let h = unsafe { atomic::load_u32(hist.add(t)) };
    // SAFETY: 513 shared words, none read since the barriers above; `lut` holds 256 bytes.
    unsafe { table(sh, t, h, lut) };
}
abi!(cuimg_abi::equalize::EqualizeHistTableKernel, equalize_hist_table);

abi!(cuimg_abi::equalize::EqualizeLutKernel, equalize_lut);

/// Equalizes a color image on its luma (`Weights::luma`): `out = clamp(in + lut[y] - y)` per channel,
/// which is what converting to YCbCr, mapping Y through the LUT and converting back does in
/// exact arithmetic (a change of Y moves R, G and B alike), without the round trip's
/// rounding. Alpha (`channels == 4`, the byte that is none of `ri`, `gi`, `bi`) is copied.
///
/// # Safety
/// Rows `0..height` of `width * channels` bytes are readable at `src` (pitch `s_pitch`) and
/// writable at `dst` (pitch `d_pitch`); `lut` holds 256 bytes; 2-D launch with
/// `lut::shared_bytes(1)` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn equalize_luma_pitched(p: EqualizeLuma) {
    // SAFETY: forwarded contract.
    unsafe { luma_apply(p) }
}
abi!(cuimg_abi::equalize::EqualizeLumaKernel, equalize_luma_pitched);

/// The body of [`equalize_luma_pitched`], for the batch kernel too.
///
/// # Safety
/// As for [`equalize_luma_pitched`]; 2-D over x and y (any `gridDim.z`).
#[inline(always)]
unsafe fn luma_apply(p: EqualizeLuma) {
    let EqualizeLuma { src, s_pitch, dst, d_pitch, width, height, channels, rgb: [ri, gi, bi], weights: w, lut } = p;
    let (src, dst) = (src.ptr(), dst.ptr());
    // SAFETY: the launch contract.
    let t = unsafe { load_tables(lut.ptr(), 1) };
    for y in grid_stride_y(height) {
        for x in grid_stride_x(width) {
            let s = (y * s_pitch + x * channels) as usize;
            let d = (y * d_pitch + x * channels) as usize;
            // SAFETY: pixel (x, y) is inside both views; every channel index < channels.
            unsafe {
                let r = *src.add(s + ri as usize) as i32;
                let g = *src.add(s + gi as usize) as i32;
                let b = *src.add(s + bi as usize) as i32;
                let luma = w.luma(r as u32, g as u32, b as u32);
                let delta = lookup(t, 0, luma) as i32 - luma as i32;
                *dst.add(d + ri as usize) = (r + delta).clamp(0, 255) as u8;
                *dst.add(d + gi as usize) = (g + delta).clamp(0, 255) as u8;
                *dst.add(d + bi as usize) = (b + delta).clamp(0, 255) as u8;
                if channels == 4 {
                    let a = 6 - (ri + gi + bi) as usize;
                    *dst.add(d + a) = *src.add(s + a);
                }
            }
        }
    }
}

/// Equalizes contiguous color pixels on their luma, as [`equalize_luma_pitched`], 16 pixels
/// per step: `C` 16-byte loads and `C` 16-byte stores instead of byte accesses, so the
/// apply runs at the speed of the copy it is rather than of its 6 to 8 byte accesses per pixel.
/// The color bytes are 0, 1, 2 (the host passes the weights in byte order); byte 3 of 4 is
/// alpha, copied.
///
/// # Safety
/// `src` and `dst` hold `n * C` bytes, 16-byte aligned; `lut` holds 256 bytes; 1-D launch
/// with `lut::shared_bytes(1)` bytes of shared memory.
#[inline(always)]
unsafe fn luma_apply_flat<const C: usize>(p: EqualizeLumaFlat) {
    let EqualizeLumaFlat { src, dst, n, weights: w, lut } = p;
    let (src, dst) = (src.ptr(), dst.ptr());
    // SAFETY: the launch contract (block-uniform: every thread loads before any returns).
    let t = unsafe { load_tables(lut.ptr(), 1) };
    // `out = clamp(in + lut[y] - y)` on the three color bytes of one pixel.
    let shift = |r: u32, g: u32, b: u32| {
        let y = w.luma(r, g, b);
        // SAFETY: y < 256; the table loaded above.
        let delta = unsafe { lookup(t, 0, y) } as i32 - y as i32;
        let f = |v: u32| (v as i32 + delta).clamp(0, 255) as u32;
        [f(r), f(g), f(b)]
    };
    let groups = n / 16;
    for g in grid_stride_1d(groups) {
        // SAFETY: group g < n / 16 lies inside the `n * C` source bytes.
        let words = unsafe { vector::load_group::<C>(src, g) };
        let byte = |i: usize| (words[i / 4] >> (8 * (i % 4))) & 0xff;
        let mut out = [0u32; 64];
        for p in 0..16 {
            let [r, g, b] = shift(byte(p * C), byte(p * C + 1), byte(p * C + 2));
            (out[p * C], out[p * C + 1], out[p * C + 2]) = (r, g, b);
            if C == 4 {
                out[p * C + 3] = byte(p * C + 3);
            }
        }
        for k in 0..C {
            let mut v = [0u32; 16];
            v.copy_from_slice(&out[16 * k..16 * k + 16]);
            // SAFETY: vector g*C + k lies inside the `n * C` destination bytes.
            unsafe { vector::store(dst, g * C as u64 + k as u64, V16::from_bytes(&v)) };
        }
    }
    // The last n % 16 pixels, one per thread.
    let i = groups * 16 + index_1d();
    if i < n {
        let at = i as usize * C;
        // SAFETY: pixel i < n lies inside both buffers.
        unsafe {
            let [r, g, b] = shift(*src.add(at) as u32, *src.add(at + 1) as u32, *src.add(at + 2) as u32);
            (*dst.add(at), *dst.add(at + 1), *dst.add(at + 2)) = (r as u8, g as u8, b as u8);
            if C == 4 {
                *dst.add(at + 3) = *src.add(at + 3);
            }
        }
    }
}

/// RGB8/BGR8 on luma, contiguous. See [`luma_apply_flat`].
///
/// # Safety
/// As for [`luma_apply_flat`] with `C = 3`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn equalize_luma_c3_flat(p: EqualizeLumaFlat) {
    // SAFETY: forwarded contract.
    unsafe { luma_apply_flat::<3>(p) }
}
abi!(cuimg_abi::equalize::EqualizeLumaC3Flat, equalize_luma_c3_flat);

/// RGBA8/BGRA8 on luma, contiguous. See [`luma_apply_flat`].
///
/// # Safety
/// As for [`luma_apply_flat`] with `C = 4`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn equalize_luma_c4_flat(p: EqualizeLumaFlat) {
    // SAFETY: forwarded contract.
    unsafe { luma_apply_flat::<4>(p) }
}
abi!(cuimg_abi::equalize::EqualizeLumaC4Flat, equalize_luma_c4_flat);

/// Color batches equalized on luma: image `blockIdx.z` through the table at `lut + z * 256`.
///
/// # Safety
/// `src` and `dst` hold `gridDim.z` entries of equal sizes, `channels * width * height` bytes at both
/// ends; `rgb` are offsets below `channels`; `lut` holds `gridDim.z * 256` bytes; 2-D over x
/// and y with `lut::shared_bytes(1)` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn equalize_luma_batch(p: EqualizeLumaBatch) {
    // SAFETY: the launch contract.
    let ((src, width, height), (dst, ..)) = unsafe { (batch_image(p.src), batch_image(p.dst)) };
    let pitch = width * p.channels;
    let z = crate::device::thread::block_idx_z() as u64;
    let one = EqualizeLuma {
        src: cuimg_abi::DevPtr::new(src as u64),
        s_pitch: pitch,
        dst: cuimg_abi::DevPtrMut::new(dst as u64),
        d_pitch: pitch,
        width,
        height,
        channels: p.channels,
        rgb: p.rgb,
        weights: p.weights,
        lut: p.lut.offset(z * 256),
    };
    // SAFETY: image z's pixels and table, as `luma_apply` requires.
    unsafe { luma_apply(one) }
}
abi!(cuimg_abi::equalize::EqualizeLumaBatchKernel, equalize_luma_batch);
