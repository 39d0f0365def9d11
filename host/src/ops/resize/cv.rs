//! OpenCV's `cv::resize` on 8-bit images, step for step: the same coordinates (in the same
//! float and double precision), the same fixed-point weights, the same passes and the same
//! rounding, so that every byte matches. Read from `modules/imgproc/src/resize.cpp`; the
//! goldens made with OpenCV 5.0 on the lent machine (`tests/golden/resize.txt`) decide.
//!
//! Images here are rows of bytes, `cn` channels a pixel: `src(y)` is source row `y`.

use super::CvInterpolation;

/// `INTER_RESIZE_COEF_BITS`: the weights of the generic path are fixed point with 11
/// fractional bits.
const COEF_BITS: u32 = 11;
const COEF_SCALE: i32 = 1 << COEF_BITS;

/// `cvRound` of a float or double: to nearest, ties to even (the SSE conversion OpenCV uses).
fn round_even(v: f64) -> i32 {
    v.round_ties_even() as i32
}

/// `saturate_cast<short>(float)`.
fn short_of(v: f32) -> i16 {
    round_even(v as f64).clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

/// `saturate_cast<uchar>(int)`.
fn u8_of(v: i32) -> u8 {
    v.clamp(0, 255) as u8
}

/// `saturate_cast<uchar>(float)`.
fn u8_of_f32(v: f32) -> u8 {
    u8_of(round_even(v as f64))
}

/// One resize, as `cv::resize(src, (dw, dh), interpolation=mode)` computes it.
pub(crate) fn resize<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    mode: CvInterpolation,
) -> Vec<u8> {
    let mut out = vec![0u8; dw * dh * cn];
    if (sw, sh) == (dw, dh) {
        // `cv::resize` copies when the sizes are equal, whatever the mode.
        for y in 0..sh {
            out[y * sw * cn..(y + 1) * sw * cn].copy_from_slice(&src(y)[..sw * cn]);
        }
        return out;
    }
    let inv_scale = (dw as f64 / sw as f64, dh as f64 / sh as f64);
    let scale = (1.0 / inv_scale.0, 1.0 / inv_scale.1);
    let iscale = (round_even(scale.0), round_even(scale.1));
    let area_fast = (scale.0 - iscale.0 as f64).abs() < f64::EPSILON && (scale.1 - iscale.1 as f64).abs() < f64::EPSILON;
    let mut mode = mode;
    if mode == CvInterpolation::LinearExact {
        // "INTER_AREA (fast) is equal to bit exact INTER_LINEAR" at exactly half size, but
        // for 2 channels, whose area path rounds otherwise.
        if area_fast && iscale == (2, 2) && cn != 2 {
            mode = CvInterpolation::Area;
        } else {
            linear_exact(src, (sw, sh), cn, (dw, dh), inv_scale, &mut out);
            return out;
        }
    }
    match mode {
        CvInterpolation::Nearest => return nearest(src, (sw, sh), cn, (dw, dh), inv_scale, out),
        CvInterpolation::NearestExact => return nearest_exact(src, (sw, sh), cn, (dw, dh), out),
        CvInterpolation::Linear if area_fast && iscale == (2, 2) => mode = CvInterpolation::Area,
        _ => {}
    }
    if mode == CvInterpolation::Area && scale.0 >= 1.0 && scale.1 >= 1.0 {
        if area_fast {
            area_fast_path(src, (sw, sh), cn, (dw, dh), (iscale.0 as usize, iscale.1 as usize), &mut out);
        } else {
            area(src, (sw, sh), cn, (dw, dh), scale, &mut out);
        }
        return out;
    }
    generic(src, (sw, sh), cn, (dw, dh), (scale, inv_scale), mode, &mut out);
    out
}

/// `resizeNN`: `sx = min(floor(dx / (dw / sw)), sw - 1)` in double.
fn nearest<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    inv_scale: (f64, f64),
    mut out: Vec<u8>,
) -> Vec<u8> {
    let (ifx, ify) = (1.0 / inv_scale.0, 1.0 / inv_scale.1);
    let xs: Vec<usize> = (0..dw).map(|x| ((x as f64 * ifx).floor() as usize).min(sw - 1)).collect();
    for y in 0..dh {
        let row = src(((y as f64 * ify).floor() as usize).min(sh - 1));
        copy_row(row, &xs, cn, &mut out[y * dw * cn..(y + 1) * dw * cn]);
    }
    out
}

/// `resizeNN_bitexact`, as OpenCV 5.0 computes it (`resizeNN_bitexact_tab`): Pillow's
/// nearest neighbour, positions stepped in double from half a source step, truncated.
fn nearest_exact<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    mut out: Vec<u8>,
) -> Vec<u8> {
    let tab = |s: usize, d: usize| -> Vec<usize> {
        let scale = s as f64 / d as f64;
        let mut f = scale * 0.5;
        (0..d)
            .map(|_| {
                let i = (f.floor() as usize).min(s - 1);
                f += scale;
                i
            })
            .collect()
    };
    let (xs, ys) = (tab(sw, dw), tab(sh, dh));
    for (y, &sy) in ys.iter().enumerate() {
        copy_row(src(sy), &xs, cn, &mut out[y * dw * cn..(y + 1) * dw * cn]);
    }
    out
}

fn copy_row(row: &[u8], xs: &[usize], cn: usize, to: &mut [u8]) {
    for (d, &sx) in to.chunks_exact_mut(cn).zip(xs) {
        d.copy_from_slice(&row[sx * cn..(sx + 1) * cn]);
    }
}

/// `resize_bitExact` with `interpolationLinear<uchar>`: coordinates in (soft) double,
/// weights in unsigned 8.8 fixed point, the horizontal pass into 8.8 sums, the vertical
/// into 16.16 and rounded to 8 bits.
fn linear_exact<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    inv_scale: (f64, f64),
    out: &mut [u8],
) {
    /// Per output index: the source index and the two 8.8 weights, or where it is clamped.
    struct Axis {
        ofs: Vec<usize>,
        coef: Vec<[u32; 2]>,
        /// Outputs below it take source 0 whole; from `max` on, the last source whole.
        min: usize,
        max: usize,
    }
    let axis = |inv: f64, s: usize, d: usize| {
        let scale = 1.0 / inv;
        let (mut min, mut max) = (0, d);
        let mut ofs = vec![0usize; d];
        let mut coef = vec![[0u32; 2]; d];
        for v in 0..d {
            let f = scale * (v as f64 + 0.5) - 0.5;
            let i = f.floor() as i64;
            if i >= 0 && s > 1 {
                if i < s as i64 - 1 {
                    ofs[v] = i as usize;
                    // ufixedpoint16 from a double: rounded to nearest.
                    let c1 = round_even((f - i as f64) * 256.0) as u32;
                    coef[v] = [256 - c1, c1];
                } else {
                    ofs[v] = s - 1;
                    max = max.min(v);
                }
            } else {
                min = min.max(v + 1);
            }
        }
        Axis { ofs, coef, min, max }
    };
    let (ax, ay) = (axis(inv_scale.0, sw, dw), axis(inv_scale.1, sh, dh));
    // One source row through the horizontal pass: 8.8 fixed point, saturating sums.
    let hline = |row: &[u8]| -> Vec<u32> {
        let mut line = vec![0u32; dw * cn];
        for dx in 0..dw {
            for c in 0..cn {
                line[dx * cn + c] = if dx < ax.min {
                    u32::from(row[c]) << 8
                } else if dx >= ax.max {
                    u32::from(row[ax.ofs[dw - 1] * cn + c]) << 8
                } else {
                    let s = ax.ofs[dx] * cn + c;
                    let [m0, m1] = ax.coef[dx];
                    (m0 * u32::from(row[s]) + m1 * u32::from(row[s + cn])).min(0xFFFF)
                };
            }
        }
        line
    };
    // 8.8 to 8 bits, rounded.
    let set = |line: &[u32], to: &mut [u8]| {
        for (d, &v) in to.iter_mut().zip(line) {
            *d = ((v + 128) >> 8) as u8;
        }
    };
    let first = hline(src(0));
    let last = hline(src(sh - 1));
    for dy in 0..dh {
        let to = &mut out[dy * dw * cn..(dy + 1) * dw * cn];
        if dy < ay.min {
            set(&first, to);
        } else if dy >= ay.max {
            set(&last, to);
        } else {
            let iy = ay.ofs[dy];
            let (l0, l1) = (hline(src(iy)), hline(src(iy + 1)));
            let [m0, m1] = ay.coef[dy];
            for ((d, &a), &b) in to.iter_mut().zip(&l0).zip(&l1) {
                // ufixedpoint32 to uint8: rounded, saturated.
                *d = u8_of((((a * m0 + b * m1) as u64 + (1 << 15)) >> 16) as i32);
            }
        }
    }
}

/// `resizeAreaFast_`: the mean of each `sx` x `sy` cell. Halving with 1, 3 or 4 channels
/// takes OpenCV's vector form, `(a + b + c + d + 2) >> 2`; other cells multiply the sum by
/// `1.f / area` and round to even.
fn area_fast_path<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    (fx, fy): (usize, usize),
    out: &mut [u8],
) {
    let halving = fx == 2 && fy == 2 && cn != 2;
    let scale = 1.0f32 / (fx * fy) as f32;
    for dy in 0..dh {
        let sy0 = dy * fy;
        for dx in 0..dw {
            for c in 0..cn {
                // (The sizes divide exactly here, so every cell is whole.)
                let mut sum = 0i32;
                for k in 0..fy {
                    let row = src((sy0 + k).min(sh - 1));
                    for j in 0..fx {
                        sum += i32::from(row[((dx * fx + j).min(sw - 1)) * cn + c]);
                    }
                }
                out[(dy * dw + dx) * cn + c] = if halving { ((sum + 2) >> 2) as u8 } else { u8_of_f32(sum as f32 * scale) };
            }
        }
    }
}

/// `computeResizeAreaTab`: for each output index, the source indices it covers and their
/// weights (the covered fraction over the cell's width), in float.
fn area_tab(s: usize, d: usize, scale: f64) -> Vec<(usize, usize, f32)> {
    let mut tab = Vec::new();
    for dx in 0..d {
        let fsx1 = dx as f64 * scale;
        let fsx2 = fsx1 + scale;
        let cell = scale.min(s as f64 - fsx1);
        let mut sx1 = fsx1.ceil() as i64;
        let sx2 = (fsx2.floor() as i64).min(s as i64 - 1);
        sx1 = sx1.min(sx2);
        if sx1 as f64 - fsx1 > 1e-3 {
            tab.push((dx, (sx1 - 1) as usize, ((sx1 as f64 - fsx1) / cell) as f32));
        }
        for sx in sx1..sx2 {
            tab.push((dx, sx as usize, (1.0 / cell) as f32));
        }
        if fsx2 - sx2 as f64 > 1e-3 {
            tab.push((dx, sx2 as usize, ((fsx2 - sx2 as f64).min(1.0).min(cell) / cell) as f32));
        }
    }
    tab
}

/// `resizeArea_`: a true area average for shrinking by a factor that is not a whole number:
/// float weights, each source row's weighted sums into a buffer, the rows' into the output
/// row, rounded to even.
fn area<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    scale: (f64, f64),
    out: &mut [u8],
) {
    let xtab = area_tab(sw, dw, scale.0);
    let ytab = area_tab(sh, dh, scale.1);
    let width = dw * cn;
    let mut sum = vec![0f32; width];
    let mut buf = vec![0f32; width];
    let mut prev = ytab[0].0;
    for &(dy, sy, beta) in &ytab {
        let row = src(sy);
        buf.iter_mut().for_each(|b| *b = 0.0);
        for &(dx, sx, alpha) in &xtab {
            for c in 0..cn {
                buf[dx * cn + c] += f32::from(row[sx * cn + c]) * alpha;
            }
        }
        if dy != prev {
            for (dx, (s, b)) in sum.iter_mut().zip(&buf).enumerate() {
                out[prev * width + dx] = u8_of_f32(*s);
                *s = beta * b;
            }
            prev = dy;
        } else {
            for (s, b) in sum.iter_mut().zip(&buf) {
                *s += beta * b;
            }
        }
    }
    for (dx, s) in sum.iter().enumerate() {
        out[prev * width + dx] = u8_of_f32(*s);
    }
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

/// The generic separable path (`resizeGeneric_`) for linear, cubic, Lanczos-4 and the
/// bilinear form of area when enlarging: per output column `ksize` taps with 11-bit weights
/// (replicated borders), the horizontal pass into `int`s, then the vertical pass over
/// `ksize` rows (clamped), rounded as each mode's vertical function rounds.
fn generic<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    (scale, inv_scale): ((f64, f64), (f64, f64)),
    mode: CvInterpolation,
    out: &mut [u8],
) {
    let ksize = match mode {
        CvInterpolation::Cubic => 4,
        CvInterpolation::Lanczos4 => 8,
        _ => 2,
    };
    let half = ksize / 2;
    let area_mode = mode == CvInterpolation::Area;
    let clamps = !matches!(mode, CvInterpolation::Cubic | CvInterpolation::Lanczos4);
    let coeffs = |f: f32| -> Vec<i16> {
        let c: Vec<f32> = match mode {
            CvInterpolation::Cubic => cubic_coeffs(f).to_vec(),
            CvInterpolation::Lanczos4 => lanczos4_coeffs(f).to_vec(),
            _ => vec![1.0 - f, f],
        };
        c.iter().map(|&v| short_of(v * COEF_SCALE as f32)).collect()
    };
    let position = |d: usize, scale: f64, inv: f64| -> (i64, f32) {
        if !area_mode {
            let f = ((d as f64 + 0.5) * scale - 0.5) as f32;
            let s = f.floor();
            (s as i64, f - s)
        } else {
            let s = (d as f64 * scale).floor() as i64;
            let f = ((d + 1) as f64 - (s + 1) as f64 * inv) as f32;
            (s, if f <= 0.0 { 0.0 } else { f - f.floor() })
        }
    };
    // Columns: the first tap's source column and the weights, clamped at the edges as
    // OpenCV clamps them (linear and area only).
    let mut xofs = vec![0i64; dw];
    let mut alpha = vec![0i16; dw * ksize];
    for dx in 0..dw {
        let (mut sx, mut fx) = position(dx, scale.0, inv_scale.0);
        if sx < half as i64 - 1 && sx < 0 && clamps {
            (fx, sx) = (0.0, 0);
        }
        if sx + half as i64 >= sw as i64 && sx >= sw as i64 - 1 && clamps {
            (fx, sx) = (0.0, sw as i64 - 1);
        }
        xofs[dx] = sx;
        alpha[dx * ksize..(dx + 1) * ksize].copy_from_slice(&coeffs(fx));
    }
    let mut yofs = vec![0i64; dh];
    let mut beta = vec![0i16; dh * ksize];
    for dy in 0..dh {
        let (sy, fy) = position(dy, scale.1, inv_scale.1);
        yofs[dy] = sy;
        beta[dy * ksize..(dy + 1) * ksize].copy_from_slice(&coeffs(fy));
    }
    let width = dw * cn;
    // The horizontal pass of one source row: taps at pixel sx - half + 1 + k, clamped to the
    // row (OpenCV's border loops and its inner loop agree on this).
    let hrow = |row: &[u8]| -> Vec<i32> {
        let mut d = vec![0i32; width];
        for dx in 0..dw {
            let w = &alpha[dx * ksize..(dx + 1) * ksize];
            for c in 0..cn {
                let mut v = 0i32;
                for (k, &wk) in w.iter().enumerate() {
                    let sx = (xofs[dx] - half as i64 + 1 + k as i64).clamp(0, sw as i64 - 1) as usize;
                    // (A weight of 0 past the edge reads nothing in OpenCV; the clamped
                    // pixel times 0 adds nothing here.)
                    v = v.wrapping_add(i32::from(row[sx * cn + c]).wrapping_mul(i32::from(wk)));
                }
                d[dx * cn + c] = v;
            }
        }
        d
    };
    let mut rows: Vec<Option<Vec<i32>>> = vec![None; sh];
    for dy in 0..dh {
        let b = &beta[dy * ksize..(dy + 1) * ksize];
        let taps: Vec<usize> =
            (0..ksize).map(|k| (yofs[dy] - half as i64 + 1 + k as i64).clamp(0, sh as i64 - 1) as usize).collect();
        for &t in &taps {
            if rows[t].is_none() {
                rows[t] = Some(hrow(src(t)));
            }
        }
        let s: Vec<&[i32]> = taps.iter().map(|&t| rows[t].as_deref().expect("made above")).collect();
        let to = &mut out[dy * width..(dy + 1) * width];
        match mode {
            CvInterpolation::Cubic => vertical_cubic(&s, b, to),
            CvInterpolation::Lanczos4 => {
                for (x, d) in to.iter_mut().enumerate() {
                    let v = s.iter().zip(b).fold(0i32, |a, (r, &w)| a.wrapping_add(r[x].wrapping_mul(i32::from(w))));
                    *d = u8_of(v.wrapping_add(1 << 21) >> 22);
                }
            }
            _ => {
                // `VResizeLinear<uchar>`: the vector form's rounding on every element.
                let (b0, b1) = (i32::from(b[0]), i32::from(b[1]));
                for (x, d) in to.iter_mut().enumerate() {
                    *d = u8_of((((b0 * (s[0][x] >> 4)) >> 16) + ((b1 * (s[1][x] >> 4)) >> 16) + 2) >> 2);
                }
            }
        }
    }
}

/// `VResizeCubic<uchar>`: OpenCV's vector form (in float: the four products summed as
/// `S0*b0 + (S1*b1 + (S2*b2 + S3*b3))`, each `b` the weight over 2^22, rounded to even) for
/// the elements it takes, 8 at a time (128-bit vectors of `short`s), and the integer form
/// for the rest of the row.
fn vertical_cubic(s: &[&[i32]], b: &[i16], to: &mut [u8]) {
    let width = to.len();
    let scale = 1.0f32 / (COEF_SCALE * COEF_SCALE) as f32;
    let bf: Vec<f32> = b.iter().map(|&w| w as f32 * scale).collect();
    let lanes = 8;
    let vector = if width >= lanes { (width - lanes) / lanes * lanes + lanes } else { 0 };
    for (x, d) in to.iter_mut().enumerate() {
        *d = if x < vector {
            let f = |k: usize| s[k][x] as f32 * bf[k];
            u8_of(round_even((f(0) + (f(1) + (f(2) + f(3)))) as f64))
        } else {
            let v = (0..4).fold(0i32, |a, k| a.wrapping_add(s[k][x].wrapping_mul(i32::from(b[k]))));
            u8_of(v.wrapping_add(1 << 21) >> 22)
        };
    }
}
