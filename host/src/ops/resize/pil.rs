//! Pillow's `Image.resize` on 8-bit images (`src/libImaging/Resample.c`, `Geometry.c`'s
//! `ImagingScaleAffine` for NEAREST, `Convert.c` for premultiplied alpha), step for step:
//! the filter's weights in double, normalized, turned into 22-bit fixed point; a horizontal
//! pass into an 8-bit image, then a vertical pass. Images with alpha are premultiplied
//! before and divided after, as `Image.resize` does for `LA` and `RGBA`.

use std::sync::Arc;

use super::PilFilter;
use super::axis::{PilAxis, axis};
use super::plan::{PilPass, Plan, Taps};

/// Fixed-point bits of the weights (`PRECISION_BITS`: 32 - 8 - 2).
const PRECISION_BITS: u32 = 22;

struct Kernel {
    support: f64,
    f: fn(f64) -> f64,
}

fn kernel(filter: PilFilter) -> Kernel {
    fn bx(x: f64) -> f64 {
        if x > -0.5 && x <= 0.5 { 1.0 } else { 0.0 }
    }
    fn bilinear(x: f64) -> f64 {
        let x = x.abs();
        if x < 1.0 { 1.0 - x } else { 0.0 }
    }
    fn hamming(x: f64) -> f64 {
        let x = x.abs();
        if x == 0.0 {
            return 1.0;
        }
        if x >= 1.0 {
            return 0.0;
        }
        let x = x * std::f64::consts::PI;
        // (Pillow's constants are float literals, 0.54f and 0.46f.)
        x.sin() / x * (0.54f32 as f64 + 0.46f32 as f64 * x.cos())
    }
    fn bicubic(x: f64) -> f64 {
        const A: f64 = -0.5;
        let x = x.abs();
        if x < 1.0 {
            ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
        } else if x < 2.0 {
            (((x - 5.0) * x + 8.0) * x - 4.0) * A
        } else {
            0.0
        }
    }
    fn sinc(x: f64) -> f64 {
        if x == 0.0 {
            return 1.0;
        }
        let x = x * std::f64::consts::PI;
        x.sin() / x
    }
    fn lanczos(x: f64) -> f64 {
        if (-3.0..3.0).contains(&x) { sinc(x) * sinc(x / 3.0) } else { 0.0 }
    }
    match filter {
        PilFilter::Box => Kernel { support: 0.5, f: bx },
        PilFilter::Bilinear => Kernel { support: 1.0, f: bilinear },
        PilFilter::Hamming => Kernel { support: 1.0, f: hamming },
        PilFilter::Bicubic => Kernel { support: 2.0, f: bicubic },
        PilFilter::Lanczos => Kernel { support: 3.0, f: lanczos },
        PilFilter::Nearest => unreachable!("nearest is not a resampling kernel"),
    }
}

/// `precompute_coeffs` then `normalize_coeffs_8bpc`: per output index, the first source
/// index and the fixed-point weights of the sources from it (padded with zeros to the
/// filter's largest count).
pub(super) fn coeffs(in_size: usize, in0: f32, in1: f32, out_size: usize, filter: PilFilter) -> Taps<i32> {
    let k = kernel(filter);
    let scale = (in1 - in0) as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = k.support * filterscale;
    let ksize = support.ceil() as usize * 2 + 1;
    let inv = 1.0 / filterscale;
    let mut t = Taps { taps: ksize, first: Vec::with_capacity(out_size), weights: vec![0; out_size * ksize] };
    for xx in 0..out_size {
        let center = in0 as f64 + (xx as f64 + 0.5) * scale;
        let xmin = ((center - support + 0.5) as i64).max(0);
        let xmax = ((center + support + 0.5) as i64).min(in_size as i64) - xmin;
        let mut w: Vec<f64> = (0..xmax.max(0)).map(|x| (k.f)((x as f64 + xmin as f64 - center + 0.5) * inv)).collect();
        let ww: f64 = w.iter().sum();
        if ww != 0.0 {
            w.iter_mut().for_each(|v| *v /= ww);
        }
        for (to, &v) in t.weights[xx * ksize..].iter_mut().zip(&w) {
            let s = v * (1u32 << PRECISION_BITS) as f64;
            *to = (if v < 0.0 { -0.5 + s } else { 0.5 + s }) as i32;
        }
        t.first.push(xmin as i32);
    }
    t
}

/// The plan of `Image.resize((dw, dh), filter, box, reducing_gap=None)` for a `sw` x `sh`
/// image (with `alpha`: its last channel is alpha, and the colors are resampled
/// premultiplied). `boxed`: the source box, as Pillow's floats.
pub(crate) fn plan(s: (usize, usize), alpha: bool, d: (usize, usize), filter: PilFilter, boxed: Option<[f32; 4]>) -> Plan {
    plan_with(s, alpha, d, filter, boxed, &mut |a| axis(a, filter))
}

/// [`plan`], its axes given by `axis_of` (in the order [`axes_of`] names them: a batch
/// looks up its plans' axes together).
pub(crate) fn plan_with(
    (sw, sh): (usize, usize),
    alpha: bool,
    (dw, dh): (usize, usize),
    filter: PilFilter,
    boxed: Option<[f32; 4]>,
    axis_of: &mut dyn FnMut(AxisArgs) -> Arc<PilAxis>,
) -> Plan {
    let b = boxed.unwrap_or([0.0, 0.0, sw as f32, sh as f32]);
    if (sw, sh) == (dw, dh) && b == [0.0, 0.0, sw as f32, sh as f32] {
        return Plan::Copy;
    }
    let calls = calls((sw, sh), (dw, dh), b);
    if filter == PilFilter::Nearest {
        // Each call a gather; two compose into one.
        let gathers: Vec<(Vec<u32>, Vec<u32>)> = calls.map(|(s, d, b)| nearest(s, d, b)).collect();
        let (mut xs, mut ys) = gathers[0].clone();
        for (x2, y2) in &gathers[1..] {
            let through = |outer: &[u32], inner: &[u32]| -> Vec<u32> {
                outer.iter().map(|&i| if i == u32::MAX { i } else { inner[i as usize] }).collect()
            };
            (xs, ys) = (through(x2, &xs), through(y2, &ys));
        }
        return Plan::Gather { xs: Arc::new(xs), ys: Arc::new(ys) };
    }
    let mut passes = Vec::with_capacity(2);
    for call in calls {
        resample(call, &mut passes, axis_of);
    }
    if passes.is_empty() {
        return Plan::Copy;
    }
    // `LA` and `RGBA` go through `La` and `RGBa`.
    Plan::Pillow { passes, premultiply: alpha }
}

/// One call of `ImagingResample`: a source size, an output size, a box.
type Call = ((usize, usize), (usize, usize), [f32; 4]);

/// `Image.resize`'s calls for a `sw` x `sh` image: one, or, for very tall images shrinking
/// in height, the height first, then the width.
/// (An array, not a vector: a batch plans 256 sizes a call.)
fn calls((sw, sh): (usize, usize), (dw, dh): (usize, usize), b: [f32; 4]) -> impl Iterator<Item = Call> + Clone {
    let two = sh > sw * 100 && dh < sh;
    let calls = match two {
        true => [((sw, sh), (sw, dh), [0.0, b[1], sw as f32, b[3]]), ((sw, dh), (dw, dh), [b[0], 0.0, b[2], dh as f32])],
        false => [((sw, sh), (dw, dh), b); 2],
    };
    calls.into_iter().take(1 + usize::from(two))
}

/// An axis's arguments (`coeffs`' but the filter): the input's length, the box along it,
/// the output's length.
pub(crate) type AxisArgs = (usize, f32, f32, usize);

/// The axes one call of `ImagingResample` takes: down (always: its reach bounds the
/// horizontal pass), across where a horizontal pass runs, and whether a vertical one runs;
/// `None` where the call copies.
fn call_axes(((sw, sh), (dw, dh), b): Call) -> Option<(AxisArgs, Option<AxisArgs>, bool)> {
    if (sw, sh) == (dw, dh) && b == [0.0, 0.0, dw as f32, dh as f32] {
        return None; // `_resize` copies
    }
    let need_h = dw != sw || b[0] != 0.0 || b[2] != dw as f32;
    let need_v = dh != sh || b[1] != 0.0 || b[3] != dh as f32;
    Some(((sh, b[1], b[3], dh), need_h.then_some((sw, b[0], b[2], dw)), need_v))
}

/// Every axis [`plan`] takes for these arguments, in the order it asks for them, so that a
/// batch's axes are looked up together (the new ones made together, on all cores) and
/// given to [`plan_with`].
pub(crate) fn axes_of(
    (sw, sh): (usize, usize),
    (dw, dh): (usize, usize),
    filter: PilFilter,
    boxed: Option<[f32; 4]>,
) -> impl Iterator<Item = AxisArgs> {
    // (A copy's one call has none: `call_axes`.)
    let b = boxed.unwrap_or([0.0, 0.0, sw as f32, sh as f32]);
    let calls = calls((sw, sh), (dw, dh), b).take(if filter == PilFilter::Nearest { 0 } else { 2 });
    calls.filter_map(call_axes).flat_map(|(v, h, _)| [Some(v), h]).flatten()
}

/// `ImagingResampleInner`: the horizontal pass over the rows the vertical one reads, then
/// the vertical pass, each only where the size or the box asks for it.
fn resample(call: Call, passes: &mut Vec<PilPass>, axis_of: &mut dyn FnMut(AxisArgs) -> Arc<PilAxis>) {
    let Some((down, across, need_v)) = call_axes(call) else { return };
    let (_, (dw, dh), _) = call;
    // Each axis kept (`axis.rs`): a size whose width and height were seen plans in lookups.
    let vert = axis_of(down);
    let mut offset = 0;
    if let Some(across) = across {
        // The rows the vertical pass reads: from the first output's first source to the
        // last output's last.
        let (first, last) = vert.reach;
        let taps = axis_of(across);
        passes.push(PilPass { horizontal: true, out: (dw, last - first), offset: first, taps });
        offset = first;
    }
    if need_v {
        passes.push(PilPass { horizontal: false, out: (dw, dh), offset, taps: vert });
    }
}

/// What the GPU's `_mma` kernels (`cuimg_abi::resize::PILLOW_MMA_STEPS`) ask of a pass: the
/// most inputs any 8 consecutive outputs read, from the first one's first input rounded
/// down to a multiple of 4 (at most 3 before it) to the last one's last tap; `usize::MAX`
/// where a weight is not three bytes (within -2^23..2^23, as every weight of Pillow's 22-bit
/// tables is: they are at most about 1 in magnitude).
pub(crate) fn window8(taps: &Taps<i32>) -> usize {
    if taps.weights.iter().any(|&w| !(-(1 << 23)..1 << 23).contains(&w)) {
        return usize::MAX;
    }
    let f = &taps.first;
    let n = f.len();
    (0..n).map(|i| (f[(i + 7).min(n - 1)] as i64 + taps.taps as i64 - f[i] as i64 + 3).max(0) as usize).max().unwrap_or(0)
}

/// A pass's weights in the planes form of the GPU's `_planes` kernels
/// (`cuimg_abi::resize::ResizePillowTiled`): each output's taps as `groups` groups of four
/// from `first`, every weight `w` as its low byte and its signed rest `w >> 8`, so that
/// `dp4a` and two `dp2a` sum four taps of a channel. The taps past the plan's are weighted
/// 0. Across (`input` given), the groups cover the output's taps whose weight is not 0,
/// moved left where four more taps would run past the input, and lie in `0..input` (so the
/// kernels read no pixel twice over, nor clamp); down, they start at the plan's first rows
/// (the kernels clamp the rows into the tile's).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Planes {
    pub groups: usize,
    pub first: Vec<i32>,
    /// Output `x`'s group `g`: `words[4 * (g * outputs + x) ..][..4]`, the low bytes (tap
    /// `i` in byte `i`), the rests of taps 0 and 1 and of 2 and 3 (16 bits each, the lower
    /// tap in the low half), and 0.
    pub words: Vec<u32>,
}

/// [`Planes`] of `taps`, across an input `input` long or down (`None`); `None` where four
/// taps a group cannot lie in the input (it is narrower than them), or a weight's rest
/// needs more than 16 bits (never for Pillow's 22-bit weights).
pub(crate) fn planes(taps: &Taps<i32>, input: Option<usize>) -> Option<Planes> {
    let groups = taps.taps.div_ceil(4);
    let span = 4 * groups as i64;
    if groups == 0 || input.is_some_and(|i| span > i as i64) {
        return None;
    }
    let n = taps.first.len();
    let mut p = Planes { groups, first: Vec::with_capacity(n), words: vec![0; 4 * groups * n] };
    for x in 0..n {
        let w = &taps.weights[x * taps.taps..(x + 1) * taps.taps];
        let first = i64::from(taps.first[x]);
        let start = match input {
            None => first,
            Some(input) => {
                // The taps that weigh: the groups start at the first of them (or where four
                // taps a group end at the input's end), so that all of them lie in the groups.
                let end = input as i64 - span;
                let (lo, hi) = match (w.iter().position(|&v| v != 0), w.iter().rposition(|&v| v != 0)) {
                    (Some(a), Some(b)) => (first + a as i64, first + b as i64 + 1),
                    _ => (first.clamp(0, end), first.clamp(0, end)),
                };
                let start = lo.min(end);
                if start < 0 || hi > start + span {
                    return None;
                }
                start
            }
        };
        p.first.push(start as i32);
        for t in 0..span {
            let k = start + t - first;
            let v = if (0..w.len() as i64).contains(&k) { w[k as usize] } else { 0 };
            let rest = i16::try_from(v >> 8).ok()?;
            let (g, i) = ((t / 4) as usize, (t % 4) as u32);
            let at = 4 * (g * n + x);
            p.words[at] |= (v as u32 & 0xFF) << (8 * i);
            p.words[at + 1 + (i / 2) as usize] |= u32::from(rest as u16) << (16 * (i % 2));
        }
    }
    Some(p)
}

/// NEAREST: `ImagingScaleAffine`, source positions stepped in double from the first output
/// pixel's center (`COORD`: truncated, -1 below 0); `u32::MAX` where the source falls
/// outside (the output stays 0).
fn nearest((sw, sh): (usize, usize), (dw, dh): (usize, usize), b: [f32; 4]) -> (Vec<u32>, Vec<u32>) {
    let axis = |s: usize, d: usize, b0: f32, b1: f32| {
        let step = (b1 - b0) as f64 / d as f64;
        let mut o = b0 as f64 + step * 0.5;
        (0..d)
            .map(|_| {
                let i = if o < 0.0 { -1 } else { o as i64 };
                o += step;
                if i >= 0 && i < s as i64 { i as u32 } else { u32::MAX }
            })
            .collect()
    };
    (axis(sw, dw, b[0], b[2]), axis(sh, dh, b[1], b[3]))
}

/// `MULDIV255`: `a * b / 255`, rounded, as Pillow computes it.
pub(crate) fn muldiv255(a: u32, b: u32) -> u8 {
    let t = a * b + 128;
    (((t >> 8) + t) >> 8) as u8
}

/// `rgba2rgbA` / `la2lA`: a color divided by alpha (truncated, clipped), kept where alpha
/// is 0 or 255.
pub(crate) fn unpremultiply(c: u8, a: u8) -> u8 {
    match a {
        0 | 255 => c,
        a => (255 * u32::from(c) / u32::from(a)).min(255) as u8,
    }
}

/// `clip8`: the sum's integer part, clamped to a byte.
pub(crate) fn clip8(ss: i32) -> u8 {
    (ss >> PRECISION_BITS).clamp(0, 255) as u8
}

/// The rounding term every pass's sum starts from.
pub(crate) const HALF: i32 = 1 << (PRECISION_BITS - 1);

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    /// `dp4a.u32.u32`: four unsigned byte products added to `c`, wrapping.
    fn dp4a(a: u32, b: u32, c: i32) -> i32 {
        (0..4).fold(c, |s, i| s.wrapping_add(((a >> (8 * i) & 0xFF) * (b >> (8 * i) & 0xFF)) as i32))
    }

    /// `dp2a.lo.s32.u32` (`hi`: `.hi`): `a`'s signed halves times bytes 0 and 1 (2 and 3)
    /// of `b`, added to `c`, wrapping.
    fn dp2a(a: u32, b: u32, c: i32, hi: bool) -> i32 {
        let at = if hi { 16 } else { 0 };
        (0..2).fold(c, |s, i| s.wrapping_add(i32::from((a >> (16 * i)) as u16 as i16) * (b >> (at + 8 * i) & 0xFF) as i32))
    }

    /// The `_mma` kernels' windows: 8 outputs from a first input rounded down to a multiple
    /// of 4 to the last one's last tap, at most; weights past three bytes refused.
    #[test]
    fn window8_is_what_8_outputs_read() {
        // Halving with 5 taps: output i from 2i; 8 outputs read 14 + 5 inputs, 3 more for
        // the rounding.
        let t = Taps { taps: 5, first: (0..20).map(|i| 2 * i).collect(), weights: vec![1; 100] };
        assert_eq!(window8(&t), 14 + 5 + 3);
        // Fewer than 8 outputs: the last one's taps.
        let t = Taps { taps: 3, first: vec![0, 1, 2], weights: vec![1; 9] };
        assert_eq!(window8(&t), 2 + 3 + 3);
        let big = Taps { taps: 1, first: vec![0], weights: vec![1 << 23] };
        assert_eq!(window8(&big), usize::MAX);
        let low = Taps { taps: 1, first: vec![0], weights: vec![-(1 << 23)] };
        assert_eq!(window8(&low), 1 + 3);
        // Every filter's real tables: weights within three bytes.
        for f in [PilFilter::Bilinear, PilFilter::Bicubic, PilFilter::Lanczos] {
            for (i, o) in [(640, 224), (224, 640), (7, 3), (3, 7)] {
                let t = coeffs(i, 0.0, i as f32, o, f);
                assert!(window8(&t) < usize::MAX, "{f:?} {i} -> {o}");
            }
        }
    }

    /// The planes form, summed as the `_planes` kernels sum it (a channel's four taps a
    /// word, `dp4a` on the low bytes and `dp2a` on the rests, low + 256 * rest), is
    /// Pillow's sum for every output of every filter's horizontal pass, down and up, on
    /// inputs as narrow as the groups, on random rows.
    #[test]
    fn planes_sum_what_pillows_weights_sum() {
        let mut rng = SmallRng::seed_from_u64(28);
        let filters = [PilFilter::Box, PilFilter::Bilinear, PilFilter::Hamming, PilFilter::Bicubic, PilFilter::Lanczos];
        let mut tried = 0;
        for &f in &filters {
            for &(sw, dw) in &[(640, 224), (768, 224), (4, 1), (5, 2), (7, 3), (13, 3), (9, 17), (3, 8), (1001, 97), (31, 30)] {
                let t = coeffs(sw, 0.0, sw as f32, dw, f);
                let Some(p) = planes(&t, Some(sw)) else {
                    assert!(4 * t.taps.div_ceil(4) > sw, "{f:?} {sw} -> {dw}: no planes");
                    continue;
                };
                tried += 1;
                let row: Vec<u8> = (0..sw).map(|_| rng.random()).collect();
                for x in 0..dw {
                    let want = (0..t.taps).fold(HALF, |s, k| {
                        let px = (t.first[x] as i64 + k as i64).clamp(0, sw as i64 - 1) as usize;
                        s.wrapping_add(i32::from(row[px]).wrapping_mul(t.weights[x * t.taps + k]))
                    });
                    let start = p.first[x] as usize;
                    assert!(start + 4 * p.groups <= sw, "{f:?} {sw} -> {dw}: output {x}'s groups run past the row");
                    let (mut low, mut rest) = (0i32, 0i32);
                    for g in 0..p.groups {
                        let px = &row[start + 4 * g..start + 4 * g + 4];
                        let v = u32::from_le_bytes([px[0], px[1], px[2], px[3]]);
                        let w = &p.words[4 * (g * dw + x)..][..4];
                        assert_eq!(w[3], 0);
                        low = dp4a(v, w[0], low);
                        rest = dp2a(w[2], v, dp2a(w[1], v, rest, false), true);
                    }
                    let got = HALF.wrapping_add(low).wrapping_add(rest << 8);
                    assert_eq!(got, want, "{f:?} {sw} -> {dw}, output {x}");
                }
                // Down: from each output's first tap, the taps past the plan's weighted 0, so
                // that clamped pixels past the row add nothing.
                let p = planes(&t, None).unwrap();
                assert_eq!(p.first, t.first);
                for x in 0..dw {
                    let want = (0..t.taps).fold(HALF, |s, k| {
                        let px = (t.first[x] as i64 + k as i64).clamp(0, sw as i64 - 1) as usize;
                        s.wrapping_add(i32::from(row[px]).wrapping_mul(t.weights[x * t.taps + k]))
                    });
                    let (mut low, mut rest) = (0i32, 0i32);
                    for g in 0..p.groups {
                        let px: Vec<u8> = (0..4)
                            .map(|i| row[(t.first[x] as i64 + 4 * g as i64 + i).clamp(0, sw as i64 - 1) as usize])
                            .collect();
                        let v = u32::from_le_bytes([px[0], px[1], px[2], px[3]]);
                        let w = &p.words[4 * (g * dw + x)..][..4];
                        low = dp4a(v, w[0], low);
                        rest = dp2a(w[2], v, dp2a(w[1], v, rest, false), true);
                    }
                    assert_eq!(HALF.wrapping_add(low).wrapping_add(rest << 8), want, "{f:?} {sw} -> {dw} down, output {x}");
                }
            }
        }
        assert!(tried >= 25, "{tried} plans tried");
    }

    /// Where four taps a group do not fit the input, or the taps that weigh lie outside it,
    /// there is no planes form.
    #[test]
    fn no_planes_where_the_groups_cannot_lie_in_the_input() {
        let t = Taps { taps: 5, first: vec![0], weights: vec![1 << 22, 0, 0, 0, 0] };
        assert!(planes(&t, Some(7)).is_none(), "8 taps in 7 columns");
        assert!(planes(&t, Some(8)).is_some());
        assert!(planes(&t, None).is_some(), "down, rows are clamped");
        let outside = Taps { taps: 2, first: vec![-1], weights: vec![1 << 21, 1 << 21] };
        assert!(planes(&outside, Some(8)).is_none(), "a weighing tap left of the input");
        let wide = Taps { taps: 1, first: vec![0], weights: vec![1 << 24] };
        assert!(planes(&wide, Some(8)).is_none(), "a rest of more than 16 bits");
        assert!(planes(&wide, None).is_none(), "a rest of more than 16 bits, down");
    }
}
