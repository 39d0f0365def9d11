//! 256-bin histograms with shared-memory privatized atomics.
//!
//! Each warp owns a private copy of the bins in shared memory, so warps never contend with
//! each other; at the end the block sums its copies and adds them to the global histogram
//! with one atomic per non-empty bin. Within a thread, runs of equal values are counted in a
//! register and flushed with one atomic per run: on a constant image that turns one atomic
//! per byte into one per thread, which is what keeps the worst case near the random case.
//!
//! Shared memory needed: `cuimg_abi::histogram::shared_bytes(channels)`.

use crate::common::batch_image;
use crate::device::atomic;
use crate::device::shared;
use crate::device::thread::{
    block_stride, grid_size, grid_stride_1d, grid_stride_x, grid_stride_y, index_1d, sync_threads, warp_id,
};
use crate::device::vector;
use cuimg_abi::histogram::{HistogramBatch, HistogramFlat, HistogramLuma, HistogramLumaBatch, HistogramPitched};

/// A run of equal values for one channel, flushed to the warp's bins when the value changes.
#[derive(Clone, Copy)]
pub struct Run {
    pub value: u32,
    pub count: u32,
}

impl Run {
    pub const EMPTY: Run = Run { value: 0, count: 0 };

    /// # Safety
    /// `bins` points at 256 shared `u32` owned by this thread's warp.
    #[inline(always)]
    pub unsafe fn push(&mut self, bins: *mut u32, v: u32) {
        if v == self.value {
            self.count += 1;
        } else {
            // SAFETY: v and self.value are bytes, so both bins are in range.
            unsafe { self.flush(bins) };
            self.value = v;
            self.count = 1;
        }
    }

    /// # Safety
    /// As for [`Run::push`].
    #[inline(always)]
    pub unsafe fn flush(&mut self, bins: *mut u32) {
        if self.count != 0 {
            // SAFETY: value < 256, so the bin is inside the warp's copy.
            unsafe { atomic::add_u32(bins.add(self.value as usize), self.count) };
        }
        self.count = 0;
    }
}

/// Zeroes the block's private bins. Block-uniform; ends with a barrier.
///
/// # Safety
/// The launch provides `warps * 256 * channels * 4` bytes of dynamic shared memory.
#[inline(always)]
pub(crate) unsafe fn zero_bins(channels: u32) -> *mut u32 {
    let sh = shared::dynamic::<u32>();
    let total = crate::device::thread::block_size() / 32 * 256 * channels;
    for i in block_stride(total) {
        // SAFETY: i < total, the shared allocation's length.
        unsafe { *sh.add(i as usize) = 0 };
    }
    sync_threads();
    sh
}

/// This warp's private bins for `channel`.
#[inline(always)]
pub(crate) fn warp_bins(sh: *mut u32, channels: u32, channel: u32) -> *mut u32 {
    sh.wrapping_add(((warp_id() * channels + channel) * 256) as usize)
}

/// Sums the warps' copies and adds them to `hist[channel * 256 + bin]`. Block-uniform.
///
/// # Safety
/// `hist` holds `256 * channels` u32; the bins were filled by this block.
#[inline(always)]
pub(crate) unsafe fn merge_bins(sh: *mut u32, channels: u32, hist: *mut u32) {
    sync_threads();
    let warps = crate::device::thread::block_size() / 32;
    for bin in block_stride(256 * channels) {
        let mut sum = 0;
        for w in 0..warps {
            // SAFETY: w * 256 * channels + bin is inside the shared bins.
            sum += unsafe { *sh.add((w * 256 * channels) as usize + bin as usize) };
        }
        if sum != 0 {
            // SAFETY: bin < 256 * channels, the length of `hist`.
            unsafe { atomic::add_u32(hist.add(bin as usize), sum) };
        }
    }
}

/// Contiguous pixels of `C` interleaved channels; 16 pixels (`C` vectors) per step.
///
/// # Safety
/// `src` holds `n * C` bytes, 16-byte aligned; `hist` holds `256 * C` u32; 1-D launch with
/// the shared memory of the module note.
#[inline(always)]
unsafe fn histogram_flat<const C: usize>(src: *const u8, n: u64, hist: *mut u32) {
    // SAFETY: the launch contract.
    let sh = unsafe { zero_bins(C as u32) };
    let mut bins = [core::ptr::null_mut(); C];
    for (c, b) in bins.iter_mut().enumerate() {
        *b = warp_bins(sh, C as u32, c as u32);
    }
    let mut runs = [Run::EMPTY; C];
    let groups = n / 16;
    for g in grid_stride_1d(groups) {
        // SAFETY: group g < n / 16 lies inside the n*C bytes.
        let words = unsafe { vector::load_group::<C>(src, g) };
        for i in 0..16 * C {
            let v = (words[i / 4] >> (8 * (i % 4))) & 0xff;
            // SAFETY: bins[i % C] is this warp's copy for that channel.
            unsafe { runs[i % C].push(bins[i % C], v) };
        }
    }
    let i = groups * 16 + index_1d();
    if i < n {
        for c in 0..C {
            // SAFETY: pixel i < n is inside the source.
            let v = unsafe { *src.add(i as usize * C + c) } as u32;
            // SAFETY: as above.
            unsafe { runs[c].push(bins[c], v) };
        }
    }
    for c in 0..C {
        // SAFETY: as above.
        unsafe { runs[c].flush(bins[c]) };
    }
    // SAFETY: the launch contract.
    unsafe { merge_bins(sh, C as u32, hist) };
}

/// Counts one 16-byte vector: as a run when its bytes are all equal, else byte by byte.
///
/// # Safety
/// `bins` points at this warp's 256 shared bins.
#[inline(always)]
pub(crate) unsafe fn count_vector(bins: *mut u32, run: &mut Run, x: u128) {
    let w = [x as u32, (x >> 32) as u32, (x >> 64) as u32, (x >> 96) as u32];
    let splat = (w[0] & 0xff) * 0x0101_0101;
    if w[0] == splat && w[1] == splat && w[2] == splat && w[3] == splat {
        let b = w[0] & 0xff;
        if b == run.value {
            run.count += 16;
        } else {
            // SAFETY: the caller's contract.
            unsafe { run.flush(bins) };
            *run = Run { value: b, count: 16 };
        }
    } else {
        for j in 0..16 {
            let byte = (w[j / 4] >> (8 * (j % 4))) & 0xff;
            // SAFETY: a byte indexes one of the 256 bins.
            unsafe { atomic::add_u32(bins.add(byte as usize), 1) };
        }
    }
}

/// Gray8, contiguous: per-warp bins, one shared atomic per byte, except that a 16-byte
/// vector whose bytes are all equal counts as one run (one compare per word).
///
/// The generic kernel tracks runs byte by byte, about 8 instructions per byte on random
/// data, and was issue-bound there (0.32 of copy bandwidth on an H100); per-byte atomics
/// cost about 3. A lane-private-counter version without atomics was slower still (0.18):
/// its 16 KiB of counters per warp capped occupancy at 19%, and each byte became a
/// dependent load-add-store. Uniform vectors keep constant images off the atomics.
///
/// # Safety
/// `src` holds `n` bytes, 16-byte aligned; `hist` holds 256 u32; 1-D launch with
/// `warps_per_block * 256 * 4` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_c1_flat(p: HistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { histogram_gray(p.src.ptr(), p.n, p.hist.ptr()) }
}
abi!(cuimg_abi::histogram::HistogramC1Flat, histogram_c1_flat);

/// The body of [`histogram_c1_flat`], for the batch kernel too.
///
/// # Safety
/// As for [`histogram_c1_flat`]; 1-D over x (any `gridDim.z`).
#[inline(always)]
pub(crate) unsafe fn histogram_gray(src: *const u8, n: u64, hist: *mut u32) {
    // SAFETY: the launch contract.
    let sh = unsafe { zero_bins(1) };
    let bins = warp_bins(sh, 1, 0);
    let mut run = Run::EMPTY;
    let vectors = n / 16;
    let v = src as *const u128;
    let step = grid_size();
    let mut base = index_1d();
    // Two vectors in flight per thread; `u128` loads (scalars to LLVM: two `V16` aggregates
    // chosen under a condition went to local memory).
    while base + step < vectors {
        // SAFETY: base < base + step < vectors.
        let (a, b) = unsafe { (*v.add(base as usize), *v.add((base + step) as usize)) };
        // SAFETY: `bins` is this warp's copy.
        unsafe {
            count_vector(bins, &mut run, a);
            count_vector(bins, &mut run, b);
        }
        base += 2 * step;
    }
    if base < vectors {
        // SAFETY: base < vectors; `bins` is this warp's copy.
        unsafe { count_vector(bins, &mut run, *v.add(base as usize)) };
    }
    let i = vectors * 16 + index_1d();
    if i < n {
        // SAFETY: i < n; a byte indexes one of the bins.
        unsafe { atomic::add_u32(bins.add(*src.add(i as usize) as usize), 1) };
    }
    // SAFETY: as above.
    unsafe { run.flush(bins) };
    // SAFETY: the launch contract.
    unsafe { merge_bins(sh, 1, hist) };
}

/// Gray8, contiguous, through the generic run-tracking kernel: the previous gray kernel,
/// kept so the benchmark can compare the two on the same GPU.
///
/// # Safety
/// See [`histogram_flat`] with `C = 1`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_c1_runs(p: HistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { histogram_flat::<1>(p.src.ptr(), p.n, p.hist.ptr()) }
}
abi!(cuimg_abi::histogram::HistogramC1Runs, histogram_c1_runs);

/// Gray + alpha, contiguous. See [`histogram_flat`].
///
/// # Safety
/// See [`histogram_flat`] with `C = 2`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_c2_flat(p: HistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { histogram_flat::<2>(p.src.ptr(), p.n, p.hist.ptr()) }
}
abi!(cuimg_abi::histogram::HistogramC2Flat, histogram_c2_flat);

/// RGB8-like, contiguous. See [`histogram_flat`].
///
/// # Safety
/// See [`histogram_flat`] with `C = 3`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_c3_flat(p: HistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { histogram_flat::<3>(p.src.ptr(), p.n, p.hist.ptr()) }
}
abi!(cuimg_abi::histogram::HistogramC3Flat, histogram_c3_flat);

/// RGBA8-like, contiguous. See [`histogram_flat`].
///
/// # Safety
/// See [`histogram_flat`] with `C = 4`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_c4_flat(p: HistogramFlat) {
    // SAFETY: forwarded contract.
    unsafe { histogram_flat::<4>(p.src.ptr(), p.n, p.hist.ptr()) }
}
abi!(cuimg_abi::histogram::HistogramC4Flat, histogram_c4_flat);

/// Any pitch or ROI: byte `x` of row `y` (at `src + y * pitch + x`) counts for channel
/// `x % channels`.
///
/// # Safety
/// Rows `0..height` of `row_bytes` bytes each are readable; `hist` holds `256 * channels`
/// u32; `channels` is 1..=4; 2-D launch with the shared memory of the module note.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_pitched(p: HistogramPitched) {
    let HistogramPitched { src, pitch, row_bytes, height, hist, channels } = p;
    let (src, hist) = (src.ptr(), hist.ptr());
    // SAFETY: the launch contract.
    let sh = unsafe { zero_bins(channels) };
    let mine = warp_bins(sh, channels, 0);
    for y in grid_stride_y(height) {
        for x in grid_stride_x(row_bytes) {
            // SAFETY: (x, y) is inside the view.
            let v = unsafe { *src.add((y * pitch + x) as usize) } as usize;
            let c = (x % channels as u64) as usize;
            // SAFETY: c < channels, v < 256: inside this warp's copy.
            unsafe { atomic::add_u32(mine.add(c * 256 + v), 1) };
        }
    }
    // SAFETY: the launch contract.
    unsafe { merge_bins(sh, channels, hist) };
}

abi!(cuimg_abi::histogram::HistogramPitchedKernel, histogram_pitched);

/// The histogram of the luma (`Weights::luma` applied to the bytes at offsets `rgb`) of interleaved pixels of `channels` bytes; the first step of equalizing
/// a color image on its luma.
///
/// # Safety
/// Rows `0..height` of `width * channels` bytes each are readable; `hist` holds 256 u32;
/// 2-D launch with the shared memory of the module note for one channel.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_luma_pitched(p: HistogramLuma) {
    // SAFETY: forwarded contract.
    unsafe { luma_histogram(p) }
}
abi!(cuimg_abi::histogram::HistogramLumaKernel, histogram_luma_pitched);

/// The body of [`histogram_luma_pitched`], for the batch kernel too.
///
/// # Safety
/// As for [`histogram_luma_pitched`]; 2-D over x and y (any `gridDim.z`).
#[inline(always)]
unsafe fn luma_histogram(p: HistogramLuma) {
    let HistogramLuma { src, pitch, width, height, channels, rgb: [ri, gi, bi], weights: w, hist } = p;
    let (src, hist) = (src.ptr(), hist.ptr());
    // SAFETY: the launch contract.
    let sh = unsafe { zero_bins(1) };
    let mine = warp_bins(sh, 1, 0);
    for y in grid_stride_y(height) {
        for x in grid_stride_x(width) {
            let p = (y * pitch + x * channels) as usize;
            // SAFETY: pixel (x, y) is inside the view.
            let v = unsafe {
                w.luma(
                    *src.add(p + ri as usize) as u32,
                    *src.add(p + gi as usize) as u32,
                    *src.add(p + bi as usize) as u32,
                )
            };
            // SAFETY: v < 256.
            unsafe { atomic::add_u32(mine.add(v as usize), 1) };
        }
    }
    // SAFETY: the launch contract.
    unsafe { merge_bins(sh, 1, hist) };
}

/// The bins of image `blockIdx.z` of a batch: `hist + z * 256 * channels`.
#[inline(always)]
fn batch_bins(hist: cuimg_abi::DevPtrMut<u32>, channels: u64) -> *mut u32 {
    hist.ptr().wrapping_add((crate::device::thread::block_idx_z() as u64 * 256 * channels) as usize)
}

macro_rules! histogram_batch {
    ($name:ident, $marker:ident, $c:literal, $body:ident) => {
        /// Histograms of a batch, one per image: image `blockIdx.z` into its own bins.
        ///
        /// # Safety
        /// `src` holds `gridDim.z` entries with `channels * width * height` source
        /// bytes, 16-byte aligned; `hist` holds `gridDim.z * 256 * channels` u32; 1-D over x
        /// with `histogram::shared_bytes(channels)` bytes of shared memory.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: HistogramBatch) {
            // SAFETY: forwarded contract.
            unsafe {
                let (src, width, height) = batch_image(p.src);
                $body(src, width * height, batch_bins(p.hist, $c))
            }
        }
        abi!(cuimg_abi::histogram::$marker, $name);
    };
}

histogram_batch!(histogram_c1_batch, HistogramC1Batch, 1, histogram_gray);
histogram_batch!(histogram_c2_batch, HistogramC2Batch, 2, histogram_flat_2);
histogram_batch!(histogram_c3_batch, HistogramC3Batch, 3, histogram_flat_3);
histogram_batch!(histogram_c4_batch, HistogramC4Batch, 4, histogram_flat_4);

/// [`histogram_flat`] by channel count, as plain functions for [`histogram_batch!`].
///
/// # Safety
/// As for [`histogram_flat`].
#[inline(always)]
unsafe fn histogram_flat_2(src: *const u8, n: u64, hist: *mut u32) {
    // SAFETY: forwarded contract.
    unsafe { histogram_flat::<2>(src, n, hist) }
}

/// # Safety
/// As for [`histogram_flat`].
#[inline(always)]
unsafe fn histogram_flat_3(src: *const u8, n: u64, hist: *mut u32) {
    // SAFETY: forwarded contract.
    unsafe { histogram_flat::<3>(src, n, hist) }
}

/// # Safety
/// As for [`histogram_flat`].
#[inline(always)]
unsafe fn histogram_flat_4(src: *const u8, n: u64, hist: *mut u32) {
    // SAFETY: forwarded contract.
    unsafe { histogram_flat::<4>(src, n, hist) }
}

/// Luma histograms of a color batch: image `blockIdx.z` into `hist + z * 256`.
///
/// # Safety
/// `src` holds `gridDim.z` entries with `channels * width * height` source bytes;
/// `rgb` are offsets below `channels`; `hist` holds `gridDim.z * 256` u32; 2-D over x and y
/// with `histogram::shared_bytes(1)` bytes of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn histogram_luma_batch(p: HistogramLumaBatch) {
    // SAFETY: the launch contract.
    let (src, width, height) = unsafe { batch_image(p.src) };
    let one = HistogramLuma {
        src: cuimg_abi::DevPtr::new(src as u64),
        pitch: width * p.channels,
        width,
        height,
        channels: p.channels,
        rgb: p.rgb,
        weights: p.weights,
        hist: cuimg_abi::DevPtrMut::new(batch_bins(p.hist, 1) as u64),
    };
    // SAFETY: image z's pixels and bins, as `luma_histogram` requires.
    unsafe { luma_histogram(one) }
}
abi!(cuimg_abi::histogram::HistogramLumaBatchKernel, histogram_luma_batch);
