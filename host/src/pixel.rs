//! Pixel formats: the format is part of every image's type, so a kernel can never be handed
//! bytes of the wrong layout.

use bytemuck::{Pod, Zeroable};

/// An 8-bit pixel format with `CHANNELS` interleaved channels.
///
/// ```
/// use cuimg::{Pixel, Rgba8};
/// assert_eq!(Rgba8::CHANNELS, 4);
/// assert_eq!(std::mem::size_of::<Rgba8>(), 4);
/// ```
pub trait Pixel: Pod + Zeroable + Copy + Send + Sync + std::fmt::Debug + PartialEq + Eq + 'static {
    /// Channels per pixel (and bytes per pixel).
    const CHANNELS: usize;
    /// The format's name, for messages.
    const NAME: &'static str;
    /// The channels as bytes.
    fn channels(&self) -> &[u8];
    /// A pixel whose every channel is `v`.
    fn splat(v: u8) -> Self;
}

/// A color format: where red, green and blue (and alpha, if any) sit in the pixel.
///
/// ```
/// use cuimg::{Bgr8, Color};
/// assert_eq!(Bgr8::RGB, [2, 1, 0]);
/// ```
pub trait Color: Pixel {
    /// Byte offsets of red, green and blue.
    const RGB: [usize; 3];
    /// Byte offset of alpha, if the format has one.
    const ALPHA: Option<usize>;
}

macro_rules! pixel {
    ($(#[$doc:meta])* $name:ident, $n:literal) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
        pub struct $name(pub [u8; $n]);

        impl Pixel for $name {
            const CHANNELS: usize = $n;
            const NAME: &'static str = stringify!($name);
            fn channels(&self) -> &[u8] {
                &self.0
            }
            fn splat(v: u8) -> Self {
                $name([v; $n])
            }
        }
    };
}

macro_rules! color {
    ($name:ident, $rgb:expr, $alpha:expr) => {
        impl Color for $name {
            const RGB: [usize; 3] = $rgb;
            const ALPHA: Option<usize> = $alpha;
        }
    };
}

pixel!(
    /// One 8-bit luma channel.
    ///
    /// ```
    /// let p = cuimg::Gray8([200]);
    /// assert_eq!(p.0[0], 200);
    /// ```
    Gray8, 1
);
pixel!(
    /// Red, green, blue.
    ///
    /// ```
    /// let p = cuimg::Rgb8([255, 0, 0]);
    /// assert_eq!(p.0[0], 255);
    /// ```
    Rgb8, 3
);
pixel!(
    /// Blue, green, red (OpenCV's default order).
    ///
    /// ```
    /// let p = cuimg::Bgr8([255, 0, 0]); // pure blue
    /// assert_eq!(p.0[2], 0);
    /// ```
    Bgr8, 3
);
pixel!(
    /// Red, green, blue, alpha.
    ///
    /// ```
    /// let p = cuimg::Rgba8([1, 2, 3, 255]);
    /// assert_eq!(p.0[3], 255);
    /// ```
    Rgba8, 4
);
pixel!(
    /// Blue, green, red, alpha.
    ///
    /// ```
    /// let p = cuimg::Bgra8([3, 2, 1, 255]);
    /// assert_eq!(p.0[3], 255);
    /// ```
    Bgra8, 4
);

color!(Rgb8, [0, 1, 2], None);
color!(Bgr8, [2, 1, 0], None);
color!(Rgba8, [0, 1, 2], Some(3));
color!(Bgra8, [2, 1, 0], Some(3));
