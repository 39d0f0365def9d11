//! The `image` crate's buffers in and out of cuimg without copying.
//!
//! - `&ImageBuffer<Rgb<u8>, C>` (and `Rgba<u8>`, `Luma<u8>`, `LumaA<u8>`; any container that
//!   derefs to `[u8]`) becomes an [`ImageView`] of [`Rgb8`] (`Rgba8`, `Gray8`, `La8`) by
//!   `.into()`, and `&mut ImageBuffer` an [`ImageViewMut`]: borrows, no copy.
//! - An [`Image`] becomes an `ImageBuffer<_, Vec<u8>>` (`RgbImage`, `RgbaImage`, `GrayImage`,
//!   `GrayAlphaImage`) by `.into()`, keeping its allocation; the other way round keeps the
//!   allocation too whenever its capacity is a whole number of pixels (else one copy).
//! - `&DynamicImage` becomes a [`DynamicView`] by `try_from`: each 8-bit variant borrowed as
//!   is; 16-bit and float variants are refused with [`Error::UnsupportedFormat`], never cut
//!   silently. [`crate::io::convert_to_8bit`] converts them, by its name.
//!
//! ```
//! use cuimg::{Gray8, Image, ImageView, Rgb8};
//! let photo = image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([x as u8, y as u8, 7]));
//! let view: ImageView<'_, Rgb8> = (&photo).into(); // borrowed, not copied
//! let gray: Image<Gray8> = cuimg::cpu::grayscale(&view, cuimg::GrayWeights::Bt601)?;
//! let gray: image::GrayImage = gray.into(); // the same allocation, now the image crate's
//! assert_eq!(gray.dimensions(), (64, 48));
//! # Ok::<(), cuimg::Error>(())
//! ```

use std::ops::{Deref, DerefMut};

use image::{DynamicImage, ImageBuffer, Luma, LumaA, Rgb, Rgba};

use crate::error::{Error, Result};
use crate::image::{Image, ImageView, ImageViewMut};
use crate::pixel::{Gray8, La8, Pixel, Rgb8, Rgba8};

macro_rules! image_crate_format {
    ($($ours:ident <=> $theirs:ident),* $(,)?) => {$(
        /// Borrows the `image` crate's buffer as a view, without copying.
        ///
        /// # Panics
        /// Only if the container's `Deref` returns fewer bytes than when the buffer was
        /// made (the `image` crate checked the length then).
        impl<'a, C: Deref<Target = [u8]>> From<&'a ImageBuffer<$theirs<u8>, C>> for ImageView<'a, $ours> {
            fn from(img: &'a ImageBuffer<$theirs<u8>, C>) -> ImageView<'a, $ours> {
                let (w, h) = img.dimensions();
                ImageView::new(img.as_raw(), w, h, w as usize * $ours::CHANNELS)
                    .expect("an ImageBuffer holds all of its pixels")
            }
        }

        /// Borrows the `image` crate's buffer as a mutable view (a destination), without
        /// copying.
        ///
        /// # Panics
        /// As the shared conversion.
        impl<'a, C: Deref<Target = [u8]> + DerefMut> From<&'a mut ImageBuffer<$theirs<u8>, C>>
            for ImageViewMut<'a, $ours>
        {
            fn from(img: &'a mut ImageBuffer<$theirs<u8>, C>) -> ImageViewMut<'a, $ours> {
                let (w, h) = img.dimensions();
                ImageViewMut::new(&mut **img, w, h, w as usize * $ours::CHANNELS)
                    .expect("an ImageBuffer holds all of its pixels")
            }
        }

        /// Hands the pixels to the `image` crate, keeping the allocation.
        impl From<Image<$ours>> for ImageBuffer<$theirs<u8>, Vec<u8>> {
            fn from(img: Image<$ours>) -> ImageBuffer<$theirs<u8>, Vec<u8>> {
                let (w, h) = img.dimensions();
                // Same alignment (1), and a pixel is a whole number of bytes: no copy.
                let bytes: Vec<u8> = bytemuck::allocation::cast_vec(img.into_pixels());
                ImageBuffer::from_raw(w, h, bytes).expect("an Image holds width * height pixels")
            }
        }

        /// Takes the `image` crate's pixels, keeping the allocation when its capacity is a
        /// whole number of pixels (always for gray; else the pixels are copied once).
        impl From<ImageBuffer<$theirs<u8>, Vec<u8>>> for Image<$ours> {
            fn from(img: ImageBuffer<$theirs<u8>, Vec<u8>>) -> Image<$ours> {
                let (w, h) = img.dimensions();
                let mut bytes = img.into_raw();
                bytes.truncate(w as usize * h as usize * $ours::CHANNELS);
                let pixels = bytemuck::allocation::try_cast_vec::<u8, $ours>(bytes)
                    .unwrap_or_else(|(_, bytes)| bytemuck::cast_slice(&bytes).to_vec());
                Image::from_pixels(w, h, pixels).expect("an ImageBuffer holds width * height pixels")
            }
        }
    )*};
}

image_crate_format!(Rgb8 <=> Rgb, Rgba8 <=> Rgba, Gray8 <=> Luma, La8 <=> LumaA);

/// An 8-bit `DynamicImage`, borrowed as the view of its format.
///
/// ```
/// use cuimg::DynamicView;
/// let img = image::DynamicImage::new_rgba8(3, 2);
/// match DynamicView::try_from(&img)? {
///     DynamicView::Rgba8(view) => assert_eq!(view.dimensions(), (3, 2)),
///     other => panic!("{other:?}"),
/// }
/// // 16-bit samples are refused, naming the format, until converted on purpose:
/// let deep = image::DynamicImage::new_rgb16(3, 2);
/// assert!(matches!(DynamicView::try_from(&deep), Err(cuimg::Error::UnsupportedFormat(_))));
/// let eight = cuimg::io::convert_to_8bit(&deep);
/// assert!(matches!(DynamicView::try_from(&eight)?, DynamicView::Rgb8(_)));
/// # Ok::<(), cuimg::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum DynamicView<'a> {
    Gray8(ImageView<'a, Gray8>),
    La8(ImageView<'a, La8>),
    Rgb8(ImageView<'a, Rgb8>),
    Rgba8(ImageView<'a, Rgba8>),
}

impl DynamicView<'_> {
    /// Width and height.
    pub fn dimensions(&self) -> (u32, u32) {
        match self {
            DynamicView::Gray8(v) => v.dimensions(),
            DynamicView::La8(v) => v.dimensions(),
            DynamicView::Rgb8(v) => v.dimensions(),
            DynamicView::Rgba8(v) => v.dimensions(),
        }
    }
}

impl<'a> TryFrom<&'a DynamicImage> for DynamicView<'a> {
    type Error = Error;

    /// Borrows an 8-bit image; [`Error::UnsupportedFormat`] for the others.
    fn try_from(img: &'a DynamicImage) -> Result<DynamicView<'a>> {
        match img {
            DynamicImage::ImageLuma8(b) => Ok(DynamicView::Gray8(b.into())),
            DynamicImage::ImageLumaA8(b) => Ok(DynamicView::La8(b.into())),
            DynamicImage::ImageRgb8(b) => Ok(DynamicView::Rgb8(b.into())),
            DynamicImage::ImageRgba8(b) => Ok(DynamicView::Rgba8(b.into())),
            other => Err(Error::UnsupportedFormat(format!("{:?} samples", other.color()))),
        }
    }
}

/// The image with every sample rounded to 8 bits (16-bit and float formats; 8-bit ones are
/// cloned as they are), gray staying gray and alpha staying alpha.
pub(crate) fn convert_to_8bit(img: &DynamicImage) -> DynamicImage {
    let color = img.color();
    match (color.has_color(), color.has_alpha()) {
        _ if bits_per_sample(color) == 8 => img.clone(),
        (false, false) => DynamicImage::ImageLuma8(img.to_luma8()),
        (false, true) => DynamicImage::ImageLumaA8(img.to_luma_alpha8()),
        (true, false) => DynamicImage::ImageRgb8(img.to_rgb8()),
        (true, true) => DynamicImage::ImageRgba8(img.to_rgba8()),
    }
}

/// Bits of each channel's sample: 8, 16 or 32 (float).
pub(crate) fn bits_per_sample(color: image::ColorType) -> u16 {
    color.bits_per_pixel() / u16::from(color.channel_count())
}
