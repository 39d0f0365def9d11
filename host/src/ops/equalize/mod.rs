//! Histogram equalization, bit-exact with OpenCV's `equalizeHist`: gray, gray + alpha, and
//! color per channel or on luma, entirely on the device (histogram -> table -> apply).

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

/// The choice for color images; gray images have only one way.
///
/// ```
/// assert_eq!(cuimg::EqualizeMode::default(), cuimg::EqualizeMode::Luma);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EqualizeMode {
    /// Each channel through its own histogram and table (changes colors).
    PerChannel,
    /// The BT.601 luma ([`GrayWeights::Bt601`](crate::GrayWeights::Bt601)) through its table, each channel moved by the luma's change and
    /// clamped: what equalizing Y in YCbCr does, without the round trip's rounding; hues
    /// stay.
    #[default]
    Luma,
}
