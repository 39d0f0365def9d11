//! Borders: an image padded on each side, exact with OpenCV's `copyMakeBorder` (constant,
//! replicate, reflect, reflect-101 and wrap). One kernel per channel count evaluates
//! [`cuimg_abi::border::interpolate`], as the CPU reference (`cpu.rs`) does.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

use cuimg_abi::border as abi;

use crate::error::{Error, Result};
use crate::pixel::Pixel;

/// Pixels added on each side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Padding {
    pub top: u32,
    pub bottom: u32,
    pub left: u32,
    pub right: u32,
}

/// What the added pixels are, as `cv2.BORDER_*` makes them.
///
/// ```
/// use cuimg::Border;
/// assert_eq!("reflect101".parse::<Border>().unwrap(), Border::Reflect101);
/// assert_eq!(Border::Constant([9, 8, 7, 0]).name(), "constant");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Border {
    /// `BORDER_CONSTANT`: one value per channel (the first `CHANNELS` are used).
    Constant([u8; 4]),
    /// `BORDER_REPLICATE`: `aaaaaa|abcdefgh|hhhhhhh`.
    Replicate,
    /// `BORDER_REFLECT`: `fedcba|abcdefgh|hgfedcb`.
    Reflect,
    /// `BORDER_REFLECT_101`: `gfedcb|abcdefgh|gfedcba`.
    Reflect101,
    /// `BORDER_WRAP`: `cdefgh|abcdefgh|abcdefg`.
    Wrap,
}

impl Border {
    /// Its name: `constant`, `replicate`, `reflect`, `reflect101`, `wrap`.
    pub fn name(self) -> &'static str {
        match self {
            Border::Constant(_) => "constant",
            Border::Replicate => "replicate",
            Border::Reflect => "reflect",
            Border::Reflect101 => "reflect101",
            Border::Wrap => "wrap",
        }
    }

    /// Its kind as the kernels take it.
    pub(crate) fn kind(self) -> u32 {
        match self {
            Border::Constant(_) => abi::CONSTANT,
            Border::Replicate => abi::REPLICATE,
            Border::Reflect => abi::REFLECT,
            Border::Reflect101 => abi::REFLECT_101,
            Border::Wrap => abi::WRAP,
        }
    }

    /// The constant's channels packed, channel 0 lowest (0 for the other borders).
    pub(crate) fn packed(self) -> u32 {
        match self {
            Border::Constant(v) => u32::from_le_bytes(v),
            _ => 0,
        }
    }

    /// The source index of position `p` along an axis of `len`, `None` for the constant.
    pub(crate) fn source(self, p: i64, len: i64) -> Option<i64> {
        let s = abi::interpolate(p, len, self.kind());
        (s >= 0).then_some(s)
    }

    /// The constant as a pixel of `P`.
    pub(crate) fn fill<P: Pixel>(self) -> P {
        let bytes = match self {
            Border::Constant(v) => v,
            _ => [0; 4],
        };
        *bytemuck::from_bytes(&bytes[..P::CHANNELS])
    }
}

impl std::str::FromStr for Border {
    type Err = Error;
    /// A name; `constant` takes the value 0 (`Border::Constant` sets another).
    fn from_str(s: &str) -> Result<Border> {
        Ok(match s {
            "constant" => Border::Constant([0; 4]),
            "replicate" => Border::Replicate,
            "reflect" => Border::Reflect,
            "reflect101" => Border::Reflect101,
            "wrap" => Border::Wrap,
            _ => {
                return Err(Error::InvalidParameter {
                    what: "the border".into(),
                    why: format!("{s:?} is none of constant, replicate, reflect, reflect101, wrap"),
                });
            }
        })
    }
}

/// The size of a `width` x `height` image padded by `pad`, checked.
pub(crate) fn output_size(width: u32, height: u32, pad: Padding) -> Result<(u32, u32)> {
    crate::validate::non_empty(width, height)?;
    let w = width.checked_add(pad.left).and_then(|w| w.checked_add(pad.right));
    let h = height.checked_add(pad.top).and_then(|h| h.checked_add(pad.bottom));
    match (w, h) {
        (Some(w), Some(h)) if w <= i32::MAX as u32 && h <= i32::MAX as u32 => Ok((w, h)),
        _ => Err(Error::TooLarge {
            what: "the padded image's width or height".into(),
            size: (width as u64 + pad.left as u64 + pad.right as u64).max(height as u64 + pad.top as u64 + pad.bottom as u64),
            limit: i32::MAX as u64,
        }),
    }
}
