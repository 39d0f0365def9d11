//! The serial CPU reference of lookup tables.

use super::Lut;
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;
use crate::validate;

/// The same table on every channel.
///
/// ```
/// use cuimg::{cpu, Gray8, Image, Lut};
/// let img = Image::<Gray8>::from_bytes(2, 1, &[0, 10]).unwrap();
/// assert_eq!(cpu::apply_lut(&img.view(), &Lut::invert()).unwrap().as_bytes(), &[255, 245]);
/// ```
pub fn apply_lut<P: Pixel>(src: &ImageView<'_, P>, lut: &Lut) -> Result<Image<P>> {
    apply_luts(src, &vec![*lut; P::CHANNELS])
}

/// Table `c` on channel `c`; exactly one table per channel.
///
/// ```
/// use cuimg::{cpu, Image, Lut, Rgb8};
/// let img = Image::<Rgb8>::from_bytes(1, 1, &[1, 2, 3]).unwrap();
/// let luts = [Lut::identity(), Lut::invert(), Lut::threshold(2)];
/// assert_eq!(cpu::apply_luts(&img.view(), &luts).unwrap().as_bytes(), &[1, 253, 255]);
/// ```
pub fn apply_luts<P: Pixel>(src: &ImageView<'_, P>, luts: &[Lut]) -> Result<Image<P>> {
    validate::non_empty(src.width(), src.height())?;
    super::check_count(luts, P::CHANNELS)?;
    let mut out = src.to_image();
    for p in out.pixels_mut() {
        for (v, lut) in bytemuck::bytes_of_mut(p).iter_mut().zip(luts) {
            *v = lut.apply(*v);
        }
    }
    Ok(out)
}
