//! The serial reference: the plan run row after row.

use super::{Filter, exec, plan_for};
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
