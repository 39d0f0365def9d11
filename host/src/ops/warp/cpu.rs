//! The serial reference (and, with `parallel`, all cores): `cuimg_abi::warp::pixel` for
//! every output pixel, the function the kernels evaluate.

use rayon::prelude::*;

use cuimg_abi::warp::{WarpJob, pixel};

use super::{Host, Warp, WarpFilter, job};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::ops::border::Border;
use crate::pixel::{Channels, Pixel};

/// `src` warped into a `width` x `height` image as `cv2.warpAffine` or
/// `cv2.warpPerspective` (by `warp`'s kind) warps it, with `filter` and `border`
/// (constant or replicate).
///
/// ```
/// use cuimg::{Border, Gray8, Image, Warp, WarpFilter, cpu};
/// let img = Image::from_fn(4, 1, |x, _| Gray8([x as u8 * 10]));
/// // Half a pixel to the right, bilinear: each output the mean of two inputs, ties to even.
/// let shift = Warp::affine([1.0, 0.0, 0.5, 0.0, 1.0, 0.0]);
/// let out = cpu::warp(&img.view(), &shift, 4, 1, WarpFilter::Linear, Border::Constant([0; 4])).unwrap();
/// assert_eq!(out.as_bytes(), &[0, 5, 15, 25]);
/// ```
pub fn warp<P: Pixel>(
    src: &ImageView<'_, P>,
    warp: &Warp,
    width: u32,
    height: u32,
    filter: WarpFilter,
    border: Border,
) -> Result<Image<P>> {
    run(src, warp, (width, height), filter, border, false)
}

/// [`warp`] on one core, or on all (`parallel`: bands of rows).
pub(crate) fn run<P: Pixel>(
    src: &ImageView<'_, P>,
    warp: &Warp,
    (width, height): (u32, u32),
    filter: WarpFilter,
    border: Border,
    parallel: bool,
) -> Result<Image<P>> {
    let mut j = job::<P>(warp, filter, border, src.dimensions(), (width, height))?;
    (j.src.width, j.src.height, j.dst.width, j.dst.height) = (src.width(), src.height(), width, height);
    let mut out = Image::<P>::try_new(width, height)?;
    let rows = out.pixels_mut();
    match P::LAYOUT {
        Channels::One => fill::<P, 1>(src, &j, rows, parallel),
        Channels::Three => fill::<P, 3>(src, &j, rows, parallel),
        Channels::Four => fill::<P, 4>(src, &j, rows, parallel),
        Channels::Two => return Err(Error::UnsupportedFormat(format!("warps take no {} images", P::NAME))),
    }
    Ok(out)
}

fn fill<P: Pixel, const C: usize>(src: &ImageView<'_, P>, j: &WarpJob, rows: &mut [P], parallel: bool) {
    let fetch = |x: u32, y: u32| {
        let mut v = [0u8; C];
        v.copy_from_slice(bytemuck::bytes_of(&src.get(x, y)));
        v
    };
    let row = |(y, row): (usize, &mut [P])| {
        for (x, px) in row.iter_mut().enumerate() {
            *px = *bytemuck::from_bytes(&pixel::<Host, C>(j, x as u32, y as u32, fetch));
        }
    };
    let width = j.dst.width as usize;
    if parallel {
        rows.par_chunks_mut(width).enumerate().for_each(row);
    } else {
        rows.chunks_mut(width).enumerate().for_each(row);
    }
}
