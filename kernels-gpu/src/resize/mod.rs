//! Resizing: the host's tables run per output pixel (see `cuimg_abi::resize`). One thread
//! per output pixel of job `blockIdx.z`, all its channels; every source index is clamped
//! into its image, so the tables decide what is read, never whether it is in bounds.
//! The arithmetic is the CPU reference's (`host/src/ops/resize/exec.rs`): wrapping integer
//! sums, and for OpenCV's cubic and area paths f32 products and sums in its order (rustc
//! contracts none of them into fused multiply-adds).

use crate::device::thread::{block_idx_z, grid_stride_x, grid_stride_y};
use cuimg_abi::resize::{Jobs, Plane, ResizeArea, ResizeCells, ResizeGather, ResizeJob};

/// Job `blockIdx.z` of the launch's list, or its one job (see [`Jobs`]).
///
/// # Safety
/// A non-null `jobs.list` holds more than `blockIdx.z` entries.
#[inline(always)]
unsafe fn job(jobs: &Jobs) -> ResizeJob {
    if jobs.list.is_null() {
        jobs.one
    } else {
        // SAFETY: the caller's contract.
        unsafe { *jobs.list.ptr().add(block_idx_z() as usize) }
    }
}

/// `i` clamped into `0..len` (`len` is at least 1; written without `clamp`, whose check of
/// its bounds would bring a panic path, and its stack, into every kernel).
#[inline(always)]
fn clamp(i: i64, len: u32) -> u64 {
    let last = len as i64 - 1;
    if i < 0 {
        0
    } else if i > last {
        last as u64
    } else {
        i as u64
    }
}

/// [`clamp`] of the tables' `i32` indices, in 32 bits: the same index for every `i32` and
/// length (64-bit compares took three instructions each).
#[inline(always)]
fn clamp32(i: i32, len: u32) -> u32 {
    let last = (len.max(1) - 1).min(i32::MAX as u32) as i32;
    i.min(last).max(0) as u32
}

/// The thread layout of a tile's output (phase 2 of the tiled kernels), the tile's columns
/// from `x0` of an output `dw` wide: thread `t` makes pixels `xs .. xs + 4` of the tile's
/// rows `yl`, `yl + step`, and so on. The tile's groups of 4 columns (16 in a whole tile)
/// take the next power of two of lanes, so that a narrower tile (224 columns are 3.5 tiles:
/// the last has 8 groups) puts every lane on its pixels, more rows at once, where 16 lanes a
/// row left half of each warp idle.
#[inline(always)]
fn out_layout(t: u32, x0: u32, dw: u32) -> (u32, u32, u32) {
    let groups = (dw - x0).min(cuimg_abi::resize::SEPARABLE_TILE_W).div_ceil(4);
    let lg = 32 - (groups.max(1) - 1).leading_zeros();
    (x0 + 4 * (t & ((1 << lg) - 1)), t >> lg, cuimg_abi::resize::SEPARABLE_THREADS >> lg)
}

/// Byte `c` of pixel `x` of row `y` of `p`.
///
/// # Safety
/// `p` describes readable memory and `(x, y)` lies in it; `c` is below its channels.
#[inline(always)]
unsafe fn at<const C: usize>(p: Plane, x: u64, y: u64, c: usize) -> u8 {
    // SAFETY: the caller's contract.
    unsafe { *(p.data as usize as *const u8).add((y * p.pitch + x * C as u64) as usize + c) }
}

/// Writes byte `c` of pixel `x` of row `y` of `p`.
///
/// # Safety
/// As [`at`], for writable memory.
#[inline(always)]
unsafe fn put<const C: usize>(p: Plane, x: u64, y: u64, c: usize, v: u8) {
    // SAFETY: the caller's contract.
    unsafe { *(p.data as usize as *mut u8).add((y * p.pitch + x * C as u64) as usize + c) = v }
}

/// The letterbox around the job's output (see [`ResizeJob`]): `fill` written to each pixel
/// of `outer` outside `dst`, by the same launch that writes `dst`.
///
/// # Safety
/// Where `j.outer.data` is not 0, it describes writable memory that holds `j.dst` at
/// (`left`, `top`).
#[inline(always)]
unsafe fn frame<const C: usize>(j: &ResizeJob) {
    if j.outer.data == 0 {
        return;
    }
    let (l, t) = (j.left as u64, j.top as u64);
    let (r, b) = (l + j.dst.width as u64, t + j.dst.height as u64);
    for y in grid_stride_y(j.outer.height as u64) {
        let rows = y >= t && y < b;
        for x in grid_stride_x(j.outer.width as u64) {
            if rows && x >= l && x < r {
                continue;
            }
            for c in 0..C {
                // SAFETY: (x, y) in the frame (the caller's contract).
                unsafe { put::<C>(j.outer, x, y, c, (j.fill >> (8 * c)) as u8) };
            }
        }
    }
}

/// `saturate_cast<uchar>(float)`: nearest, ties to even, then clamped (NaN to 0, as
/// `round_ties_even(v).clamp(0.0, 255.0) as u8` gives). One `cvt.rni.sat.u8.f32` (on Hopper
/// one `F2IP`), where LLVM made seven instructions of that expression: a round, a NaN test
/// and select, three min/max and a conversion.
#[inline(always)]
fn round_u8(v: f32) -> u8 {
    let d: u32;
    // SAFETY: register arithmetic only.
    unsafe {
        core::arch::asm!(
            "cvt.rni.sat.u8.f32 {d}, {v};",
            d = out(reg32) d, v = in(reg32) v,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    d as u8
}

/// Nearest neighbour (see [`ResizeGather`]).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; `p.ints` holds each job's `dst.width`
/// column indices at `job.x` and `dst.height` row indices at `job.y`.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn gather<const C: usize>(p: ResizeGather) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { frame::<C>(&j) };
    let ints = p.ints.ptr();
    let dw = j.dst.width as u64;
    // Four pixels side by side make `C` whole 4-byte words: written as words where the
    // output's rows are aligned, else byte by byte.
    let aligned = (j.dst.data | j.dst.pitch) % 4 == 0;
    const _: () = assert!(GATHER_PER_THREAD == 4, "store4 writes four pixels");
    for y in grid_stride_y(j.dst.height as u64) {
        // SAFETY: row index `y` of the job's table.
        let sy = unsafe { *ints.add(j.y as usize + y as usize) };
        let row_outside = sy == u32::MAX;
        let sy = clamp(sy as i64, j.src.height);
        for g in grid_stride_x(dw.div_ceil(GATHER_PER_THREAD)) {
            let x0 = g * GATHER_PER_THREAD;
            let n = GATHER_PER_THREAD.min(dw - x0);
            let mut words = [0u32; C];
            for i in 0..GATHER_PER_THREAD as usize {
                if (i as u64) < n {
                    // SAFETY: column index `x0 + i` of the job's table.
                    let sx = unsafe { *ints.add(j.x as usize + x0 as usize + i) };
                    let outside = row_outside || sx == u32::MAX;
                    let sx = clamp(sx as i64, j.src.width);
                    for c in 0..C {
                        // SAFETY: (sx, sy) clamped into the source.
                        let v = if outside { 0 } else { unsafe { at::<C>(j.src, sx, sy, c) } } as u32;
                        let k = i * C + c;
                        words[k / 4] |= v << (8 * (k % 4));
                    }
                }
            }
            // SAFETY: pixels x0 .. x0 + n of row y are in the output; `aligned` checked its
            // data and pitch.
            unsafe { store4::<C>(j.dst, x0, y, n, &words, aligned) };
        }
    }
}

/// Four output pixels' bytes, pixel `q`'s channel `c` at byte `q * C + c` of `words`
/// (little-endian), written at `(x0, y)`, the first `n` of them: as `C` aligned words where
/// `aligned` and all four are there, else byte by byte.
///
/// # Safety
/// `dst` describes writable memory holding pixels `x0 .. x0 + n` of row `y`; where
/// `aligned`, its data and pitch are multiples of 4.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn store4<const C: usize>(dst: Plane, x0: u64, y: u64, n: u64, words: &[u32; C], aligned: bool) {
    if aligned && n == 4 {
        let out = (dst.data + y * dst.pitch + x0 * C as u64) as usize as *mut u32;
        for w in 0..C {
            // SAFETY: 4-byte aligned (the caller's word), the four pixels inside the row.
            unsafe { *out.add(w) = words[w] };
        }
    } else {
        // (Every index constant after unrolling, with the count checked inside: `words`
        // stays in registers.)
        for q in 0..4 {
            if (q as u64) < n {
                for c in 0..C {
                    let k = q * C + c;
                    // SAFETY: (x0 + q, y) in the output (the caller's word).
                    unsafe { put::<C>(dst, x0 + q as u64, y, c, (words[k / 4] >> (8 * (k % 4))) as u8) };
                }
            }
        }
    }
}

/// Output pixels each thread of the gather kernels makes, side by side.
pub const GATHER_PER_THREAD: u64 = cuimg_abi::resize::GATHER_PER_THREAD as u64;

/// Output pixels each thread of the cells kernel makes, side by side.
pub const CELLS_PER_THREAD: u64 = cuimg_abi::resize::CELLS_PER_THREAD as u64;

/// Byte `k` of `words`, little-endian (constant `k` after unrolling: a shift and a mask).
#[inline(always)]
fn byte_of<const N: usize>(words: &[u64; N], k: usize) -> u32 {
    (words[k / 8] >> (8 * (k % 8))) as u32 & 0xFF
}

/// OpenCV's halving of `CELLS_PER_THREAD` pixels side by side at output `(x0, y)`: each
/// output byte `(a + b + c + d + 2) >> 2` of its 2x2 cell, read as `C` aligned 8-byte words
/// per source row and written as `C` aligned 4-byte words.
///
/// # Safety
/// The job's source and destination rows start 8- and 4-byte aligned; the 2x2 cells of the
/// four pixels lie inside the source and the pixels inside the destination.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
unsafe fn halve4<const C: usize>(j: &ResizeJob, x0: u64, y: u64) {
    let row = |r: u64| (j.src.data + r * j.src.pitch + x0 * 2 * C as u64) as usize as *const u64;
    let (mut top, mut bottom) = ([0u64; C], [0u64; C]);
    let (r0, r1) = (row(2 * y), row(2 * y + 1));
    for w in 0..C {
        // SAFETY: 8-byte aligned words of the cells' two rows, inside the source (the
        // caller's contract).
        unsafe {
            top[w] = *r0.add(w);
            bottom[w] = *r1.add(w);
        }
    }
    let out = (j.dst.data + y * j.dst.pitch + x0 * C as u64) as usize as *mut u32;
    for w in 0..C {
        let mut word = 0u32;
        for b in 0..4 {
            // Output byte `k` is channel `k % C` of pixel `k / C`.
            let k = w * 4 + b;
            let (i, c) = (k / C, k % C);
            let (l, r) = (2 * i * C + c, (2 * i + 1) * C + c);
            let sum = byte_of(&top, l) + byte_of(&top, r) + byte_of(&bottom, l) + byte_of(&bottom, r);
            word |= ((sum + 2) >> 2) << (8 * b);
        }
        // SAFETY: 4-byte aligned, inside the destination row (the caller's contract).
        unsafe { *out.add(w) = word };
    }
}

/// OpenCV's integer-factor area (see [`ResizeCells`]): [`CELLS_PER_THREAD`] output pixels
/// per thread, halved through aligned words where the job allows it.
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes.
#[inline(always)]
unsafe fn cells<const C: usize>(p: ResizeCells) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { frame::<C>(&j) };
    let (fx, fy) = (j.x as u64, j.y as u64);
    let scale = 1.0f32 / (fx * fy) as f32;
    let (dw, sw, sh) = (j.dst.width as u64, j.src.width as u64, j.src.height as u64);
    let words = j.extra == 1
        && fx == 2
        && fy == 2
        && (j.src.data | j.src.pitch) % 8 == 0
        && (j.dst.data | j.dst.pitch) % 4 == 0;
    for y in grid_stride_y(j.dst.height as u64) {
        for g in grid_stride_x(dw.div_ceil(CELLS_PER_THREAD)) {
            let x0 = g * CELLS_PER_THREAD;
            let n = CELLS_PER_THREAD.min(dw - x0);
            if words && n == CELLS_PER_THREAD && 2 * (x0 + n) <= sw && 2 * y + 2 <= sh {
                // SAFETY: aligned rows (checked above), the cells inside the source and the
                // pixels inside the destination (checked here).
                unsafe { halve4::<C>(&j, x0, y) };
                continue;
            }
            for x in x0..x0 + n {
                for c in 0..C {
                    let mut sum = 0i32;
                    for k in 0..fy {
                        for i in 0..fx {
                            let (sx, sy) =
                                (clamp((x * fx + i) as i64, j.src.width), clamp((y * fy + k) as i64, j.src.height));
                            // SAFETY: clamped into the source.
                            sum += unsafe { at::<C>(j.src, sx, sy, c) } as i32;
                        }
                    }
                    let v = if j.extra == 1 { ((sum + 2) >> 2) as u8 } else { round_u8(sum as f32 * scale) };
                    // SAFETY: (x, y) in the output.
                    unsafe { put::<C>(j.dst, x, y, c, v) };
                }
            }
        }
    }
}

/// OpenCV's area average in float (see [`ResizeArea`]).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; the tables hold each job's lists as
/// [`ResizeArea`] describes, the starts ascending.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn area<const C: usize>(p: ResizeArea) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { frame::<C>(&j) };
    let (ints, floats) = (p.ints.ptr(), p.floats.ptr());
    let (xs, ys) = (j.x as usize, j.y as usize);
    let (xi, yi) = (xs + j.dst.width as usize + 1, ys + j.dst.height as usize + 1);
    for y in grid_stride_y(j.dst.height as u64) {
        // SAFETY: row `y`'s start and the next, in the job's table.
        let (y0, y1) = unsafe { (*ints.add(ys + y as usize), *ints.add(ys + y as usize + 1)) };
        for x in grid_stride_x(j.dst.width as u64) {
            // SAFETY: as above, for column `x`.
            let (x0, x1) = unsafe { (*ints.add(xs + x as usize), *ints.add(xs + x as usize + 1)) };
            // Every channel's sums side by side, each in OpenCV's order: the lists and
            // weights read once for all channels, and `C` independent chains in flight.
            let mut sum = [0f32; C];
            for r in y0..y1 {
                // SAFETY: entry `r` of the job's row list.
                let (sy, beta) = unsafe { (*ints.add(yi + r as usize), *floats.add(j.yw as usize + r as usize)) };
                let sy = clamp(sy as i64, j.src.height);
                let mut buf = [0f32; C];
                for i in x0..x1 {
                    // SAFETY: entry `i` of the job's column list; the index clamped.
                    let (sx, w) = unsafe {
                        (clamp(*ints.add(xi + i as usize) as i64, j.src.width), *floats.add(j.xw as usize + i as usize))
                    };
                    for c in 0..C {
                        // SAFETY: (sx, sy) clamped into the source.
                        buf[c] += unsafe { at::<C>(j.src, sx, sy, c) } as f32 * w;
                    }
                }
                for c in 0..C {
                    sum[c] = if r == y0 { beta * buf[c] } else { sum[c] + beta * buf[c] };
                }
            }
            for c in 0..C {
                // SAFETY: (x, y) in the output.
                unsafe { put::<C>(j.dst, x, y, c, round_u8(sum[c])) };
            }
        }
    }
}

macro_rules! resize_kernels {
    ($body:ident, $params:ty, $([$name:ident, $marker:ident, $c:literal]),*) => {
        $(
            /// See the function it runs; 2-D over the largest output, one job a grid layer.
            ///
            /// # Safety
            /// Its function's contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: $params) {
                // SAFETY: forwarded contract.
                unsafe { $body::<$c>(p) }
            }
            abi!(cuimg_abi::resize::$marker, $name);
        )*
    };
}

resize_kernels!(
    gather,
    ResizeGather,
    [resize_gather_c1, ResizeGatherC1, 1],
    [resize_gather_c2, ResizeGatherC2, 2],
    [resize_gather_c3, ResizeGatherC3, 3],
    [resize_gather_c4, ResizeGatherC4, 4]
);
resize_kernels!(
    cells,
    ResizeCells,
    [resize_cells_c1, ResizeCellsC1, 1],
    [resize_cells_c2, ResizeCellsC2, 2],
    [resize_cells_c3, ResizeCellsC3, 3],
    [resize_cells_c4, ResizeCellsC4, 4]
);
resize_kernels!(
    area,
    ResizeArea,
    [resize_area_c1, ResizeAreaC1, 1],
    [resize_area_c2, ResizeAreaC2, 2],
    [resize_area_c3, ResizeAreaC3, 3],
    [resize_area_c4, ResizeAreaC4, 4]
);

mod mma;
mod pillow;
mod planes;
mod separable;
mod sink;
mod source;
