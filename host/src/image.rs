//! Host images: an owned, tightly packed [`Image`], and strided views ([`ImageView`],
//! [`ImageViewMut`]) with any row pitch, for sub-images (ROIs) and foreign buffers.

use std::marker::PhantomData;

use crate::error::{Error, Result};
use crate::pixel::Pixel;

/// A rectangle of pixels: the region of interest of a view.
///
/// ```
/// let r = cuimg::Rect::new(10, 20, 64, 48);
/// assert_eq!((r.x, r.y, r.width, r.height), (10, 20, 64, 48));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub const fn new(x: u32, y: u32, width: u32, height: u32) -> Rect {
        Rect { x, y, width, height }
    }

    /// Fails unless the rectangle lies inside a `width` x `height` image.
    pub(crate) fn check_inside(&self, width: u32, height: u32) -> Result<()> {
        let fits = |o: u32, l: u32, max: u32| o.checked_add(l).is_some_and(|end| end <= max);
        if fits(self.x, self.width, width) && fits(self.y, self.height, height) {
            Ok(())
        } else {
            Err(Error::RoiOutOfBounds {
                x: self.x,
                y: self.y,
                width: self.width,
                height: self.height,
                image_width: width,
                image_height: height,
            })
        }
    }
}

/// Bytes of one row of `width` pixels of `P` (at most 4 * u32::MAX: no overflow on the
/// 64-bit targets the crate supports).
pub(crate) fn row_bytes<P: Pixel>(width: u32) -> usize {
    width as usize * P::CHANNELS
}

/// Bytes of a packed `width` x `height` image of `P`, or `TooLarge` past what one
/// allocation can hold (`isize::MAX` bytes).
pub(crate) fn byte_len<P: Pixel>(width: u32, height: u32) -> Result<usize> {
    let bytes = width as u128 * height as u128 * P::CHANNELS as u128;
    if bytes > isize::MAX as u128 {
        return Err(Error::TooLarge {
            what: format!("a {width}x{height} {} image", P::NAME),
            size: bytes.min(u64::MAX as u128) as u64,
            limit: isize::MAX as u64,
        });
    }
    Ok(bytes as usize)
}

/// `n` copies of `p`, or `TooLarge`/`OutOfHostMemory` instead of an abort. Zeroed pixels
/// come from the allocator already zeroed (`calloc`: pages the OS zeroes on first touch), so
/// an image about to be overwritten by a download is not written twice.
fn try_vec<P: Pixel>(width: u32, height: u32, p: P) -> Result<Vec<P>> {
    let bytes = byte_len::<P>(width, height)?;
    let n = bytes / P::CHANNELS;
    let oom = || Error::OutOfHostMemory { bytes: bytes as u64 };
    if p == P::zeroed() {
        return bytemuck::allocation::try_zeroed_vec(n).map_err(|_| oom());
    }
    let mut pixels = Vec::new();
    pixels.try_reserve_exact(n).map_err(|_| oom())?;
    pixels.resize(n, p);
    Ok(pixels)
}

/// Bytes a view of `height` rows needs: `(height - 1) * pitch + row`.
pub(crate) fn span_bytes(row: usize, pitch: usize, height: u32) -> Option<usize> {
    if height == 0 { Some(0) } else { (height as usize - 1).checked_mul(pitch)?.checked_add(row) }
}

/// Width and height, the same on every image type: [`Image`] and its views, device images
/// and views, pinned images, and the registry's images of any format. Each type also has
/// `width`, `height` and `dimensions` as its own methods (one crate-internal macro writes
/// both from one expression), so calling them needs no import; the trait is for code
/// generic over them.
///
/// ```
/// use cuimg::{Dimensions, Image, Rgb8};
/// fn megapixels(img: &impl Dimensions) -> f64 {
///     img.pixel_count() as f64 / 1e6
/// }
/// let img = Image::<Rgb8>::new(4000, 3000);
/// assert_eq!(megapixels(&img), 12.0);
/// assert_eq!(megapixels(&img.view()), 12.0);
/// ```
pub trait Dimensions {
    /// `(width, height)` in pixels.
    fn dimensions(&self) -> (u32, u32);

    /// Width in pixels.
    fn width(&self) -> u32 {
        self.dimensions().0
    }

    /// Height in pixels.
    fn height(&self) -> u32 {
        self.dimensions().1
    }

    /// Width times height.
    fn pixel_count(&self) -> u64 {
        let (w, h) = self.dimensions();
        w as u64 * h as u64
    }
}

/// [`Dimensions`] and the same three methods of the type's own, from one expression of
/// `(width, height)`: `dimensions! { impl[P: Pixel] Image<P> => |s| (s.width, s.height); }`.
macro_rules! dimensions {
    ($(impl[$($g:tt)*] $ty:ty => |$s:ident| $e:expr;)*) => {$(
        impl<$($g)*> $crate::image::Dimensions for $ty {
            fn dimensions(&self) -> (u32, u32) {
                let $s = self;
                $e
            }
        }

        impl<$($g)*> $ty {
            /// Width in pixels.
            pub fn width(&self) -> u32 {
                $crate::image::Dimensions::dimensions(self).0
            }

            /// Height in pixels.
            pub fn height(&self) -> u32 {
                $crate::image::Dimensions::dimensions(self).1
            }

            /// `(width, height)` in pixels.
            pub fn dimensions(&self) -> (u32, u32) {
                $crate::image::Dimensions::dimensions(self)
            }
        }
    )*};
}
pub(crate) use dimensions;

dimensions! {
    impl[P: Pixel] Image<P> => |s| (s.width, s.height);
    impl['a, P: Pixel] ImageView<'a, P> => |s| (s.width, s.height);
    impl['a, P: Pixel] ImageViewMut<'a, P> => |s| (s.width, s.height);
    impl['a] PlanarView<'a> => |s| (s.width, s.height);
}

/// An owned image of `P` pixels, rows packed without padding.
///
/// ```
/// use cuimg::{Image, Rgb8};
/// let mut img = Image::<Rgb8>::new(4, 3);
/// img.put(1, 2, Rgb8([9, 8, 7]));
/// assert_eq!(img.get(1, 2), Rgb8([9, 8, 7]));
/// assert_eq!(img.as_bytes().len(), 4 * 3 * 3);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Image<P: Pixel> {
    width: u32,
    height: u32,
    pixels: Vec<P>,
}

impl<P: Pixel> Image<P> {
    /// An image of zeroed pixels. Zero width or height gives an empty image, which
    /// operations reject with [`Error::EmptyImage`].
    ///
    /// # Panics
    /// When the image cannot be allocated; [`Image::try_new`] returns the error instead.
    pub fn new(width: u32, height: u32) -> Image<P> {
        Image::try_new(width, height).unwrap_or_else(|e| panic!("Image::new: {e}"))
    }

    /// An image of zeroed pixels, or [`Error::TooLarge`] / [`Error::OutOfHostMemory`]
    /// where [`Image::new`] would panic or abort.
    ///
    /// ```
    /// use cuimg::{Error, Image, Rgba8};
    /// assert_eq!(Image::<Rgba8>::try_new(3, 2).unwrap().as_bytes().len(), 24);
    /// let err = Image::<Rgba8>::try_new(u32::MAX, u32::MAX).unwrap_err();
    /// assert!(matches!(err, Error::TooLarge { .. } | Error::OutOfHostMemory { .. }));
    /// ```
    pub fn try_new(width: u32, height: u32) -> Result<Image<P>> {
        Ok(Image { width, height, pixels: try_vec(width, height, P::zeroed())? })
    }

    /// An image whose every channel of every pixel is `v`.
    ///
    /// ```
    /// let img = cuimg::Image::<cuimg::Gray8>::filled(2, 2, 7);
    /// assert!(img.pixels().iter().all(|p| p.0 == [7]));
    /// ```
    ///
    /// # Panics
    /// As [`Image::new`].
    pub fn filled(width: u32, height: u32, v: u8) -> Image<P> {
        let pixels = try_vec(width, height, P::splat(v)).unwrap_or_else(|e| panic!("Image::filled: {e}"));
        Image { width, height, pixels }
    }

    /// Wraps `pixels`, which must hold exactly `width * height` pixels.
    ///
    /// ```
    /// use cuimg::{Gray8, Image};
    /// assert!(Image::from_pixels(2, 2, vec![Gray8([0]); 4]).is_ok());
    /// assert!(Image::from_pixels(2, 2, vec![Gray8([0]); 3]).is_err());
    /// ```
    pub fn from_pixels(width: u32, height: u32, pixels: Vec<P>) -> Result<Image<P>> {
        let expected = width as usize * height as usize;
        if pixels.len() != expected {
            return Err(Error::WrongLength {
                what: format!("{width}x{height} {} pixels", P::NAME),
                expected,
                actual: pixels.len(),
            });
        }
        Ok(Image { width, height, pixels })
    }

    /// Copies packed bytes (`width * height * CHANNELS` of them) into a new image.
    ///
    /// ```
    /// use cuimg::{Image, Rgb8};
    /// let img = Image::<Rgb8>::from_bytes(1, 1, &[1, 2, 3]).unwrap();
    /// assert_eq!(img.get(0, 0), Rgb8([1, 2, 3]));
    /// ```
    ///
    /// Sizes whose byte count overflows are [`Error::TooLarge`], never a wrapped length:
    ///
    /// ```
    /// use cuimg::{Error, Image, Rgba8};
    /// let err = Image::<Rgba8>::from_bytes(1 << 31, 1 << 31, &[]).unwrap_err();
    /// assert!(matches!(err, Error::TooLarge { .. }));
    /// ```
    pub fn from_bytes(width: u32, height: u32, bytes: &[u8]) -> Result<Image<P>> {
        let expected = byte_len::<P>(width, height)?;
        if bytes.len() != expected {
            return Err(Error::WrongLength {
                what: format!("bytes of a {width}x{height} {} image", P::NAME),
                expected,
                actual: bytes.len(),
            });
        }
        Ok(Image { width, height, pixels: bytemuck::cast_slice(bytes).to_vec() })
    }

    /// An image computed pixel by pixel.
    ///
    /// ```
    /// let img = cuimg::Image::from_fn(3, 1, |x, _| cuimg::Gray8([x as u8]));
    /// assert_eq!(img.as_bytes(), &[0, 1, 2]);
    /// ```
    ///
    /// # Panics
    /// As [`Image::new`], before calling `f`.
    pub fn from_fn(width: u32, height: u32, mut f: impl FnMut(u32, u32) -> P) -> Image<P> {
        let bytes = byte_len::<P>(width, height).unwrap_or_else(|e| panic!("Image::from_fn: {e}"));
        let mut pixels = Vec::new();
        if pixels.try_reserve_exact(bytes / P::CHANNELS).is_err() {
            panic!("Image::from_fn: {}", Error::OutOfHostMemory { bytes: bytes as u64 });
        }
        for y in 0..height {
            for x in 0..width {
                pixels.push(f(x, y));
            }
        }
        Image { width, height, pixels }
    }

    pub fn pixels(&self) -> &[P] {
        &self.pixels
    }

    pub fn pixels_mut(&mut self) -> &mut [P] {
        &mut self.pixels
    }

    pub fn into_pixels(self) -> Vec<P> {
        self.pixels
    }

    pub fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.pixels)
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.pixels)
    }

    /// The pixel at `(x, y)`. Panics outside the image, like slice indexing.
    pub fn get(&self, x: u32, y: u32) -> P {
        assert!(x < self.width && y < self.height, "pixel ({x}, {y}) outside {}x{}", self.width, self.height);
        self.pixels[y as usize * self.width as usize + x as usize]
    }

    /// Sets the pixel at `(x, y)`. Panics outside the image, like slice indexing.
    pub fn put(&mut self, x: u32, y: u32, p: P) {
        assert!(x < self.width && y < self.height, "pixel ({x}, {y}) outside {}x{}", self.width, self.height);
        self.pixels[y as usize * self.width as usize + x as usize] = p;
    }

    /// The whole image as a view.
    pub fn view(&self) -> ImageView<'_, P> {
        ImageView {
            bytes: self.as_bytes(),
            width: self.width,
            height: self.height,
            pitch: row_bytes::<P>(self.width),
            _p: PhantomData,
        }
    }

    /// The whole image as a mutable view.
    pub fn view_mut(&mut self) -> ImageViewMut<'_, P> {
        let (width, height) = (self.width, self.height);
        ImageViewMut { bytes: self.as_bytes_mut(), width, height, pitch: row_bytes::<P>(width), _p: PhantomData }
    }

    /// A sub-image view.
    ///
    /// ```
    /// use cuimg::{Gray8, Image, Rect};
    /// let img = Image::from_fn(8, 8, |x, y| Gray8([(y * 8 + x) as u8]));
    /// let roi = img.roi(Rect::new(2, 3, 4, 2)).unwrap();
    /// assert_eq!(roi.get(0, 0), Gray8([26]));
    /// assert!(img.roi(Rect::new(6, 0, 4, 1)).is_err());
    /// ```
    pub fn roi(&self, rect: Rect) -> Result<ImageView<'_, P>> {
        self.view().roi(rect)
    }
}

/// A read-only view of `P` pixels with any row pitch (in bytes, at least one row).
///
/// The view starts at its first pixel; row `y` begins `y * pitch` bytes later.
///
/// ```
/// use cuimg::{Gray8, ImageView};
/// // Two rows of 3 pixels, padded to 4 bytes per row.
/// let bytes = [1, 2, 3, 0, 4, 5, 6];
/// let v = ImageView::<Gray8>::new(&bytes, 3, 2, 4).unwrap();
/// assert_eq!(v.get(2, 1), Gray8([6]));
/// assert!(ImageView::<Gray8>::new(&bytes, 3, 2, 2).is_err()); // pitch < row
/// ```
#[derive(Clone, Copy)]
pub struct ImageView<'a, P: Pixel> {
    bytes: &'a [u8],
    width: u32,
    height: u32,
    pitch: usize,
    _p: PhantomData<P>,
}

fn check_layout<P: Pixel>(len: usize, width: u32, height: u32, pitch: usize) -> Result<()> {
    let row = row_bytes::<P>(width);
    if pitch < row {
        return Err(Error::PitchTooSmall { pitch, row_bytes: row });
    }
    let needed = span_bytes(row, pitch, height).ok_or_else(|| Error::TooLarge {
        what: "view".into(),
        size: u64::MAX,
        limit: usize::MAX as u64,
    })?;
    if len < needed {
        return Err(Error::BufferTooSmall {
            what: format!("a {width}x{height} {} view with pitch {pitch}", P::NAME),
            needed,
            actual: len,
        });
    }
    Ok(())
}

impl<'a, P: Pixel> ImageView<'a, P> {
    /// A view of `width` x `height` pixels in `bytes`, rows `pitch` bytes apart.
    pub fn new(bytes: &'a [u8], width: u32, height: u32, pitch: usize) -> Result<ImageView<'a, P>> {
        check_layout::<P>(bytes.len(), width, height, pitch)?;
        Ok(ImageView { bytes, width, height, pitch, _p: PhantomData })
    }

    /// Bytes from one row's start to the next.
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// Bytes in one row of pixels (no padding).
    pub fn row_bytes(&self) -> usize {
        row_bytes::<P>(self.width)
    }

    /// True when the view has no pixels.
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// True when the rows follow each other without padding.
    pub fn is_contiguous(&self) -> bool {
        self.pitch == self.row_bytes() || self.height <= 1
    }

    /// Row `y` as pixels.
    pub fn row(&self, y: u32) -> &'a [P] {
        assert!(y < self.height, "row {y} outside a view of {} rows", self.height);
        let start = y as usize * self.pitch;
        bytemuck::cast_slice(&self.bytes[start..start + self.row_bytes()])
    }

    /// Iterates over the rows.
    pub fn rows(&self) -> impl Iterator<Item = &'a [P]> + '_ {
        (0..self.height).map(move |y| self.row(y))
    }

    /// The pixel at `(x, y)`; panics outside the view.
    pub fn get(&self, x: u32, y: u32) -> P {
        self.row(y)[x as usize]
    }

    /// The packed bytes when the view is contiguous, else `None`.
    pub fn contiguous_bytes(&self) -> Option<&'a [u8]> {
        self.is_contiguous().then(|| &self.bytes[..self.row_bytes() * self.height as usize])
    }

    /// A sub-view.
    pub fn roi(&self, rect: Rect) -> Result<ImageView<'a, P>> {
        let (range, pitch) = sub_layout::<P>(rect, self.dimensions(), self.pitch, self.bytes.len())?;
        Ok(ImageView { bytes: &self.bytes[range], width: rect.width, height: rect.height, pitch, _p: PhantomData })
    }

    /// Copies the view into a packed image.
    pub fn to_image(&self) -> Image<P> {
        let mut pixels = Vec::with_capacity(self.width as usize * self.height as usize);
        for row in self.rows() {
            pixels.extend_from_slice(row);
        }
        Image { width: self.width, height: self.height, pixels }
    }
}

/// A mutable view of `P` pixels with any row pitch; see [`ImageView`].
///
/// ```
/// use cuimg::{Gray8, Image, Rect};
/// let mut img = Image::<Gray8>::new(4, 4);
/// let mut roi = img.view_mut().roi(Rect::new(1, 1, 2, 2)).unwrap();
/// roi.row_mut(0)[1] = Gray8([9]);
/// assert_eq!(img.get(2, 1), Gray8([9]));
/// ```
pub struct ImageViewMut<'a, P: Pixel> {
    bytes: &'a mut [u8],
    width: u32,
    height: u32,
    pitch: usize,
    _p: PhantomData<P>,
}

impl<'a, P: Pixel> ImageViewMut<'a, P> {
    /// A mutable view of `width` x `height` pixels in `bytes`, rows `pitch` bytes apart.
    pub fn new(bytes: &'a mut [u8], width: u32, height: u32, pitch: usize) -> Result<ImageViewMut<'a, P>> {
        check_layout::<P>(bytes.len(), width, height, pitch)?;
        Ok(ImageViewMut { bytes, width, height, pitch, _p: PhantomData })
    }

    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// A read-only view of the same pixels.
    pub fn as_view(&self) -> ImageView<'_, P> {
        ImageView { bytes: self.bytes, width: self.width, height: self.height, pitch: self.pitch, _p: PhantomData }
    }

    /// Row `y` as mutable pixels.
    pub fn row_mut(&mut self, y: u32) -> &mut [P] {
        assert!(y < self.height, "row {y} outside a view of {} rows", self.height);
        let start = y as usize * self.pitch;
        let len = row_bytes::<P>(self.width);
        bytemuck::cast_slice_mut(&mut self.bytes[start..start + len])
    }

    /// A mutable sub-view, borrowing this one.
    pub fn roi(self, rect: Rect) -> Result<ImageViewMut<'a, P>> {
        let (range, pitch) = sub_layout::<P>(rect, self.dimensions(), self.pitch, self.bytes.len())?;
        Ok(ImageViewMut {
            bytes: &mut self.bytes[range],
            width: rect.width,
            height: rect.height,
            pitch,
            _p: PhantomData,
        })
    }

    /// Copies `src` (same dimensions) into this view.
    pub fn copy_from(&mut self, src: &ImageView<'_, P>) -> Result<()> {
        check_same_size("destination", self.dimensions(), src.dimensions())?;
        for y in 0..self.height {
            self.row_mut(y).copy_from_slice(src.row(y));
        }
        Ok(())
    }
}

/// Where a region of a view lies in the view's bytes, and its pitch. An empty region gets no
/// bytes and no stride, so every one of its (empty) rows reads as empty.
fn sub_layout<P: Pixel>(
    rect: Rect,
    (width, height): (u32, u32),
    pitch: usize,
    len: usize,
) -> Result<(std::ops::Range<usize>, usize)> {
    rect.check_inside(width, height)?;
    if rect.width == 0 || rect.height == 0 {
        return Ok((0..0, row_bytes::<P>(rect.width)));
    }
    Ok((rect.y as usize * pitch + rect.x as usize * P::CHANNELS..len, pitch))
}

/// `DimensionMismatch` unless `actual == expected`.
pub(crate) fn check_same_size(what: &str, actual: (u32, u32), expected: (u32, u32)) -> Result<()> {
    if actual == expected {
        Ok(())
    } else {
        Err(Error::DimensionMismatch {
            what: what.into(),
            expected_width: expected.0,
            expected_height: expected.1,
            actual_width: actual.0,
            actual_height: actual.1,
        })
    }
}

/// Three 8-bit planes (red, green, blue) of one size, as in a CHW tensor; the planes share
/// one row pitch.
///
/// ```
/// use cuimg::PlanarView;
/// // A 2x1 CHW tensor: R plane, G plane, B plane.
/// let chw = [255, 0, /* G */ 0, 255, /* B */ 0, 0];
/// let v = PlanarView::from_chw(&chw, 2, 1).unwrap();
/// assert_eq!(v.plane(1)[1], 255);
/// ```
#[derive(Clone, Copy)]
pub struct PlanarView<'a> {
    planes: [&'a [u8]; 3],
    width: u32,
    height: u32,
    pitch: usize,
}

impl<'a> PlanarView<'a> {
    /// Three planes, rows `pitch` bytes apart in each.
    pub fn new(planes: [&'a [u8]; 3], width: u32, height: u32, pitch: usize) -> Result<PlanarView<'a>> {
        for p in planes {
            check_layout::<crate::Gray8>(p.len(), width, height, pitch)?;
        }
        Ok(PlanarView { planes, width, height, pitch })
    }

    /// A packed CHW buffer of `3 * width * height` bytes.
    ///
    /// ```
    /// let err = cuimg::PlanarView::from_chw(&[], u32::MAX, u32::MAX).unwrap_err();
    /// assert!(matches!(err, cuimg::Error::TooLarge { .. }));
    /// ```
    pub fn from_chw(chw: &'a [u8], width: u32, height: u32) -> Result<PlanarView<'a>> {
        // Three planes of one byte per pixel: as long as a packed RGB8 image.
        let expected = byte_len::<crate::Rgb8>(width, height)?;
        let plane = expected / 3;
        if chw.len() != expected {
            return Err(Error::WrongLength {
                what: format!("a {width}x{height} CHW buffer"),
                expected,
                actual: chw.len(),
            });
        }
        let (r, gb) = chw.split_at(plane);
        let (g, b) = gb.split_at(plane);
        Ok(PlanarView { planes: [r, g, b], width, height, pitch: width as usize })
    }

    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// Plane `c` (0 red, 1 green, 2 blue).
    pub fn plane(&self, c: usize) -> &'a [u8] {
        self.planes[c]
    }

    /// Plane `c` as a gray view.
    pub fn plane_view(&self, c: usize) -> ImageView<'a, crate::Gray8> {
        ImageView { bytes: self.planes[c], width: self.width, height: self.height, pitch: self.pitch, _p: PhantomData }
    }
}

// Debug shows the shape, not the pixels: a failed assertion on a 12-megapixel image would
// otherwise print gigabytes of them.
impl<P: Pixel> std::fmt::Debug for Image<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Image<{}>({}x{})", P::NAME, self.width, self.height)
    }
}

impl<P: Pixel> std::fmt::Debug for ImageView<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ImageView<{}>({}x{}, pitch {})", P::NAME, self.width, self.height, self.pitch)
    }
}

impl<P: Pixel> std::fmt::Debug for ImageViewMut<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ImageViewMut<{}>({}x{}, pitch {})", P::NAME, self.width, self.height, self.pitch)
    }
}

impl std::fmt::Debug for PlanarView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlanarView({}x{}, pitch {})", self.width, self.height, self.pitch)
    }
}
