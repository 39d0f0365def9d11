//! The serial CPU reference of grayscale and "black and white".

use super::{GrayWeights, luma};
use crate::error::Result;
use crate::image::{Image, ImageView, PlanarView};
use crate::pixel::{Color, Gray8};
use crate::validate;

/// Luma of every pixel.
///
/// ```
/// use cuimg::{cpu, Bgr8, GrayWeights, Image};
/// let img = Image::from_pixels(1, 1, vec![Bgr8([0, 0, 255])]).unwrap(); // red
/// assert_eq!(cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap().get(0, 0).0, [76]);
/// ```
pub fn grayscale<P: Color>(src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<Gray8>> {
    validate::non_empty(src.width(), src.height())?;
    let w = weights.fixed()?;
    let [r, g, b] = P::RGB;
    let mut out = Vec::with_capacity(src.width() as usize * src.height() as usize);
    for row in src.rows() {
        out.extend(row.iter().map(|p| {
            let c = p.channels();
            Gray8([luma(&w, c[r], c[g], c[b])])
        }));
    }
    Image::from_pixels(src.width(), src.height(), out)
}

/// Luma of every pixel of a planar (CHW) image.
///
/// ```
/// use cuimg::{cpu, GrayWeights, PlanarView};
/// let chw = [255, 0, 0];
/// let v = PlanarView::from_chw(&chw, 1, 1).unwrap();
/// assert_eq!(cpu::grayscale_planar(&v, GrayWeights::Bt601).unwrap().get(0, 0).0, [76]);
/// ```
pub fn grayscale_planar(src: &PlanarView<'_>, weights: GrayWeights) -> Result<Image<Gray8>> {
    validate::non_empty(src.width(), src.height())?;
    let w = weights.fixed()?;
    let [r, g, b] = [0, 1, 2].map(|c| src.plane_view(c));
    Ok(Image::from_fn(src.width(), src.height(), |x, y| {
        Gray8([luma(&w, r.get(x, y).0[0], g.get(x, y).0[0], b.get(x, y).0[0])])
    }))
}

/// Luma written back into red, green and blue; alpha kept.
///
/// ```
/// use cuimg::{cpu, GrayWeights, Image, Rgba8};
/// let img = Image::from_pixels(1, 1, vec![Rgba8([255, 0, 0, 9])]).unwrap();
/// let bw = cpu::black_and_white(&img.view(), GrayWeights::Bt601).unwrap();
/// assert_eq!(bw.get(0, 0), Rgba8([76, 76, 76, 9]));
/// ```
pub fn black_and_white<P: Color>(src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<P>> {
    let gray = grayscale(src, weights)?;
    let mut out = src.to_image();
    for (p, y) in out.pixels_mut().iter_mut().zip(gray.pixels()) {
        let bytes = bytemuck::bytes_of_mut(p);
        for c in P::RGB {
            bytes[c] = y.0[0];
        }
    }
    Ok(out)
}
