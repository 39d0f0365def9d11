//! Pillow's `Image.resize` on 8-bit images (`src/libImaging/Resample.c`, `Geometry.c`'s
//! `ImagingScaleAffine` for NEAREST, `Convert.c` for premultiplied alpha), step for step:
//! the filter's weights in double, normalized, turned into 22-bit fixed point; a horizontal
//! pass into an 8-bit image, then a vertical pass. Images with alpha are premultiplied
//! before and divided after, as `Image.resize` does for `LA` and `RGBA`.

use super::PilFilter;

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
/// index and the fixed-point weights of the sources from it.
pub(crate) fn coeffs(in_size: usize, in0: f32, in1: f32, out_size: usize, filter: PilFilter) -> Vec<(usize, Vec<i32>)> {
    let k = kernel(filter);
    let scale = (in1 - in0) as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = k.support * filterscale;
    let inv = 1.0 / filterscale;
    (0..out_size)
        .map(|xx| {
            let center = in0 as f64 + (xx as f64 + 0.5) * scale;
            let xmin = ((center - support + 0.5) as i64).max(0);
            let xmax = ((center + support + 0.5) as i64).min(in_size as i64) - xmin;
            let mut w: Vec<f64> =
                (0..xmax.max(0)).map(|x| (k.f)((x as f64 + xmin as f64 - center + 0.5) * inv)).collect();
            let ww: f64 = w.iter().sum();
            if ww != 0.0 {
                w.iter_mut().for_each(|v| *v /= ww);
            }
            let fixed = w
                .iter()
                .map(|&v| {
                    let s = v * (1u32 << PRECISION_BITS) as f64;
                    (if v < 0.0 { -0.5 + s } else { 0.5 + s }) as i32
                })
                .collect();
            (xmin as usize, fixed)
        })
        .collect()
}

/// `clip8`: the sum's integer part, clamped to a byte.
fn clip8(ss: i32) -> u8 {
    (ss >> PRECISION_BITS).clamp(0, 255) as u8
}

/// One resize, as `Image.resize((dw, dh), filter, box, reducing_gap=None)` computes it on
/// an image of `cn` channels (with `alpha`: the last is alpha, resampled premultiplied).
/// `boxed`: the source box, as Pillow's floats.
pub(crate) fn resize<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    alpha: bool,
    (dw, dh): (usize, usize),
    filter: PilFilter,
    boxed: Option<[f32; 4]>,
) -> Vec<u8> {
    let b = boxed.unwrap_or([0.0, 0.0, sw as f32, sh as f32]);
    if (sw, sh) == (dw, dh) && b == [0.0, 0.0, sw as f32, sh as f32] {
        return (0..sh).flat_map(|y| src(y)[..sw * cn].to_vec()).collect();
    }
    // `LA` and `RGBA` go through `La` and `RGBa` (colors premultiplied by alpha), but for
    // NEAREST.
    let premultiply_alpha = alpha && cn > 1 && filter != PilFilter::Nearest;
    let premultiplied: Vec<Vec<u8>> = match premultiply_alpha {
        true => (0..sh).map(|y| premultiply(&src(y)[..sw * cn], cn)).collect(),
        false => Vec::new(),
    };
    let rows = |y: usize| -> &[u8] { if premultiplied.is_empty() { src(y) } else { &premultiplied[y] } };
    let mut out = if sh > sw * 100 && dh < sh {
        // Very tall images shrinking in height: `Image.resize` resizes the height first,
        // then the width, in two calls.
        let tall = core(&rows, (sw, sh), cn, (sw, dh), filter, [0.0, b[1], sw as f32, b[3]]);
        let row = |y: usize| -> &[u8] { &tall[y * sw * cn..(y + 1) * sw * cn] };
        core(&row, (sw, dh), cn, (dw, dh), filter, [b[0], 0.0, b[2], dh as f32])
    } else {
        core(&rows, (sw, sh), cn, (dw, dh), filter, b)
    };
    if premultiply_alpha {
        unpremultiply(&mut out, cn);
    }
    out
}

/// The C layer (`_resize`): a copy, NEAREST's affine scale, or `ImagingResample`.
fn core<'a>(
    rows: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    filter: PilFilter,
    b: [f32; 4],
) -> Vec<u8> {
    let mut out = vec![0u8; dw * dh * cn];
    if (sw, sh) == (dw, dh) && b == [0.0, 0.0, dw as f32, dh as f32] {
        return (0..sh).flat_map(|y| rows(y)[..sw * cn].to_vec()).collect();
    }
    if filter == PilFilter::Nearest {
        return nearest(rows, (sw, sh), cn, (dw, dh), b, out);
    }
    let need_h = dw != sw || b[0] != 0.0 || b[2] != dw as f32;
    let need_v = dh != sh || b[1] != 0.0 || b[3] != dh as f32;
    let vert = coeffs(sh, b[1], b[3], dh, filter);
    let first = vert[0].0;
    let last = vert[dh - 1].0 + vert[dh - 1].1.len();
    // The horizontal pass, into rows `first..last` of an 8-bit image `dw` wide.
    let (temp, temp_w, offset): (Vec<Vec<u8>>, usize, usize) = if need_h {
        let horiz = coeffs(sw, b[0], b[2], dw, filter);
        let temp = (first..last)
            .map(|y| {
                let row = rows(y);
                let mut t = vec![0u8; dw * cn];
                for (xx, (xmin, k)) in horiz.iter().enumerate() {
                    for c in 0..cn {
                        let mut ss = 1i32 << (PRECISION_BITS - 1);
                        for (x, &w) in k.iter().enumerate() {
                            ss = ss.wrapping_add(i32::from(row[(x + xmin) * cn + c]).wrapping_mul(w));
                        }
                        t[xx * cn + c] = clip8(ss);
                    }
                }
                t
            })
            .collect();
        (temp, dw, first)
    } else {
        ((0..sh).map(|y| rows(y)[..sw * cn].to_vec()).collect(), sw, 0)
    };
    if need_v {
        for (yy, (ymin, k)) in vert.iter().enumerate() {
            for x in 0..temp_w * cn {
                let mut ss = 1i32 << (PRECISION_BITS - 1);
                for (y, &w) in k.iter().enumerate() {
                    ss = ss.wrapping_add(i32::from(temp[y + ymin - offset][x]).wrapping_mul(w));
                }
                out[yy * dw * cn + x] = clip8(ss);
            }
        }
    } else {
        for (yy, row) in temp.iter().enumerate().take(dh) {
            out[yy * dw * cn..(yy + 1) * dw * cn].copy_from_slice(row);
        }
    }
    out
}

/// `MULDIV255`: `a * b / 255`, rounded, as Pillow computes it.
fn muldiv255(a: u32, b: u32) -> u8 {
    let t = a * b + 128;
    (((t >> 8) + t) >> 8) as u8
}

/// `rgbA2rgba` / `lA2la`: colors times alpha.
fn premultiply(row: &[u8], cn: usize) -> Vec<u8> {
    let mut out = row.to_vec();
    for px in out.chunks_exact_mut(cn) {
        let a = u32::from(px[cn - 1]);
        for c in &mut px[..cn - 1] {
            *c = muldiv255(u32::from(*c), a);
        }
    }
    out
}

/// `rgba2rgbA` / `la2lA`: colors divided by alpha (truncated, clipped), kept where alpha is
/// 0 or 255.
fn unpremultiply(bytes: &mut [u8], cn: usize) {
    for px in bytes.chunks_exact_mut(cn) {
        let a = u32::from(px[cn - 1]);
        if a != 0 && a != 255 {
            for c in &mut px[..cn - 1] {
                *c = (255 * u32::from(*c) / a).min(255) as u8;
            }
        }
    }
}

/// NEAREST: `ImagingScaleAffine`, source positions stepped in double from the first
/// output pixel's center (`COORD`: truncated, -1 below 0); outputs whose source falls
/// outside stay 0.
fn nearest<'a>(
    src: &dyn Fn(usize) -> &'a [u8],
    (sw, sh): (usize, usize),
    cn: usize,
    (dw, dh): (usize, usize),
    b: [f32; 4],
    mut out: Vec<u8>,
) -> Vec<u8> {
    let a0 = (b[2] - b[0]) as f64 / dw as f64;
    let a4 = (b[3] - b[1]) as f64 / dh as f64;
    let coord = |v: f64| if v < 0.0 { -1 } else { v as i64 };
    let mut xo = b[0] as f64 + a0 * 0.5;
    let mut xs = Vec::with_capacity(dw);
    for _ in 0..dw {
        let xin = coord(xo);
        xs.push((xin >= 0 && xin < sw as i64).then_some(xin as usize));
        xo += a0;
    }
    let mut yo = b[1] as f64 + a4 * 0.5;
    for y in 0..dh {
        let yi = coord(yo);
        if yi >= 0 && yi < sh as i64 {
            let row = src(yi as usize);
            for (x, sx) in xs.iter().enumerate() {
                if let Some(sx) = sx {
                    out[(y * dw + x) * cn..(y * dw + x + 1) * cn].copy_from_slice(&row[sx * cn..(sx + 1) * cn]);
                }
            }
        }
        yo += a4;
    }
    out
}
