//! The serial references.

use super::{Filter, cv, pil};
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;
use crate::validate;

/// `src` resized to `width` x `height` as `filter`'s reference resizes it.
pub fn resize<P: Pixel>(src: &ImageView<'_, P>, width: u32, height: u32, filter: Filter) -> Result<Image<P>> {
    validate::non_empty(src.width(), src.height())?;
    validate::non_empty(width, height)?;
    let rows = |y: usize| -> &[u8] { bytemuck::cast_slice(src.row(y as u32)) };
    let (s, d) = ((src.width() as usize, src.height() as usize), (width as usize, height as usize));
    let bytes = match filter {
        Filter::OpenCv(mode) => cv::resize(&rows, s, P::CHANNELS, d, mode),
        Filter::Pillow(f) => pil::resize(&rows, s, P::CHANNELS, P::ALPHA.is_some(), d, f, None),
    };
    Image::from_bytes(width, height, &bytes)
}
