//! A resize as tables: what each output pixel reads and with which weights, built on the
//! host from the reference's own arithmetic (`cv.rs`, `pil.rs`), then run by the serial
//! reference (`exec.rs`), all cores, and the GPU's kernels alike. The arithmetic left to
//! the runners is integer sums and shifts, and, for OpenCV's cubic and area paths, float
//! products and sums in a fixed order.

use std::sync::Arc;

/// Per output index, the first of `taps` source indices (consecutive, each clamped into the
/// source by the runner: a replicated border) and their weights.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Taps<W> {
    pub taps: usize,
    pub first: Vec<i32>,
    /// `taps` weights per output index.
    pub weights: Vec<W>,
}

/// Per output index, a list of (source index, weight), in the order they are summed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Lists {
    /// Output `i`'s entries are `start[i]..start[i + 1]`.
    pub start: Vec<u32>,
    pub index: Vec<u32>,
    pub weight: Vec<f32>,
    /// The longest list's length (which kernel takes the plan: see `Lists::padded`).
    pub longest: usize,
}

impl Lists {
    /// The lists as `taps` consecutive source indices from each list's first, weighted as
    /// the list says and then by 0: the same float sums, since adding `v * 0.0` to a sum of
    /// finite products changes nothing (the area's separable kernels read this form).
    /// Each list's indices are consecutive (as `computeResizeAreaTab` makes them) and at
    /// most `taps` long.
    pub fn padded(&self, taps: usize) -> Taps<f32> {
        let n = self.start.len() - 1;
        let mut t = Taps { taps, first: vec![0; n], weights: vec![0.0; n * taps] };
        for i in 0..n {
            let (a, b) = (self.start[i] as usize, self.start[i + 1] as usize);
            debug_assert!(b - a <= taps, "a list of {} for {taps} taps", b - a);
            debug_assert!(self.index[a..b].windows(2).all(|w| w[1] == w[0] + 1), "consecutive indices");
            t.first[i] = self.index.get(a).map_or(0, |&f| f as i32);
            t.weights[i * taps..i * taps + (b - a)].copy_from_slice(&self.weight[a..b]);
        }
        t
    }
}

/// Whether the area's lists of 5 across take the kernels of 5 (see [`area_five`]).
static AREA_FIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// For the benchmark: whether the area's plans of 5 taps across and at most 4 down take the
/// kernels of 5 across (the default) or, as before session 14, those of 8 across, so that
/// both are timed in one run. Either gives the same bytes. Not part of the API.
pub fn area_five(on: bool) {
    AREA_FIVE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The choice of [`area_five`], as a number (for `replay.rs`).
pub(super) fn choices() -> u64 {
    u64::from(AREA_FIVE.load(std::sync::atomic::Ordering::Relaxed))
}

/// The taps (across, down) of the area's separable kernel that takes lists `x` and `y`:
/// 4 each way, 5 across and 4 down (a batch's photos 3 to 4 times the output's width, which
/// a kernel of 8 across summed with 3 weights of 0 in every 8), 8 across and 4 down, or 8
/// each way; `None`: longer lists go to the kernel of a pixel a thread (`ResizeArea`).
pub(crate) fn area_taps(x: &Lists, y: &Lists) -> Option<(usize, usize)> {
    match (x.longest, y.longest) {
        (0..=4, 0..=4) => Some((4, 4)),
        (5, 0..=4) if AREA_FIVE.load(std::sync::atomic::Ordering::Relaxed) => Some((5, 4)),
        (6..=8, 0..=4) => Some((8, 4)),
        (0..=8, 0..=8) => Some((8, 8)),
        _ => None,
    }
}

/// How OpenCV's vertical pass rounds the weighted rows (`VResize*<uchar>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Rule {
    /// `VResizeLinear<uchar>`: rows shifted right by 4, multiplied high by the weights, sum
    /// + 2 shifted right by 2.
    Linear = 0,
    /// `VResizeCubic<uchar>`: the first `vector_elems` elements of a row in float (OpenCV's
    /// 128-bit vector form), the rest in integers.
    Cubic = 1,
    /// `VResizeLanczos4<uchar>`: the integer sum, + 2^21 shifted right by 22.
    Lanczos = 2,
    /// `resize_bitExact`'s vertical line: 8.8 rows, 8.8 weights, + 2^15 shifted right by 16.
    Exact = 3,
}

/// One of Pillow's passes: along rows (`horizontal`) or columns, 8 bits in and out.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PilPass {
    pub horizontal: bool,
    /// The output of this pass.
    pub out: (usize, usize),
    /// Horizontal: output row `r` reads input row `r + offset`. Vertical: output index `i`
    /// reads input rows `taps.first[i] - offset + k`.
    pub offset: usize,
    /// The axis's taps, kept for the process and shared by every plan of it (with the
    /// input's length along the pass and what the GPU's `_mma` kernels ask of it).
    pub taps: Arc<super::axis::PilAxis>,
}

/// A resize, as tables (each axis's kept for the process and shared by every plan that has
/// it: `axis.rs`, `cv.rs`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Plan {
    /// The same size: a copy.
    Copy,
    /// Each output pixel copies source pixel `(xs[x], ys[y])`; `u32::MAX` in either leaves
    /// it 0 (Pillow's NEAREST outside the box).
    Gather { xs: Arc<Vec<u32>>, ys: Arc<Vec<u32>> },
    /// OpenCV's separable fixed point: the horizontal sums of `y.taps` rows, `x.taps`
    /// 11-bit (or 8.8) weights each, then the vertical `rule`.
    Separable { x: Arc<Taps<i16>>, y: Arc<Taps<i16>>, rule: Rule },
    /// OpenCV's integer-factor area: the sum of each `fx` x `fy` cell, `(sum + 2) >> 2`
    /// when `halving`, else the sum times `1.f / (fx * fy)` rounded to even.
    Cells { fx: usize, fy: usize, halving: bool },
    /// OpenCV's area average in float: each source row's weighted sums, then the rows'.
    Area { x: Arc<Lists>, y: Arc<Lists> },
    /// Pillow's passes, colors premultiplied by alpha first and divided after when
    /// `premultiply`.
    Pillow { passes: Vec<PilPass>, premultiply: bool },
}

/// The elements of a row of `width` bytes that OpenCV's 128-bit vector form of the cubic
/// vertical pass takes (8 `short`s at a time; the rest are the scalar loop's).
pub(crate) fn cubic_vector_elems(width: usize) -> usize {
    width / 8 * 8
}
