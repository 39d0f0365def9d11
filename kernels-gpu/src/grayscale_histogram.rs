//! Grayscale and the gray image's histogram in one pass (`cuimg_abi::grayscale_histogram`):
//! the gray kernel's 16-pixel groups, each output vector also counted into the histogram
//! kernel's per-warp shared bins.

use crate::device::atomic;
use crate::device::thread::{grid_stride_1d, index_1d};
use crate::device::vector;
use crate::grayscale;
use crate::histogram::{self, Run};
use cuimg_abi::DevPtrMut;
use cuimg_abi::grayscale::GrayFlat;
use cuimg_abi::grayscale_histogram::{GrayHistogramFlat, LumaHistogramFlat};

/// `grayscale::gray_flat` that also counts every gray byte it writes into per-warp shared bins
/// (runs of uniform vectors as one count, as the gray histogram does), merged into `hist`
/// at the end: the histogram of the result without reading it back.
///
/// # Safety
/// As for `grayscale::gray_flat` (`dst` untouched unless `WRITE`); `hist` holds 256 u32; `histogram::shared_bytes(1)` bytes of
/// shared memory.
#[inline(always)]
unsafe fn gray_histogram_flat<const C: usize, const WRITE: bool>(p: GrayHistogramFlat) {
    let GrayHistogramFlat { image: GrayFlat { src, dst, n, weights: w }, hist } = p;
    let (src, dst) = (src.ptr(), dst.ptr());
    // SAFETY: the launch's shared memory.
    let sh = unsafe { histogram::zero_bins(1) };
    let bins = histogram::warp_bins(sh, 1, 0);
    let mut run = Run::EMPTY;
    let groups = n / 16;
    for g in grid_stride_1d(groups) {
        // SAFETY: group g < n / 16 lies inside the `n * C` source bytes.
        let words = unsafe { vector::load_group::<C>(src, g) };
        let v = grayscale::luma_group::<C>(&words, w);
        if WRITE {
            // SAFETY: vector `g` lies inside the `n` destination bytes.
            unsafe { vector::store(dst, g, v) };
        }
        let x = v.0[0] as u128 | (v.0[1] as u128) << 32 | (v.0[2] as u128) << 64 | (v.0[3] as u128) << 96;
        // SAFETY: `bins` is this warp's copy.
        unsafe { histogram::count_vector(bins, &mut run, x) };
    }
    let i = groups * 16 + index_1d();
    if i < n {
        let p = i as usize * C;
        // SAFETY: pixel i < n lies inside both buffers; a byte indexes one of the bins.
        unsafe {
            let y = w.luma(*src.add(p) as u32, *src.add(p + 1) as u32, *src.add(p + 2) as u32);
            if WRITE {
                *dst.add(i as usize) = y as u8;
            }
            atomic::add_u32(bins.add(y as usize), 1);
        }
    }
    // SAFETY: as above.
    unsafe { run.flush(bins) };
    // SAFETY: `hist` holds 256 u32; the bins were filled by this block.
    unsafe { histogram::merge_bins(sh, 1, hist.ptr()) };
}

/// RGB8/BGR8 -> Gray8 and the gray histogram, contiguous. See [`gray_histogram_flat`].
///
/// # Safety
/// `src`: `3n` bytes, `dst`: `n` bytes, both 16-byte aligned; `hist`: 256 u32; 1-D launch
/// with `histogram::shared_bytes(1)` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_histogram_c3_flat(p: GrayHistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { gray_histogram_flat::<3, true>(p) }
}
abi!(cuimg_abi::grayscale_histogram::GrayHistogramC3Flat, gray_histogram_c3_flat);

/// RGBA8/BGRA8 -> Gray8 and the gray histogram, contiguous. See [`gray_histogram_flat`].
///
/// # Safety
/// `src`: `4n` bytes, `dst`: `n` bytes, both 16-byte aligned; `hist`: 256 u32; 1-D launch
/// with `histogram::shared_bytes(1)` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_histogram_c4_flat(p: GrayHistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { gray_histogram_flat::<4, true>(p) }
}
abi!(cuimg_abi::grayscale_histogram::GrayHistogramC4Flat, gray_histogram_c4_flat);

/// The luma histogram alone: [`gray_histogram_flat`] without the writes.
///
/// # Safety
/// `src`: `C n` bytes, 16-byte aligned; `hist`: 256 u32; 1-D launch with
/// `histogram::shared_bytes(1)` bytes of shared memory.
#[inline(always)]
unsafe fn luma_histogram_flat<const C: usize>(p: LumaHistogramFlat) {
    let image = GrayFlat { src: p.src, dst: DevPtrMut::NULL, n: p.n, weights: p.weights };
    // SAFETY: the forwarded contract; nothing is written through the null `dst`.
    unsafe { gray_histogram_flat::<C, false>(GrayHistogramFlat { image, hist: p.hist }) }
}

/// The luma histogram of RGB8/BGR8, contiguous. See [`luma_histogram_flat`].
///
/// # Safety
/// As for [`luma_histogram_flat`] with `C = 3`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn luma_histogram_c3_flat(p: LumaHistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { luma_histogram_flat::<3>(p) }
}
abi!(cuimg_abi::grayscale_histogram::LumaHistogramC3Flat, luma_histogram_c3_flat);

/// The luma histogram of RGBA8/BGRA8, contiguous. See [`luma_histogram_flat`].
///
/// # Safety
/// As for [`luma_histogram_flat`] with `C = 4`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn luma_histogram_c4_flat(p: LumaHistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { luma_histogram_flat::<4>(p) }
}
abi!(cuimg_abi::grayscale_histogram::LumaHistogramC4Flat, luma_histogram_c4_flat);
