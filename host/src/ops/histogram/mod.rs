//! 256-bin histograms, one per channel, and the equalization table built from one.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

pub use gpu::{DeviceHistogram, DeviceHistograms};

use super::lut::Lut;

/// Counts of each 8-bit value, per channel.
///
/// ```
/// use cuimg::{Gray8, Image};
/// let img = Image::<Gray8>::from_bytes(2, 2, &[0, 0, 7, 255]).unwrap();
/// let h = cuimg::cpu::histogram(&img.view()).unwrap();
/// assert_eq!(h.channel(0)[0], 2);
/// assert_eq!(h.channel(0)[255], 1);
/// assert_eq!(h.total(0), 4);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    bins: Vec<[u32; 256]>,
}

impl Histogram {
    /// Zeroed bins for `channels` channels.
    pub fn zeros(channels: usize) -> Histogram {
        Histogram { bins: vec![[0; 256]; channels] }
    }

    pub(crate) fn from_flat(flat: &[u32], channels: usize) -> Histogram {
        let bins = flat.chunks_exact(256).take(channels).map(|c| c.try_into().expect("chunks of 256")).collect();
        Histogram { bins }
    }

    /// Number of channels.
    pub fn channels(&self) -> usize {
        self.bins.len()
    }

    /// The bins of channel `c`.
    pub fn channel(&self, c: usize) -> &[u32; 256] {
        &self.bins[c]
    }

    pub(crate) fn channel_mut(&mut self, c: usize) -> &mut [u32; 256] {
        &mut self.bins[c]
    }

    /// Sum of channel `c`'s bins: the pixel count.
    pub fn total(&self, c: usize) -> u64 {
        self.bins[c].iter().map(|&b| b as u64).sum()
    }

    /// The equalization table for channel `c`, exactly as OpenCV's `equalizeHist` builds it
    /// (and as the GPU kernel does): see [`equalization_lut`].
    pub fn equalization_lut(&self, c: usize) -> Lut {
        equalization_lut(&self.bins[c])
    }
}

/// OpenCV's `equalizeHist` table, bit for bit: `i` is the first non-empty bin; a constant
/// image maps to itself; otherwise `lut[v] = saturate(rint(f32(cdf(v) - hist[i]) * scale))`
/// with `scale = 255.0f32 / f32(total - hist[i])`, and `lut[v] = 0` for `v <= i`.
///
/// ```
/// let mut h = [0u32; 256];
/// h[10] = 5;
/// h[20] = 5;
/// let lut = cuimg::ops::histogram::equalization_lut(&h);
/// assert_eq!((lut[10u8], lut[20u8]), (0, 255));
/// ```
///
/// The sums are `u64`, so any bins work (OpenCV's `int` sums, and the GPU kernel's `u32`
/// ones, cover the images they accept, up to `u32::MAX` pixels; there the results agree):
///
/// ```
/// let lut = cuimg::ops::histogram::equalization_lut(&[u32::MAX; 256]);
/// assert_eq!((lut[0u8], lut[128u8], lut[255u8]), (0, 128, 255));
/// ```
pub fn equalization_lut(hist: &[u32; 256]) -> Lut {
    let total: u64 = hist.iter().map(|&h| h as u64).sum();
    let Some(i) = hist.iter().position(|&h| h != 0) else {
        return Lut::identity();
    };
    if hist[i] as u64 == total {
        return Lut([i as u8; 256]);
    }
    let scale = 255.0f32 / (total - hist[i] as u64) as f32;
    let mut lut = [0u8; 256];
    let mut sum = 0u64;
    for v in i + 1..256 {
        sum += hist[v] as u64;
        lut[v] = (sum as f32 * scale).round_ties_even().clamp(0.0, 255.0) as u8;
    }
    Lut(lut)
}
