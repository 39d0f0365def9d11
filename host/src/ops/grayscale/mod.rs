//! Grayscale ("RGB to luma") and "black and white": the weight sets and their fixed-point
//! form, the one both the kernels and the CPU reference evaluate:
//! `y = clamp((r*wr + g*wg + b*wb + bias) >> shift, 0, 255)`.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

use crate::error::{Error, Result};

/// How red, green and blue combine into luma.
///
/// ```
/// use cuimg::GrayWeights;
/// // OpenCV's cvtColor(RGB2GRAY) on a pure red pixel gives 76.
/// assert_eq!(GrayWeights::Bt601.luma(255, 0, 0).unwrap(), 76);
/// assert_eq!(GrayWeights::Average.luma(1, 1, 2).unwrap(), 1);
/// assert!(GrayWeights::Custom { r: f32::NAN, g: 0.0, b: 0.0 }.luma(0, 0, 0).is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum GrayWeights {
    /// ITU-R BT.601 (0.299, 0.587, 0.114), bit-exact with OpenCV's
    /// `cvtColor(..., COLOR_RGB2GRAY)` on 8-bit images: 15-bit fixed point, rounded.
    #[default]
    Bt601,
    /// ITU-R BT.709 (0.2126, 0.7152, 0.0722), 14-bit fixed point, rounded.
    Bt709,
    /// `(r + g + b) / 3`, rounded to nearest (exact).
    Average,
    /// Any weights in [-16, 16], applied in 16-bit fixed point (each weight rounded to a
    /// multiple of 1/65536), the result rounded and clamped to 0..=255.
    Custom { r: f32, g: f32, b: f32 },
}

/// The integer form the kernels and the CPU reference evaluate (`cuimg_abi`).
pub(crate) type Fixed = cuimg_abi::grayscale::Weights;

/// The luma of one 8-bit pixel under `w`.
pub(crate) fn luma(w: &Fixed, r: u8, g: u8, b: u8) -> u8 {
    w.luma(r as u32, g as u32, b as u32) as u8
}

/// The weights in byte order (byte 0, 1, 2 of the pixel), for a format with red, green and
/// blue at byte offsets `rgb`.
pub(crate) fn in_byte_order(w: Fixed, rgb: [usize; 3]) -> Fixed {
    let mut by_byte = [0; 3];
    for (at, weight) in rgb.into_iter().zip([w.r, w.g, w.b]) {
        by_byte[at] = weight;
    }
    Fixed { r: by_byte[0], g: by_byte[1], b: by_byte[2], ..w }
}

impl GrayWeights {
    pub(crate) fn fixed(&self) -> Result<Fixed> {
        Ok(match *self {
            // OpenCV's RY15, GY15, BY15 (color_rgb.simd.hpp, RGB2Gray<uchar>): 15-bit, not
            // the 14-bit R2Y set, which differs on about 0.25% of random pixels.
            GrayWeights::Bt601 => Fixed { r: 9798, g: 19235, b: 3735, bias: 1 << 14, shift: 15 },
            // round(w * 16384); they sum to 16384, so white stays 255.
            GrayWeights::Bt709 => Fixed { r: 3483, g: 11718, b: 1183, bias: 1 << 13, shift: 14 },
            // (s + 1) / 3 == round(s / 3) for s = r+g+b <= 765, and 43691 / 2^17 is 1/3 closely
            // enough that the multiply-shift gives that quotient exactly over this range.
            GrayWeights::Average => Fixed { r: 43691, g: 43691, b: 43691, bias: 43691, shift: 17 },
            GrayWeights::Custom { r, g, b } => {
                let ok = |w: f32| w.is_finite() && w.abs() <= 16.0;
                if !(ok(r) && ok(g) && ok(b)) {
                    return Err(Error::InvalidWeights { r, g, b });
                }
                let q = |w: f32| (w as f64 * 65536.0).round() as i32;
                Fixed { r: q(r), g: q(g), b: q(b), bias: 1 << 15, shift: 16 }
            }
        })
    }

    /// The luma of one pixel under these weights (what every kernel computes).
    pub fn luma(&self, r: u8, g: u8, b: u8) -> Result<u8> {
        Ok(luma(&self.fixed()?, r, g, b))
    }
}
