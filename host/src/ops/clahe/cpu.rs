//! The serial CPU reference: OpenCV's `CLAHE_CalcLut_Body` and `CLAHE_Interpolation_Body`
//! (modules/imgproc/src/clahe.cpp) step for step, in the same f32 arithmetic.

use cuimg_abi::clahe::{Geometry, reflect101};

use super::Clahe;
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::ops::equalize::EqualizeMode;
use crate::ops::grayscale::GrayWeights;
use crate::pixel::{Color, Gray8};

/// The 256-entry table of tile `(s, t)` (column, row).
pub(crate) fn tile_lut(src: &ImageView<'_, Gray8>, plan: &Geometry, (s, t): (u32, u32)) -> [u8; 256] {
    let (w, h) = src.dimensions();
    let (tw, th) = (plan.tile_w, plan.tile_h);
    let mut hist = [0u32; 256];
    for y in t * th..(t + 1) * th {
        let row = src.row(reflect101(y, h));
        for x in s * tw..(s + 1) * tw {
            hist[row[reflect101(x, w) as usize].0[0] as usize] += 1;
        }
    }
    // Clip, then spread the excess: the same share to every bin, and what is left one at a
    // time from bin 0 in steps of 256 / left.
    let mut clipped = 0u32;
    for b in hist.iter_mut() {
        if *b > plan.clip {
            clipped += *b - plan.clip;
            *b = plan.clip;
        }
    }
    let batch = clipped / 256;
    let mut residual = clipped - batch * 256;
    for b in hist.iter_mut() {
        *b += batch;
    }
    if let Some(step) = 256u32.checked_div(residual) {
        let step = step.max(1) as usize;
        let mut i = 0;
        while i < 256 && residual > 0 {
            hist[i] += 1;
            i += step;
            residual -= 1;
        }
    }
    let mut lut = [0u8; 256];
    let mut sum = 0i32;
    for (v, b) in lut.iter_mut().zip(hist) {
        sum += b as i32;
        *v = saturate_u8(sum as f32 * plan.lut_scale);
    }
    lut
}

/// Every tile, row by row of tiles.
pub(crate) fn tiles(grid: (u32, u32)) -> impl Iterator<Item = (u32, u32)> {
    (0..grid.1).flat_map(move |t| (0..grid.0).map(move |s| (s, t)))
}

/// Rows `top..top + band.height()` of the result, from those rows of the source (`band`)
/// and every tile's table.
pub(crate) fn apply_band(
    band: &ImageView<'_, Gray8>,
    top: u32,
    luts: &[[u8; 256]],
    grid: (u32, u32),
    plan: &Geometry,
) -> Result<Image<Gray8>> {
    let (w, h) = band.dimensions();
    let (tx, ty) = (grid.0 as i32, grid.1 as i32);
    let (inv_tw, inv_th) = (plan.inv_tw, plan.inv_th);
    // Per column: the two tiles and their weights (OpenCV precomputes the same).
    let cols: Vec<(usize, usize, f32, f32)> = (0..w)
        .map(|x| {
            let txf = x as f32 * inv_tw - 0.5f32;
            let t1 = txf.floor() as i32;
            let xa = txf - t1 as f32;
            (t1.max(0) as usize, (t1 + 1).min(tx - 1) as usize, xa, 1.0f32 - xa)
        })
        .collect();
    let mut out = Image::<Gray8>::try_new(w, h)?;
    for (i, dst_row) in out.pixels_mut().chunks_exact_mut(w as usize).enumerate() {
        let y = top + i as u32;
        let tyf = y as f32 * inv_th - 0.5f32;
        let t1 = tyf.floor() as i32;
        let ya = tyf - t1 as f32;
        let ya1 = 1.0f32 - ya;
        let (r1, r2) = (t1.max(0) as usize * tx as usize, (t1 + 1).min(ty - 1) as usize * tx as usize);
        let src_row = band.row(i as u32);
        for (x, (d, s)) in dst_row.iter_mut().zip(src_row).enumerate() {
            let v = s.0[0] as usize;
            let (c1, c2, xa, xa1) = cols[x];
            let res = (luts[r1 + c1][v] as f32 * xa1 + luts[r1 + c2][v] as f32 * xa) * ya1
                + (luts[r2 + c1][v] as f32 * xa1 + luts[r2 + c2][v] as f32 * xa) * ya;
            *d = Gray8([saturate_u8(res)]);
        }
    }
    Ok(out)
}

/// OpenCV's `saturate_cast<uchar>(float)`: round to nearest, ties to even (`cvRound`), then
/// clamp.
fn saturate_u8(v: f32) -> u8 {
    v.round_ties_even().clamp(0.0, 255.0) as u8
}

/// CLAHE of a gray image with `params`, bit-exact with OpenCV's
/// `createCLAHE(clip_limit, tiles).apply`.
///
/// ```
/// use cuimg::{cpu, Clahe, Gray8, Image};
/// let img = Image::<Gray8>::from_fn(64, 48, |x, y| Gray8([(x * 2 + y) as u8]));
/// let out = cpu::clahe(&img.view(), Clahe::default())?;
/// assert_eq!(out.dimensions(), (64, 48));
/// // A grid with more tiles than the image has pixels is refused.
/// assert!(cpu::clahe(&img.view(), Clahe::new(2.0, (65, 1))?).is_err());
/// # Ok::<(), cuimg::Error>(())
/// ```
pub fn clahe(src: &ImageView<'_, Gray8>, params: Clahe) -> Result<Image<Gray8>> {
    let plan = params.plan(src.width(), src.height())?;
    let luts: Vec<[u8; 256]> = tiles(params.tiles()).map(|t| tile_lut(src, &plan, t)).collect();
    apply_band(src, 0, &luts, params.tiles(), &plan)
}

/// CLAHE of a color image, per channel (each color channel on its own tiles' tables) or on
/// its BT.601 luma (the luma through CLAHE, each color channel moved by the luma's change
/// and clamped, as [`equalize_color`](crate::cpu::equalize_color) does); alpha is kept.
///
/// ```
/// use cuimg::{cpu, Clahe, EqualizeMode, Image, Rgb8};
/// let img = Image::from_fn(64, 48, |x, y| Rgb8([x as u8, y as u8, 200]));
/// let out = cpu::clahe_color(&img.view(), Clahe::default(), EqualizeMode::Luma)?;
/// assert_eq!(out.dimensions(), (64, 48));
/// # Ok::<(), cuimg::Error>(())
/// ```
pub fn clahe_color<P: Color>(src: &ImageView<'_, P>, params: Clahe, mode: EqualizeMode) -> Result<Image<P>> {
    clahe_color_with(src, params, mode, |gray| clahe(gray, params))
}

/// Color CLAHE with `gray_clahe` for each plane (the serial reference here, all cores in
/// `par`): per channel, each color channel through it; on luma, the luma through it and
/// each color channel moved by the luma's change.
pub(crate) fn clahe_color_with<P: Color>(
    src: &ImageView<'_, P>,
    params: Clahe,
    mode: EqualizeMode,
    gray_clahe: impl Fn(&ImageView<'_, Gray8>) -> Result<Image<Gray8>>,
) -> Result<Image<P>> {
    let (w, h) = src.dimensions();
    params.plan(w, h)?;
    let mut out = src.to_image();
    match mode {
        EqualizeMode::PerChannel => {
            for c in 0..3 {
                let plane = Image::<Gray8>::from_fn(w, h, |x, y| Gray8([bytemuck::bytes_of(&src.get(x, y))[c]]));
                let done = gray_clahe(&plane.view())?;
                for (p, v) in out.pixels_mut().iter_mut().zip(done.pixels()) {
                    bytemuck::bytes_of_mut(p)[c] = v.0[0];
                }
            }
        }
        EqualizeMode::Luma => {
            let luma = crate::ops::grayscale::cpu::grayscale(src, GrayWeights::Bt601)?;
            let done = gray_clahe(&luma.view())?;
            for ((p, y), y2) in out.pixels_mut().iter_mut().zip(luma.pixels()).zip(done.pixels()) {
                let delta = y2.0[0] as i32 - y.0[0] as i32;
                let bytes = bytemuck::bytes_of_mut(p);
                for c in P::RGB {
                    bytes[c] = (bytes[c] as i32 + delta).clamp(0, 255) as u8;
                }
            }
        }
    }
    Ok(out)
}
