//! Runs a [`Plan`] on the CPU: the serial reference, and, band by band of output rows, the
//! all-cores form. Each output row is computed from the plan alone, so a band gives the same
//! bytes as the whole.

use std::ops::Range;

use super::pil::{HALF, clip8, muldiv255, unpremultiply};
use super::{Filter, SourceBox, plan_boxed};
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;
use super::plan::{Lists, PilPass, Plan, Rule, Taps, cubic_vector_elems};

/// `src` (its box `bx`, if given) resized on the CPU, serially or on all cores: the forms of
/// `cuimg::cpu` and `cuimg::par`.
/// `src` laid out as `layout` says: its box resized, then padded (`parallel`: on all cores).
pub(crate) fn layout_on_host<P: Pixel>(
    src: &ImageView<'_, P>,
    filter: Filter,
    layout: &super::ResizeLayout,
    parallel: bool,
) -> Result<Image<P>> {
    let inner = on_host(src, layout.inner, filter, layout.source, parallel)?;
    let Some((pad, value)) = layout.pad else { return Ok(inner) };
    crate::ops::border::cpu::on_host(&inner.view(), pad, crate::Border::Constant(value), parallel)
}

/// Each of `planes` planes of `src` resized to `size`, stacked (`parallel`: on all cores).
pub(crate) fn planar_on_host(
    src: &ImageView<'_, crate::Gray8>,
    planes: u32,
    size: (u32, u32),
    filter: Filter,
    parallel: bool,
) -> Result<Image<crate::Gray8>> {
    crate::validate::non_empty(src.width(), src.height())?;
    if planes == 0 || !src.height().is_multiple_of(planes) {
        return Err(crate::Error::InvalidParameter {
            what: "a planar resize".into(),
            why: format!("{} rows are not {planes} planes of whole rows", src.height()),
        });
    }
    let sh = src.height() / planes;
    let mut bytes = Vec::new();
    for k in 0..planes {
        let plane = src.roi(crate::Rect::new(0, k * sh, src.width(), sh))?;
        bytes.extend_from_slice(on_host(&plane, size, filter, None, parallel)?.as_bytes());
    }
    Image::from_bytes(size.0, size.1 * planes, &bytes)
}

pub(crate) fn on_host<P: Pixel>(
    src: &ImageView<'_, P>,
    (width, height): (u32, u32),
    filter: Filter,
    bx: Option<SourceBox>,
    parallel: bool,
) -> Result<Image<P>> {
    crate::validate::non_empty(src.width(), src.height())?;
    // OpenCV's filters read a whole-pixel crop: the view of it.
    if let Some(rect) = bx.map(|b| b.check(src.width(), src.height(), filter)).transpose()?.flatten() {
        return on_host(&src.roi(rect)?, (width, height), filter, None, parallel);
    }
    let plan = plan_boxed::<P>(src.width(), src.height(), width, height, filter, bx)?;
    let rows = |y: usize| -> &[u8] { bytemuck::cast_slice(src.row(y as u32)) };
    let source = Source { rows: &rows, size: (src.width() as usize, src.height() as usize), cn: P::CHANNELS };
    let mut out = Image::<P>::try_new(width, height)?;
    match parallel {
        true => run_parallel(&plan, &source, (width as usize, height as usize), out.as_bytes_mut()),
        false => run(&plan, &source, width as usize, 0..height as usize, out.as_bytes_mut()),
    }
    Ok(out)
}

/// Source rows of bytes, `cn` channels a pixel.
pub(crate) struct Source<'a> {
    pub rows: &'a (dyn Fn(usize) -> &'a [u8] + Sync),
    pub size: (usize, usize),
    pub cn: usize,
}

/// Clamps `i` into `0..len`: the replicated border.
fn clamp(i: i64, len: usize) -> usize {
    i.clamp(0, len as i64 - 1) as usize
}

/// Output rows `rows` of a `dw`-wide output into `out` (`rows.len()` rows of `dw * cn`).
pub(crate) fn run(plan: &Plan, src: &Source, dw: usize, rows: Range<usize>, out: &mut [u8]) {
    let (cn, width) = (src.cn, dw * src.cn);
    match plan {
        Plan::Copy => {
            for (y, to) in rows.zip(out.chunks_exact_mut(width)) {
                to.copy_from_slice(&(src.rows)(y)[..width]);
            }
        }
        Plan::Gather { xs, ys } => {
            for (y, to) in rows.zip(out.chunks_exact_mut(width)) {
                to.fill(0);
                if ys[y] == u32::MAX {
                    continue;
                }
                let row = (src.rows)(ys[y] as usize);
                for (d, &sx) in to.chunks_exact_mut(cn).zip(xs.iter()) {
                    if sx != u32::MAX {
                        d.copy_from_slice(&row[sx as usize * cn..(sx as usize + 1) * cn]);
                    }
                }
            }
        }
        Plan::Separable { x, y, rule } => separable(src, x, y, *rule, width, rows, out),
        Plan::Cells { fx, fy, halving } => {
            let scale = 1.0f32 / (fx * fy) as f32;
            for (dy, to) in rows.zip(out.chunks_exact_mut(width)) {
                for (e, d) in to.iter_mut().enumerate() {
                    let (dx, c) = (e / cn, e % cn);
                    let mut sum = 0i32;
                    for k in 0..*fy {
                        let row = (src.rows)(dy * fy + k);
                        for j in 0..*fx {
                            sum += i32::from(row[(dx * fx + j) * cn + c]);
                        }
                    }
                    *d = if *halving { ((sum + 2) >> 2) as u8 } else { round_u8(sum as f32 * scale) };
                }
            }
        }
        Plan::Area { x, y } => area(src, x, y, width, rows, out),
        Plan::Pillow { passes, premultiply } => pillow(src, passes, *premultiply, rows, out),
    }
}

/// `saturate_cast<uchar>(float)`: rounded to even, clamped.
fn round_u8(v: f32) -> u8 {
    v.round_ties_even().clamp(0.0, 255.0) as u8
}

/// OpenCV's horizontal pass of one source row: per output element, the wrapping integer sum
/// of the taps' bytes times their weights.
fn hsum(row: &[u8], x: &Taps<i16>, sw: usize, cn: usize, e: usize) -> i32 {
    let (dx, c) = (e / cn, e % cn);
    let w = &x.weights[dx * x.taps..(dx + 1) * x.taps];
    w.iter().enumerate().fold(0i32, |acc, (k, &wk)| {
        let sx = clamp(i64::from(x.first[dx]) + k as i64, sw);
        acc.wrapping_add(i32::from(row[sx * cn + c]).wrapping_mul(i32::from(wk)))
    })
}

/// The vertical rule on the weighted rows `s` of element `e` (OpenCV's `VResize*<uchar>`).
pub(crate) fn vertical(rule: Rule, s: &[i32], b: &[i16], e: usize, vector_elems: usize) -> u8 {
    let int = || s.iter().zip(b).fold(0i32, |a, (&v, &w)| a.wrapping_add(v.wrapping_mul(i32::from(w))));
    match rule {
        Rule::Linear => {
            let (b0, b1) = (i32::from(b[0]), i32::from(b[1]));
            ((((b0 * (s[0] >> 4)) >> 16) + ((b1 * (s[1] >> 4)) >> 16) + 2) >> 2).clamp(0, 255) as u8
        }
        Rule::Exact => ((int() as i64 + (1 << 15)) >> 16).clamp(0, 255) as u8,
        Rule::Lanczos => (int().wrapping_add(1 << 21) >> 22).clamp(0, 255) as u8,
        Rule::Cubic if e < vector_elems => {
            // The vector form: each weight over 2^22 in float, the products summed as
            // `S0*b0 + (S1*b1 + (S2*b2 + S3*b3))`, rounded to even, saturated.
            let scale = 1.0f32 / (2048.0 * 2048.0);
            let f = |k: usize| s[k] as f32 * (b[k] as f32 * scale);
            round_u8(f(0) + (f(1) + (f(2) + f(3))))
        }
        Rule::Cubic => (int().wrapping_add(1 << 21) >> 22).clamp(0, 255) as u8,
    }
}

fn separable(
    src: &Source,
    x: &Taps<i16>,
    y: &Taps<i16>,
    rule: Rule,
    width: usize,
    rows: Range<usize>,
    out: &mut [u8],
) {
    let (sw, sh) = src.size;
    let vector_elems = cubic_vector_elems(width);
    // Each source row's horizontal pass, made once when a row first needs it.
    let mut hrows: Vec<Option<Vec<i32>>> = vec![None; sh];
    let mut s = vec![0i32; y.taps];
    for (dy, to) in rows.zip(out.chunks_exact_mut(width)) {
        let b = &y.weights[dy * y.taps..(dy + 1) * y.taps];
        let taps: Vec<usize> = (0..y.taps).map(|k| clamp(i64::from(y.first[dy]) + k as i64, sh)).collect();
        for &t in &taps {
            if hrows[t].is_none() {
                let row = (src.rows)(t);
                hrows[t] = Some((0..width).map(|e| hsum(row, x, sw, src.cn, e)).collect());
            }
        }
        for (e, d) in to.iter_mut().enumerate() {
            for (sk, &t) in s.iter_mut().zip(&taps) {
                *sk = hrows[t].as_ref().expect("made above")[e];
            }
            *d = vertical(rule, &s, b, e, vector_elems);
        }
    }
}

/// `resizeArea_`: per source row of an output row's cell, the weighted sum across in float
/// (in the lists' order, from 0), then the rows' (the first assigned, the others added).
fn area(src: &Source, x: &Lists, y: &Lists, width: usize, rows: Range<usize>, out: &mut [u8]) {
    let cn = src.cn;
    for (dy, to) in rows.zip(out.chunks_exact_mut(width)) {
        for (e, d) in to.iter_mut().enumerate() {
            let (dx, c) = (e / cn, e % cn);
            let mut sum = 0f32;
            for j in y.start[dy] as usize..y.start[dy + 1] as usize {
                let row = (src.rows)(y.index[j] as usize);
                let mut buf = 0f32;
                for i in x.start[dx] as usize..x.start[dx + 1] as usize {
                    buf += f32::from(row[x.index[i] as usize * cn + c]) * x.weight[i];
                }
                let beta = y.weight[j];
                sum = if j == y.start[dy] as usize { beta * buf } else { sum + beta * buf };
            }
            *d = round_u8(sum);
        }
    }
}

/// One of Pillow's passes: output element `e` of output row `r`, from `input` (`in_rows`
/// of `in_width` pixels, each premultiplied on reading when `premultiply`).
pub(crate) fn pil_pass_at<'a>(
    pass: &PilPass,
    input: &dyn Fn(usize) -> &'a [u8],
    (in_width, in_rows): (usize, usize),
    cn: usize,
    premultiply: bool,
    r: usize,
    e: usize,
) -> u8 {
    let (o, c) = (e / cn, e % cn);
    let t = &pass.taps;
    let read = |row: &[u8], px: usize| -> u8 {
        let v = row[px * cn + c];
        if premultiply && c + 1 < cn { muldiv255(u32::from(v), u32::from(row[px * cn + cn - 1])) } else { v }
    };
    let mut ss = HALF;
    if pass.horizontal {
        let row = input(r + pass.offset);
        for (k, &w) in t.weights[o * t.taps..(o + 1) * t.taps].iter().enumerate() {
            let px = clamp(i64::from(t.first[o]) + k as i64, in_width);
            ss = ss.wrapping_add(i32::from(read(row, px)).wrapping_mul(w));
        }
    } else {
        for (k, &w) in t.weights[r * t.taps..(r + 1) * t.taps].iter().enumerate() {
            let y = clamp(i64::from(t.first[r]) - pass.offset as i64 + k as i64, in_rows);
            ss = ss.wrapping_add(i32::from(read(input(y), o)).wrapping_mul(w));
        }
    }
    clip8(ss)
}

/// Row `y` of the intermediate image held, or of the source when none is.
fn row_of<'h, 's: 'h>(held: &'h Option<(Vec<u8>, (usize, usize))>, src: &'h Source<'s>, y: usize) -> &'h [u8] {
    match held {
        Some((bytes, (w, _))) => &bytes[y * w * src.cn..(y + 1) * w * src.cn],
        None => (src.rows)(y),
    }
}

/// Pillow's passes: all but the last into whole intermediate images (each on all cores when
/// `parallel`), the last into the rows asked for, colors divided by alpha after it when
/// `premultiply`.
fn pillow(src: &Source, passes: &[PilPass], premultiply: bool, rows: Range<usize>, out: &mut [u8]) {
    let (last, early) = passes.split_last().expect("a Pillow plan has a pass");
    let held = pillow_early(src, early, premultiply, false);
    pillow_last(src, &held, last, premultiply && early.is_empty(), premultiply, rows, out);
}

/// The intermediate image after Pillow's passes `early` (none: `None`).
fn pillow_early(
    src: &Source,
    early: &[PilPass],
    premultiply: bool,
    parallel: bool,
) -> Option<(Vec<u8>, (usize, usize))> {
    use rayon::prelude::*;
    let cn = src.cn;
    let mut held: Option<(Vec<u8>, (usize, usize))> = None;
    for (i, pass) in early.iter().enumerate() {
        let (w, h) = pass.out;
        let mut img = vec![0u8; w * h * cn];
        let dims = held.as_ref().map_or(src.size, |(_, d)| *d);
        let input = |y: usize| row_of(&held, src, y);
        let one = |(r, to): (usize, &mut [u8])| {
            for (e, d) in to.iter_mut().enumerate() {
                *d = pil_pass_at(pass, &input, dims, cn, premultiply && i == 0, r, e);
            }
        };
        match parallel {
            true => img.par_chunks_exact_mut(w * cn).enumerate().for_each(one),
            false => img.chunks_exact_mut(w * cn).enumerate().for_each(one),
        }
        held = Some((img, (w, h)));
    }
    held
}

/// Pillow's last pass into output rows `rows`.
fn pillow_last(
    src: &Source,
    held: &Option<(Vec<u8>, (usize, usize))>,
    last: &PilPass,
    premultiply_in: bool,
    divide_out: bool,
    rows: Range<usize>,
    out: &mut [u8],
) {
    let cn = src.cn;
    let (w, _) = last.out;
    let dims = held.as_ref().map_or(src.size, |(_, d)| *d);
    let input = |y: usize| row_of(held, src, y);
    for (r, to) in rows.zip(out.chunks_exact_mut(w * cn)) {
        for (e, d) in to.iter_mut().enumerate() {
            *d = pil_pass_at(last, &input, dims, cn, premultiply_in, r, e);
        }
        if divide_out {
            for px in to.chunks_exact_mut(cn) {
                let a = px[cn - 1];
                for v in &mut px[..cn - 1] {
                    *v = unpremultiply(*v, a);
                }
            }
        }
    }
}

/// The whole output on all cores: bands of output rows (Pillow's intermediate passes first,
/// each on all cores).
pub(crate) fn run_parallel(plan: &Plan, src: &Source, (dw, dh): (usize, usize), out: &mut [u8]) {
    use rayon::prelude::*;
    let width = dw * src.cn;
    let band = dh.div_ceil(rayon::current_num_threads() * 4).max(1);
    let bands = out.par_chunks_mut(band * width).enumerate();
    match plan {
        Plan::Pillow { passes, premultiply } => {
            let (last, early) = passes.split_last().expect("a Pillow plan has a pass");
            let held = pillow_early(src, early, *premultiply, true);
            bands.for_each(|(i, to)| {
                let rows = i * band..(i * band + to.len() / width);
                pillow_last(src, &held, last, *premultiply && early.is_empty(), *premultiply, rows, to);
            });
        }
        _ => bands.for_each(|(i, to)| run(plan, src, dw, i * band..(i * band + to.len() / width), to)),
    }
}
