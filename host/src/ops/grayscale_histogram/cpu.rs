//! The serial reference: the grayscale reference, then the histogram reference of its result.

use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::ops::grayscale::GrayWeights;
use crate::ops::histogram::Histogram;
use crate::pixel::{Color, Gray8};

/// The gray image of `src` and its histogram.
///
/// ```
/// use cuimg::{cpu, GrayWeights, Image, Rgb8};
/// let img = Image::<Rgb8>::filled(4, 3, 200);
/// let (gray, hist) = cpu::grayscale_histogram(&img.view(), GrayWeights::Bt601)?;
/// assert_eq!(gray, cpu::grayscale(&img.view(), GrayWeights::Bt601)?);
/// assert_eq!(hist.channel(0)[200], 12);
/// # Ok::<(), cuimg::Error>(())
/// ```
pub fn grayscale_histogram<P: Color>(
    src: &ImageView<'_, P>,
    weights: GrayWeights,
) -> Result<(Image<Gray8>, Histogram)> {
    crate::validate::countable(src.width(), src.height())?;
    let gray = crate::ops::grayscale::cpu::grayscale(src, weights)?;
    let hist = crate::ops::histogram::cpu::histogram(&gray.view())?;
    Ok((gray, hist))
}
