//! OpenCV's `cv::resize` on 8-bit images as a [`Plan`]: the same coordinates (in the same
//! float and double precision), the same fixed-point weights, the same path for each size
//! and mode. Read from `modules/imgproc/src/resize.cpp` of OpenCV 5.0; the goldens made with
//! OpenCV 5.0 on the lent machine (`tests/golden/resize.txt`) decide.

use std::sync::Arc;

use super::CvInterpolation;
use super::axis::Kept;
use super::plan::{Lists, Plan, Rule, Taps};

/// How an axis is made from its input and output lengths: a plan's width and height are
/// each a function of their own lengths alone (the plan's kind, of both), so each axis is
/// made once per process and shared by every size that has it (as Pillow's, `axis.rs`): a
/// batch of new photos of seen widths and heights plans in lookups.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Made {
    /// `resizeGeneric_`'s taps for `mode`, the position clamped into the source (across).
    Generic(CvInterpolation, bool),
    LinearExact,
    Nearest,
    NearestExact,
}

type AxisKey = (usize, usize, Made);

/// Kept axes (at most 32 MB each: an axis to 224 is 1 to 8 KB).
static TAPS: Kept<AxisKey, Taps<i16>> = Kept::new(32 << 20);
static INDICES: Kept<AxisKey, Vec<u32>> = Kept::new(32 << 20);
static LISTS: Kept<(usize, usize), Lists> = Kept::new(32 << 20);

fn taps(s: usize, d: usize, made: Made) -> Arc<Taps<i16>> {
    let make = || match made {
        Made::Generic(mode, clamps) => generic_axis(s, d, mode, clamps),
        _ => linear_exact_axis(s, d),
    };
    TAPS.get_or_make((s, d, made), make, |t| t.weights.len() * 2 + t.first.len() * 4)
}

fn indices(s: usize, d: usize, made: Made) -> Arc<Vec<u32>> {
    let make = || match made {
        Made::Nearest => nearest_axis(s, d),
        _ => nearest_exact_axis(s, d),
    };
    INDICES.get_or_make((s, d, made), make, |v| v.len() * 4)
}

fn lists(s: usize, d: usize) -> Arc<Lists> {
    // (The scale as `cv::resize` makes it: the reciprocal of `d / s`, not `s / d`.)
    LISTS.get_or_make((s, d), || area_lists(s, d, 1.0 / (d as f64 / s as f64)), |l| l.index.len() * 8 + l.start.len() * 4)
}

/// `INTER_RESIZE_COEF_SCALE`: 11 fractional bits.
const COEF_SCALE: f32 = 2048.0;

/// `cvRound`: to nearest, ties to even.
fn round_even(v: f64) -> i64 {
    v.round_ties_even() as i64
}

/// `saturate_cast<short>(float)`.
fn short_of(v: f32) -> i16 {
    round_even(v as f64).clamp(i16::MIN as i64, i16::MAX as i64) as i16
}

/// The plan of `cv::resize(src, (dw, dh), interpolation=mode)` for a `sw` x `sh` image of
/// `cn` channels.
pub(crate) fn plan((sw, sh): (usize, usize), cn: usize, (dw, dh): (usize, usize), mode: CvInterpolation) -> Plan {
    if (sw, sh) == (dw, dh) {
        // `cv::resize` copies when the sizes are equal, whatever the mode.
        return Plan::Copy;
    }
    let inv_scale = (dw as f64 / sw as f64, dh as f64 / sh as f64);
    let scale = (1.0 / inv_scale.0, 1.0 / inv_scale.1);
    let iscale = (round_even(scale.0), round_even(scale.1));
    let area_fast =
        (scale.0 - iscale.0 as f64).abs() < f64::EPSILON && (scale.1 - iscale.1 as f64).abs() < f64::EPSILON;
    let mut mode = mode;
    if mode == CvInterpolation::LinearExact {
        // "INTER_AREA (fast) is equal to bit exact INTER_LINEAR" at exactly half size, but
        // for 2 channels, whose area path rounds otherwise.
        if area_fast && iscale == (2, 2) && cn != 2 {
            mode = CvInterpolation::Area;
        } else {
            let (x, y) = (taps(sw, dw, Made::LinearExact), taps(sh, dh, Made::LinearExact));
            return Plan::Separable { x, y, rule: Rule::Exact };
        }
    }
    match mode {
        CvInterpolation::Nearest => {
            return Plan::Gather { xs: indices(sw, dw, Made::Nearest), ys: indices(sh, dh, Made::Nearest) };
        }
        CvInterpolation::NearestExact => {
            let made = Made::NearestExact;
            return Plan::Gather { xs: indices(sw, dw, made), ys: indices(sh, dh, made) };
        }
        CvInterpolation::Linear if area_fast && iscale == (2, 2) => mode = CvInterpolation::Area,
        _ => {}
    }
    if mode == CvInterpolation::Area && scale.0 >= 1.0 && scale.1 >= 1.0 {
        if area_fast {
            // `resizeAreaFast_`: halving with 1, 3 or 4 channels takes OpenCV's vector form.
            let (fx, fy) = (iscale.0 as usize, iscale.1 as usize);
            return Plan::Cells { fx, fy, halving: fx == 2 && fy == 2 && cn != 2 };
        }
        return Plan::Area { x: lists(sw, dw), y: lists(sh, dh) };
    }
    let rule = match mode {
        CvInterpolation::Cubic => Rule::Cubic,
        CvInterpolation::Lanczos4 => Rule::Lanczos,
        _ => Rule::Linear,
    };
    // Linear and area clamp a column's position into the source; rows are clamped by the
    // runner only.
    let clamps = !matches!(mode, CvInterpolation::Cubic | CvInterpolation::Lanczos4);
    Plan::Separable { x: taps(sw, dw, Made::Generic(mode, clamps)), y: taps(sh, dh, Made::Generic(mode, false)), rule }
}

/// `resizeNN`'s indices: `min(floor(x / (d / s)), s - 1)` in double.
fn nearest_axis(s: usize, d: usize) -> Vec<u32> {
    let step = 1.0 / (d as f64 / s as f64);
    (0..d).map(|i| ((i as f64 * step).floor() as usize).min(s - 1) as u32).collect()
}

/// `resizeNN_bitexact_tab`'s: Pillow's nearest neighbour, positions stepped in double from
/// half a step, truncated.
fn nearest_exact_axis(s: usize, d: usize) -> Vec<u32> {
    let step = s as f64 / d as f64;
    let mut f = step * 0.5;
    (0..d)
        .map(|_| {
            let i = (f.floor() as usize).min(s - 1) as u32;
            f += step;
            i
        })
        .collect()
}

/// `resize_bitExact` with `interpolationLinear<uchar>`: coordinates in (soft) double,
/// weights in unsigned 8.8 fixed point; outputs left of the source take its first pixel
/// whole, right of it its last (weights 256 and 0).
fn linear_exact_axis(s: usize, d: usize) -> Taps<i16> {
    // (The scale as `cv::resize` makes it: the reciprocal of `d / s`.)
    let scale = 1.0 / (d as f64 / s as f64);
    let mut t = Taps { taps: 2, first: vec![0; d], weights: vec![0; 2 * d] };
    for v in 0..d {
        let f = scale * (v as f64 + 0.5) - 0.5;
        let i = f.floor() as i64;
        let (first, w) = if i >= 0 && s > 1 {
            if i < s as i64 - 1 {
                // ufixedpoint16 from a double: rounded to nearest.
                let c1 = round_even((f - i as f64) * 256.0) as i16;
                (i, [256 - c1, c1])
            } else {
                (s as i64 - 1, [256, 0])
            }
        } else {
            (0, [256, 0])
        };
        t.first[v] = first as i32;
        t.weights[2 * v..2 * v + 2].copy_from_slice(&w);
    }
    t
}

/// `computeResizeAreaTab`: for each output index, the source indices its cell covers and
/// their weights (the covered fraction over the cell's width), in float.
fn area_lists(s: usize, d: usize, scale: f64) -> Lists {
    let mut l = Lists { start: vec![0], index: Vec::new(), weight: Vec::new(), longest: 0 };
    for dx in 0..d {
        let fsx1 = dx as f64 * scale;
        let fsx2 = fsx1 + scale;
        let cell = scale.min(s as f64 - fsx1);
        let sx2 = (fsx2.floor() as i64).min(s as i64 - 1);
        let sx1 = (fsx1.ceil() as i64).min(sx2);
        let mut push = |i: i64, w: f64| {
            l.index.push(i as u32);
            l.weight.push(w as f32);
        };
        if sx1 as f64 - fsx1 > 1e-3 {
            push(sx1 - 1, (sx1 as f64 - fsx1) / cell);
        }
        for sx in sx1..sx2 {
            push(sx, 1.0 / cell);
        }
        if fsx2 - sx2 as f64 > 1e-3 {
            push(sx2, (fsx2 - sx2 as f64).min(1.0).min(cell) / cell);
        }
        l.longest = l.longest.max(l.index.len() - *l.start.last().expect("starts at 0") as usize);
        l.start.push(l.index.len() as u32);
    }
    l
}

/// `interpolateCubic` with A = -0.75, in float.
fn cubic_coeffs(x: f32) -> [f32; 4] {
    const A: f32 = -0.75;
    let c0 = ((A * (x + 1.0) - 5.0 * A) * (x + 1.0) + 8.0 * A) * (x + 1.0) - 4.0 * A;
    let c1 = ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let c2 = ((A + 2.0) * (1.0 - x) - (A + 3.0)) * (1.0 - x) * (1.0 - x) + 1.0;
    let c3 = 1.0 - c0 - c1 - c2;
    [c0, c1, c2, c3]
}

/// `interpolateLanczos4`: the window in double, each weight rounded to float and summed in
/// float, then scaled by the float reciprocal of the sum.
fn lanczos4_coeffs(x: f32) -> [f32; 8] {
    const S45: f64 = std::f64::consts::FRAC_1_SQRT_2;
    const CS: [[f64; 2]; 8] =
        [[1.0, 0.0], [-S45, -S45], [0.0, 1.0], [S45, -S45], [-1.0, 0.0], [S45, S45], [0.0, -1.0], [-S45, S45]];
    let mut c = [0f32; 8];
    if x < f32::EPSILON {
        c[3] = 1.0;
        return c;
    }
    let y0 = -(x as f64 + 3.0) * std::f64::consts::PI * 0.25;
    let (s0, c0) = (y0.sin(), y0.cos());
    let mut sum = 0f32;
    for (i, ci) in c.iter_mut().enumerate() {
        let y = -(x as f64 + 3.0 - i as f64) * std::f64::consts::PI * 0.25;
        *ci = ((CS[i][0] * s0 + CS[i][1] * c0) / (y * y)) as f32;
        sum += *ci;
    }
    let inv = 1.0 / sum;
    c.iter_mut().for_each(|ci| *ci *= inv);
    c
}

/// One axis of the generic separable path (`resizeGeneric_`) for linear, cubic, Lanczos-4
/// and the bilinear form of area when enlarging: per output index `ksize` taps with 11-bit
/// weights; with `clamps`, each position clamped into the source (the first tap's weight
/// then all), as linear and area clamp a column's.
fn generic_axis(s: usize, d: usize, mode: CvInterpolation, clamps: bool) -> Taps<i16> {
    let inv = d as f64 / s as f64;
    let scale = 1.0 / inv;
    let ksize: usize = match mode {
        CvInterpolation::Cubic => 4,
        CvInterpolation::Lanczos4 => 8,
        _ => 2,
    };
    let half = (ksize / 2) as i64;
    let area_mode = mode == CvInterpolation::Area;
    let coeffs = |f: f32, to: &mut [i16]| {
        let c: &[f32] = match mode {
            CvInterpolation::Cubic => &cubic_coeffs(f),
            CvInterpolation::Lanczos4 => &lanczos4_coeffs(f),
            _ => &[1.0 - f, f],
        };
        for (t, &v) in to.iter_mut().zip(c) {
            *t = short_of(v * COEF_SCALE);
        }
    };
    let position = |o: usize| -> (i64, f32) {
        if !area_mode {
            let f = ((o as f64 + 0.5) * scale - 0.5) as f32;
            let p = f.floor();
            (p as i64, f - p)
        } else {
            let p = (o as f64 * scale).floor() as i64;
            let f = ((o + 1) as f64 - (p + 1) as f64 * inv) as f32;
            (p, if f <= 0.0 { 0.0 } else { f - f.floor() })
        }
    };
    let mut t = Taps { taps: ksize, first: vec![0; d], weights: vec![0; d * ksize] };
    for o in 0..d {
        let (mut p, mut f) = position(o);
        if clamps && p < 0 {
            (f, p) = (0.0, 0);
        }
        if clamps && p >= s as i64 - 1 {
            (f, p) = (0.0, s as i64 - 1);
        }
        t.first[o] = (p - half + 1) as i32;
        coeffs(f, &mut t.weights[o * ksize..(o + 1) * ksize]);
    }
    t
}
