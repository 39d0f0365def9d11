//! Resizing: the host's tables run per output pixel (see `cuimg_abi::resize`). One thread
//! per output pixel of job `blockIdx.z`, all its channels; every source index is clamped
//! into its image, so the tables decide what is read, never whether it is in bounds.
//! The arithmetic is the CPU reference's (`host/src/ops/resize/exec.rs`): wrapping integer
//! sums, and for OpenCV's cubic and area paths f32 products and sums in its order (rustc
//! contracts none of them into fused multiply-adds).

use crate::device::thread::{block_idx_z, grid_stride_x, grid_stride_y};
use cuimg_abi::resize::{Plane, ResizeArea, ResizeCells, ResizeGather, ResizeJob, ResizePillow, ResizeSeparable};

/// Job `blockIdx.z`.
///
/// # Safety
/// `jobs` holds more than `blockIdx.z` entries.
#[inline(always)]
unsafe fn job(jobs: *const ResizeJob) -> ResizeJob {
    // SAFETY: the caller's contract.
    unsafe { *jobs.add(block_idx_z() as usize) }
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

/// `saturate_cast<uchar>(float)`: nearest, ties to even, then clamped.
#[inline(always)]
fn round_u8(v: f32) -> u8 {
    core::f32::math::round_ties_even(v).clamp(0.0, 255.0) as u8
}

/// Nearest neighbour (see [`ResizeGather`]).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; `p.ints` holds each job's `dst.width`
/// column indices at `job.x` and `dst.height` row indices at `job.y`.
#[inline(always)]
unsafe fn gather<const C: usize>(p: ResizeGather) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(p.jobs.ptr()) };
    let ints = p.ints.ptr();
    for y in grid_stride_y(j.dst.height as u64) {
        // SAFETY: row index `y` of the job's table.
        let sy = unsafe { *ints.add(j.y as usize + y as usize) };
        for x in grid_stride_x(j.dst.width as u64) {
            // SAFETY: column index `x` of the job's table.
            let sx = unsafe { *ints.add(j.x as usize + x as usize) };
            let outside = sx == u32::MAX || sy == u32::MAX;
            let (sx, sy) = (clamp(sx as i64, j.src.width), clamp(sy as i64, j.src.height));
            for c in 0..C {
                // SAFETY: (sx, sy) clamped into the source; (x, y) in the output.
                unsafe {
                    let v = if outside { 0 } else { at::<C>(j.src, sx, sy, c) };
                    put::<C>(j.dst, x, y, c, v);
                }
            }
        }
    }
}

/// The most taps of a separable plan (Lanczos-4). Every loop over taps runs to it, with
/// the unused taps weighted 0: fixed bounds unroll, so the arrays stay in registers.
const MAX_TAPS: usize = 8;

/// OpenCV's vertical rules (`VResize*<uchar>`), on the weighted rows `s` of element `e`
/// (unused taps 0).
#[inline(always)]
fn vertical(rule: u32, s: &[i32; MAX_TAPS], b: &[i32; MAX_TAPS], e: u32, vector_elems: u32) -> u8 {
    let int = || {
        let mut v = 0i32;
        for k in 0..MAX_TAPS {
            v = v.wrapping_add(s[k].wrapping_mul(b[k]));
        }
        v
    };
    match rule {
        0 => ((((b[0] * (s[0] >> 4)) >> 16) + ((b[1] * (s[1] >> 4)) >> 16) + 2) >> 2).clamp(0, 255) as u8,
        3 => ((int() as i64 + (1 << 15)) >> 16).clamp(0, 255) as u8,
        1 if e < vector_elems => {
            // OpenCV's vector form: each weight over 2^22 in float, the products summed as
            // S0*b0 + (S1*b1 + (S2*b2 + S3*b3)).
            let scale = 1.0f32 / (2048.0 * 2048.0);
            let f = |k: usize| s[k] as f32 * (b[k] as f32 * scale);
            round_u8(f(0) + (f(1) + (f(2) + f(3))))
        }
        _ => (int().wrapping_add(1 << 21) >> 22).clamp(0, 255) as u8,
    }
}

/// OpenCV's separable fixed point (see [`ResizeSeparable`]).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; the tables hold, at each job's offsets,
/// `dst.width` first columns and `dst.width * x_taps` weights, `dst.height` first rows and
/// `dst.height * y_taps` weights; `x_taps` and `y_taps` are at most [`MAX_TAPS`].
#[inline(always)]
unsafe fn separable<const C: usize>(p: ResizeSeparable) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(p.jobs.ptr()) };
    let (ints, shorts) = (p.ints.ptr(), p.shorts.ptr());
    let (xt, yt) = (p.x_taps as usize, p.y_taps as usize);
    for y in grid_stride_y(j.dst.height as u64) {
        let mut rows = [0u64; MAX_TAPS];
        let mut b = [0i32; MAX_TAPS];
        // SAFETY: row `y`'s first row in the job's table.
        let first_row = unsafe { *ints.add(j.y as usize + y as usize) } as i64;
        for k in 0..MAX_TAPS {
            rows[k] = clamp(first_row + k as i64, j.src.height);
            if k < yt {
                // SAFETY: row `y`'s weights in the job's table.
                b[k] = unsafe { *shorts.add(j.yw as usize + y as usize * yt + k) } as i32;
            }
        }
        for x in grid_stride_x(j.dst.width as u64) {
            // SAFETY: column `x`'s entries of the job's tables.
            let first = unsafe { *ints.add(j.x as usize + x as usize) } as i64;
            let mut a = [0i32; MAX_TAPS];
            let mut cols = [0u64; MAX_TAPS];
            for i in 0..MAX_TAPS {
                cols[i] = clamp(first + i as i64, j.src.width);
                if i < xt {
                    // SAFETY: as above.
                    a[i] = unsafe { *shorts.add(j.xw as usize + x as usize * xt + i) } as i32;
                }
            }
            for c in 0..C {
                let mut s = [0i32; MAX_TAPS];
                for k in 0..MAX_TAPS {
                    if k < yt {
                        let mut v = 0i32;
                        for i in 0..MAX_TAPS {
                            if i < xt {
                                // SAFETY: (cols[i], rows[k]) clamped into the source.
                                let px = unsafe { at::<C>(j.src, cols[i], rows[k], c) } as i32;
                                v = v.wrapping_add(px.wrapping_mul(a[i]));
                            }
                        }
                        s[k] = v;
                    }
                }
                let e = x as u32 * C as u32 + c as u32;
                // SAFETY: (x, y) in the output.
                unsafe { put::<C>(j.dst, x, y, c, vertical(p.rule, &s, &b, e, j.extra)) };
            }
        }
    }
}

/// OpenCV's integer-factor area (see [`ResizeCells`]).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes.
#[inline(always)]
unsafe fn cells<const C: usize>(p: ResizeCells) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(p.jobs.ptr()) };
    let (fx, fy) = (j.x as u64, j.y as u64);
    let scale = 1.0f32 / (fx * fy) as f32;
    for y in grid_stride_y(j.dst.height as u64) {
        for x in grid_stride_x(j.dst.width as u64) {
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

/// OpenCV's area average in float (see [`ResizeArea`]).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; the tables hold each job's lists as
/// [`ResizeArea`] describes, the starts ascending.
#[inline(always)]
unsafe fn area<const C: usize>(p: ResizeArea) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(p.jobs.ptr()) };
    let (ints, floats) = (p.ints.ptr(), p.floats.ptr());
    let (xs, ys) = (j.x as usize, j.y as usize);
    let (xi, yi) = (xs + j.dst.width as usize + 1, ys + j.dst.height as usize + 1);
    for y in grid_stride_y(j.dst.height as u64) {
        // SAFETY: row `y`'s start and the next, in the job's table.
        let (y0, y1) = unsafe { (*ints.add(ys + y as usize), *ints.add(ys + y as usize + 1)) };
        for x in grid_stride_x(j.dst.width as u64) {
            // SAFETY: as above, for column `x`.
            let (x0, x1) = unsafe { (*ints.add(xs + x as usize), *ints.add(xs + x as usize + 1)) };
            for c in 0..C {
                let mut sum = 0f32;
                for r in y0..y1 {
                    // SAFETY: entry `r` of the job's row list.
                    let (sy, beta) = unsafe { (*ints.add(yi + r as usize), *floats.add(j.yw as usize + r as usize)) };
                    let sy = clamp(sy as i64, j.src.height);
                    let mut buf = 0f32;
                    for i in x0..x1 {
                        // SAFETY: entry `i` of the job's column list; the index clamped.
                        unsafe {
                            let sx = clamp(*ints.add(xi + i as usize) as i64, j.src.width);
                            buf += at::<C>(j.src, sx, sy, c) as f32 * *floats.add(j.xw as usize + i as usize);
                        }
                    }
                    sum = if r == y0 { beta * buf } else { sum + beta * buf };
                }
                // SAFETY: (x, y) in the output.
                unsafe { put::<C>(j.dst, x, y, c, round_u8(sum)) };
            }
        }
    }
}

/// Pillow's `MULDIV255`.
#[inline(always)]
fn muldiv255(a: u32, b: u32) -> u32 {
    let t = a * b + 128;
    ((t >> 8) + t) >> 8
}

/// One of Pillow's passes (see [`ResizePillow`]).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; the tables hold, at each job's offsets,
/// one first index per output index along the pass and `job.y` weights each.
#[inline(always)]
unsafe fn pillow<const C: usize>(p: ResizePillow) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(p.jobs.ptr()) };
    let (ints, weights) = (p.ints.ptr(), p.weights.ptr());
    let taps = j.y as usize;
    let read = |x: u64, y: u64, c: usize| -> i32 {
        // SAFETY: callers clamp (x, y) into the source.
        unsafe {
            let v = at::<C>(j.src, x, y, c) as u32;
            if p.premultiply != 0 && c + 1 < C {
                muldiv255(v, at::<C>(j.src, x, y, C - 1) as u32) as i32
            } else {
                v as i32
            }
        }
    };
    for y in grid_stride_y(j.dst.height as u64) {
        for x in grid_stride_x(j.dst.width as u64) {
            // The pixel's channels packed in a word (an array indexed in the loop over
            // channels would live in local memory).
            let mut px = 0u32;
            for c in 0..C {
                let mut ss = 1i32 << 21;
                let i = if p.horizontal != 0 { x } else { y } as usize;
                // SAFETY: output index `i`'s entries of the job's tables.
                let first = unsafe { *ints.add(j.x as usize + i) } as i64;
                for k in 0..taps {
                    // SAFETY: as above.
                    let w = unsafe { *weights.add(j.xw as usize + i * taps + k) };
                    let v = if p.horizontal != 0 {
                        read(clamp(first + k as i64, j.src.width), clamp((y + j.extra as u64) as i64, j.src.height), c)
                    } else {
                        read(x, clamp(first - j.extra as i64 + k as i64, j.src.height), c)
                    };
                    ss = ss.wrapping_add(v.wrapping_mul(w));
                }
                px |= ((ss >> 22).clamp(0, 255) as u32) << (8 * c);
            }
            let a = px >> (8 * (C - 1)) & 0xFF;
            for c in 0..C {
                let mut v = px >> (8 * c) & 0xFF;
                if p.divide != 0 && c + 1 < C && a != 0 && a != 255 {
                    v = (255 * v / a).min(255);
                }
                // SAFETY: (x, y) in the output.
                unsafe { put::<C>(j.dst, x, y, c, v as u8) };
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
    separable,
    ResizeSeparable,
    [resize_separable_c1, ResizeSeparableC1, 1],
    [resize_separable_c2, ResizeSeparableC2, 2],
    [resize_separable_c3, ResizeSeparableC3, 3],
    [resize_separable_c4, ResizeSeparableC4, 4]
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
resize_kernels!(
    pillow,
    ResizePillow,
    [resize_pillow_c1, ResizePillowC1, 1],
    [resize_pillow_c2, ResizePillowC2, 2],
    [resize_pillow_c3, ResizePillowC3, 3],
    [resize_pillow_c4, ResizePillowC4, 4]
);
