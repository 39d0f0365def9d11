//! 256-entry lookup tables, one per channel.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

pub use gpu::DeviceLuts;
pub(crate) use gpu::Order;

use crate::error::{Error, Result};

/// A table mapping every 8-bit value to another.
///
/// ```
/// use cuimg::Lut;
/// let inv = Lut::invert();
/// assert_eq!(inv[0], 255);
/// assert_eq!(Lut::identity()[42], 42);
/// let g = Lut::gamma(2.2);
/// assert_eq!((g[0], g[255]), (0, 255));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lut(pub [u8; 256]);

impl Lut {
    /// `v -> f(v)`.
    pub fn from_fn(mut f: impl FnMut(u8) -> u8) -> Lut {
        let mut t = [0u8; 256];
        for (v, o) in t.iter_mut().enumerate() {
            *o = f(v as u8);
        }
        Lut(t)
    }

    pub fn identity() -> Lut {
        Lut::from_fn(|v| v)
    }

    /// `v -> 255 - v`.
    pub fn invert() -> Lut {
        Lut::from_fn(|v| 255 - v)
    }

    /// `v -> round(255 * (v / 255)^(1 / gamma))`.
    pub fn gamma(gamma: f64) -> Lut {
        Lut::from_fn(|v| (255.0 * (v as f64 / 255.0).powf(1.0 / gamma)).round().clamp(0.0, 255.0) as u8)
    }

    /// `v -> 255` at or above `t`, else 0.
    pub fn threshold(t: u8) -> Lut {
        Lut::from_fn(|v| if v >= t { 255 } else { 0 })
    }

    /// Applies the table to one value.
    pub fn apply(&self, v: u8) -> u8 {
        self.0[v as usize]
    }
}

impl std::ops::Index<u8> for Lut {
    type Output = u8;
    fn index(&self, v: u8) -> &u8 {
        &self.0[v as usize]
    }
}

/// One table per channel.
pub(crate) fn check_count(luts: &[Lut], channels: usize) -> Result<()> {
    if luts.len() != channels {
        return Err(Error::WrongLength {
            what: "lookup tables (one per channel)".into(),
            expected: channels,
            actual: luts.len(),
        });
    }
    Ok(())
}
