//! The serial reference: each output pixel from the source pixel the border rule names, or
//! the constant.

use rayon::prelude::*;

use super::{Border, Padding};
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;

/// `src` with `pad` pixels added on each side, as `cv2.copyMakeBorder` makes them.
///
/// ```
/// use cuimg::{Border, Gray8, Image, Padding, cpu};
/// let img = Image::from_fn(3, 1, |x, _| Gray8([x as u8 + 1]));
/// let pad = Padding { top: 0, bottom: 0, left: 2, right: 2 };
/// let out = cpu::copy_make_border(&img.view(), pad, Border::Reflect101).unwrap();
/// assert_eq!(out.as_bytes(), &[3, 2, 1, 2, 3, 2, 1]);
/// ```
pub fn copy_make_border<P: Pixel>(src: &ImageView<'_, P>, pad: Padding, border: Border) -> Result<Image<P>> {
    on_host(src, pad, border, false)
}

/// [`copy_make_border`] on one core, or on all (`parallel`: bands of rows).
pub(crate) fn on_host<P: Pixel>(src: &ImageView<'_, P>, pad: Padding, border: Border, parallel: bool) -> Result<Image<P>> {
    let (w, h) = super::output_size(src.width(), src.height(), pad)?;
    let (sw, sh) = (src.width() as i64, src.height() as i64);
    let fill = border.fill::<P>();
    let mut out = Image::<P>::try_new(w, h)?;
    let row = |(y, row): (usize, &mut [P])| {
        let sy = border.source(y as i64 - pad.top as i64, sh);
        for (x, px) in row.iter_mut().enumerate() {
            *px = match (border.source(x as i64 - pad.left as i64, sw), sy) {
                (Some(sx), Some(sy)) => src.get(sx as u32, sy as u32),
                _ => fill,
            };
        }
    };
    if parallel {
        out.pixels_mut().par_chunks_mut(w as usize).enumerate().for_each(row);
    } else {
        out.pixels_mut().chunks_mut(w as usize).enumerate().for_each(row);
    }
    Ok(out)
}
