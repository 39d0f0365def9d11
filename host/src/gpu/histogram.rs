//! Histograms on the GPU.

use super::context::Gpu;
use super::launch::{WARPS, launch, linear, planar};
use super::memory::{AsDeviceView, DeviceView};
use super::stream::Stream;
use super::tracked::Tracked;
use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::ops::histogram::Histogram;
use crate::pixel::{Channels, Pixel};
use crate::validate;

/// Histogram bins in device memory: 256 `u32` per channel.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
/// use cuimg::{Image, Rgba8};
/// let stream = gpu.stream()?;
/// let img = stream.upload(&Image::<Rgba8>::filled(64, 64, 3).view())?;
/// let mut bins = stream.alloc_histogram(4)?;
/// stream.histogram(&img, &mut bins)?;
/// let h = stream.download_histogram(&bins)?;
/// assert_eq!(h.channel(3)[3], 64 * 64);
/// # Ok(()) }
/// ```
pub struct DeviceHistogram {
    pub(crate) buf: Tracked<u32>,
    channels: usize,
}

impl std::fmt::Debug for DeviceHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceHistogram({} channels)", self.channels)
    }
}

impl DeviceHistogram {
    pub fn channels(&self) -> usize {
        self.channels
    }
}

/// Shared memory of the other histogram kernels: one private copy of the bins per warp.
pub(crate) fn histogram_smem(channels: usize) -> u32 {
    WARPS * 256 * channels as u32 * 4
}

impl Stream {
    /// Zeroed bins for `channels` (1 to 4) channels.
    pub fn alloc_histogram(&self, channels: usize) -> Result<DeviceHistogram> {
        if !(1..=4).contains(&channels) {
            return Err(Error::WrongLength {
                what: "histogram channels (1 to 4)".into(),
                expected: 4,
                actual: channels,
            });
        }
        Ok(DeviceHistogram { buf: self.alloc_tracked::<u32>(256 * channels)?, channels })
    }

    /// Replaces `out` with the histogram of `src` (one per channel), all on the device.
    pub fn histogram<P: Pixel>(&self, src: &impl AsDeviceView<P>, out: &mut DeviceHistogram) -> Result<()> {
        let src = src.device_view();
        validate::non_empty(src.width(), src.height())?;
        validate::countable(src.width(), src.height())?;
        if out.channels != P::CHANNELS {
            return Err(Error::WrongLength {
                what: format!("histogram channels for {}", P::NAME),
                expected: P::CHANNELS,
                actual: out.channels,
            });
        }
        self.check_context("the histogram source", src.img.buf.context())?;
        self.check_context("the histogram", out.buf.context())?;
        let mut bins = out.buf.write(&self.raw)?;
        self.raw.memset_zeros(bins.slice())?;
        self.histogram_into::<P>(&src, bins.ptr())
    }

    /// Adds the histogram of `src` to the (zeroed) bins at device address `hist`.
    pub(crate) fn histogram_into<P: Pixel>(&self, src: &DeviceView<'_, P>, hist: u64) -> Result<()> {
        let k = &self.gpu.inner.kernels;
        let l = src.layout();
        let smem = histogram_smem(P::CHANNELS);
        let (s, _read) = src.ptr(&self.raw)?;
        if l.flat {
            let func = match P::LAYOUT {
                Channels::One if super::tuning::gray_histogram_runs() => &k.histogram_c1_runs,
                Channels::One => &k.histogram_c1_flat,
                Channels::Two => &k.histogram_c2_flat,
                Channels::Three => &k.histogram_c3_flat,
                Channels::Four => &k.histogram_c4_flat,
            };
            let n = l.width as u64 * l.height as u64;
            let cfg = linear(self, func, n / 16, smem)?;
            // SAFETY: the view is contiguous and 16-byte aligned with n * CHANNELS bytes;
            // `hist` holds 256 * CHANNELS u32; shared memory as the kernel documents.
            unsafe { launch!(self, func, cfg; s, n, hist) }?;
        } else {
            let func = &k.histogram_pitched;
            let (pitch, row, height, channels) =
                (l.pitch, l.width as u64 * P::CHANNELS as u64, l.height as u64, P::CHANNELS as u32);
            let cfg = planar(self, func, row, height, smem)?;
            // SAFETY: rows 0..height of `row` bytes at `s` + y * pitch lie inside the image;
            // `hist` holds 256 * channels u32; shared memory as the kernel documents.
            unsafe { launch!(self, func, cfg; s, pitch, row, height, channels, hist) }?;
        }
        Ok(())
    }

    /// Copies device bins back, waiting for the stream.
    pub fn download_histogram(&self, h: &DeviceHistogram) -> Result<Histogram> {
        self.check_context("the histogram", h.buf.context())?;
        let bins = h.buf.read(&self.raw)?;
        let flat = self.raw.clone_dtoh(bins.slice())?;
        Ok(Histogram::from_flat(&flat, h.channels))
    }
}

impl Gpu {
    /// Blocking histogram of a host view, one per channel.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{Gray8, Image};
    /// let img = Image::from_fn(300, 200, |x, y| Gray8([(x ^ y) as u8]));
    /// assert_eq!(gpu.histogram(&img.view())?, cuimg::cpu::histogram(&img.view())?);
    /// # Ok(()) }
    /// ```
    pub fn histogram<P: Pixel>(&self, src: &ImageView<'_, P>) -> Result<Histogram> {
        validate::non_empty(src.width(), src.height())?;
        validate::countable(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut bins = s.alloc_histogram(P::CHANNELS)?;
        s.histogram(&d_src, &mut bins)?;
        s.download_histogram(&bins)
    }
}
