//! Resizing: the host's tables run per output pixel (see `cuimg_abi::resize`). One thread
//! per output pixel of job `blockIdx.z`, all its channels; every source index is clamped
//! into its image, so the tables decide what is read, never whether it is in bounds.
//! The arithmetic is the CPU reference's (`host/src/ops/resize/exec.rs`): wrapping integer
//! sums, and for OpenCV's cubic and area paths f32 products and sums in its order (rustc
//! contracts none of them into fused multiply-adds).

use crate::device::shared;
use crate::device::thread::{
    block_idx_x, block_idx_y, block_idx_z, grid_dim_x, grid_dim_y, grid_stride_x, grid_stride_y, sync_threads,
    thread_idx_x,
};
use cuimg_abi::resize::{
    Jobs, Plane, ResizeArea, ResizeCells, ResizeGather, ResizeJob, ResizeSeparable, SEPARABLE_THREADS,
    SEPARABLE_TILE_ROWS, SEPARABLE_TILE_W,
};

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

/// One output element of OpenCV's vertical rules (`VResize*<uchar>`), built a tap at a time
/// from the last tap down (so that the right-nested float sum of the cubic's vector form
/// is one accumulator): `int`, the fixed-point sum or terms; `float`, the cubic's vector
/// form. The rule `R` is a constant (see [`ResizeSeparable`]): a rule read at run time
/// branched on every tap of every element.
#[derive(Clone, Copy)]
struct Vertical {
    int: i32,
    float: f32,
}

impl Vertical {
    const ZERO: Vertical = Vertical { int: 0, float: 0.0 };

    /// Tap `k` (taps come last to first): row sum `s` weighted `b` by rule `R`. Taps past a
    /// plan's count have weight 0 and change nothing. `VEC`: every element of this one is
    /// in the cubic's vector form, so its scalar sum is not kept.
    #[inline(always)]
    fn step<const R: u32, const VEC: bool>(&mut self, k: usize, s: i32, b: i32) {
        match R {
            // OpenCV's `VResizeLinear<uchar>`: each product of the row over 16 shifted by 16.
            0 => self.int += (b * (s >> 4)) >> 16,
            1 => {
                // OpenCV's vector form: each weight over 2^22 in float, the products summed as
                // S0*b0 + (S1*b1 + (S2*b2 + S3*b3)); the scalar form in `int`.
                if k < 4 {
                    let scale = 1.0f32 / (2048.0 * 2048.0);
                    self.float += s as f32 * (b as f32 * scale);
                }
                if !VEC {
                    self.int = self.int.wrapping_add(s.wrapping_mul(b));
                }
            }
            _ => self.int = self.int.wrapping_add(s.wrapping_mul(b)),
        }
    }

    /// The byte, for element `e` of the output row (the cubic's first `vector_elems` take
    /// the vector form; all of them where `VEC`).
    #[inline(always)]
    fn finish<const R: u32, const VEC: bool>(self, e: u32, vector_elems: u32) -> u8 {
        match R {
            0 => ((self.int + 2) >> 2).clamp(0, 255) as u8,
            // The reference's `(int as i64 + 2^15) >> 16` in 32 bits: a sum that large
            // gives 255 either way, and below it the addition cannot overflow.
            3 => ((self.int.min(0x7FFF_0000) + (1 << 15)) >> 16).clamp(0, 255) as u8,
            1 if VEC || e < vector_elems => round_u8(self.float),
            _ => (self.int.wrapping_add(1 << 21) >> 22).clamp(0, 255) as u8,
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

/// Four `i32` read as one 16-byte shared load.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Quad([i32; 4]);

/// OpenCV's separable fixed point (see [`ResizeSeparable`]), for plans of at most `T` taps
/// combined down by rule `R`, a tile of `SEPARABLE_TILE_W` columns by `p.tile_rows` rows per
/// block and iteration.
///
/// Shared memory holds the tile's row sums as `sums[(k * C + c) * SEPARABLE_TILE_W + xl]`
/// for source row `r0 + k` (clamped into the source when read), channel `c`, column `xl` of
/// the tile: consecutive lanes write consecutive words, and each thread reads its four
/// columns as one 16-byte load.
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; the tables hold, at each job's offsets,
/// `dst.width` first columns and `dst.width * x_taps` weights, `dst.height` first rows and
/// `dst.height * y_taps` weights; `x_taps` and `y_taps` are at most `T`; blocks of
/// `SEPARABLE_THREADS` threads along x; `p.tile_words` i32 of dynamic shared memory.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn separable<const C: usize, const T: usize, const R: u32>(p: ResizeSeparable) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { frame::<C>(&j) };
    // Indices are u32 (image sides are), addresses u64 only where formed: 64-bit values
    // take two registers each, and the bound of 3 blocks an SM leaves 80.
    const W: u32 = SEPARABLE_TILE_W;
    const STEP1: u32 = SEPARABLE_THREADS / W;
    let (ints, shorts) = (p.ints.ptr(), p.shorts.ptr());
    let (xt, yt) = (p.x_taps as usize, p.y_taps as usize);
    let (dw, dh) = (j.dst.width, j.dst.height);
    let rows = p.tile_rows.clamp(1, SEPARABLE_TILE_ROWS);
    const _: () = assert!(SEPARABLE_TILE_ROWS <= 2 * (SEPARABLE_THREADS / (W / 4)), "two rows a thread in phase 2");
    // The source rows the shared memory holds (the host's tile choice fits them; the bound
    // keeps every access inside it whatever the tables say).
    let cap = (p.tile_words / (W * C as u32)) as i32;
    let sums = shared::dynamic::<i32>();
    let t = thread_idx_x();
    let aligned = (j.dst.data | j.dst.pitch) % 4 == 0;
    let src = j.src.data as usize as *const u8;
    // Block-uniform tile loops: every thread of the block runs the same iterations, so the
    // barriers inside are reached by all.
    let mut ty = block_idx_y();
    while ty < dh.div_ceil(rows) {
        let y0 = ty * rows;
        let y1 = (y0 + rows).min(dh) - 1;
        // SAFETY: rows `y0` and `y1` of the job's first-row table.
        let (r0, r1) = unsafe { (*ints.add((j.y + y0) as usize), *ints.add((j.y + y1) as usize)) };
        let span = (r1 + yt as i32 - r0).min(cap);
        let mut tx = block_idx_x();
        while tx < dw.div_ceil(W) {
            let x0 = tx * W;
            // 1. The row sums: thread `t` takes column `t % W` of rows `t / W`, step `STEP1`.
            let xl = t % W;
            let x = x0 + xl;
            if x < dw {
                // SAFETY: column `x`'s entries of the job's tables.
                let first = unsafe { *ints.add((j.x + x) as usize) } as i64;
                let mut a = [0i32; T];
                let mut cols = [0u32; T];
                for i in 0..T {
                    cols[i] = clamp(first + i as i64, j.src.width) as u32 * C as u32;
                    if i < xt {
                        // SAFETY: as above.
                        a[i] = unsafe { *shorts.add(j.xw as usize + x as usize * xt + i) } as i32;
                    }
                }
                // Columns wholly inside the source are read at constant offsets from the
                // first (one address a row, not one a tap); the others through `cols`.
                let inside = first >= 0 && first + xt as i64 <= j.src.width as i64;
                // Two rows an iteration, `STEP1` apart: twice the loads in flight (the second
                // row's are clamped into the source, so they read memory even past the
                // span; its sums are kept only inside it).
                let mut k = (t / W) as i32;
                while k < span {
                    let k2 = k + STEP1 as i32;
                    // SAFETY: rows of the source (clamped into it).
                    let (line, line2) = unsafe {
                        (
                            src.add((clamp((r0 + k) as i64, j.src.height) * j.src.pitch) as usize),
                            src.add((clamp((r0 + k2) as i64, j.src.height) * j.src.pitch) as usize),
                        )
                    };
                    // SAFETY: `cols` clamped into the rows; where `inside`, taps `0..xt` are
                    // `cols[0] + i * C` (in the row: `first + xt <= width`).
                    let (acc, acc2) = unsafe {
                        if inside {
                            across::<C, T, true>(line, line2, &cols, &a, xt)
                        } else {
                            across::<C, T, false>(line, line2, &cols, &a, xt)
                        }
                    };
                    for c in 0..C {
                        // SAFETY: k < span <= cap, so the index is below `tile_words`.
                        unsafe { *sums.add(((k as u32 * C as u32 + c as u32) * W + xl) as usize) = acc[c] };
                        if k2 < span {
                            // SAFETY: as above, for k2.
                            unsafe { *sums.add(((k2 as u32 * C as u32 + c as u32) * W + xl) as usize) = acc2[c] };
                        }
                    }
                    k += 2 * STEP1 as i32;
                }
            }
            sync_threads();
            // 2. The output: thread `t` makes pixels `4 * (t % (W / 4))` .. + 4 of the tile's
            //    rows `t / (W / 4)` and 16 after it (a tile has at most 32).
            let xs = x0 + 4 * (t % (W / 4));
            // (A loop on `rows`, not on a constant 2: fully unrolled, its two bodies' values
            // live at once and spill.)
            let mut yl = t / (W / 4);
            while yl < rows {
                let y = y0 + yl;
                if y < dh && xs < dw {
                    let n = 4u32.min(dw - xs);
                    // SAFETY: row `y`'s entries of the job's tables.
                    let kk = unsafe { *ints.add((j.y + y) as usize) } - r0;
                    let mut b = [0i32; T];
                    for k in 0..T {
                        if k < yt {
                            // SAFETY: as above.
                            b[k] = unsafe { *shorts.add(j.yw as usize + y as usize * yt + k) } as i32;
                        }
                    }
                    let down = Down { sums, at: xs - x0, kk, span, yt, xs, vector_elems: j.extra };
                    // The cubic's four pixels are, but for a row's last few elements, all in
                    // its vector form: those skip the scalar sum.
                    // SAFETY: `sums` holds `span` rows of the tile (`span <= cap`).
                    let words = unsafe {
                        if R == 1 && (xs + 4) * C as u32 <= j.extra {
                            down.four::<C, T, R, true>(&b)
                        } else {
                            down.four::<C, T, R, false>(&b)
                        }
                    };
                    // SAFETY: pixels xs .. xs + n of row y are in the output; `aligned` checked
                    // its data and pitch.
                    unsafe { store4::<C>(j.dst, xs as u64, y as u64, n as u64, &words, aligned) };
                }
                yl += SEPARABLE_THREADS / (W / 4);
            }
            // The next tile's sums overwrite these.
            sync_threads();
            tx += grid_dim_x();
        }
        ty += grid_dim_y();
    }
}

/// The sums across of one column of two source rows, each channel: `T` taps (the first
/// `xt` weighted by `a`) at `cols` (byte offsets in the rows), or, where `INSIDE`, at
/// `cols[0] + i * C`, constant offsets from one address.
///
/// # Safety
/// Every offset read lies in both rows.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn across<const C: usize, const T: usize, const INSIDE: bool>(
    line: *const u8,
    line2: *const u8,
    cols: &[u32; T],
    a: &[i32; T],
    xt: usize,
) -> ([i32; C], [i32; C]) {
    let (mut acc, mut acc2) = ([0i32; C], [0i32; C]);
    // SAFETY: the caller's contract.
    let (p, p2) = unsafe { (line.add(cols[0] as usize), line2.add(cols[0] as usize)) };
    for i in 0..T {
        if i < xt {
            for c in 0..C {
                // SAFETY: pixels of the rows (the caller's contract).
                let (px, px2) = unsafe {
                    if INSIDE {
                        (*p.add(i * C + c) as i32, *p2.add(i * C + c) as i32)
                    } else {
                        (*line.add(cols[i] as usize + c) as i32, *line2.add(cols[i] as usize + c) as i32)
                    }
                };
                acc[c] = acc[c].wrapping_add(px.wrapping_mul(a[i]));
                acc2[c] = acc2[c].wrapping_add(px2.wrapping_mul(a[i]));
            }
        }
    }
    (acc, acc2)
}

/// Phase 2 of [`separable`] for one thread's four pixels of an output row: where its rows'
/// sums are in the tile's shared memory and how they combine.
struct Down {
    sums: *mut i32,
    /// The four pixels' first column in the tile (a multiple of 4).
    at: u32,
    /// The row's first source row, from the tile's first.
    kk: i32,
    span: i32,
    yt: usize,
    /// The four pixels' first column in the output.
    xs: u32,
    vector_elems: u32,
}

impl Down {
    /// The four pixels' bytes as [`store4`] takes them: rule `R` over the `yt` rows from
    /// `kk` weighted by `b` (rows outside `0..span` are skipped); `VEC`: every element is
    /// in the cubic's vector form.
    ///
    /// # Safety
    /// `sums` holds `span` rows of the tile.
    #[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
    #[inline(always)]
    unsafe fn four<const C: usize, const T: usize, const R: u32, const VEC: bool>(&self, b: &[i32; T]) -> [u32; C] {
        const W: u32 = SEPARABLE_TILE_W;
        let mut words = [0u32; C];
        for c in 0..C {
            let mut v = [Vertical::ZERO; 4];
            for k in (0..T).rev() {
                let r = self.kk + k as i32;
                if k < self.yt && r >= 0 && r < self.span {
                    let at = (r as u32 * C as u32 + c as u32) * W + self.at;
                    // SAFETY: r < span, 4 | at (W and `self.at` are), so the four words lie
                    // inside the tile's rows, 16-byte aligned.
                    let q = unsafe { *(self.sums.add(at as usize) as *const Quad) };
                    for i in 0..4 {
                        v[i].step::<R, VEC>(k, q.0[i], b[k]);
                    }
                }
            }
            for i in 0..4 {
                let e = (self.xs + i as u32) * C as u32 + c as u32;
                let k = i * C + c;
                words[k / 4] |= (v[i].finish::<R, VEC>(e, self.vector_elems) as u32) << (8 * (k % 4));
            }
        }
        words
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
/// The separable kernels, one per channel count and tap count.
macro_rules! separable_kernels {
    ($([$name:ident, $marker:ident, $c:literal, $t:literal]),*) => {
        $(
            /// See [`separable`]; 2-D over the largest output, one job a grid layer.
            ///
            /// # Safety
            /// [`separable`]'s contract, for plans of at most this kernel's taps.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: ResizeSeparable) {
                // SAFETY: forwarded contract; the rule is a constant of each body (a
                // kernel of 2 taps takes linear and OpenCV's exact linear, of 4 the cubic,
                // of 8 Lanczos-4: `ResizeSeparable`'s contract).
                unsafe {
                    match $t {
                        2 if p.rule == 3 => separable::<$c, $t, 3>(p),
                        2 => separable::<$c, $t, 0>(p),
                        4 => separable::<$c, $t, 1>(p),
                        _ => separable::<$c, $t, 2>(p),
                    }
                }
            }
            abi!(cuimg_abi::resize::$marker, $name);
        )*
    };
}

separable_kernels!(
    [resize_separable2_c1, ResizeSeparable2C1, 1, 2],
    [resize_separable2_c2, ResizeSeparable2C2, 2, 2],
    [resize_separable2_c3, ResizeSeparable2C3, 3, 2],
    [resize_separable2_c4, ResizeSeparable2C4, 4, 2],
    [resize_separable4_c1, ResizeSeparable4C1, 1, 4],
    [resize_separable4_c2, ResizeSeparable4C2, 2, 4],
    [resize_separable4_c3, ResizeSeparable4C3, 3, 4],
    [resize_separable4_c4, ResizeSeparable4C4, 4, 4],
    [resize_separable_c1, ResizeSeparableC1, 1, 8],
    [resize_separable_c2, ResizeSeparableC2, 2, 8],
    [resize_separable_c3, ResizeSeparableC3, 3, 8],
    [resize_separable_c4, ResizeSeparableC4, 4, 8]
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

mod pillow;
