//! Histogram equalization's device-side steps: the LUT from the histogram (bit-exact with
//! OpenCV's `equalizeHist`) and the luma-preserving apply for color images. The histogram
//! itself comes from `histogram.rs` and the per-channel apply from `lut.rs`, all on one
//! stream, so nothing returns to the host between the steps.

use crate::common::{batch_image, load_tables, lookup, scan_256};
use crate::device::atomic;
use crate::device::shared;
use crate::device::thread::{block_idx_x, grid_stride_x, grid_stride_y, sync_threads, thread_idx_x};
use cuimg_abi::equalize::{EqualizeLuma, EqualizeLumaBatch, EqualizeLut};

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
/// `256 * gridDim.x` bytes; blocks of exactly 256 threads; 257 * 4 bytes of shared memory.
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
    let cdf = shared::dynamic::<u32>();
    // SAFETY: the shared allocation holds 257 u32: 256 for the scan, one for the first bin.
    let first = unsafe { cdf.add(256) };
    // SAFETY: c * 256 + t < 256 * gridDim.x.
    let h = unsafe { *hist.add(c * 256 + t) };
    // SAFETY: t < 256 and slot 256 exist; writes happen before the barrier below.
    unsafe {
        *cdf.add(t) = h;
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
        let hi = unsafe { *hist.add(c * 256 + i as usize) };
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
    // SAFETY: c * 256 + t < 256 * gridDim.x.
    unsafe { *lut.add(c * 256 + t) = value as u8 };
}

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
