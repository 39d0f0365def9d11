//! Images whose format is known at run time: what the registry's operations take, so that
//! the tool, the cross-cutting tests and the benchmark can run any operation on any file
//! without a generic parameter. Each is an enum with one variant per 8-bit format; the typed
//! [`Image`], views and device images stay the API for code that knows its format.

use crate::error::{Error, Result};
use crate::image::{Image, ImageView, Rect};
use crate::pixel::{Bgr8, Bgra8, Gray8, La8, Pixel, Rgb8, Rgba8};
use crate::runtime::{DeviceImage, DeviceView, DeviceViewMut, Stream};

/// The 8-bit formats, as values.
///
/// ```
/// use cuimg::registry::PixelFormat;
/// assert_eq!(PixelFormat::La8.channels(), 2);
/// assert!(PixelFormat::Rgba8.has_alpha() && !PixelFormat::Rgb8.has_alpha());
/// assert_eq!(PixelFormat::ALL.len(), 6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// [`crate::Gray8`]: one byte of gray.
    Gray8,
    /// [`crate::La8`]: gray and alpha.
    La8,
    /// [`crate::Rgb8`]: red, green, blue.
    Rgb8,
    /// [`crate::Bgr8`]: blue, green, red.
    Bgr8,
    /// [`crate::Rgba8`]: red, green, blue, alpha.
    Rgba8,
    /// [`crate::Bgra8`]: blue, green, red, alpha.
    Bgra8,
}

/// The formats as types: from a [`PixelFormat`] back to the type the typed API takes.
/// Crate-private, so the set stays the sealed [`Pixel`] set.
pub(crate) trait Erased: Pixel {
    fn wrap(img: Image<Self>) -> AnyImage;
    fn view<'v, 'a>(v: &'v AnyView<'a>) -> Option<&'v ImageView<'a, Self>>;
    fn device<'v, 'a>(v: &'v AnyDeviceView<'a>) -> Option<&'v DeviceView<'a, Self>>;
    fn device_mut<'v, 'a>(v: &'v mut AnyDeviceViewMut<'a>) -> Option<&'v mut DeviceViewMut<'a, Self>>;
}

/// `match` on a [`PixelFormat`] with `$P` the format's type in `$body`, for the formats listed;
/// any other is [`Error::UnsupportedFormat`] naming `$what`.
macro_rules! with_format {
    ($format:expr, $what:expr, [$($p:ident),* $(,)?], $P:ident => $body:expr) => {
        match $format {
            $($crate::registry::PixelFormat::$p => {
                type $P = $crate::pixel::$p;
                $body
            })*
            #[allow(unreachable_patterns)]
            other => Err($crate::registry::unsupported($what, other)),
        }
    };
}
pub(crate) use with_format;

/// The error for a format an operation has no form for.
pub(crate) fn unsupported(what: &str, format: PixelFormat) -> Error {
    Error::UnsupportedFormat(format!("{what} takes no {} images", format.name()))
}

macro_rules! erased {
    ($($p:ident),*) => {
        impl PixelFormat {
            /// Every format, in the order the enum lists them.
            pub const ALL: [PixelFormat; 6] = [$(PixelFormat::$p),*];

            /// The format's name (`Rgb8`).
            pub fn name(self) -> &'static str {
                match self { $(PixelFormat::$p => <$p as Pixel>::NAME),* }
            }

            /// Bytes (channels) per pixel.
            pub fn channels(self) -> usize {
                match self { $(PixelFormat::$p => <$p as Pixel>::CHANNELS),* }
            }

            /// Whether its last channel is alpha.
            pub fn has_alpha(self) -> bool {
                match self { $(PixelFormat::$p => <$p as Pixel>::ALPHA.is_some()),* }
            }
        }

        /// An image of any 8-bit format.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum AnyImage { $(#[doc = concat!("Of `", stringify!($p), "` pixels.")] $p(Image<$p>)),* }

        /// A borrowed image (or region) of any 8-bit format.
        #[derive(Clone, Copy, Debug)]
        pub enum AnyView<'a> { $(#[doc = concat!("Of `", stringify!($p), "` pixels.")] $p(ImageView<'a, $p>)),* }

        /// A device image of any 8-bit format.
        #[derive(Debug)]
        pub enum AnyDeviceImage { $(#[doc = concat!("Of `", stringify!($p), "` pixels.")] $p(DeviceImage<$p>)),* }

        /// A read-only device region of any 8-bit format.
        #[derive(Clone, Copy, Debug)]
        pub enum AnyDeviceView<'a> { $(#[doc = concat!("Of `", stringify!($p), "` pixels.")] $p(DeviceView<'a, $p>)),* }

        /// A writable device region of any 8-bit format.
        #[derive(Debug)]
        pub enum AnyDeviceViewMut<'a> { $(#[doc = concat!("Of `", stringify!($p), "` pixels.")] $p(DeviceViewMut<'a, $p>)),* }

        $(
            impl Erased for $p {
                fn wrap(img: Image<Self>) -> AnyImage {
                    AnyImage::$p(img)
                }
                fn view<'v, 'a>(v: &'v AnyView<'a>) -> Option<&'v ImageView<'a, Self>> {
                    match v { AnyView::$p(v) => Some(v), #[allow(unreachable_patterns)] _ => None }
                }
                fn device<'v, 'a>(v: &'v AnyDeviceView<'a>) -> Option<&'v DeviceView<'a, Self>> {
                    match v { AnyDeviceView::$p(v) => Some(v), #[allow(unreachable_patterns)] _ => None }
                }
                fn device_mut<'v, 'a>(v: &'v mut AnyDeviceViewMut<'a>) -> Option<&'v mut DeviceViewMut<'a, Self>> {
                    match v { AnyDeviceViewMut::$p(v) => Some(v), #[allow(unreachable_patterns)] _ => None }
                }
            }

            impl From<Image<$p>> for AnyImage {
                fn from(img: Image<$p>) -> AnyImage {
                    AnyImage::$p(img)
                }
            }

            impl<'a> From<ImageView<'a, $p>> for AnyView<'a> {
                fn from(v: ImageView<'a, $p>) -> AnyView<'a> {
                    AnyView::$p(v)
                }
            }

            impl<'a> From<DeviceView<'a, $p>> for AnyDeviceView<'a> {
                fn from(v: DeviceView<'a, $p>) -> AnyDeviceView<'a> {
                    AnyDeviceView::$p(v)
                }
            }

            impl<'a> From<DeviceViewMut<'a, $p>> for AnyDeviceViewMut<'a> {
                fn from(v: DeviceViewMut<'a, $p>) -> AnyDeviceViewMut<'a> {
                    AnyDeviceViewMut::$p(v)
                }
            }
        )*

        crate::image::dimensions! {
            impl[] AnyImage => |s| match s { $(AnyImage::$p(i) => i.dimensions()),* };
            impl['a] AnyView<'a> => |s| match s { $(AnyView::$p(v) => v.dimensions()),* };
            impl[] AnyDeviceImage => |s| match s { $(AnyDeviceImage::$p(i) => i.dimensions()),* };
            impl['a] AnyDeviceView<'a> => |s| match s { $(AnyDeviceView::$p(v) => v.dimensions()),* };
            impl['a] AnyDeviceViewMut<'a> => |s| match s { $(AnyDeviceViewMut::$p(v) => v.dimensions()),* };
        }

        impl AnyImage {
            /// Its pixel format.
            pub fn format(&self) -> PixelFormat {
                match self { $(AnyImage::$p(_) => PixelFormat::$p),* }
            }

            /// A view of all of it.
            pub fn view(&self) -> AnyView<'_> {
                match self { $(AnyImage::$p(i) => AnyView::$p(i.view())),* }
            }

            /// Its pixels, packed, as bytes.
            pub fn as_bytes(&self) -> &[u8] {
                match self { $(AnyImage::$p(i) => i.as_bytes()),* }
            }

            /// The image as `P`, if it is of that format.
            pub fn get<P: Pixel>(&self) -> Option<&Image<P>> {
                match self { $(AnyImage::$p(i) => (i as &dyn std::any::Any).downcast_ref()),* }
            }

            /// A `width` x `height` image of `format` from its packed bytes.
            pub fn from_bytes(format: PixelFormat, width: u32, height: u32, bytes: &[u8]) -> Result<AnyImage> {
                match format { $(PixelFormat::$p => Ok(AnyImage::$p(Image::from_bytes(width, height, bytes)?))),* }
            }
        }

        impl<'a> AnyView<'a> {
            /// Its pixel format.
            pub fn format(&self) -> PixelFormat {
                match self { $(AnyView::$p(_) => PixelFormat::$p),* }
            }

            /// A region of this view.
            pub fn roi(&self, rect: Rect) -> Result<AnyView<'a>> {
                match self { $(AnyView::$p(v) => Ok(AnyView::$p(v.roi(rect)?))),* }
            }

            /// The pixels, packed, as an image of their own.
            pub fn to_image(&self) -> AnyImage {
                match self { $(AnyView::$p(v) => AnyImage::$p(v.to_image())),* }
            }
        }

        impl AnyDeviceImage {
            /// Uploads `src` on `stream`.
            pub fn upload(stream: &Stream, src: &AnyView<'_>) -> Result<AnyDeviceImage> {
                match src { $(AnyView::$p(v) => Ok(AnyDeviceImage::$p(stream.upload(v)?))),* }
            }

            /// A `width` x `height` device image of `format`, not cleared.
            pub fn alloc(stream: &Stream, format: PixelFormat, width: u32, height: u32) -> Result<AnyDeviceImage> {
                match format { $(PixelFormat::$p => Ok(AnyDeviceImage::$p(stream.alloc(width, height)?))),* }
            }

            /// Copies it to a new host image (waits for the stream).
            pub fn download(&self, stream: &Stream) -> Result<AnyImage> {
                match self { $(AnyDeviceImage::$p(i) => Ok(AnyImage::$p(stream.download(i)?))),* }
            }

            /// Its pixel format.
            pub fn format(&self) -> PixelFormat {
                match self { $(AnyDeviceImage::$p(_) => PixelFormat::$p),* }
            }

            /// A view of all of it.
            pub fn view(&self) -> AnyDeviceView<'_> {
                match self { $(AnyDeviceImage::$p(i) => AnyDeviceView::$p(i.view())),* }
            }

            /// A writable view of all of it.
            pub fn view_mut(&mut self) -> AnyDeviceViewMut<'_> {
                match self { $(AnyDeviceImage::$p(i) => AnyDeviceViewMut::$p(i.view_mut())),* }
            }

            /// A region of it (an error when `rect` is not inside).
            pub fn roi(&self, rect: Rect) -> Result<AnyDeviceView<'_>> {
                match self { $(AnyDeviceImage::$p(i) => Ok(AnyDeviceView::$p(i.roi(rect)?))),* }
            }

            /// A writable region of it (an error when `rect` is not inside).
            pub fn roi_mut(&mut self, rect: Rect) -> Result<AnyDeviceViewMut<'_>> {
                match self { $(AnyDeviceImage::$p(i) => Ok(AnyDeviceViewMut::$p(i.roi_mut(rect)?))),* }
            }
        }

        impl AnyDeviceView<'_> {
            /// Its pixel format.
            pub fn format(&self) -> PixelFormat {
                match self { $(AnyDeviceView::$p(_) => PixelFormat::$p),* }
            }

        }

        impl AnyDeviceViewMut<'_> {
            /// Its pixel format.
            pub fn format(&self) -> PixelFormat {
                match self { $(AnyDeviceViewMut::$p(_) => PixelFormat::$p),* }
            }

        }
    };
}

erased!(Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8);

impl std::fmt::Display for PixelFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The views of `images` as `P`, all of which must be of that format (a batch is of one).
pub(crate) fn views_as<'a, P: Erased>(images: &[AnyView<'a>]) -> Result<Vec<ImageView<'a, P>>> {
    images
        .iter()
        .map(|v| {
            P::view(v).copied().ok_or_else(|| {
                Error::UnsupportedFormat(format!("a batch of {} images holds a {} image", P::NAME, v.format().name()))
            })
        })
        .collect()
}
