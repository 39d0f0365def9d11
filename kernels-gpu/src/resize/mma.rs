//! Pillow's two passes by the tensor cores' integer products (the `_mma` kernels,
//! `cuimg_abi::resize::ResizePillowTiled` with its plain tables): each pass a product of a
//! band of weights by bytes, 8 outputs by 8 rows (or columns) at a time, `mma.m8n8k16`.
//!
//! A 22-bit weight `w` is three bytes, `w = b0 + 256 * b1 + 65536 * b2`, `b0` and `b1`
//! unsigned and `b2` signed (`w >> 16`: a byte, as the host sends only weights within
//! -2^23..2^23; Pillow's are at most about 2^22 in magnitude). So Pillow's sum is
//! `S0 + 256 * S1 + 65536 * S2`, each `S` a product of bytes the instruction makes exactly
//! in `i32`, and the combination is exact in wrapping 32-bit arithmetic (the true sum fits):
//! the same integers as the CPU reference's, then `>> 22` and clipped to a byte.
//!
//! Eight outputs side by side read a window of 16 to [`STEPS`]` * 16` inputs from the first
//! one's first input rounded down to a multiple of 4; an output's weights sit at its own
//! taps in the window, 0 elsewhere. A warp keeps its 8 outputs' windows of weights (the
//! A operands, 3 registers a step of 16) and runs down the inputs: the horizontal pass 8
//! source rows at a time, read as words straight from the image (the taps' 4 pixels of a
//! lane, split by channel), the vertical pass 8 output columns at a time from the tile's
//! horizontal bytes in shared memory, stored transposed (a column's rows side by side) so
//! that a lane's 4 taps are one aligned word.
//!
//! Shared memory: byte `(c * W + x) * rs + r` is row `r` of the tile's column `x`, channel
//! `c`, `rs = (tile_words * 4 - PILLOW_MMA_PAD) / (C * W)` a multiple of 16 whose quarter is
//! odd times 4 (the host's choice): then the 8 columns a warp reads or writes at once fall
//! in distinct banks. The last column's window may run [`PILLOW_MMA_PAD`] bytes on, into
//! the padding; the bytes a window reads past the tile's rows are weighted 0.

use super::planes::{split, transpose};
use super::sink::{Sink, ToImage, ToTensor};
use super::source::{Bytes, Source, row, window_in_rows, words_readable};
use super::{clamp32, job};
use crate::device::dot::{mad_lo, mma_m8n8k16, pack_sat_u8, prmt, shfl_down, vote_all};
use crate::device::shared;
use crate::device::thread::{block_idx_x, block_idx_y, grid_dim_x, grid_dim_y, sync_threads, thread_idx_x};
use crate::device::vector::load_global_u32;
use cuimg_abi::resize::{
    PILLOW_MMA_PAD, PILLOW_MMA_STEPS, PILLOW_MMA_TILE_ROWS, Plane, ResizePillowTiled, ResizePillowTiledTensor,
    SEPARABLE_THREADS, SEPARABLE_TILE_W,
};

const W: u32 = SEPARABLE_TILE_W;
const WARPS: u32 = SEPARABLE_THREADS / 32;
const _: () = assert!(PILLOW_MMA_TILE_ROWS <= 8 * WARPS, "the vertical pass: a warp a group of 8 rows");
/// The most steps of 16 inputs a window of 8 outputs takes.
const STEPS: usize = PILLOW_MMA_STEPS as usize;
const _: () = assert!(STEPS == 4, "the horizontal pass's loops: one for each count of steps");
const HALF: i32 = 1 << 21;

/// The A operands of a window from input `base` on for the warp's 8 outputs, of the lane's
/// output (`lane / 4`): its `taps` weights at `weights`, its first input `first`; the lane's
/// 4 inputs of step `s` are `base + 16 * s + 4 * (lane % 4)` on. Three words a step: the
/// weights' bytes 0, 1 and 2, input `i` in byte `i`. Steps from `steps` on are left 0.
///
/// # Safety
/// `weights` holds `taps` weights.
#[inline(always)]
unsafe fn operands(weights: *const i32, first: i32, taps: i32, base: i32, q: u32, steps: u32) -> [[u32; 3]; STEPS] {
    let mut a = [[0u32; 3]; STEPS];
    for (s, a) in a.iter_mut().enumerate() {
        if (s as u32) < steps {
            let mut w = [0u32; 4];
            for (i, w) in w.iter_mut().enumerate() {
                let k = base + 16 * s as i32 + 4 * q as i32 + i as i32 - first;
                if k >= 0 && k < taps {
                    // SAFETY: 0 <= k < taps (the caller's weights).
                    *w = unsafe { *weights.add(k as usize) } as u32;
                }
            }
            let t = transpose(w);
            *a = [t[0], t[1], t[2]];
        }
    }
    a
}

/// The aligned words a lane's 4 pixels of `C` bytes lie in (one more than they fill).
const RAW: usize = 4 + 1;

/// Whether [`word_rows`] loads each row group's words while the warp sums the row group
/// before, for `C` channels: for Gray8, whose 2 words a step a lane leave the L1 room and
/// whose row groups wait on their loads' latency (session 20, call 4: 8K->4K and 4K->1080p
/// 0.83 to 0.87 of the time, 1080p x2 0.95). RGB8's 4 words a step keep the L1's data path
/// 68 to 75% busy: its row groups wait in the L1's queue, which loads made earlier do not
/// shorten (the same call: every RGB8 row within 1%), so its loop stays as it was.
const fn pipelined(c: usize) -> bool {
    c == 1
}

/// The aligned words holding the `4 * C` bytes at `p`, and the shift that brings `p`'s
/// first byte to the front of the first (as [`super::source::window`] reads them, the shift
/// left for the caller, once the loads have landed).
///
/// # Safety
/// The `C + 1` aligned words from `p & !3` are readable global memory.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn words<const C: usize>(p: *const u8) -> ([u32; RAW], u32) {
    let (at, shift) = aligned(p);
    let mut w = [0u32; RAW];
    for i in 0..RAW {
        if i <= C {
            // SAFETY: the caller's words.
            w[i] = unsafe { load_global_u32(at.add(i)) };
        }
    }
    (w, shift)
}

/// The aligned word holding `p`'s byte, and the shift that brings that byte to the front.
#[inline(always)]
fn aligned(p: *const u8) -> (*const u32, u32) {
    ((p as u64 & !3) as usize as *const u32, (p as u64 & 3) as u32 * 8)
}

/// The `4 * C` bytes of the 4 pixels from column `col` of `line`, each pixel clamped into
/// the row's `width`, as [`words`] gives them (unshifted).
///
/// # Safety
/// `line` is a row of at least one pixel of `width` of `C` bytes each.
#[inline(always)]
unsafe fn gather_bytes<const C: usize>(line: *const u8, col: i32, width: u32) -> [u32; RAW] {
    let mut w = [0u32; RAW];
    for i in 0..4 {
        let at = clamp32(col.wrapping_add(i as i32), width) as usize * C;
        for c in 0..C {
            let k = i * C + c;
            // SAFETY: a pixel of the row (clamped into it).
            w[k / 4] |= (unsafe { *line.add(at + c) } as u32) << (8 * (k % 4));
        }
    }
    w
}

/// Sums of one channel: the products of the weights' three bytes.
type Sums = [[i32; 2]; 3];

/// `sums += a * b`, the weights' three bytes each by the lane's four inputs `b`.
#[inline(always)]
fn step(sums: &mut Sums, a: &[u32; 3], b: u32) {
    sums[0] = mma_m8n8k16::<false>(a[0], b, sums[0]);
    sums[1] = mma_m8n8k16::<false>(a[1], b, sums[1]);
    sums[2] = mma_m8n8k16::<true>(a[2], b, sums[2]);
}

/// Pillow's sum of output `e` (0 or 1) of the lane's pair, `>> 22` (not yet clipped).
#[inline(always)]
fn shifted(s: &Sums, e: usize) -> i32 {
    mad_lo(s[2][e], 1 << 16, mad_lo(s[1][e], 1 << 8, s[0][e])) >> 22
}

/// The lane's pair of outputs clipped to bytes 0 and 1, `rest`'s low half in bytes 2 and 3
/// (one `cvt.pack.sat` where the clips, shifts and ors took eleven instructions).
#[inline(always)]
fn pair(s: &Sums, rest: u32) -> u32 {
    pack_sat_u8(shifted(s, 1), shifted(s, 0), rest)
}

/// The steps of 16 a window needs to reach `end` from `base` (at most [`STEPS`]).
#[inline(always)]
fn steps(base: i32, end: i32) -> u32 {
    (((end - base).max(0) as u32).div_ceil(16)).min(STEPS as u32)
}

/// Where a warp's horizontal pass runs: row groups `first`, `first + per`, ... of the tile's
/// `span` source rows from `r0`; row `2q` of its column `g` at byte `at` of channel 0's
/// columns (`rs` bytes a column).
#[derive(Clone, Copy)]
struct RowGroups {
    r0: i32,
    span: i32,
    first: u32,
    per: u32,
    at: u32,
    rs: u32,
}

/// The first pass, across, of a warp's 8 columns over windows of `N` steps: for each of
/// its row groups, the lane's 4 pixels of each step from pixel `pc` of row `g` of the group
/// on (`pc + 16 * s` for step `s`), by the operands `a`, into the tile's bytes.
///
/// # Safety
/// `src` is a job's readable plane of `C` bytes a pixel; `bytes` the tile's shared memory,
/// of `C * W` columns of `rows.rs` bytes, `rows.span` at most `rows.rs`.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn horizontal<const C: usize, const N: usize>(
    src: &Plane,
    a: &[[u32; 3]; STEPS],
    pc: i32,
    g: u32,
    packed: bool,
    rows: RowGroups,
    bytes: *mut u8,
) {
    let data = src.data as usize as *const u8;
    // Which steps read their pixels as words: where they lie in the row and their window in
    // every row (the same for every row of a packed image). The others a byte a load,
    // clamped into the row (taps past the row are weighted 0: any byte in it will do).
    let in_row = |p: i32| p >= 0 && p as u32 + 4 <= src.width && window_in_rows(p as u64 * C as u64, 4 * C, src.pitch);
    let mut fast = 0u32;
    for s in 0..N {
        if packed && in_row(pc + 16 * s as i32) {
            fast |= 1 << s;
        }
    }
    let all = fast == (1 << N) - 1;
    // Every lane's steps as words, from one address at constant offsets: a loop of its own,
    // free of the others' clamped columns (else recomputed in each row group). The vote
    // keeps the warp converged for the products.
    if vote_all(all) {
        // Rows at 4-byte boundaries (a packed image whose pitch is a multiple of 4: RGB8 of a
        // width a multiple of 4, as most photos and video frames are): a lane's `4 * C`
        // bytes a step are its `C` words, unshifted (`pc` is a multiple of 4); else `C + 1`
        // words shifted by the row's misalignment. The same for every lane of the job.
        // SAFETY: every lane's every step's window lies in its row (`all`, by the vote).
        unsafe {
            match src.data.is_multiple_of(4) && src.pitch.is_multiple_of(4) {
                true => word_rows::<C, N, true>(src, a, pc, g, rows, bytes),
                false => word_rows::<C, N, false>(src, a, pc, g, rows, bytes),
            }
        }
    } else {
        let mut rg = rows.first;
        while (8 * rg as i32) < rows.span {
            // SAFETY: a row of the source (clamped into it).
            let line = unsafe { row(data, rows.r0 + 8 * rg as i32 + g as i32, src) };
            let mut raw = [[0u32; RAW]; N];
            let mut shift = [0u32; N];
            for s in 0..N {
                let p = pc + 16 * s as i32;
                if fast >> s & 1 != 0 {
                    // SAFETY: the window's words lie in the row (`fast`).
                    (raw[s], shift[s]) = unsafe { words::<C>(line.add(p as usize * C)) };
                } else {
                    // SAFETY: a row of at least one pixel; each pixel clamped.
                    raw[s] = unsafe { gather_bytes::<C>(line, p, src.width) };
                }
            }
            // SAFETY: the caller's tile.
            unsafe { products::<C, N>(a, &raw, &shift, rows, rg, bytes) };
            rg += rows.per;
        }
    }
}

/// [`horizontal`]'s row groups where every lane's every step reads its pixels as words,
/// from one address at constant offsets; with `ALIGNED` (every row at a 4-byte boundary)
/// `C` words a step and no shift, else `C + 1` shifted.
///
/// # Safety
/// [`horizontal`]'s, and every step's window of every lane lies in its row (its `C + 1`
/// words from the aligned word of its first byte); with `ALIGNED`, the plane's data and
/// pitch are multiples of 4 and `pc * C` is.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn word_rows<const C: usize, const N: usize, const ALIGNED: bool>(
    src: &Plane,
    a: &[[u32; 3]; STEPS],
    pc: i32,
    g: u32,
    rows: RowGroups,
    bytes: *mut u8,
) {
    let data = src.data as usize as *const u8;
    // Row group `rg`'s words and their shift (a row group past the span reads rows clamped
    // into the image: readable, and unused).
    let load = |rg: u32| {
        // SAFETY: a row of the source (clamped into it).
        let line = unsafe { row(data, rows.r0 + 8 * rg as i32 + g as i32, src) };
        // SAFETY: every step's window lies in the row (the caller's).
        let (at, sh) = aligned(unsafe { line.add(pc as usize * C) });
        let mut raw = [[0u32; RAW]; N];
        for s in 0..N {
            for i in 0..C + usize::from(!ALIGNED) {
                // SAFETY: word `i` of step `s`'s window: 16 pixels, `4 * C` words, on.
                raw[s][i] = unsafe { load_global_u32(at.add(4 * C * s + i)) };
            }
        }
        (raw, if ALIGNED { [0; N] } else { [sh; N] })
    };
    let more = |rg: u32| (8 * rg as i32) < rows.span;
    let mut rg = rows.first;
    if pipelined(C) {
        // Each row group's words loaded while the warp sums the row group before (see
        // `pipelined`). Two row groups a turn, so that each set of words stays in its
        // registers (one a turn copied them: 14 more instructions a row group), and
        // unpredicated (zeroing the words a predicated load skips took 6 more): the last
        // turn reads a row group it does not sum.
        let mut even = load(rg);
        while more(rg) {
            let odd = load(rg + rows.per);
            // SAFETY: the caller's tile.
            unsafe { products::<C, N>(a, &even.0, &even.1, rows, rg, bytes) };
            rg += rows.per;
            if !more(rg) {
                break;
            }
            even = load(rg + rows.per);
            // SAFETY: the caller's tile.
            unsafe { products::<C, N>(a, &odd.0, &odd.1, rows, rg, bytes) };
            rg += rows.per;
        }
    } else {
        while more(rg) {
            let (raw, shift) = load(rg);
            // SAFETY: the caller's tile.
            unsafe { products::<C, N>(a, &raw, &shift, rows, rg, bytes) };
            rg += rows.per;
        }
    }
}

/// The products of a row group's words `raw` (each step's shifted by `shift`) by the
/// operands `a`, into the tile's bytes. Every step's words are loaded first: loads made
/// just before their use made each step wait on its own (session 16, call 2: three waits a
/// row group).
///
/// # Safety
/// [`horizontal`]'s tile, `rg` one of its row groups.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn products<const C: usize, const N: usize>(
    a: &[[u32; 3]; STEPS],
    raw: &[[u32; RAW]; N],
    shift: &[u32; N],
    rows: RowGroups,
    rg: u32,
    bytes: *mut u8,
) {
    let mut sums = [[[HALF; 2], [0; 2], [0; 2]]; C];
    for s in 0..N {
        let mut x = [0u32; C];
        for i in 0..C {
            // (A 64-bit shift of two words: one `shf`.)
            x[i] = ((raw[s][i] as u64 | (raw[s][i + 1] as u64) << 32) >> shift[s]) as u32;
        }
        let px = split::<C>(x);
        for c in 0..C {
            step(&mut sums[c], &a[s], px[c]);
        }
    }
    // Rows 2q and 2q + 1 of the 8 of column g: side by side, one store.
    for c in 0..C {
        let at = c as u32 * W * rows.rs + rows.at + 8 * rg;
        // SAFETY: the row r = 8 rg + 2q: r + 1 < round_up(span, 8) <= rs (`rs` a multiple of
        // 16, span at most `rs`), the column 8m + g < W: inside the tile's bytes; `at` even.
        unsafe { *(bytes.add(at as usize) as *mut u16) = pair(&sums[c], 0) as u16 };
    }
}

/// Where a warp's vertical pass runs: column groups `first`, `first + per`, ... below
/// `groups` of the tile from output column `x0` (of `dw`), into output rows `yb` on (row
/// `yb + g` the lane's), at most to `ylast`; `rs` bytes a column in the tile.
#[derive(Clone, Copy)]
struct ColGroups {
    first: u32,
    per: u32,
    groups: u32,
    x0: u32,
    dw: u32,
    yb: u32,
    ylast: u32,
    rs: u32,
}

/// The second pass, down, of a warp's 8 output rows over windows of `N` steps: for each of
/// its column groups, the lane's 4 rows of each step from byte `base + 4 * q` of its column
/// in the tile (and `16 * s` on for step `s`), by the operands `a`, into the output.
///
/// # Safety
/// `bytes` the tile's shared memory, of `C * W` columns of `cols.rs` bytes and
/// `PILLOW_MMA_PAD` more, `base` a multiple of 4 and `base + 16 * N <= cols.rs +
/// PILLOW_MMA_PAD`; `dst` the output `sink` writes, of `cols.dw` columns and row
/// `cols.ylast`.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)] // indexed loops unroll
#[inline(always)]
unsafe fn vertical<const C: usize, S: Sink, const N: usize>(
    a: &[[u32; 3]; STEPS],
    base: u32,
    (g, q): (u32, u32),
    cols: ColGroups,
    bytes: *const u8,
    sink: S,
    dst: Plane,
    aligned: bool,
) {
    let at = base + 4 * q;
    let y = cols.yb + g;
    let mut m = cols.first;
    while m < cols.groups {
        let mut sums = [[[HALF; 2], [0; 2], [0; 2]]; C];
        for s in 0..N {
            for c in 0..C {
                let k = (c as u32 * W + 8 * m + g) * cols.rs + at;
                // SAFETY: the column's bytes from `at` to the window's end, which the
                // caller's bound keeps inside the tile and its padding; a multiple of 4
                // (`rs`, `at` and the step are).
                let b = unsafe { *(bytes.add(k as usize + 16 * s) as *const u32) };
                step(&mut sums[c], &a[s], b);
            }
        }
        // Pixels 2q and 2q + 1 of the 8 columns in row `yb + g`; each even lane takes its
        // odd neighbour's too: four pixels side by side, their bytes in order (`words`, as
        // `store4` takes them). For RGB, `u` holds the pair's red and green (R0 R1 G0 G1),
        // `b` its blue.
        let (u, b) = match C {
            3 => (pair(&sums[0], pair(&sums[1 % C], 0)), pair(&sums[2 % C], 0)),
            _ => (pair(&sums[0], 0), 0),
        };
        let (nu, nb) = (shfl_down(u, 1), if C == 3 { shfl_down(b, 1) } else { 0 });
        let xs = cols.x0 + 8 * m + 2 * q;
        if q.is_multiple_of(2) && y <= cols.ylast && xs < cols.dw {
            let mut words = [0u32; C];
            if C == 3 {
                // v = B0 B1 B2 B3; then R0 G0 B0 R1, G1 B1 R2 G2, B2 R3 G3 B3.
                let v = prmt(b, nb, 0x5410);
                words[0] = prmt(u, v, 0x1420);
                words[1 % C] = prmt(prmt(u, v, 0x0053), nu, 0x6410);
                words[2 % C] = prmt(v, nu, 0x3752);
            } else {
                words[0] = prmt(u, nu, 0x5410);
            }
            let n = 4.min(cols.dw - xs);
            // SAFETY: pixels xs .. xs + n of row y are in the output; `aligned` checked its
            // data and pitch.
            unsafe { sink.store4::<C>(dst, xs as u64, y as u64, n as u64, &words, aligned) };
        }
        m += cols.per;
    }
}

/// Pillow's two passes of one tile after another (see the module's description and
/// `ResizePillowTiled`).
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes of `C` channels (1 or 3); the tables
/// hold, at each job's offsets, `dst.width` first columns and `dst.width * (extra & 0xFFFF)`
/// weights, `dst.height` first rows and `dst.height * (extra >> 16)` weights, every first
/// index at least 0; blocks of `SEPARABLE_THREADS` threads along x; `p.tile_words` words of
/// dynamic shared memory, at least `(C * W * 16 + PILLOW_MMA_PAD) / 4`; each job's output
/// and frame are what `sink` writes.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn pillow_mma<const C: usize, S: Sink>(p: ResizePillowTiled, sink: S) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { sink.frame::<C>(&j) };
    let (ints, weights) = (p.ints.ptr(), p.weights.ptr());
    let (xt, yt) = ((j.extra & 0xFFFF) as i32, (j.extra >> 16) as i32);
    let (dw, dh) = (j.dst.width, j.dst.height);
    let rows = p.tile_rows.clamp(1, PILLOW_MMA_TILE_ROWS);
    let rs = ((p.tile_words * 4).saturating_sub(PILLOW_MMA_PAD) / (C as u32 * W)) & !15;
    let bytes = shared::dynamic::<u8>();
    let t = thread_idx_x();
    let (warp, lane) = (t / 32, t % 32);
    let (g, q) = (lane / 4, lane % 4);
    let aligned = (j.dst.data | j.dst.pitch) % 4 == 0;
    let packed = words_readable::<C>(&j.src, Bytes::YUV);
    let mut ty = block_idx_y();
    // `ty < dh.div_ceil(rows)` without the division (as `pillow_tiled`).
    while (ty as u64) * (rows as u64) < dh as u64 {
        let y0 = ty * rows;
        let y1 = (y0 + rows).min(dh) - 1;
        // SAFETY: rows `y0` and `y1` of the job's first-row table.
        let (r0, r1) = unsafe { (*ints.add((j.y + y0) as usize), *ints.add((j.y + y1) as usize)) };
        // The tile's source rows; a valid plan's fit `rs` (the host's choice), and no more
        // are summed.
        let span = (r1 + yt - r0).min(rs as i32);
        let mut tx = block_idx_x();
        while tx < dw.div_ceil(W) {
            let x0 = tx * W;
            // The tile's groups of 8 columns; each takes `per` warps (8 groups: one each).
            // (At least 1, as `x0 < dw`; written with `max` so that no division by zero
            // brings a panic path into the kernel.)
            let groups = (dw - x0).min(W).div_ceil(8).max(1);
            let per = WARPS / groups;
            // 1. The horizontal pass: the warp's 8 columns, 8 source rows at a time.
            if warp < groups * per {
                let m = warp % groups;
                let c0 = x0 + 8 * m;
                let clast = (c0 + 7).min(dw - 1);
                let col = (c0 + g).min(dw - 1);
                // SAFETY: columns of the job's first-column table.
                let (f0, fl, fc) = unsafe {
                    (*ints.add((j.x + c0) as usize), *ints.add((j.x + clast) as usize), *ints.add((j.x + col) as usize))
                };
                let base = f0 & !3;
                let n = steps(base, fl + xt);
                // SAFETY: column `col`'s weights.
                let a = unsafe { operands(weights.add((j.xw + col * xt as u32) as usize), fc, xt, base, q, n) };
                let rows = RowGroups { r0, span, first: warp / groups, per, at: (8 * m + g) * rs + 2 * q, rs };
                // The lane's first pixel of the window.
                let pc = base + 4 * q as i32;
                // One loop for each count of steps: the loads of a lane's steps then come
                // from one address at constant offsets (with the count a variable, each
                // step had its own address, branches and zeroing: 190 instructions a row
                // group of 3 steps, 110 now; session 18, calls 1 and 3: the batch's Pillow
                // filters 15 to 19% faster queued on an H200).
                // SAFETY: the tile's bytes and the job's source (the caller's contract).
                unsafe {
                    match n {
                        0 | 1 => horizontal::<C, 1>(&j.src, &a, pc, g, packed, rows, bytes),
                        2 => horizontal::<C, 2>(&j.src, &a, pc, g, packed, rows, bytes),
                        3 => horizontal::<C, 3>(&j.src, &a, pc, g, packed, rows, bytes),
                        _ => horizontal::<C, 4>(&j.src, &a, pc, g, packed, rows, bytes),
                    }
                }
            }
            sync_threads();
            // 2. The vertical pass: the warp's 8 output rows (their weights read once), 8
            //    columns at a time (call 4's kernel had every warp read each row group's
            //    weights: by the code's count about a fifth of its instructions).
            let out_rows = rows.min(dh - y0);
            let row_groups = out_rows.div_ceil(8).max(1);
            let per_rows = WARPS / row_groups;
            if warp < row_groups * per_rows && span > 0 {
                let mm = warp % row_groups;
                let yb = y0 + 8 * mm;
                let ylast = (yb + 7).min(y0 + out_rows - 1);
                let y = (yb + g).min(ylast);
                // SAFETY: rows of the job's first-row table.
                let (fb, fl, fy) = unsafe {
                    (*ints.add((j.y + yb) as usize), *ints.add((j.y + ylast) as usize), *ints.add((j.y + y) as usize))
                };
                let base = (fb - r0) & !3;
                // The steps the window needs, no more than the tile's bytes hold from
                // `base` on in a column (its rows and the padding): then every read is
                // inside the tile with no bound of its own.
                let n = steps(base, fl - r0 + yt).min((rs + PILLOW_MMA_PAD).saturating_sub(base as u32) / 16);
                // SAFETY: row `y`'s weights.
                let a = unsafe { operands(weights.add((j.yw + y * yt as u32) as usize), fy - r0, yt, base, q, n) };
                let cols = ColGroups { first: warp / row_groups, per: per_rows, groups, x0, dw, yb, ylast, rs };
                // As the horizontal pass, one loop a count of steps: each step's word at a
                // constant offset from the lane's first in each channel.
                // SAFETY: the tile's bytes (`n` bounded above), the job's output.
                unsafe {
                    match n {
                        0 => vertical::<C, S, 0>(&a, base as u32, (g, q), cols, bytes, sink, j.dst, aligned),
                        1 => vertical::<C, S, 1>(&a, base as u32, (g, q), cols, bytes, sink, j.dst, aligned),
                        2 => vertical::<C, S, 2>(&a, base as u32, (g, q), cols, bytes, sink, j.dst, aligned),
                        3 => vertical::<C, S, 3>(&a, base as u32, (g, q), cols, bytes, sink, j.dst, aligned),
                        _ => vertical::<C, S, 4>(&a, base as u32, (g, q), cols, bytes, sink, j.dst, aligned),
                    }
                }
            }
            // The next tile's bytes overwrite these.
            sync_threads();
            tx += grid_dim_x();
        }
        ty += grid_dim_y();
    }
}

/// Pillow's `_mma` kernels into images and into tensors.
macro_rules! pillow_mma_kernels {
    ($([$name:ident, $marker:ident, $tensor:ident, $tensor_marker:ident, $c:literal]),*) => {
        $(
            /// See [`pillow_mma`]; one block of `SEPARABLE_THREADS` a tile.
            ///
            /// # Safety
            /// [`pillow_mma`]'s contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: ResizePillowTiled) {
                // SAFETY: forwarded contract.
                unsafe { pillow_mma::<$c, _>(p, ToImage) }
            }
            abi!(cuimg_abi::resize::$marker, $name);

            /// See [`pillow_mma`], into a tensor ([`ResizePillowTiledTensor`]).
            ///
            /// # Safety
            /// [`pillow_mma`]'s contract, each job's output an image of the tensor of
            /// `p.out.format`.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $tensor(p: ResizePillowTiledTensor) {
                // SAFETY: forwarded contract.
                unsafe { pillow_mma::<$c, _>(p.resize, ToTensor { out: p.out }) }
            }
            abi!(cuimg_abi::resize::$tensor_marker, $tensor);
        )*
    };
}

pillow_mma_kernels!(
    [
        resize_pillow_tiled_mma_c1,
        ResizePillowTiledMmaC1,
        resize_pillow_tiled_mma_c1_tensor,
        ResizePillowTiledMmaC1Tensor,
        1
    ],
    [
        resize_pillow_tiled_mma_c3,
        ResizePillowTiledMmaC3,
        resize_pillow_tiled_mma_c3_tensor,
        ResizePillowTiledMmaC3Tensor,
        3
    ]
);
