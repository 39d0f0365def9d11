//! The serial CPU reference of the histogram.

use super::Histogram;
use crate::error::Result;
use crate::image::ImageView;
use crate::pixel::Pixel;
use crate::validate;

/// One 256-bin histogram per channel.
///
/// ```
/// use cuimg::{cpu, Image, Rgb8};
/// let img = Image::<Rgb8>::from_bytes(2, 1, &[1, 2, 3, 1, 5, 6]).unwrap();
/// let h = cpu::histogram(&img.view()).unwrap();
/// assert_eq!((h.channels(), h.channel(0)[1], h.channel(2)[6]), (3, 2, 1));
/// ```
pub fn histogram<P: Pixel>(src: &ImageView<'_, P>) -> Result<Histogram> {
    validate::non_empty(src.width(), src.height())?;
    validate::countable(src.width(), src.height())?;
    let mut h = Histogram::zeros(P::CHANNELS);
    for row in src.rows() {
        for p in row {
            for (c, &v) in p.channels().iter().enumerate() {
                h.channel_mut(c)[v as usize] += 1;
            }
        }
    }
    Ok(h)
}
