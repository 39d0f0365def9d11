//! The serial reference: each output pixel copied from the source pixel the mapping names.

use super::Orientation;
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;
use crate::validate;

/// `src` turned or mirrored as `o` says (the output is `o.size(width, height)`).
///
/// ```
/// use cuimg::{Gray8, Image, Orientation, cpu};
/// let img = Image::from_fn(3, 2, |x, y| Gray8([(10 * y + x) as u8]));
/// let turned = cpu::orient(&img.view(), Orientation::Rotate90).unwrap();
/// assert_eq!(turned.as_bytes(), &[10, 0, 11, 1, 12, 2]); // 2x3: the left column on top
/// ```
pub fn orient<P: Pixel>(src: &ImageView<'_, P>, o: Orientation) -> Result<Image<P>> {
    validate::non_empty(src.width(), src.height())?;
    let (w, h) = o.size(src.width(), src.height());
    let m = o.mapping();
    let (sw, sh) = (src.width() as u64, src.height() as u64);
    Ok(Image::from_fn(w, h, |x, y| {
        let (sx, sy) = m.source(x as u64, y as u64, sw, sh);
        src.get(sx as u32, sy as u32)
    }))
}
