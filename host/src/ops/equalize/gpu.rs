//! Histogram equalization entirely on the device: histogram -> LUT -> apply, queued on one
//! stream with no copy back to the host in between.

use cudarc::driver::LaunchConfig;
use cuimg_abi::equalize::{
    EqualizeLuma, EqualizeLumaKernel, EqualizeLut, EqualizeLutKernel, LUT_BLOCK, LUT_SHARED_BYTES,
};
use cuimg_abi::histogram::{HistogramLuma, HistogramLumaKernel};
use cuimg_abi::{DevPtr, DevPtrMut};

use super::EqualizeMode;
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::ops::grayscale::GrayWeights;
use crate::ops::lut::Lut;
use crate::pixel::{Color, Gray, Pixel, color_channels};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, DeviceView, DeviceViewMut, Gpu, Scratch, Stream};
use crate::validate;

impl Stream {
    /// Histogram equalization of a gray image, bit-exact with OpenCV's `equalizeHist`; a
    /// gray + alpha image ([`La8`](crate::La8)) keeps its alpha.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{Gray8, Image};
    /// let img = Image::<Gray8>::from_bytes(4, 1, &[50, 50, 60, 70])?;
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Gray8>(4, 1)?;
    /// stream.equalize(&src, &mut dst)?;
    /// assert_eq!(stream.download(&dst)?.as_bytes(), &[0, 0, 128, 255]);
    /// # Ok(()) }
    /// ```
    pub fn equalize<P: Gray>(&self, src: &impl AsDeviceView<P>, dst: &mut impl AsDeviceViewMut<P>) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("equalize", &src, &dst)?;
        validate::countable(src.width(), src.height())?;
        self.equalize_per_channel(&src, &mut dst)
    }

    /// Equalizes a color image per channel or on its luma, as `mode` says; alpha is kept.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{EqualizeMode, Image, Rgb8};
    /// let img = Image::from_fn(64, 64, |x, y| Rgb8([x as u8, y as u8, 100]));
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Rgb8>(64, 64)?;
    /// stream.equalize_color(&src, &mut dst, EqualizeMode::Luma)?;
    /// assert_eq!(stream.download(&dst)?, cuimg::cpu::equalize_color(&img.view(), EqualizeMode::Luma)?);
    /// # Ok(()) }
    /// ```
    pub fn equalize_color<P: Color>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        mode: EqualizeMode,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("equalize", &src, &dst)?;
        validate::countable(src.width(), src.height())?;
        self.queue_equalize_color(&src, &mut dst, mode)
    }

    /// [`Stream::equalize_color`] on checked views.
    fn queue_equalize_color<P: Color>(
        &self,
        src: &DeviceView<'_, P>,
        dst: &mut DeviceViewMut<'_, P>,
        mode: EqualizeMode,
    ) -> Result<()> {
        match mode {
            EqualizeMode::PerChannel => self.equalize_per_channel(src, dst),
            EqualizeMode::Luma => self.equalize_luma(src, dst),
        }
    }

    /// Every channel through the table of its own histogram; alpha (always the last
    /// channel) through the identity.
    fn equalize_per_channel<P: Pixel>(&self, src: &DeviceView<'_, P>, dst: &mut DeviceViewMut<'_, P>) -> Result<()> {
        let mut scratch = self.scratch(P::CHANNELS)?;
        let Scratch { hist, lut } = &mut *scratch;
        let mut hist = hist.write(&self.raw)?;
        let mut lut = lut.write(&self.raw)?;
        self.raw.memset_zeros(&mut hist.slice().slice_mut(0..256 * P::CHANNELS))?;
        if let Some(a) = P::ALPHA {
            // Alpha is not a color: its table is the identity.
            self.raw.memcpy_htod(&Lut::identity().0, &mut lut.slice().slice_mut(256 * a..256 * (a + 1)))?;
        }
        let (h, l) = (hist.ptr(), lut.ptr());
        self.histogram_into::<P>(src, h)?;
        self.equalization_luts(h.as_const(), l, color_channels::<P>() as u32)?;
        self.apply_lut_at(src, dst, l.as_const())
    }

    fn equalize_luma<P: Color>(&self, src: &DeviceView<'_, P>, dst: &mut DeviceViewMut<'_, P>) -> Result<()> {
        let mut scratch = self.scratch(1)?;
        let Scratch { hist, lut } = &mut *scratch;
        let mut hist = hist.write(&self.raw)?;
        let mut lut = lut.write(&self.raw)?;
        self.raw.memset_zeros(&mut hist.slice().slice_mut(0..256))?;
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let (h, l) = (hist.ptr(), lut.ptr());
        let (width, height, channels) = (sl.width as u64, sl.height as u64, P::CHANNELS as u64);
        let rgb = P::RGB.map(|c| c as u64);
        let weights = GrayWeights::Bt601.fixed()?;

        let params = HistogramLuma { src: s, pitch: sl.pitch, width, height, channels, rgb, weights, hist: h };
        let cfg = self.planar::<HistogramLumaKernel>(width, height, cuimg_abi::histogram::shared_bytes(1))?;
        // SAFETY: pixels (x < width, y < height) at s + y*pitch + x*channels lie in the
        // source image; `h` holds 256 u32; shared memory as the kernel documents.
        unsafe { self.launch::<HistogramLumaKernel>(cfg, params) }?;
        self.equalization_luts(h.as_const(), l, 1)?;
        let params = EqualizeLuma {
            src: s,
            s_pitch: sl.pitch,
            dst: d,
            d_pitch: dl.pitch,
            width,
            height,
            channels,
            rgb,
            weights,
            lut: l.as_const(),
        };
        let cfg = self.planar::<EqualizeLumaKernel>(width, height, cuimg_abi::lut::shared_bytes(1))?;
        // SAFETY: as above for the source, and likewise for `d` with its pitch (same size,
        // checked); `l` holds 256 bytes; shared memory as the kernel documents.
        unsafe { self.launch::<EqualizeLumaKernel>(cfg, params) }
    }

    /// The `equalizeHist` tables for the first `channels` histograms at `hist`, written to
    /// `lut`: one block of 256 threads per channel.
    fn equalization_luts(&self, hist: DevPtr<u32>, lut: DevPtrMut<u8>, channels: u32) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (channels, 1, 1),
            block_dim: (LUT_BLOCK, 1, 1),
            shared_mem_bytes: LUT_SHARED_BYTES,
        };
        // SAFETY: `hist` holds 256 * channels u32 (filled from an image of at most u32::MAX
        // pixels, checked) and `lut` 256 * channels bytes; the block and shared memory the
        // kernel needs.
        unsafe { self.launch::<EqualizeLutKernel>(cfg, EqualizeLut { hist, lut }) }
    }
}

impl Gpu {
    /// Blocking equalization of a gray (or gray + alpha) host image, bit-exact with OpenCV's
    /// `equalizeHist`.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{Gray8, Image};
    /// let img = Image::from_fn(100, 100, |x, y| Gray8([(60 + (x + y) / 8) as u8]));
    /// assert_eq!(gpu.equalize(&img.view())?, cuimg::cpu::equalize(&img.view())?);
    /// # Ok(()) }
    /// ```
    pub fn equalize<P: Gray>(&self, src: &ImageView<'_, P>) -> Result<Image<P>> {
        validate::non_empty(src.width(), src.height())?;
        validate::countable(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<P>(src.width(), src.height())?;
        s.equalize_per_channel(&d_src.view(), &mut d_dst.view_mut())?;
        s.download(&d_dst)
    }

    /// Blocking equalization of a color host image (per channel or on luma).
    pub fn equalize_color<P: Color>(&self, src: &ImageView<'_, P>, mode: EqualizeMode) -> Result<Image<P>> {
        validate::non_empty(src.width(), src.height())?;
        validate::countable(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<P>(src.width(), src.height())?;
        s.queue_equalize_color(&d_src.view(), &mut d_dst.view_mut(), mode)?;
        s.download(&d_dst)
    }
}
