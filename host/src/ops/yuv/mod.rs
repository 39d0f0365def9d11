//! YUV video frames to and from 8-bit images (issue 29, part 3): NV12, NV21, I420, YV12,
//! YUYV and UYVY; to and from RGB, BGR, RGBA, BGRA and gray; BT.601, BT.709 and BT.2020,
//! limited and full range. BT.601 limited range is OpenCV's `cvtColor` to the bit
//! (`COLOR_YUV2RGB_NV12`, `COLOR_RGB2YUV_I420`, `COLOR_RGB2YUV_YUY2`, ...); the others are
//! the same fixed point with the standards' coefficients, the CPU reference their
//! reference. The arithmetic is `cuimg_abi::yuv`'s, shared by every form.
//!
//! Frames are not images: this folder declares no registry entry (as `gather`), and is
//! tested on its own (`tests/tests/yuv.rs`).

pub(crate) mod cpu;
mod gpu;

use cuimg_abi::yuv::{Decode, Encode, Frame};

use crate::error::{Error, Result};
use crate::pixel::{Bgr8, Bgra8, Gray8, Pixel, Rgb8, Rgba8};
use crate::runtime::DeviceBuffer;

/// Where a frame's samples lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum YuvLayout {
    /// 4:2:0: the Y plane, then U and V interleaved (U first) at half width and height.
    Nv12,
    /// 4:2:0: as NV12 with V first.
    Nv21,
    /// 4:2:0: the Y plane, the U plane, the V plane (U and V at half width and height).
    I420,
    /// 4:2:0: as I420 with the V plane first.
    Yv12,
    /// 4:2:2 packed: Y0 U Y1 V for each pair of pixels.
    Yuyv,
    /// 4:2:2 packed: U Y0 V Y1.
    Uyvy,
}

impl YuvLayout {
    pub const ALL: [YuvLayout; 6] =
        [YuvLayout::Nv12, YuvLayout::Nv21, YuvLayout::I420, YuvLayout::Yv12, YuvLayout::Yuyv, YuvLayout::Uyvy];

    pub(crate) fn code(self) -> u32 {
        use cuimg_abi::yuv::*;
        match self {
            YuvLayout::Nv12 => NV12,
            YuvLayout::Nv21 => NV21,
            YuvLayout::I420 => I420,
            YuvLayout::Yv12 => YV12,
            YuvLayout::Yuyv => YUYV,
            YuvLayout::Uyvy => UYVY,
        }
    }

    /// The kernels' description of a `width` x `height` frame of this layout at `data`.
    pub(crate) fn frame(self, width: u32, height: u32, data: u64) -> Frame {
        Frame { data, width, height, layout: self.code(), _pad: 0 }
    }

    /// 4:2:0 (one U and V for each 2x2 block), else 4:2:2 (for each pair of a row).
    pub fn is_420(self) -> bool {
        !matches!(self, YuvLayout::Yuyv | YuvLayout::Uyvy)
    }

    /// Bytes of a `width` x `height` frame, after checking that its sides suit the layout
    /// (even: both for 4:2:0, the width for 4:2:2; not empty).
    pub fn frame_bytes(self, width: u32, height: u32) -> Result<usize> {
        crate::validate::non_empty(width, height)?;
        let odd = if self.is_420() { width % 2 == 1 || height % 2 == 1 } else { width % 2 == 1 };
        if odd {
            let sides = if self.is_420() { "width and height" } else { "width" };
            return Err(Error::InvalidParameter {
                what: format!("{self:?} frame size"),
                why: format!("{width}x{height}: its {sides} must be even (one chroma sample per 2 pixels)"),
            });
        }
        let f = self.frame(width, height, 0);
        usize::try_from(f.bytes()).map_err(|_| Error::TooLarge {
            what: "YUV frame".into(),
            size: f.bytes(),
            limit: usize::MAX as u64,
        })
    }
}

/// The RGB <-> YUV matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum YuvMatrix {
    /// SD video, and OpenCV's `cvtColor` (with limited range).
    Bt601,
    /// HD video.
    Bt709,
    /// UHD video.
    Bt2020,
}

/// Limited ("video", Y in 16..=235, U and V in 16..=240) or full (0..=255) range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum YuvRange {
    Limited,
    Full,
}

/// A matrix and a range. The default is OpenCV's: BT.601, limited range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct YuvSpec {
    pub matrix: YuvMatrix,
    pub range: YuvRange,
}

impl Default for YuvSpec {
    fn default() -> Self {
        YuvSpec { matrix: YuvMatrix::Bt601, range: YuvRange::Limited }
    }
}

/// `x * 2^bits` rounded to the nearest integer.
fn fixed(x: f64, bits: u32) -> i32 {
    (x * f64::from(1u32 << bits)).round() as i32
}

impl YuvSpec {
    /// The red and blue weights of luma (`Kr`, `Kb`).
    fn weights(self) -> (f64, f64) {
        match self.matrix {
            YuvMatrix::Bt601 => (0.299, 0.114),
            YuvMatrix::Bt709 => (0.2126, 0.0722),
            YuvMatrix::Bt2020 => (0.2627, 0.0593),
        }
    }

    /// The decoder's coefficients: OpenCV's for BT.601 limited range, else the standard's
    /// in the same 20-bit form.
    pub(crate) fn decode(self) -> Decode {
        if self == YuvSpec::default() {
            return Decode::BT601_LIMITED;
        }
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs, y_offset) = match self.range {
            YuvRange::Limited => (255.0 / 219.0, 255.0 / 224.0, 16),
            YuvRange::Full => (1.0, 1.0, 0),
        };
        let s = cuimg_abi::yuv::DECODE_SHIFT;
        Decode {
            y_offset,
            cy: fixed(ys, s),
            cvr: fixed(2.0 * (1.0 - kr) * cs, s),
            cvg: fixed(-2.0 * (1.0 - kr) * kr / kg * cs, s),
            cug: fixed(-2.0 * (1.0 - kb) * kb / kg * cs, s),
            cub: fixed(2.0 * (1.0 - kb) * cs, s),
        }
    }

    /// The encoder's coefficients for `layout`: OpenCV's for BT.601 limited range (its
    /// 4:2:0 and 4:2:2 encoders differ), else the standard's, 20 bits, 4:2:2 averaging the
    /// pair as OpenCV's does.
    pub(crate) fn encode(self, layout: YuvLayout) -> Encode {
        if self == YuvSpec::default() {
            return if layout.is_420() { Encode::BT601_LIMITED_420 } else { Encode::BT601_LIMITED_422 };
        }
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs, y_offset) = match self.range {
            YuvRange::Limited => (219.0 / 255.0, 224.0 / 255.0, 16),
            YuvRange::Full => (1.0, 1.0, 0),
        };
        let pair = !layout.is_420();
        // A pair's chroma is its two pixels' sums times half the weights.
        let c = if pair { cs / 2.0 } else { cs };
        let s = 20;
        Encode {
            shift: s,
            pair: u32::from(pair),
            y_offset,
            cry: fixed(kr * ys, s),
            cgy: fixed(kg * ys, s),
            cby: fixed(kb * ys, s),
            cru: fixed(-kr / (2.0 * (1.0 - kb)) * c, s),
            cgu: fixed(-kg / (2.0 * (1.0 - kb)) * c, s),
            cbu: fixed(0.5 * c, s),
            crv: fixed(0.5 * c, s),
            cgv: fixed(-kg / (2.0 * (1.0 - kr)) * c, s),
            cbv: fixed(-kb / (2.0 * (1.0 - kr)) * c, s),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The image formats frames convert to and from: [`Gray8`] (the luma plane, as OpenCV's
/// `COLOR_YUV2GRAY_*`; encoded as red, green and blue of its value), [`Rgb8`], [`Bgr8`],
/// [`Rgba8`], [`Bgra8`] (alpha 255 decoded, ignored encoded). Sealed.
pub trait YuvPixel: Pixel + sealed::Sealed {
    /// Blue before red.
    const BGR: bool;
}

macro_rules! yuv_pixel {
    ($($p:ty: $bgr:literal),*) => {
        $(
            impl sealed::Sealed for $p {}
            impl YuvPixel for $p {
                const BGR: bool = $bgr;
            }
        )*
    };
}

yuv_pixel!(Gray8: false, Rgb8: false, Bgr8: true, Rgba8: false, Bgra8: true);

/// A YUV frame in host memory: its bytes (every plane packed, as [`YuvLayout`] says) and
/// its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YuvFrame {
    pub(crate) bytes: Vec<u8>,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) layout: YuvLayout,
}

impl YuvFrame {
    /// A frame of `width` x `height` from its bytes: their length must be the layout's for
    /// that size, and the sides even as the layout needs.
    pub fn from_bytes(layout: YuvLayout, width: u32, height: u32, bytes: Vec<u8>) -> Result<YuvFrame> {
        let want = layout.frame_bytes(width, height)?;
        if bytes.len() != want {
            return Err(Error::WrongLength { what: format!("{layout:?} frame bytes"), expected: want, actual: bytes.len() });
        }
        Ok(YuvFrame { bytes, width, height, layout })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    pub fn layout(&self) -> YuvLayout {
        self.layout
    }

    pub(crate) fn frame(&self, data: u64) -> Frame {
        self.layout.frame(self.width, self.height, data)
    }
}

/// A YUV frame in device memory (see [`YuvFrame`]).
#[derive(Debug)]
pub struct DeviceYuvFrame {
    pub(crate) buf: DeviceBuffer<u8>,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) layout: YuvLayout,
}

impl DeviceYuvFrame {
    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    pub fn layout(&self) -> YuvLayout {
        self.layout
    }

    /// The device address of its first byte (planes packed, as [`YuvLayout`] says).
    pub fn as_raw_ptr(&self) -> u64 {
        self.buf.buf.device_addr()
    }

    pub(crate) fn frame(&self, data: u64) -> Frame {
        self.layout.frame(self.width, self.height, data)
    }
}
