//! RGB -> luma in fixed point, with the formula of `cuimg_abi::grayscale::Weights` (shared
//! with the host's CPU reference). The host puts the weights in byte order for BGR layouts,
//! so the kernels never know the channel order.

use crate::common::batch_image;
use crate::device::thread::{grid_stride_1d, grid_stride_x, grid_stride_y, index_1d};
use crate::device::vector::{self, V16};
use cuimg_abi::grayscale::{BlackWhiteBatch, GrayBatch, GrayFlat, GrayPlanes, Weights};
use cuimg_abi::{DevPtr, DevPtrMut};

/// Contiguous interleaved pixels of `C` bytes (channel 0 weighted by `r`, 1 by `g`, 2 by `b`)
/// to one byte each. Each thread converts 16 pixels per step: `C` 16-byte loads, one 16-byte
/// store.
///
/// # Safety
/// `src` holds `n * C` bytes and `dst` `n` bytes, both 16-byte aligned; 1-D launch.
#[inline(always)]
unsafe fn gray_flat<const C: usize>(src: *const u8, dst: *mut u8, n: u64, w: Weights) {
    let groups = n / 16;
    for g in grid_stride_1d(groups) {
        // SAFETY: group g < n / 16 lies inside the `n * C` source bytes.
        let words = unsafe { vector::load_group::<C>(src, g) };
        // SAFETY: vector `g` lies inside the `n` destination bytes.
        unsafe { vector::store(dst, g, luma_group::<C>(&words, w)) };
    }
    // The last n % 16 pixels, one per thread.
    let tail = groups * 16;
    let i = tail + index_1d();
    if i < n {
        let p = i as usize * C;
        // SAFETY: pixel i < n lies inside both buffers.
        unsafe {
            let y = w.luma(*src.add(p) as u32, *src.add(p + 1) as u32, *src.add(p + 2) as u32);
            *dst.add(i as usize) = y as u8;
        }
    }
}

/// The luma of a group of 16 pixels of `C` interleaved bytes (`vector::load_group`'s words;
/// channel 0 weighted by `r`, 1 by `g`, 2 by `b`), as one vector of 16 gray bytes.
#[inline(always)]
pub(crate) fn luma_group<const C: usize>(words: &[u32; 16], w: Weights) -> V16 {
    let byte = |i: usize| (words[i / 4] >> (8 * (i % 4))) & 0xff;
    let mut out = [0u32; 16];
    for (p, o) in out.iter_mut().enumerate() {
        *o = w.luma(byte(p * C), byte(p * C + 1), byte(p * C + 2));
    }
    V16::from_bytes(&out)
}

/// RGB8/BGR8 -> Gray8, contiguous. See [`gray_flat`].
///
/// # Safety
/// `src`: `3n` bytes, `dst`: `n` bytes, both 16-byte aligned; 1-D launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_c3_flat(p: GrayFlat) {
    // SAFETY: forwarded contract.
    unsafe { gray_flat::<3>(p.src.ptr(), p.dst.ptr(), p.n, p.weights) }
}
abi!(cuimg_abi::grayscale::GrayC3Flat, gray_c3_flat);

/// RGBA8/BGRA8 -> Gray8, contiguous. See [`gray_flat`].
///
/// # Safety
/// `src`: `4n` bytes, `dst`: `n` bytes, both 16-byte aligned; 1-D launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_c4_flat(p: GrayFlat) {
    // SAFETY: forwarded contract.
    unsafe { gray_flat::<4>(p.src.ptr(), p.dst.ptr(), p.n, p.weights) }
}
abi!(cuimg_abi::grayscale::GrayC4Flat, gray_c4_flat);

/// The general form: any pitch, any ROI, interleaved or planar, gray or "black and white"
/// output.
///
/// Channel `c` of pixel `(x, y)` is read at `src[c] + y * s_pitch + x * s_step`, so an
/// interleaved RGB view passes `base, base + 1, base + 2` with `s_step = 3`, and a planar
/// (CHW) image its three plane addresses with `s_step = 1`. Output goes to `dst[0]` and,
/// when `dst[1]`/`dst[2]` are non-null, to them too (luma written into all three channels).
/// When `s_alpha` and `d_alpha` are non-null the alpha byte is copied.
///
/// # Safety
/// Every address formed as above for `x < width`, `y < height` is valid; 2-D launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_planes(p: GrayPlanes) {
    // SAFETY: forwarded contract.
    unsafe { planes(p) }
}
abi!(cuimg_abi::grayscale::GrayPlanesKernel, gray_planes);

/// The body of [`gray_planes`], for the batch kernel too.
///
/// # Safety
/// As for [`gray_planes`]; 2-D over x and y (any `gridDim.z`).
#[inline(always)]
unsafe fn planes(p: GrayPlanes) {
    let GrayPlanes { src, s_alpha, s_pitch, s_step, dst, d_alpha, d_pitch, d_step, width, height, weights: w } = p;
    let [s_r, s_g, s_b] = src.map(|p| p.ptr());
    let [d0, d1, d2] = dst.map(|p| p.ptr());
    let (s_a, d_a) = (s_alpha.ptr(), d_alpha.ptr());
    for y in grid_stride_y(height) {
        for x in grid_stride_x(width) {
            let s = (y * s_pitch + x * s_step) as usize;
            let d = (y * d_pitch + x * d_step) as usize;
            // SAFETY: (x, y) is inside the view, so every address is valid by contract.
            unsafe {
                let v = w.luma(*s_r.add(s) as u32, *s_g.add(s) as u32, *s_b.add(s) as u32) as u8;
                *d0.add(d) = v;
                if !d1.is_null() {
                    *d1.add(d) = v;
                    *d2.add(d) = v;
                }
                if !d_a.is_null() {
                    *d_a.add(d) = *s_a.add(s);
                }
            }
        }
    }
}

/// A batch to gray: image `blockIdx.z` through [`gray_flat`] with 3 channels.
///
/// # Safety
/// `src` and `dst` hold `gridDim.z` entries of equal sizes, with `3 * width * height` source
/// and `width * height` destination bytes, both 16-byte aligned; 1-D over x.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_c3_batch(p: GrayBatch) {
    // SAFETY: forwarded contract.
    unsafe {
        let ((src, width, height), (dst, ..)) = (batch_image(p.src), batch_image(p.dst));
        gray_flat::<3>(src, dst, width * height, p.weights)
    }
}
abi!(cuimg_abi::grayscale::GrayC3Batch, gray_c3_batch);

/// A batch to gray with 4 channels. See [`gray_c3_batch`].
///
/// # Safety
/// As for [`gray_c3_batch`] with `4 * width * height` source bytes.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_c4_batch(p: GrayBatch) {
    // SAFETY: forwarded contract.
    unsafe {
        let ((src, width, height), (dst, ..)) = (batch_image(p.src), batch_image(p.dst));
        gray_flat::<4>(src, dst, width * height, p.weights)
    }
}
abi!(cuimg_abi::grayscale::GrayC4Batch, gray_c4_batch);

/// A batch to "black and white": image `blockIdx.z` through the general kernel's body, luma
/// into red, green and blue of a destination of the source's format, alpha copied.
///
/// # Safety
/// `src` and `dst` hold `gridDim.z` entries of equal sizes with `channels * width * height`
/// bytes each; `rgb` and `alpha` (or `u64::MAX`) are offsets below `channels`; 2-D over x, y.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn black_and_white_batch(p: BlackWhiteBatch) {
    let BlackWhiteBatch { src, dst, channels, rgb, alpha, weights } = p;
    // SAFETY: the launch contract.
    let ((s, width, height), (d, ..)) = unsafe { (batch_image(src), batch_image(dst)) };
    let (s, d) = (DevPtr::<u8>::new(s as u64), DevPtrMut::<u8>::new(d as u64));
    let pitch = width * channels;
    let (s_alpha, d_alpha) =
        if alpha == u64::MAX { (DevPtr::NULL, DevPtrMut::NULL) } else { (s.offset(alpha), d.offset(alpha)) };
    let planes_of = GrayPlanes {
        src: rgb.map(|c| s.offset(c)),
        s_alpha,
        s_pitch: pitch,
        s_step: channels,
        dst: rgb.map(|c| d.offset(c)),
        d_alpha,
        d_pitch: pitch,
        d_step: channels,
        width,
        height,
        weights,
    };
    // SAFETY: every address lies in image z's buffers, as `planes` requires.
    unsafe { planes(planes_of) }
}
abi!(cuimg_abi::grayscale::BlackWhiteBatchKernel, black_and_white_batch);
