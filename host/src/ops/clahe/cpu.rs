//! The serial CPU reference: OpenCV's `CLAHE_CalcLut_Body` and `CLAHE_Interpolation_Body`
//! (modules/imgproc/src/clahe.cpp) step for step, in the same f32 arithmetic.

use cuimg_abi::clahe::reflect101;

use super::{Clahe, Plan};
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Gray8;

/// The 256-entry table of every tile, row by row of tiles.
pub(crate) fn tile_luts(src: &ImageView<'_, Gray8>, plan: &Plan) -> Vec<[u8; 256]> {
    let (w, h) = src.dimensions();
    let (tx, ty) = plan.tiles;
    let (tw, th) = plan.tile;
    let mut luts = Vec::with_capacity(tx as usize * ty as usize);
    for t in 0..ty {
        for s in 0..tx {
            let mut hist = [0u32; 256];
            for y in t * th..(t + 1) * th {
                let row = src.row(reflect101(y, h));
                for x in s * tw..(s + 1) * tw {
                    hist[row[reflect101(x, w) as usize].0[0] as usize] += 1;
                }
            }
            // Clip, then spread the excess: the same share to every bin, and what is left
            // one at a time from bin 0 in steps of 256 / left.
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
            luts.push(lut);
        }
    }
    luts
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
    let (w, h) = src.dimensions();
    let plan = params.plan(w, h)?;
    let luts = tile_luts(src, &plan);
    let (tx, ty) = (plan.tiles.0 as i32, plan.tiles.1 as i32);
    let inv_tw = 1.0f32 / plan.tile.0 as f32;
    let inv_th = 1.0f32 / plan.tile.1 as f32;
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
    for (y, dst_row) in out.pixels_mut().chunks_exact_mut(w as usize).enumerate() {
        let y = y as u32;
        let tyf = y as f32 * inv_th - 0.5f32;
        let t1 = tyf.floor() as i32;
        let ya = tyf - t1 as f32;
        let ya1 = 1.0f32 - ya;
        let (r1, r2) = (t1.max(0) as usize * tx as usize, (t1 + 1).min(ty - 1) as usize * tx as usize);
        let src_row = src.row(y);
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
