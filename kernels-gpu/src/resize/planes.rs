//! Pillow's horizontal pass four taps at a time, by integer dot products (the `_planes`
//! kernels, `cuimg_abi::resize::ResizePillowTiled`): each 22-bit weight `w` split on the
//! host into its low byte `w & 0xFF` and the signed rest `w >> 8`, so that
//! `sum(x * w) = dp4a(x, low bytes) + 256 * (dp2a(rest 0 and 1, x) + dp2a(rest 2 and 3, x))`
//! for four taps `x` of one channel packed in a word. The same integers as Pillow's sum, in
//! wrapping 32-bit arithmetic: three instructions for four taps where a byte load, and for
//! RGB a byte extract, and a multiply-add took each tap.
//!
//! A column's taps are `4 * groups` source columns from `first`, weighted by its groups'
//! three words (low bytes, rests of taps 0 and 1, rests of taps 2 and 3, and a word of
//! padding), 16 bytes a group read in one load, each group's `stride` vectors after the
//! last (so a warp's columns read consecutive vectors).

use super::clamp32;
use crate::device::dot::{dp2a_hi, dp2a_lo, dp4a, prmt};
use crate::device::vector::{V16, load_global_u32, load_global_v16};

/// Channel `c`'s bytes of four pixels from their `4 * C` bytes as words (pixel `i` in byte
/// `i`): the word itself for one channel, two `prmt`s a channel for RGB.
#[inline(always)]
pub(super) fn split<const C: usize>(w: [u32; C]) -> [u32; C] {
    let mut x = [0u32; C];
    if C == 3 {
        // w[0] = R0 G0 B0 R1, w[1] = G1 B1 R2 G2, w[2] = B2 R3 G3 B3.
        x[0] = prmt(prmt(w[0], w[1], 0x0630), w[2], 0x5210);
        x[1] = prmt(prmt(w[0], w[1], 0x0741), w[2], 0x6210);
        x[2] = prmt(prmt(w[0], w[1], 0x0052), w[2], 0x7410);
    } else {
        x = w;
    }
    x
}

/// A row's words from an aligned address, each funnel-shifted by the taps' misalignment
/// (as [`super::source::window`] reads them): a group's `C` words, the word that ends a
/// group's taps carried into the next (the groups of a column are `4 * C` bytes apart, so
/// they share it and their misalignment).
#[derive(Clone, Copy)]
struct Words {
    at: *const u32,
    shift: u32,
    carry: u32,
}

impl Words {
    /// From the taps at `p`.
    ///
    /// # Safety
    /// The aligned word holding `p` is readable global memory.
    #[inline(always)]
    unsafe fn new(p: *const u8) -> Words {
        let at = (p as u64 & !3) as usize as *const u32;
        // SAFETY: the caller's contract.
        let carry = unsafe { load_global_u32(at) };
        // SAFETY: one word on, still within the row's windows (the caller reads them).
        Words { at: unsafe { at.add(1) }, shift: (p as u64 & 3) as u32 * 8, carry }
    }

    /// The next `4 * C` bytes.
    ///
    /// # Safety
    /// The next `C` aligned words are readable global memory.
    #[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
    #[inline(always)]
    unsafe fn next<const C: usize>(&mut self) -> [u32; C] {
        let mut w = [0u32; C];
        for i in 0..C {
            // SAFETY: the caller's contract.
            let v = unsafe { load_global_u32(self.at.add(i)) };
            // (A 64-bit shift of two words: one `shf`.)
            w[i] = ((self.carry as u64 | (v as u64) << 32) >> self.shift) as u32;
            self.carry = v;
        }
        // SAFETY: the words after them (read only if the caller's contract covers them).
        self.at = unsafe { self.at.add(C) };
        w
    }
}

/// As [`split`], a byte a load, from the four pixels at column `col` of `line` on (each
/// clamped into its `width`).
///
/// # Safety
/// `line` is a row of at least one pixel of `width` of `C` bytes each.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
unsafe fn gather<const C: usize>(line: *const u8, col: i32, width: u32) -> [u32; C] {
    let mut x = [0u32; C];
    for i in 0..4u32 {
        let at = clamp32(col.wrapping_add(i as i32), width) as usize * C;
        for c in 0..C {
            // SAFETY: a pixel of the row (clamped into it).
            x[c] |= (unsafe { *line.add(at + c) } as u32) << (8 * i);
        }
    }
    x
}

/// The sums of a column's taps in one row: `(low, rest)` a channel each, the sum being
/// `low + 256 * rest`.
#[derive(Clone, Copy)]
struct Parts<const C: usize> {
    low: [i32; C],
    rest: [i32; C],
}

#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
impl<const C: usize> Parts<C> {
    #[inline(always)]
    fn add(&mut self, x: [u32; C], (low, rest01, rest23): (u32, u32, u32)) {
        for c in 0..C {
            self.low[c] = dp4a(x[c], low, self.low[c]);
            self.rest[c] = dp2a_hi(rest23, x[c], dp2a_lo(rest01, x[c], self.rest[c]));
        }
    }

    /// Pillow's sum, from its rounding term `half`.
    #[inline(always)]
    fn sum(&self, half: i32) -> [i32; C] {
        let mut s = [half; C];
        for c in 0..C {
            s[c] = s[c].wrapping_add(self.low[c]).wrapping_add(self.rest[c] << 8);
        }
        s
    }
}

/// How many of a column's `groups` [`super::source::window`] may read, the rest read a byte a load: none
/// but where the image is `packed` ([`super::source::words_readable`]) and the taps lie in
/// the row; then the groups whose window lies in every row ([`super::source::window_in_rows`]:
/// all, or all but the last, whose window ends at the row's last pixel).
#[inline(always)]
pub(super) fn fast_groups<const C: usize>(packed: bool, first: i64, groups: u32, width: u32, pitch: u64) -> u32 {
    if !packed || groups == 0 || first < 0 || first + 4 * groups as i64 > width as i64 {
        return 0;
    }
    let fits = |g: u32| super::source::window_in_rows((first as u64 + 4 * g as u64) * C as u64, 4 * C, pitch);
    if fits(groups - 1) {
        groups
    } else if groups >= 2 && fits(groups - 2) {
        groups - 1
    } else {
        0
    }
}

/// Pillow's horizontal sums (from `half`) of one column in rows `line` and `line2`: its
/// `groups` of taps from `first` on, the first `fast` read as aligned words.
///
/// # Safety
/// `line` and `line2` are rows of a source `width` pixels of `C` bytes wide, each
/// [`super::source::window`] of the first `fast` groups readable (as [`fast_groups`] counts
/// them); `weights` holds the column's `groups` vectors, `stride` apart.
#[inline(always)]
pub(super) unsafe fn sums<const C: usize>(
    (line, line2): (*const u8, *const u8),
    first: i32,
    (groups, fast): (u32, u32),
    weights: *const V16,
    stride: usize,
    width: u32,
    half: i32,
) -> ([i32; C], [i32; C]) {
    let (mut a, mut b) = (Parts { low: [0; C], rest: [0; C] }, Parts { low: [0; C], rest: [0; C] });
    let vector = |k: V16| (k.0[0], k.0[1], k.0[2]);
    let mut w = weights;
    let mut g = 0;
    if fast > 0 {
        // SAFETY: the first window's first words (`fast > 0`: the taps lie in the rows).
        let (mut wa, mut wb) =
            unsafe { (Words::new(line.add(first as usize * C)), Words::new(line2.add(first as usize * C))) };
        // Two groups an iteration, all their loads before the sums: session 12's call 2 found
        // a fifth of the RGB8 kernel's time waiting on loads made just before their first
        // use. (Loading each group while the one before is summed took 15 more instructions
        // a group, in copies, and was slower in call 3.)
        while g + 1 < fast {
            // SAFETY: the two groups' vectors and windows (the caller's `fast`).
            unsafe {
                let (k0, k1) = (load_global_v16(w), load_global_v16(w.add(stride)));
                w = w.add(2 * stride);
                let (a0, b0) = (wa.next::<C>(), wb.next::<C>());
                let (a1, b1) = (wa.next::<C>(), wb.next::<C>());
                a.add(split::<C>(a0), vector(k0));
                b.add(split::<C>(b0), vector(k0));
                a.add(split::<C>(a1), vector(k1));
                b.add(split::<C>(b1), vector(k1));
            }
            g += 2;
        }
        if g < fast {
            // SAFETY: the group's vector and windows (the caller's `fast`).
            unsafe {
                let k = load_global_v16(w);
                w = w.add(stride);
                a.add(split::<C>(wa.next::<C>()), vector(k));
                b.add(split::<C>(wb.next::<C>()), vector(k));
            }
            g += 1;
        }
    }
    while g < groups {
        let col = first.wrapping_add(4 * g as i32);
        // SAFETY: the group's vector; pixels of the rows (clamped into them).
        unsafe {
            let k = load_global_v16(w);
            w = w.add(stride);
            a.add(gather::<C>(line, col, width), vector(k));
            b.add(gather::<C>(line2, col, width), vector(k));
        }
        g += 1;
    }
    (a.sum(half), b.sum(half))
}

/// Four words of four bytes transposed: byte `k` of result `i` is byte `i` of `q[k]` (eight
/// `prmt`s).
#[inline(always)]
pub(super) fn transpose(q: [u32; 4]) -> [u32; 4] {
    // Pixels 0 and 1 of rows 0 and 1 (and of rows 2 and 3), then pixels 2 and 3.
    let (t0, t1) = (prmt(q[0], q[1], 0x5140), prmt(q[2], q[3], 0x5140));
    let (t2, t3) = (prmt(q[0], q[1], 0x7362), prmt(q[2], q[3], 0x7362));
    [prmt(t0, t1, 0x5410), prmt(t0, t1, 0x7632), prmt(t2, t3, 0x5410), prmt(t2, t3, 0x7632)]
}

/// Pillow's vertical sums (from `half`) of four output pixels side by side, from a tile's
/// horizontal bytes in shared memory (`bytes[(r * C + c) * W + at + i]`: row `r`, channel
/// `c`, pixel `i`): its `groups` of four rows from row `kk` of the tile on, each clamped into
/// the tile's `span` rows (the taps past the plan's are weighted 0), weighted by the row's
/// vectors from `weights`, `stride` apart.
///
/// # Safety
/// `bytes` holds `span >= 1` rows of the tile; `4 | at` and `at + 4 <= W`; `weights` holds
/// the row's `groups` vectors.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
pub(super) unsafe fn down<const C: usize, const W: usize>(
    bytes: *const u8,
    at: usize,
    (kk, span): (i32, i32),
    groups: u32,
    weights: *const V16,
    stride: usize,
    half: i32,
) -> [[i32; C]; 4] {
    let mut low = [[0i32; C]; 4];
    let mut rest = [[0i32; C]; 4];
    let mut w = weights;
    let mut r0 = kk;
    for _ in 0..groups {
        // SAFETY: the group's vector (the caller's contract).
        let k = unsafe { load_global_v16(w).0 };
        let mut rows = [0usize; 4];
        for i in 0..4 {
            let r = r0.wrapping_add(i as i32).min(span - 1).max(0);
            rows[i] = (r as u32 * C as u32 * W as u32) as usize + at;
        }
        for c in 0..C {
            let mut q = [0u32; 4];
            for i in 0..4 {
                // SAFETY: 0 <= r < span, 4 | at, so the word lies in the tile's rows, 4-byte
                // aligned.
                q[i] = unsafe { *(bytes.add(rows[i] + c * W) as *const u32) };
            }
            let px = transpose(q);
            for i in 0..4 {
                low[i][c] = dp4a(px[i], k[0], low[i][c]);
                rest[i][c] = dp2a_hi(k[2], px[i], dp2a_lo(k[1], px[i], rest[i][c]));
            }
        }
        // SAFETY: the next group's vector, if there is one (read only then).
        w = unsafe { w.add(stride) };
        r0 = r0.wrapping_add(4);
    }
    let mut acc = [[half; C]; 4];
    for i in 0..4 {
        for c in 0..C {
            acc[i][c] = acc[i][c].wrapping_add(low[i][c]).wrapping_add(rest[i][c] << 8);
        }
    }
    acc
}
