//! The serial reference: the plan run row after row.

use super::{Filter, ResizeLayout, SourceBox, exec};
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

/// `src` laid out as `layout` says (see [`crate::Sizing`]): its box resized to the inner
/// size, then padded with the layout's constant (a letterbox), as `copy_make_border` pads.
///
/// ```
/// use cuimg::{Filter, Gray8, Image, Sizing, cpu};
/// let img = Image::from_fn(8, 4, |x, _| Gray8([x as u8 * 30]));
/// let filter: Filter = "cv-area".parse().unwrap();
/// let layout = Sizing::Fit(4, 4, Some([9, 0, 0, 0])).layout(8, 4, filter).unwrap();
/// let out = cpu::resize_layout(&img.view(), filter, &layout).unwrap();
/// assert_eq!(out.as_bytes(), &[9, 9, 9, 9, 15, 75, 135, 195, 15, 75, 135, 195, 9, 9, 9, 9]);
/// ```
pub fn resize_layout<P: Pixel>(src: &ImageView<'_, P>, filter: Filter, layout: &ResizeLayout) -> Result<Image<P>> {
    exec::layout_on_host(src, filter, layout, false)
}

/// Each plane of a planar image (CHW: a gray image of `planes * height` rows) resized to
/// `width` x `height` and stacked again (`planes * height` rows): each plane as `filter`'s
/// reference resizes a gray image.
///
/// ```
/// use cuimg::{Filter, Gray8, Image, cpu};
/// let chw = Image::from_fn(4, 2 * 2, |x, y| Gray8([if y < 2 { 10 * x as u8 } else { 200 }]));
/// let out = cpu::resize_planar(&chw.view(), 2, 2, 1, "cv-area".parse::<Filter>().unwrap()).unwrap();
/// assert_eq!(out.as_bytes(), &[5, 25, 200, 200]); // plane 0, then plane 1
/// ```
pub fn resize_planar(
    src: &ImageView<'_, crate::Gray8>,
    planes: u32,
    width: u32,
    height: u32,
    filter: Filter,
) -> Result<Image<crate::Gray8>> {
    exec::planar_on_host(src, planes, (width, height), filter, false)
}
