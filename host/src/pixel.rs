//! Pixel formats: the format is part of every image's type, so a kernel can never be handed
//! bytes of the wrong layout.
//!
//! The traits are **sealed** (see [`Pixel`]): each format decides which kernel runs and
//! which byte offsets become device addresses, so the set is closed.

use bytemuck::{Pod, Zeroable};

/// What the crate dispatches on. The module is private, so no type outside the crate can
/// implement [`Sealed`](sealed::Sealed), and therefore none can implement [`Pixel`],
/// [`Color`] or [`Gray`].
pub(crate) mod sealed {
    /// Channels per pixel, as the kernels are specialised for them. Every dispatch on it is
    /// an exhaustive `match` with no catch-all arm, so a new format that no kernel handles
    /// is a compile error, not a launch of the wrong kernel.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Channels {
        One,
        Two,
        Three,
        Four,
    }

    impl Channels {
        pub const fn count(self) -> usize {
            match self {
                Channels::One => 1,
                Channels::Two => 2,
                Channels::Three => 3,
                Channels::Four => 4,
            }
        }
    }

    /// The channel layouts of color formats: three bytes, or four with alpha last.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum ColorChannels {
        Three,
        Four,
    }

    pub trait Sealed {
        const LAYOUT: Channels;
    }

    pub trait SealedColor {
        const COLOR_LAYOUT: ColorChannels;
    }

    pub trait SealedGray {}
}

pub(crate) use sealed::{Channels, ColorChannels};

/// An 8-bit pixel format with `CHANNELS` interleaved channels. Sealed: the formats are
/// [`Gray8`], [`La8`], [`Rgb8`], [`Bgr8`], [`Rgba8`] and [`Bgra8`].
///
/// ```
/// use cuimg::{La8, Pixel, Rgba8};
/// assert_eq!(Rgba8::CHANNELS, 4);
/// assert_eq!(std::mem::size_of::<Rgba8>(), 4);
/// assert_eq!((La8::CHANNELS, La8::ALPHA), (2, Some(1)));
/// ```
///
/// A format from outside the crate would reach kernels written for another layout (a
/// two-channel type once ran the four-channel histogram and faulted the context), so it
/// cannot be declared. `E0277`: the private supertrait `Sealed` is not implemented (this
/// impl compiled before the traits were sealed):
///
/// ```compile_fail,E0277
/// #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(transparent)]
/// struct GrayAlpha([u8; 2]);
/// impl cuimg::Pixel for GrayAlpha {
///     const CHANNELS: usize = 2;
///     const NAME: &'static str = "GrayAlpha";
///     fn channels(&self) -> &[u8] { &self.0 }
///     fn splat(v: u8) -> Self { GrayAlpha([v; 2]) }
/// }
/// ```
///
/// Nor can an outside type be made a [`Color`] (whose byte offsets become device
/// addresses) or a [`Gray`]: both need [`Pixel`] first.
pub trait Pixel:
    sealed::Sealed + Pod + Zeroable + Copy + Send + Sync + std::fmt::Debug + PartialEq + Eq + 'static
{
    /// Channels per pixel (and bytes per pixel).
    const CHANNELS: usize = <Self as sealed::Sealed>::LAYOUT.count();
    /// The format's name, for messages.
    const NAME: &'static str;
    /// Byte offset of alpha, if the format has one. Alpha is always the last channel.
    const ALPHA: Option<usize>;
    /// The channels as bytes.
    fn channels(&self) -> &[u8];
    /// A pixel whose every channel is `v`.
    fn splat(v: u8) -> Self;
}

/// A color format: where red, green and blue sit in the pixel (alpha, if any, is last).
/// Sealed: [`Rgb8`], [`Bgr8`], [`Rgba8`], [`Bgra8`].
///
/// ```
/// use cuimg::{Bgr8, Color};
/// assert_eq!(Bgr8::RGB, [2, 1, 0]);
/// ```
pub trait Color: Pixel + sealed::SealedColor {
    /// Byte offsets of red, green and blue.
    const RGB: [usize; 3];
}

/// A gray format, with or without alpha: the color is channel 0. Sealed: [`Gray8`], [`La8`].
///
/// ```
/// use cuimg::{Gray, La8, Pixel};
/// fn color_channels<P: Gray>() -> usize { P::CHANNELS - P::ALPHA.map_or(0, |_| 1) }
/// assert_eq!(color_channels::<La8>(), 1);
/// ```
pub trait Gray: Pixel + sealed::SealedGray {}

/// The number of channels that carry color (all but alpha): what equalization and the
/// per-channel tables treat as data.
pub(crate) const fn color_channels<P: Pixel>() -> usize {
    match P::ALPHA {
        Some(_) => P::CHANNELS - 1,
        None => P::CHANNELS,
    }
}

macro_rules! pixel {
    ($(#[$doc:meta])* $name:ident, $n:literal, $layout:ident, $alpha:expr) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
        pub struct $name(pub [u8; $n]);

        impl sealed::Sealed for $name {
            const LAYOUT: Channels = Channels::$layout;
        }

        impl Pixel for $name {
            const NAME: &'static str = stringify!($name);
            const ALPHA: Option<usize> = $alpha;
            fn channels(&self) -> &[u8] {
                &self.0
            }
            fn splat(v: u8) -> Self {
                $name([v; $n])
            }
        }

        // The array length, the dispatch layout and alpha's place agree.
        const _: () = assert!(<$name as Pixel>::CHANNELS == $n);
        const _: () = assert!(match <$name as Pixel>::ALPHA {
            Some(a) => a == $n - 1,
            None => true,
        });
    };
}

macro_rules! color {
    ($name:ident, $layout:ident, $rgb:expr) => {
        impl sealed::SealedColor for $name {
            const COLOR_LAYOUT: ColorChannels = ColorChannels::$layout;
        }
        impl Color for $name {
            const RGB: [usize; 3] = $rgb;
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
    Gray8, 1, One, None
);
pixel!(
    /// Luma and alpha (a common PNG layout): histograms, tables and equalization treat the
    /// luma and keep alpha as it is where it is not data.
    ///
    /// ```
    /// let p = cuimg::La8([200, 255]);
    /// assert_eq!(p.0[1], 255);
    /// ```
    La8, 2, Two, Some(1)
);
pixel!(
    /// Red, green, blue.
    ///
    /// ```
    /// let p = cuimg::Rgb8([255, 0, 0]);
    /// assert_eq!(p.0[0], 255);
    /// ```
    Rgb8, 3, Three, None
);
pixel!(
    /// Blue, green, red (OpenCV's default order).
    ///
    /// ```
    /// let p = cuimg::Bgr8([255, 0, 0]); // pure blue
    /// assert_eq!(p.0[2], 0);
    /// ```
    Bgr8, 3, Three, None
);
pixel!(
    /// Red, green, blue, alpha.
    ///
    /// ```
    /// let p = cuimg::Rgba8([1, 2, 3, 255]);
    /// assert_eq!(p.0[3], 255);
    /// ```
    Rgba8, 4, Four, Some(3)
);
pixel!(
    /// Blue, green, red, alpha.
    ///
    /// ```
    /// let p = cuimg::Bgra8([3, 2, 1, 255]);
    /// assert_eq!(p.0[3], 255);
    /// ```
    Bgra8, 4, Four, Some(3)
);

color!(Rgb8, Three, [0, 1, 2]);
color!(Bgr8, Three, [2, 1, 0]);
color!(Rgba8, Four, [0, 1, 2]);
color!(Bgra8, Four, [2, 1, 0]);

impl sealed::SealedGray for Gray8 {}
impl sealed::SealedGray for La8 {}
impl Gray for Gray8 {}
impl Gray for La8 {}
