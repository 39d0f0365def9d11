//! The serial CPU reference of equalization.

use super::EqualizeMode;
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::ops::grayscale::GrayWeights;
use crate::ops::histogram::{Histogram, equalization_lut};
use crate::ops::lut::Lut;
use crate::pixel::{Color, Gray, Gray8, Pixel};

/// Histogram equalization, bit-exact with OpenCV's `equalizeHist`; gray + alpha keeps its
/// alpha.
///
/// ```
/// use cuimg::{cpu, Gray8, Image, La8};
/// let img = Image::<Gray8>::from_bytes(4, 1, &[50, 50, 60, 70]).unwrap();
/// assert_eq!(cpu::equalize(&img.view()).unwrap().as_bytes(), &[0, 0, 128, 255]);
/// let la = Image::<La8>::from_bytes(2, 1, &[50, 7, 60, 9]).unwrap();
/// assert_eq!(cpu::equalize(&la.view()).unwrap().as_bytes(), &[0, 7, 255, 9]);
/// ```
pub fn equalize<P: Gray>(src: &ImageView<'_, P>) -> Result<Image<P>> {
    equalize_per_channel(src)
}

/// Each channel through the table of its own histogram, alpha through the identity.
fn equalize_per_channel<P: Pixel>(src: &ImageView<'_, P>) -> Result<Image<P>> {
    let h = crate::ops::histogram::cpu::histogram(src)?;
    crate::ops::lut::cpu::apply_luts(src, &channel_luts::<P>(&h))
}

/// Each channel's equalization table from its histogram; alpha is not a color, so its
/// table is the identity. Shared with the parallel fallback.
pub(crate) fn channel_luts<P: Pixel>(h: &Histogram) -> Vec<Lut> {
    (0..h.channels()).map(|c| if Some(c) == P::ALPHA { Lut::identity() } else { h.equalization_lut(c) }).collect()
}

/// Equalizes a color image per channel or on its luma (see [`EqualizeMode`]); alpha is kept.
///
/// ```
/// use cuimg::{cpu, EqualizeMode, Image, Rgb8};
/// let img = Image::<Rgb8>::from_bytes(2, 1, &[10, 20, 30, 40, 50, 60]).unwrap();
/// let out = cpu::equalize_color(&img.view(), EqualizeMode::PerChannel).unwrap();
/// assert_eq!(out.as_bytes(), &[0, 0, 0, 255, 255, 255]);
/// ```
pub fn equalize_color<P: Color>(src: &ImageView<'_, P>, mode: EqualizeMode) -> Result<Image<P>> {
    match mode {
        EqualizeMode::PerChannel => equalize_per_channel(src),
        EqualizeMode::Luma => {
            crate::validate::countable(src.width(), src.height())?;
            let luma = crate::ops::grayscale::cpu::grayscale(src, GrayWeights::Bt601)?;
            let mut h = Histogram::zeros(1);
            for p in luma.pixels() {
                h.channel_mut(0)[p.0[0] as usize] += 1;
            }
            Ok(shift_by_luma(src, luma.pixels(), &equalization_lut(h.channel(0))))
        }
    }
}

/// Equalization on luma, given the luma and its table: each pixel's color channels move by
/// the change of its luma, clamped (alpha kept). Shared with the parallel fallback, which
/// runs it on bands of rows.
pub(crate) fn shift_by_luma<P: Color>(src: &ImageView<'_, P>, luma: &[Gray8], lut: &Lut) -> Image<P> {
    let mut out = src.to_image();
    for (p, y) in out.pixels_mut().iter_mut().zip(luma) {
        let y = y.0[0];
        let delta = lut[y] as i32 - y as i32;
        let bytes = bytemuck::bytes_of_mut(p);
        for c in P::RGB {
            bytes[c] = (bytes[c] as i32 + delta).clamp(0, 255) as u8;
        }
    }
    out
}
