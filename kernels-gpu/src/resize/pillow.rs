//! Pillow's resampling (`ImagingResample`): one pass a launch, or a horizontal pass and a
//! vertical one in one tiled launch. 22-bit fixed point, each pass clipped to a byte, as
//! the CPU reference (`host/src/ops/resize/exec.rs`) computes it.

use super::planes::{down, fast_groups, sums};
use super::sink::{Sink, ToImage, ToTensor};
use super::source::{Bytes, Source, WINDOW_WORDS, YuvFrames, row, window, window_byte, window_in_rows, words_readable};
use super::{at, clamp, clamp32, frame, job, out_layout, put};
use crate::device::shared;
use crate::device::thread::{
    block_idx_x, block_idx_y, grid_dim_x, grid_dim_y, grid_stride_x, grid_stride_y, sync_threads, thread_idx_x,
};
use crate::device::vector::V16;
use cuimg_abi::resize::{
    ResizePillow, ResizePillowTiled, ResizePillowTiledTensor, ResizePillowTiledYuv, SEPARABLE_THREADS,
    SEPARABLE_TILE_ROWS, SEPARABLE_TILE_W,
};

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
    let j = unsafe { job(&p.jobs) };
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { frame::<C>(&j) };
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

/// Pillow's rounding term and the clip of a pass's sum to a byte.
#[inline(always)]
fn clip8(ss: i32) -> u32 {
    (ss >> 22).clamp(0, 255) as u32
}

/// Pillow's two passes in tiles (see [`ResizePillowTiled`]); the tiles and threads as
/// [`super::separable`]'s, the shared memory one byte per row, channel and column:
/// `bytes[(k * C + c) * SEPARABLE_TILE_W + xl]`, so a thread's four columns are one word.
/// `WORDS`: the horizontal pass reads taps four at a time as words (the `_words` kernels,
/// which the host picks for RGB and RGBA plans of many taps: session 10 measured them 13
/// to 25% faster there, but up to a third slower for few taps or one channel, where the
/// extra registers spill and the shifts outweigh the loads saved).
/// `PLANES`: the horizontal pass four taps at a time by dot products ([`super::planes`]),
/// its tables the planes form (`cuimg_abi::resize::ResizePillowTiled`): the `_planes`
/// kernels, of one channel and of three.
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; the tables hold, at each job's offsets,
/// `dst.width` first columns and `dst.width * (extra & 0xFFFF)` weights, `dst.height` first
/// rows and `dst.height * (extra >> 16)` weights; blocks of `SEPARABLE_THREADS` threads
/// along x; `p.tile_words` words of dynamic shared memory; each job's output and frame are
/// what `sink` writes, its source what `source` reads.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn pillow_tiled<const C: usize, const WORDS: bool, const PLANES: bool, S: Sink, Src: Source>(
    p: ResizePillowTiled,
    sink: S,
    source: Src,
) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    let yuv = source.yuv(&j);
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { sink.frame::<C>(&j) };
    const W: u32 = SEPARABLE_TILE_W;
    const _: () = assert!(W == 64 && SEPARABLE_THREADS == 256, "the horizontal pass's lanes: 64 or 32 columns");
    const HALF: i32 = 1 << 21;
    let (ints, weights) = (p.ints.ptr(), p.weights.ptr());
    let (xt, yt) = ((j.extra & 0xFFFF) as usize, (j.extra >> 16) as usize);
    let (dw, dh) = (j.dst.width, j.dst.height);
    let rows = p.tile_rows.clamp(1, SEPARABLE_TILE_ROWS);
    // The source rows the shared memory holds (see `separable`).
    let cap = (p.tile_words * 4 / (W * C as u32)) as i32;
    let bytes = shared::dynamic::<u8>();
    let t = thread_idx_x();
    let aligned = (j.dst.data | j.dst.pitch) % 4 == 0;
    let src = j.src.data as usize as *const u8;
    // Taps read four at a time as words where the image allows it (see `separable`).
    let packed = words_readable::<C>(&j.src, Src::YUV);
    // Only LA and RGBA carry alpha (the host sets `premultiply` for no other): a constant
    // false elsewhere, where a flag read at run time left the premultiplying code predicated
    // on every tap (issued, though it did nothing).
    let premultiply = p.premultiply != 0 && (C == 2 || C == 4);
    let mut ty = block_idx_y();
    // `ty < dh.div_ceil(rows)` without the division (about 30 instructions a thread, the
    // divisor not a constant), in 64 bits: the same for every `ty`, `rows` and `dh`.
    while (ty as u64) * (rows as u64) < dh as u64 {
        let y0 = ty * rows;
        let y1 = (y0 + rows).min(dh) - 1;
        // SAFETY: rows `y0` and `y1` of the job's first-row table.
        let (r0, r1) = unsafe { (*ints.add((j.y + y0) as usize), *ints.add((j.y + y1) as usize)) };
        let span = (r1 + yt as i32 - r0).min(cap);
        let mut tx = block_idx_x();
        while tx < dw.div_ceil(W) {
            let x0 = tx * W;
            // 1. The horizontal pass of the tile's source rows, on 64 lanes of columns, or,
            //    in the RGB8 planes kernels, 32 where the tile has 32 columns or fewer (see
            //    `separable`). Session 14 measured that form in every kernel here: the RGB8
            //    planes kernels' batch (bicubic, Lanczos) 9% faster; the others no faster on
            //    the batch and 2 to 6% slower on whole tiles (more spilled, the step a value),
            //    so they keep the constant step.
            let narrow = PLANES && C == 3 && dw - x0 <= 32;
            let lanes_log2 = if narrow { 5 } else { 6 };
            let step1 = SEPARABLE_THREADS >> lanes_log2;
            let xl = t & ((1 << lanes_log2) - 1);
            let x = x0 + xl;
            if x < dw {
                // SAFETY: column `x`'s entries of the job's tables.
                let first = unsafe { *ints.add((j.x + x) as usize) } as i64;
                // (The planes form's vectors of column `x` start at its `x`th.)
                let wx = if PLANES { j.xw as usize / 4 + x as usize } else { j.xw as usize + x as usize * xt };
                // `WORDS`: the column's taps in groups of four read as windows (`window`), the
                // rest a byte a load, where its taps lie in the row and the last group's
                // window fits in every row (as in `separable`).
                let groups = if WORDS
                    && packed
                    && first >= 0
                    && first + xt as i64 <= j.src.width as i64
                    && xt >= 4
                    && window_in_rows((first as u64 + 4 * (xt as u64 / 4 - 1)) * C as u64, 4 * C, j.src.pitch)
                {
                    xt / 4
                } else {
                    0
                };
                // `PLANES`: the taps in groups of four, the first `fast` read as words.
                let fast = if PLANES {
                    fast_groups::<C>(packed, first, xt.div_ceil(4) as u32, j.src.width, j.src.pitch)
                } else {
                    0
                };
                // Two rows an iteration, as `separable` does (each weight read once for both).
                let mut k = (t >> lanes_log2) as i32;
                while k < span {
                    let k2 = k + step1 as i32;
                    let (mut acc, mut acc2) = ([HALF; C], [HALF; C]);
                    if Src::YUV {
                        let y = &yuv;
                        let (ra, rb) = (y.row((r0 + k) as i64), y.row((r0 + k2) as i64));
                        for i in 0..xt {
                            // SAFETY: column `x`'s weights; the job's frame (the caller's
                            // contract), rows from `Yuv::row`.
                            let (w, p, p2) = unsafe {
                                (*weights.add(wx + i), y.rgb(first + i as i64, ra), y.rgb(first + i as i64, rb))
                            };
                            for c in 0..C {
                                acc[c] = acc[c].wrapping_add(p[c].wrapping_mul(w));
                                acc2[c] = acc2[c].wrapping_add(p2[c].wrapping_mul(w));
                            }
                        }
                    } else if PLANES {
                        // SAFETY: rows of the source (clamped into it); column `x`'s vectors,
                        // `dw` apart (the planes form: `xw` a multiple of 4 words), and
                        // `fast` windows that lie in the rows (`fast_groups`).
                        (acc, acc2) = unsafe {
                            let lines = (row(src, r0 + k, &j.src), row(src, r0 + k2, &j.src));
                            let words = (weights as *const V16).add(wx);
                            sums::<C>(
                                lines,
                                first as i32,
                                (xt.div_ceil(4) as u32, fast),
                                words,
                                dw as usize,
                                j.src.width,
                                HALF,
                            )
                        };
                    } else {
                        // SAFETY: rows of the source (clamped into it).
                        let (line, line2) = unsafe { (row(src, r0 + k, &j.src), row(src, r0 + k2, &j.src)) };
                        for g in 0..groups {
                            let col = (first as usize + 4 * g) * C;
                            // SAFETY: the group's taps lie in the rows and their windows' words
                            // in the image (`groups`).
                            let (wa, wb): ([u32; WINDOW_WORDS], [u32; WINDOW_WORDS]) =
                                unsafe { (window(line.add(col), 4 * C), window(line2.add(col), 4 * C)) };
                            for i in 0..4 {
                                // SAFETY: column `x`'s weights.
                                let w = unsafe { *weights.add(wx + 4 * g + i) };
                                let (alpha, alpha2) =
                                    (window_byte(&wa, i * C + C - 1) as u32, window_byte(&wb, i * C + C - 1) as u32);
                                for c in 0..C {
                                    let (mut v, mut v2) =
                                        (window_byte(&wa, i * C + c) as u32, window_byte(&wb, i * C + c) as u32);
                                    if premultiply && c + 1 < C {
                                        v = muldiv255(v, alpha);
                                        v2 = muldiv255(v2, alpha2);
                                    }
                                    acc[c] = acc[c].wrapping_add((v as i32).wrapping_mul(w));
                                    acc2[c] = acc2[c].wrapping_add((v2 as i32).wrapping_mul(w));
                                }
                            }
                        }
                        // One channel, inside the row: pointers walked a tap at a time, no
                        // clamp (session 11's call 1: Gray8 rows 14 to 24% faster; the same
                        // loop spilled in the RGB8 kernel and took 12% longer there).
                        let walk = C == 1 && first >= 0 && first + xt as i64 <= j.src.width as i64;
                        if walk {
                            // SAFETY: the column's taps lie in the rows; its weights in the
                            // table.
                            let (mut p, mut p2, mut w, end) = unsafe {
                                (
                                    line.add(first as usize),
                                    line2.add(first as usize),
                                    weights.add(wx),
                                    weights.add(wx + xt),
                                )
                            };
                            while w < end {
                                // SAFETY: as above, tap by tap.
                                unsafe {
                                    acc[0] = acc[0].wrapping_add((*p as i32).wrapping_mul(*w));
                                    acc2[0] = acc2[0].wrapping_add((*p2 as i32).wrapping_mul(*w));
                                    (p, p2, w) = (p.add(1), p2.add(1), w.add(1));
                                }
                            }
                        }
                        for i in (if walk { xt } else { 4 * groups })..xt {
                            // SAFETY: column `x`'s weights.
                            let w = unsafe { *weights.add(wx + i) };
                            let col = clamp32((first as i32).wrapping_add(i as i32), j.src.width) as usize * C;
                            // SAFETY: pixels of the rows (their column clamped into them).
                            let (alpha, alpha2) =
                                unsafe { (*line.add(col + C - 1) as u32, *line2.add(col + C - 1) as u32) };
                            for c in 0..C {
                                // SAFETY: as above.
                                let (mut v, mut v2) =
                                    unsafe { (*line.add(col + c) as u32, *line2.add(col + c) as u32) };
                                if premultiply && c + 1 < C {
                                    v = muldiv255(v, alpha);
                                    v2 = muldiv255(v2, alpha2);
                                }
                                acc[c] = acc[c].wrapping_add((v as i32).wrapping_mul(w));
                                acc2[c] = acc2[c].wrapping_add((v2 as i32).wrapping_mul(w));
                            }
                        }
                    }
                    // Row k's bytes from one address, channel `c` at a constant offset; row
                    // k2's a constant further (as `separable` stores its sums).
                    let at = (k as u32 * C as u32 * W + xl) as usize;
                    let row2 = (step1 * C as u32 * W) as usize;
                    for c in 0..C {
                        // SAFETY: k < span <= cap, so the index is below `tile_words * 4`.
                        unsafe { *bytes.add(at + c * W as usize) = clip8(acc[c]) as u8 };
                        if k2 < span {
                            // SAFETY: as above, for k2.
                            unsafe { *bytes.add(at + row2 + c * W as usize) = clip8(acc2[c]) as u8 };
                        }
                    }
                    k += 2 * step1 as i32;
                }
            }
            sync_threads();
            // 2. The vertical pass: four pixels a thread, of one row or more (`out_layout`;
            //    a tile has at most 32).
            let (xs, mut yl, step) = out_layout(t, x0, dw);
            // (A loop on `rows`, not on a constant 2: fully unrolled, its two bodies' values
            // live at once and spill.)
            while yl < rows {
                let y = y0 + yl;
                // (`span` is at least 1 but where the shared memory holds no row.)
                if y < dh && xs < dw && span > 0 {
                    let n = 4u32.min(dw - xs);
                    // SAFETY: row `y`'s entries of the job's tables.
                    let kk = unsafe { *ints.add((j.y + y) as usize) } - r0;
                    let mut acc = [[HALF; C]; 4];
                    if PLANES {
                        // SAFETY: the tile's `span` rows; `xs - x0` is a multiple of 4 below
                        // `W` (`out_layout`); row `y`'s vectors, `dh` apart (the planes form).
                        acc = unsafe {
                            let words = (weights as *const V16).add(j.yw as usize / 4 + y as usize);
                            down::<C, { W as usize }>(
                                bytes,
                                (xs - x0) as usize,
                                (kk, span),
                                yt.div_ceil(4) as u32,
                                words,
                                dh as usize,
                                HALF,
                            )
                        };
                    }
                    let wy = j.yw as usize + y as usize * yt;
                    for k in 0..if PLANES { 0 } else { yt } {
                        // A valid plan's rows lie in `0..span`; others are read clamped into it
                        // (as `separable`'s `Down::four` does, without a branch a tap).
                        let r = (kk + k as i32).min(span - 1).max(0);
                        // SAFETY: row `y`'s weights.
                        let w = unsafe { *weights.add(wy + k) };
                        // The row's words from one address, channel `c` at a constant offset
                        // (an address a load took three instructions).
                        let at = (r as u32 * C as u32 * W + (xs - x0)) as usize;
                        for c in 0..C {
                            // SAFETY: 0 <= r < span <= cap, 4 | at, so the word lies inside the
                            // shared memory, 4-byte aligned.
                            let q = unsafe { *(bytes.add(at + c * W as usize) as *const u32) };
                            for i in 0..4 {
                                acc[i][c] = acc[i][c].wrapping_add(((q >> (8 * i)) & 0xFF) as i32 * w);
                            }
                        }
                    }
                    let mut words = [0u32; C];
                    for i in 0..4 {
                        let a = clip8(acc[i][C - 1]);
                        for c in 0..C {
                            let mut v = clip8(acc[i][c]);
                            if premultiply && c + 1 < C && a != 0 && a != 255 {
                                v = (255 * v / a).min(255);
                            }
                            let k = i * C + c;
                            words[k / 4] |= v << (8 * (k % 4));
                        }
                    }
                    // SAFETY: pixels xs .. xs + n of row y are in the output; `aligned` checked
                    // its data and pitch.
                    unsafe { sink.store4::<C>(j.dst, xs as u64, y as u64, n as u64, &words, aligned) };
                }
                yl += step;
            }
            // The next tile's bytes overwrite these.
            sync_threads();
            tx += grid_dim_x();
        }
        ty += grid_dim_y();
    }
}

resize_kernels!(
    pillow,
    ResizePillow,
    [resize_pillow_c1, ResizePillowC1, 1],
    [resize_pillow_c2, ResizePillowC2, 2],
    [resize_pillow_c3, ResizePillowC3, 3],
    [resize_pillow_c4, ResizePillowC4, 4]
);
/// Pillow's tiled kernels into images and into tensors.
macro_rules! pillow_tiled_kernels {
    ($([$name:ident, $marker:ident, $tensor:ident, $tensor_marker:ident, $c:literal, $words:literal, $planes:literal]),*) => {
        $(
            /// See [`pillow_tiled`]; one block of `SEPARABLE_THREADS` a tile.
            ///
            /// # Safety
            /// [`pillow_tiled`]'s contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: ResizePillowTiled) {
                // SAFETY: forwarded contract.
                unsafe { pillow_tiled::<$c, $words, $planes, _, _>(p, ToImage, Bytes) }
            }
            abi!(cuimg_abi::resize::$marker, $name);

            /// See [`pillow_tiled`], into a tensor ([`ResizePillowTiledTensor`]).
            ///
            /// # Safety
            /// [`pillow_tiled`]'s contract, each job's output an image of the tensor of
            /// `p.out.format`.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $tensor(p: ResizePillowTiledTensor) {
                // SAFETY: forwarded contract.
                unsafe { pillow_tiled::<$c, $words, $planes, _, _>(p.resize, ToTensor { out: p.out }, Bytes) }
            }
            abi!(cuimg_abi::resize::$tensor_marker, $tensor);
        )*
    };
}

pillow_tiled_kernels!(
    [
        resize_pillow_tiled_c1,
        ResizePillowTiledC1,
        resize_pillow_tiled_c1_tensor,
        ResizePillowTiledC1Tensor,
        1,
        false,
        false
    ],
    [
        resize_pillow_tiled_c2,
        ResizePillowTiledC2,
        resize_pillow_tiled_c2_tensor,
        ResizePillowTiledC2Tensor,
        2,
        false,
        false
    ],
    [
        resize_pillow_tiled_c3,
        ResizePillowTiledC3,
        resize_pillow_tiled_c3_tensor,
        ResizePillowTiledC3Tensor,
        3,
        false,
        false
    ],
    [
        resize_pillow_tiled_c4,
        ResizePillowTiledC4,
        resize_pillow_tiled_c4_tensor,
        ResizePillowTiledC4Tensor,
        4,
        false,
        false
    ],
    [
        resize_pillow_tiled_words_c3,
        ResizePillowTiledWordsC3,
        resize_pillow_tiled_words_c3_tensor,
        ResizePillowTiledWordsC3Tensor,
        3,
        true,
        false
    ],
    [
        resize_pillow_tiled_words_c4,
        ResizePillowTiledWordsC4,
        resize_pillow_tiled_words_c4_tensor,
        ResizePillowTiledWordsC4Tensor,
        4,
        true,
        false
    ],
    [
        resize_pillow_tiled_planes_c1,
        ResizePillowTiledPlanesC1,
        resize_pillow_tiled_planes_c1_tensor,
        ResizePillowTiledPlanesC1Tensor,
        1,
        false,
        true
    ],
    [
        resize_pillow_tiled_planes_c3,
        ResizePillowTiledPlanesC3,
        resize_pillow_tiled_planes_c3_tensor,
        ResizePillowTiledPlanesC3Tensor,
        3,
        false,
        true
    ]
);

/// See [`pillow_tiled`], from YUV frames (RGB) into a tensor ([`ResizePillowTiledYuv`]).
///
/// # Safety
/// [`pillow_tiled`]'s contract, each job's source a frame of `p.layout` and its output an
/// image of the tensor of `p.out.format`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn resize_pillow_tiled_yuv_tensor(p: ResizePillowTiledYuv) {
    let source = YuvFrames { layout: p.layout, coef: p.coef };
    // SAFETY: forwarded contract.
    unsafe { pillow_tiled::<3, false, false, _, _>(p.resize, ToTensor { out: p.out }, source) }
}
abi!(cuimg_abi::resize::ResizePillowTiledYuvTensor, resize_pillow_tiled_yuv_tensor);
