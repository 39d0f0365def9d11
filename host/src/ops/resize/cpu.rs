//! The serial reference: the plan run row after row.

use super::{Filter, SourceBox, exec};
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;

/// `src` resized to `width` x `height` as `filter`'s reference resizes it.
///
/// ```
/// use cuimg::{CvInterpolation, Filter, Gray8, Image, cpu};
/// let img = Image::from_fn(4, 2, |x, y| Gray8([(x * 60 + y * 10) as u8]));
/// let half = cpu::resize(&img.view(), 2, 1, Filter::OpenCv(CvInterpolation::Area)).unwrap();
/// assert_eq!(half.as_bytes(), &[35, 155]); // each 2x2 cell: (sum + 2) >> 2, as cv2.resize
/// ```
pub fn resize<P: Pixel>(src: &ImageView<'_, P>, width: u32, height: u32, filter: Filter) -> Result<Image<P>> {
    exec::on_host(src, (width, height), filter, None, false)
}

/// `src`'s box `bx` resized to `width` x `height` as `filter`'s reference resizes it: Pillow's
/// `Image.resize(size, filter, box)`, or OpenCV's resize of the crop (see [`SourceBox`]).
pub fn resize_box<P: Pixel>(
    src: &ImageView<'_, P>,
    width: u32,
    height: u32,
    filter: Filter,
    bx: SourceBox,
) -> Result<Image<P>> {
    exec::on_host(src, (width, height), filter, Some(bx), false)
}
