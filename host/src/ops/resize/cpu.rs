//! The serial reference: the plan run row after row.

use super::{Filter, SourceBox, exec, plan_boxed, plan_for};
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
    let plan = plan_for::<P>(src.width(), src.height(), width, height, filter)?;
    let rows = |y: usize| -> &[u8] { bytemuck::cast_slice(src.row(y as u32)) };
    let source = exec::Source { rows: &rows, size: (src.width() as usize, src.height() as usize), cn: P::CHANNELS };
    let mut out = Image::<P>::try_new(width, height)?;
    exec::run(&plan, &source, width as usize, 0..height as usize, out.as_bytes_mut());
    Ok(out)
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
    crate::validate::non_empty(src.width(), src.height())?;
    if let Some(rect) = bx.check(src.width(), src.height(), filter)? {
        return resize(&src.roi(rect)?, width, height, filter);
    }
    let plan = plan_boxed::<P>(src.width(), src.height(), width, height, filter, Some(bx))?;
    let rows = |y: usize| -> &[u8] { bytemuck::cast_slice(src.row(y as u32)) };
    let source = exec::Source { rows: &rows, size: (src.width() as usize, src.height() as usize), cn: P::CHANNELS };
    let mut out = Image::<P>::try_new(width, height)?;
    exec::run(&plan, &source, width as usize, 0..height as usize, out.as_bytes_mut());
    Ok(out)
}
