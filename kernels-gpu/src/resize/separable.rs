//! OpenCV's separable resize in tiles (see `cuimg_abi::resize::ResizeSeparable`): each
//! source row a tile reads summed across once into shared memory, then combined down by
//! the plan's rule, a constant of each kernel.

use super::sink::{Sink, ToImage, ToTensor};
use super::source::{
    Bytes, Source, WINDOW_WORDS, Yuv, YuvFrames, row, window, window_byte, window_in_rows, words_readable,
};
use super::{clamp32, job, out_layout, round_u8};
use crate::device::dot::{dp2a_hi, dp2a_lo, prmt};
use crate::device::shared;
use crate::device::thread::{block_idx_x, block_idx_y, grid_dim_x, grid_dim_y, sync_threads, thread_idx_x};
use cuimg_abi::resize::{
    ResizeSeparable, ResizeSeparableTensor, ResizeSeparableYuv, SEPARABLE_THREADS, SEPARABLE_TILE_ROWS,
    SEPARABLE_TILE_W,
};

/// Rule 4: OpenCV's area average in float (see [`ResizeSeparable`]). Its sums across are
/// f32, kept in the shared memory as their bits; its weights are f32, carried as their bits
/// where the other rules' are integers.
const AREA: u32 = cuimg_abi::resize::RULE_AREA;

/// One output element of OpenCV's vertical rules (`VResize*<uchar>`), built a tap at a time
/// from the last tap down (so that the right-nested float sum of the cubic's vector form
/// is one accumulator), or, for the area's left-to-right sum, from the first up: `int`, the
/// fixed-point sum or terms; `float`, the cubic's vector form or the area's sum. The rule
/// `R` is a constant (see [`ResizeSeparable`]): a rule read at run time branched on every
/// tap of every element.
#[derive(Clone, Copy)]
struct Vertical {
    int: i32,
    float: f32,
}

impl Vertical {
    const ZERO: Vertical = Vertical { int: 0, float: 0.0 };

    /// Tap `k` (taps come last to first): row sum `s` weighted `b` by rule `R`. Taps past a
    /// plan's count have weight 0 and change nothing. `VEC`: every element of this one is
    /// in the cubic's vector form, so its scalar sum is not kept. `first`: the element's
    /// first tap, whose float product is the sum (`0.0 + p` is `p` but for the sign of a
    /// zero, which rounds to the same byte; LLVM, keeping that sign, added the 0.0).
    #[inline(always)]
    fn step<const R: u32, const VEC: bool>(&mut self, k: usize, s: i32, b: i32, first: bool) {
        let add = |sum: f32, p: f32| if first { p } else { sum + p };
        match R {
            // OpenCV's `VResizeLinear<uchar>`: each product of the row over 16 shifted by 16.
            0 => self.int += (b * (s >> 4)) >> 16,
            1 => {
                // OpenCV's vector form: each weight over 2^22 in float, the products summed as
                // S0*b0 + (S1*b1 + (S2*b2 + S3*b3)); the scalar form in `int`.
                if k < 4 {
                    let scale = 1.0f32 / (2048.0 * 2048.0);
                    self.float = add(self.float, s as f32 * (b as f32 * scale));
                }
                if !VEC {
                    self.int = self.int.wrapping_add(s.wrapping_mul(b));
                }
            }
            // `sum += beta*buf` (`ResizeArea_Invoker`), the row's sum and weight as bits.
            AREA => self.float = add(self.float, f32::from_bits(b as u32) * f32::from_bits(s as u32)),
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
            AREA => round_u8(self.float),
            _ => (self.int.wrapping_add(1 << 21) >> 22).clamp(0, 255) as u8,
        }
    }
}

/// Entry `at` of the weight table of rule `R`: the area's f32 as its bits, the others' shorts.
///
/// # Safety
/// `at` lies inside that table.
#[inline(always)]
unsafe fn weight<const R: u32>(shorts: *const i16, floats: *const f32, at: usize) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { if R == AREA { (*floats.add(at)).to_bits() as i32 } else { *shorts.add(at) as i32 } }
}

/// Four `i32` read as one 16-byte shared load.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Quad([i32; 4]);

/// OpenCV's separable fixed point, or its area in float (rule 4; see [`ResizeSeparable`]),
/// for plans of exactly `TX` taps across and `TY` down (the host's pairing of rules and
/// kernels: the tap loops' bounds are constants; OpenCV's filters have as many each way,
/// the area's padded lists may not) combined down by rule `R`, a tile of `SEPARABLE_TILE_W` columns by `p.tile_rows` rows per
/// block and iteration, its pixels read from `source` and written to `sink`.
///
/// Shared memory holds the tile's row sums as `sums[(k * C + c) * SEPARABLE_TILE_W + xl]`
/// for source row `r0 + k` (clamped into the source when read), channel `c`, column `xl` of
/// the tile: consecutive lanes write consecutive words, and each thread reads its four
/// columns as one 16-byte load.
///
/// # Safety
/// `p.jobs` holds `gridDim.z` jobs of valid planes; the tables hold, at each job's offsets,
/// `dst.width` first columns and `dst.width * x_taps` weights, `dst.height` first rows and
/// `dst.height * y_taps` weights; `x_taps` is `TX` and `y_taps` `TY`; blocks of
/// `SEPARABLE_THREADS` threads along x; `p.tile_words` i32 of dynamic shared memory; each
/// job's output and frame are what `sink` writes, its source what `source` reads.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn separable<const C: usize, const TX: usize, const TY: usize, const R: u32, S: Sink, Src: Source>(
    p: ResizeSeparable,
    sink: S,
    source: Src,
) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    let yuv = source.yuv(&j);
    // SAFETY: the job's frame, when it has one, is writable memory around its output.
    unsafe { sink.frame::<C>(&j) };
    // Indices are u32 (image sides are), addresses u64 only where formed: 64-bit values
    // take two registers each, and the bound of 3 blocks an SM leaves 80.
    const W: u32 = SEPARABLE_TILE_W;
    const _: () = assert!(W == 64 && SEPARABLE_THREADS == 256, "phase 1's lanes: 64 or 32 columns");
    let (ints, shorts, floats) = (p.ints.ptr(), p.shorts.ptr(), p.floats.ptr());
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
    // Source rows read a word a load (`across_words`) where the image allows it; else
    // (views of a larger image, YUV frames) a byte a load.
    let packed = words_readable::<C>(&j.src, Src::YUV);
    let by_words = TX * C >= 8;
    // Block-uniform tile loops: every thread of the block runs the same iterations, so the
    // barriers inside are reached by all.
    let mut ty = block_idx_y();
    // `ty < dh.div_ceil(rows)` without the division (about 30 instructions a thread, the
    // divisor not a constant), in 64 bits: the same for every `ty`, `rows` and `dh`.
    while (ty as u64) * (rows as u64) < dh as u64 {
        let y0 = ty * rows;
        let y1 = (y0 + rows).min(dh) - 1;
        // SAFETY: rows `y0` and `y1` of the job's first-row table.
        let (r0, r1) = unsafe { (*ints.add((j.y + y0) as usize), *ints.add((j.y + y1) as usize)) };
        let span = (r1 + TY as i32 - r0).min(cap);
        let mut tx = block_idx_x();
        while tx < dw.div_ceil(W) {
            let x0 = tx * W;
            // 1. The row sums: thread `t` takes column `t % lanes` of rows `t / lanes`, step
            //    `step1` (256 / lanes). `lanes` is the tile's 64 columns, or 32 where it has
            //    32 or fewer (a 224-wide output's last tile): with 64, half its warps had no
            //    column and the others summed every row, so it took as long as a full tile.
            let narrow = dw - x0 <= 32;
            let lanes_log2 = if narrow { 5 } else { 6 };
            let step1 = SEPARABLE_THREADS >> lanes_log2;
            let xl = t & ((1 << lanes_log2) - 1);
            let x = x0 + xl;
            if x < dw {
                // SAFETY: column `x`'s entries of the job's tables.
                let first32 = unsafe { *ints.add((j.x + x) as usize) };
                let first = first32 as i64;
                let mut a = [0i32; TX];
                let mut cols = [0u32; TX];
                for i in 0..TX {
                    cols[i] = clamp32(first32.wrapping_add(i as i32), j.src.width) * C as u32;
                    // SAFETY: as above.
                    a[i] = unsafe { weight::<R>(shorts, floats, j.xw as usize + x as usize * TX + i) };
                }
                // Columns wholly inside the source are read at constant offsets from the
                // first (one address a row, not one a tap), as words or, in kernels of fewer
                // bytes a column, as bytes; the others through `cols`.
                let inside = first >= 0 && first + TX as i64 <= j.src.width as i64;
                // Read as words where a column's taps are 8 bytes or more (call 1 of session
                // 10: the RGB8 linear's 6 bytes, 3 words, took 5% longer, the extra shifts
                // outweighing the loads saved) and its windows lie in every row.
                let words = by_words && inside && packed && window_in_rows(cols[0] as u64, TX * C, j.src.pitch);
                // Two rows an iteration, `step1` apart: twice the loads in flight (the second
                // row's are clamped into the source, so they read memory even past the
                // span; its sums are kept only inside it).
                let mut k = (t >> lanes_log2) as i32;
                while k < span {
                    let k2 = k + step1 as i32;
                    let (acc, acc2) = if Src::YUV {
                        // SAFETY: the job's frame (the caller's contract).
                        unsafe { yuv_across::<C, TX, R>(&yuv, (r0 + k) as i64, (r0 + k2) as i64, first, &a) }
                    } else {
                        // SAFETY: rows of the source (clamped into it).
                        let (line, line2) = unsafe { (row(src, r0 + k, &j.src), row(src, r0 + k2, &j.src)) };
                        // SAFETY: `cols` clamped into the rows; where `inside`, taps `0..TX` are
                        // `cols[0] + i * C` (in the row: `first + TX <= width`), and where
                        // `words`, their windows' words are the image's.
                        unsafe {
                            if words {
                                let c0 = cols[0] as usize;
                                across_words::<C, TX, R>(line.add(c0), line2.add(c0), &a)
                            } else if inside && !by_words {
                                across::<C, TX, R, true>(line, line2, &cols, &a)
                            } else {
                                across::<C, TX, R, false>(line, line2, &cols, &a)
                            }
                        }
                    };
                    // Row k's sums from one address, channel `c` at a constant offset; row
                    // k2's a constant further (an address a store took four instructions).
                    let at = (k as u32 * C as u32 * W + xl) as usize;
                    let row2 = (step1 * C as u32 * W) as usize;
                    for c in 0..C {
                        // SAFETY: k < span <= cap, so the index is below `tile_words`.
                        unsafe { *sums.add(at + c * W as usize) = acc[c] };
                        if k2 < span {
                            // SAFETY: as above, for k2.
                            unsafe { *sums.add(at + row2 + c * W as usize) = acc2[c] };
                        }
                    }
                    k += 2 * step1 as i32;
                }
            }
            sync_threads();
            // 2. The output: four pixels a thread, of one row or more (`out_layout`; a
            //    tile has at most 32).
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
                    let mut b = [0i32; TY];
                    for k in 0..TY {
                        // SAFETY: as above.
                        b[k] = unsafe { weight::<R>(shorts, floats, j.yw as usize + y as usize * TY + k) };
                    }
                    let down = Down { sums, at: xs - x0, kk, span, xs, vector_elems: j.extra };
                    // The cubic's four pixels are, but for a row's last few elements, all in
                    // its vector form: those skip the scalar sum.
                    // SAFETY: `sums` holds `span` rows of the tile (`1 <= span <= cap`).
                    let words = unsafe {
                        if R == 1 && (xs + 4) * C as u32 <= j.extra {
                            down.four::<C, TY, R, true>(&b)
                        } else {
                            down.four::<C, TY, R, false>(&b)
                        }
                    };
                    // SAFETY: pixels xs .. xs + n of row y are in the output; `aligned` checked
                    // its data and pitch.
                    unsafe { sink.store4::<C>(j.dst, xs as u64, y as u64, n as u64, &words, aligned) };
                }
                yl += step;
            }
            // The next tile's sums overwrite these.
            sync_threads();
            tx += grid_dim_x();
        }
        ty += grid_dim_y();
    }
}

/// The sums across of one column of two source rows, each channel: `T` taps weighted by
/// `a` at `cols` (byte offsets in the rows), or, where `INSIDE`, at `cols[0] + i * C`,
/// constant offsets from one address; by rule `R` (the area's in float, as bits).
///
/// # Safety
/// Every offset read lies in both rows.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn across<const C: usize, const T: usize, const R: u32, const INSIDE: bool>(
    line: *const u8,
    line2: *const u8,
    cols: &[u32; T],
    a: &[i32; T],
) -> ([i32; C], [i32; C]) {
    let (mut acc, mut acc2) = (Across::<C>::ZERO, Across::<C>::ZERO);
    // SAFETY: the caller's contract.
    let (p, p2) = unsafe { (line.add(cols[0] as usize), line2.add(cols[0] as usize)) };
    for i in 0..T {
        for c in 0..C {
            // SAFETY: pixels of the rows (the caller's contract).
            let (px, px2) = unsafe {
                if INSIDE {
                    (*p.add(i * C + c) as i32, *p2.add(i * C + c) as i32)
                } else {
                    (*line.add(cols[i] as usize + c) as i32, *line2.add(cols[i] as usize + c) as i32)
                }
            };
            acc.add::<R>(c, px, a[i], i == 0);
            acc2.add::<R>(c, px2, a[i], i == 0);
        }
    }
    (acc.sums::<R>(), acc2.sums::<R>())
}

/// [`across`] of a column wholly inside the rows, its `T * C` bytes at `p` and `p2` read as
/// [`window`]s: a load a word, not a byte.
///
/// # Safety
/// Both windows' words are readable ([`window`]'s contract).
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn across_words<const C: usize, const T: usize, const R: u32>(
    p: *const u8,
    p2: *const u8,
    a: &[i32; T],
) -> ([i32; C], [i32; C]) {
    // SAFETY: the caller's contract.
    let (w, w2): ([u32; WINDOW_WORDS], [u32; WINDOW_WORDS]) = unsafe { (window(p, T * C), window(p2, T * C)) };
    // (Not Lanczos-4's 8 taps: session 10's call 3 measured its RGB8 kernel 10 to 15%
    // slower so, against 4% faster for the cubic's 4.)
    if R != AREA && T <= 4 && T.is_multiple_of(2) {
        return (dot_across::<C, T>(&w, a), dot_across::<C, T>(&w2, a));
    }
    let (mut acc, mut acc2) = (Across::<C>::ZERO, Across::<C>::ZERO);
    for i in 0..T {
        for c in 0..C {
            acc.add::<R>(c, window_byte(&w, i * C + c), a[i], i == 0);
            acc2.add::<R>(c, window_byte(&w2, i * C + c), a[i], i == 0);
        }
    }
    (acc.sums::<R>(), acc2.sums::<R>())
}

/// The integer rules' sums across of one row's [`window`], each channel, two taps an
/// instruction: `dp2a` multiplies two bytes by two 16-bit weights and adds both to a 32-bit
/// sum, exactly (the products and sums fit; the sum wraps as `wrapping_add` does), where a
/// byte a tap took an extract and a multiply-add. The weights are OpenCV's shorts (`a` holds
/// them sign-extended); a channel's bytes, `C` apart, are gathered four to a word.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
fn dot_across<const C: usize, const T: usize>(w: &[u32; WINDOW_WORDS], a: &[i32; T]) -> [i32; C] {
    // Weights of taps 2m and 2m + 1 as two halves (loop-invariant: computed once a column).
    let mut pairs = [0u32; 4];
    for m in 0..T / 2 {
        pairs[m] = (a[2 * m] as u32 & 0xFFFF) | (a[2 * m + 1] as u32) << 16;
    }
    let mut sums = [0i32; C];
    for c in 0..C {
        let mut q = 0;
        while q < T {
            // Taps q .. q + 4 of channel c (where T - q is 2, bytes 2 and 3 repeat tap q + 1:
            // `dp2a.lo` reads only bytes 0 and 1).
            let k = |i: usize| (q + i.min(T - 1 - q)) * C + c;
            let b = gather4(w, [k(0), k(1), k(2), k(3)]);
            sums[c] = dp2a_lo(pairs[q / 2], b, sums[c]);
            if q + 2 < T {
                sums[c] = dp2a_hi(pairs[q / 2 + 1], b, sums[c]);
            }
            q += 4;
        }
    }
    sums
}

/// Bytes `ks` (ascending, constants after unrolling) of the window `w` in one word, byte `i`
/// from byte `ks[i]`: one `prmt` where they lie in two adjacent words, two where in three,
/// three where in four (shifts and masks took three to four instructions a byte).
#[inline(always)]
fn gather4(w: &[u32; WINDOW_WORDS], ks: [usize; 4]) -> u32 {
    let (lo, hi) = (ks[0] / 4, ks[3] / 4);
    // The selector placing, at byte `i`, byte `ks[i] - 4 * base` of the pair of words from
    // `base` where `ks[i]` lies in it, else `other(i)`.
    let sel = |base: usize, other: &dyn Fn(usize) -> u32| -> u32 {
        let mut s = 0;
        for (i, &k) in ks.iter().enumerate() {
            let nib = if k / 4 >= base && k / 4 <= base + 1 { (k - 4 * base) as u32 } else { other(i) };
            s |= nib << (4 * i);
        }
        s
    };
    if hi <= lo + 1 {
        prmt(w[lo], w[(lo + 1).min(WINDOW_WORDS - 1)], sel(lo, &|_| 0))
    } else if hi == lo + 2 {
        let t = prmt(w[lo], w[lo + 1], sel(lo, &|_| 0));
        // Bytes from `t` where they are in place, else from word `lo + 2` (bytes 4 to 7).
        let mut s = 0;
        for (i, &k) in ks.iter().enumerate() {
            let nib = if k / 4 <= lo + 1 { i as u32 } else { (4 + k - 4 * (lo + 2)) as u32 };
            s |= nib << (4 * i);
        }
        prmt(t, w[lo + 2], s)
    } else {
        let t = prmt(w[lo], w[lo + 1], sel(lo, &|_| 0));
        let u = prmt(w[lo + 2], w[lo + 3], sel(lo + 2, &|_| 0));
        let mut s = 0;
        for (i, &k) in ks.iter().enumerate() {
            let nib = if k / 4 <= lo + 1 { i as u32 } else { 4 + i as u32 };
            s |= nib << (4 * i);
        }
        prmt(t, u, s)
    }
}

/// A column's sums across, each channel: wrapping integer sums, or the area's float ones.
struct Across<const C: usize> {
    int: [i32; C],
    float: [f32; C],
}

impl<const C: usize> Across<C> {
    const ZERO: Self = Across { int: [0; C], float: [0.0; C] };

    /// Pixel value `v` of channel `c` times weight `a`, added by rule `R`; `first`: the
    /// first tap, whose float product is the sum (see `Vertical::step`).
    #[inline(always)]
    fn add<const R: u32>(&mut self, c: usize, v: i32, a: i32, first: bool) {
        if R == AREA {
            // `buf[dx] += S[sx]*alpha`, left to right, from `buf[dx] = 0`.
            let p = v as f32 * f32::from_bits(a as u32);
            self.float[c] = if first { p } else { self.float[c] + p };
        } else {
            self.int[c] = self.int[c].wrapping_add(v.wrapping_mul(a));
        }
    }

    /// The sums as the shared memory keeps them (the area's as bits).
    #[inline(always)]
    fn sums<const R: u32>(&self) -> [i32; C] {
        if R == AREA { self.float.map(|f| f.to_bits() as i32) } else { self.int }
    }
}

/// [`across`] for a YUV source: `T` taps from column `first` weighted by `a`, of source rows
/// `ra` and `rb` (clamped into the frame), each pixel decoded as it is read.
///
/// # Safety
/// `y`'s frame is readable, of its layout's bytes.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn yuv_across<const C: usize, const T: usize, const R: u32>(
    y: &Yuv,
    ra: i64,
    rb: i64,
    first: i64,
    a: &[i32; T],
) -> ([i32; C], [i32; C]) {
    let (ra, rb) = (y.row(ra), y.row(rb));
    let (mut acc, mut acc2) = (Across::<C>::ZERO, Across::<C>::ZERO);
    for i in 0..T {
        // SAFETY: rows from `Yuv::row`, of the caller's frame.
        let (p, p2) = unsafe { (y.rgb(first + i as i64, ra), y.rgb(first + i as i64, rb)) };
        for c in 0..C {
            acc.add::<R>(c, p[c], a[i], i == 0);
            acc2.add::<R>(c, p2[c], a[i], i == 0);
        }
    }
    (acc.sums::<R>(), acc2.sums::<R>())
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
    /// The four pixels' first column in the output.
    xs: u32,
    vector_elems: u32,
}

impl Down {
    /// The four pixels' bytes as [`store4`] takes them: rule `R` over the `T` rows from
    /// `kk` weighted by `b`; `VEC`: every element is in the cubic's vector form. A valid
    /// plan's rows lie in `0..span`; others are read clamped into it, which keeps every
    /// access inside the tile without a branch a tap (a skip cost one, with its predicate
    /// juggling, on every tap of every element).
    ///
    /// # Safety
    /// `sums` holds `span` rows of the tile, `span >= 1`.
    #[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
    #[inline(always)]
    unsafe fn four<const C: usize, const T: usize, const R: u32, const VEC: bool>(&self, b: &[i32; T]) -> [u32; C] {
        const W: u32 = SEPARABLE_TILE_W;
        let mut words = [0u32; C];
        for c in 0..C {
            let mut v = [Vertical::ZERO; 4];
            for n in 0..T {
                // Last tap first, but for the area's sum (see `Vertical`).
                let k = if R == AREA { n } else { T - 1 - n };
                let r = (self.kk + k as i32).min(self.span - 1).max(0);
                let at = (r as u32 * C as u32 + c as u32) * W + self.at;
                // SAFETY: 0 <= r < span, 4 | at (W and `self.at` are), so the four words lie
                // inside the tile's rows, 16-byte aligned.
                let q = unsafe { *(self.sums.add(at as usize) as *const Quad) };
                for i in 0..4 {
                    v[i].step::<R, VEC>(k, q.0[i], b[k], n == 0);
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

/// The separable kernels, one per channel count and tap count, into images and into
/// tensors, each running `$body` (its rules).
macro_rules! separable_kernels {
    ($body:ident, $([$name:ident, $marker:ident, $tensor:ident, $tensor_marker:ident, $c:literal, $($t:literal),+]),*) => {
        $(
            /// See [`separable`]; 2-D over the largest output, one job a grid layer.
            ///
            /// # Safety
            /// [`separable`]'s contract, for plans of exactly this kernel's taps.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: ResizeSeparable) {
                // SAFETY: forwarded contract (the rules by taps: `by_rule`, or `area`).
                unsafe { $body::<$c, $($t),+, _, _>(p, ToImage, Bytes) }
            }
            abi!(cuimg_abi::resize::$marker, $name);

            /// See [`separable`], into a tensor ([`ResizeSeparableTensor`]); 2-D over the
            /// largest tensor image, one job a grid layer.
            ///
            /// # Safety
            /// [`separable`]'s contract, for plans of exactly this kernel's taps, each job's
            /// output an image of the tensor of `p.out.format`.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $tensor(p: ResizeSeparableTensor) {
                // SAFETY: forwarded contract.
                unsafe { $body::<$c, $($t),+, _, _>(p.resize, ToTensor { out: p.out }, Bytes) }
            }
            abi!(cuimg_abi::resize::$tensor_marker, $tensor);
        )*
    };
}

/// [`separable`] with the rule a constant of each body: a kernel of 2 taps takes linear and
/// OpenCV's exact linear, of 4 the cubic, of 8 Lanczos-4 (`ResizeSeparable`'s contract; the
/// area has kernels of its own, so that its body leaves these kernels' registers as they
/// were).
///
/// # Safety
/// [`separable`]'s contract.
#[inline(always)]
unsafe fn by_rule<const C: usize, const T: usize, S: Sink, Src: Source>(p: ResizeSeparable, sink: S, source: Src) {
    // SAFETY: forwarded contract.
    unsafe {
        match T {
            2 if p.rule == 3 => separable::<C, T, T, 3, S, Src>(p, sink, source),
            2 => separable::<C, T, T, 0, S, Src>(p, sink, source),
            4 => separable::<C, T, T, 1, S, Src>(p, sink, source),
            _ => separable::<C, T, T, 2, S, Src>(p, sink, source),
        }
    }
}

/// [`separable`] by the area's rule, for its own kernels (see `by_rule`).
///
/// # Safety
/// [`separable`]'s contract.
#[inline(always)]
unsafe fn area<const C: usize, const TX: usize, const TY: usize, S: Sink, Src: Source>(
    p: ResizeSeparable,
    sink: S,
    source: Src,
) {
    // SAFETY: forwarded contract.
    unsafe { separable::<C, TX, TY, AREA, S, Src>(p, sink, source) }
}

/// The separable kernels from YUV frames (RGB) into tensors, one per tap count.
macro_rules! separable_yuv_kernels {
    ($([$name:ident, $marker:ident, $t:literal]),*) => {
        $(
            /// See [`separable`], from YUV frames into a tensor ([`ResizeSeparableYuv`]).
            ///
            /// # Safety
            /// [`separable`]'s contract, for plans of exactly this kernel's taps, each job's
            /// source a frame of `p.layout` and its output an image of the tensor of
            /// `p.out.format`.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(p: ResizeSeparableYuv) {
                let source = YuvFrames { layout: p.layout, coef: p.coef };
                // SAFETY: forwarded contract.
                unsafe { by_rule::<3, $t, _, _>(p.resize, ToTensor { out: p.out }, source) }
            }
            abi!(cuimg_abi::resize::$marker, $name);
        )*
    };
}

separable_yuv_kernels!(
    [resize_separable2_yuv_tensor, ResizeSeparable2YuvTensor, 2],
    [resize_separable4_yuv_tensor, ResizeSeparable4YuvTensor, 4],
    [resize_separable_yuv_tensor, ResizeSeparableYuvTensor, 8]
);

separable_kernels!(
    by_rule,
    [resize_separable2_c1, ResizeSeparable2C1, resize_separable2_c1_tensor, ResizeSeparable2C1Tensor, 1, 2],
    [resize_separable2_c2, ResizeSeparable2C2, resize_separable2_c2_tensor, ResizeSeparable2C2Tensor, 2, 2],
    [resize_separable2_c3, ResizeSeparable2C3, resize_separable2_c3_tensor, ResizeSeparable2C3Tensor, 3, 2],
    [resize_separable2_c4, ResizeSeparable2C4, resize_separable2_c4_tensor, ResizeSeparable2C4Tensor, 4, 2],
    [resize_separable4_c1, ResizeSeparable4C1, resize_separable4_c1_tensor, ResizeSeparable4C1Tensor, 1, 4],
    [resize_separable4_c2, ResizeSeparable4C2, resize_separable4_c2_tensor, ResizeSeparable4C2Tensor, 2, 4],
    [resize_separable4_c3, ResizeSeparable4C3, resize_separable4_c3_tensor, ResizeSeparable4C3Tensor, 3, 4],
    [resize_separable4_c4, ResizeSeparable4C4, resize_separable4_c4_tensor, ResizeSeparable4C4Tensor, 4, 4],
    [resize_separable_c1, ResizeSeparableC1, resize_separable_c1_tensor, ResizeSeparableC1Tensor, 1, 8],
    [resize_separable_c2, ResizeSeparableC2, resize_separable_c2_tensor, ResizeSeparableC2Tensor, 2, 8],
    [resize_separable_c3, ResizeSeparableC3, resize_separable_c3_tensor, ResizeSeparableC3Tensor, 3, 8],
    [resize_separable_c4, ResizeSeparableC4, resize_separable_c4_tensor, ResizeSeparableC4Tensor, 4, 8]
);

// The area's (rule 4): 4 taps each way, 5 across and 4 down, 8 across and 4 down, 8 each
// way.
separable_kernels!(
    area,
    [resize_area4_c1, ResizeArea4C1, resize_area4_c1_tensor, ResizeArea4C1Tensor, 1, 4, 4],
    [resize_area4_c2, ResizeArea4C2, resize_area4_c2_tensor, ResizeArea4C2Tensor, 2, 4, 4],
    [resize_area4_c3, ResizeArea4C3, resize_area4_c3_tensor, ResizeArea4C3Tensor, 3, 4, 4],
    [resize_area4_c4, ResizeArea4C4, resize_area4_c4_tensor, ResizeArea4C4Tensor, 4, 4, 4],
    [resize_area54_c1, ResizeArea54C1, resize_area54_c1_tensor, ResizeArea54C1Tensor, 1, 5, 4],
    [resize_area54_c2, ResizeArea54C2, resize_area54_c2_tensor, ResizeArea54C2Tensor, 2, 5, 4],
    [resize_area54_c3, ResizeArea54C3, resize_area54_c3_tensor, ResizeArea54C3Tensor, 3, 5, 4],
    [resize_area54_c4, ResizeArea54C4, resize_area54_c4_tensor, ResizeArea54C4Tensor, 4, 5, 4],
    [resize_area84_c1, ResizeArea84C1, resize_area84_c1_tensor, ResizeArea84C1Tensor, 1, 8, 4],
    [resize_area84_c2, ResizeArea84C2, resize_area84_c2_tensor, ResizeArea84C2Tensor, 2, 8, 4],
    [resize_area84_c3, ResizeArea84C3, resize_area84_c3_tensor, ResizeArea84C3Tensor, 3, 8, 4],
    [resize_area84_c4, ResizeArea84C4, resize_area84_c4_tensor, ResizeArea84C4Tensor, 4, 8, 4],
    [resize_area8_c1, ResizeArea8C1, resize_area8_c1_tensor, ResizeArea8C1Tensor, 1, 8, 8],
    [resize_area8_c2, ResizeArea8C2, resize_area8_c2_tensor, ResizeArea8C2Tensor, 2, 8, 8],
    [resize_area8_c3, ResizeArea8C3, resize_area8_c3_tensor, ResizeArea8C3Tensor, 3, 8, 8],
    [resize_area8_c4, ResizeArea8C4, resize_area8_c4_tensor, ResizeArea8C4Tensor, 4, 8, 8]
);
