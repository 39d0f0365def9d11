//! Lookup tables on the GPU.

use super::context::Gpu;
use super::launch::{launch, linear, planar};
use super::memory::{AsDeviceView, AsDeviceViewMut, DeviceView, DeviceViewMut};
use super::stream::Stream;
use super::tracked::Tracked;
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::ops::lut::Lut;
use crate::pixel::{Channels, Pixel};
use crate::validate;

/// Shared bytes per channel of the kernels' replicated tables (`kernels-gpu/src/lut.rs`).
pub(crate) const TABLE_BYTES: u32 = 8192;

/// Lookup tables in device memory, one per channel.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
/// use cuimg::{Image, Lut, Rgb8};
/// let stream = gpu.stream()?;
/// let luts = stream.upload_lut::<Rgb8>(&Lut::invert())?;
/// assert_eq!(luts.channels(), 3);
/// let src = stream.upload(&Image::<Rgb8>::filled(5, 5, 10).view())?;
/// let mut dst = stream.alloc::<Rgb8>(5, 5)?;
/// stream.apply_lut(&src, &mut dst, &luts)?;
/// assert!(stream.download(&dst)?.as_bytes().iter().all(|&b| b == 245));
/// # Ok(()) }
/// ```
pub struct DeviceLuts {
    pub(crate) buf: Tracked<u8>,
    channels: usize,
}

impl std::fmt::Debug for DeviceLuts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceLuts({} channels)", self.channels)
    }
}

impl DeviceLuts {
    pub fn channels(&self) -> usize {
        self.channels
    }
}

impl Stream {
    /// One table per channel (1 to 4 of them), copied to the device.
    pub fn upload_luts(&self, luts: &[Lut]) -> Result<DeviceLuts> {
        if !(1..=4).contains(&luts.len()) {
            return Err(Error::WrongLength { what: "lookup tables (1 to 4)".into(), expected: 4, actual: luts.len() });
        }
        let flat: Vec<u8> = luts.iter().flat_map(|l| l.0).collect();
        let mut buf = self.alloc_tracked::<u8>(flat.len())?;
        self.raw.memcpy_htod(&flat, buf.write(&self.raw)?.slice())?;
        Ok(DeviceLuts { buf, channels: luts.len() })
    }

    /// The same table for every channel of `P`.
    pub fn upload_lut<P: Pixel>(&self, lut: &Lut) -> Result<DeviceLuts> {
        self.upload_luts(&vec![*lut; P::CHANNELS])
    }

    /// `dst = table[c](src)` for each channel `c`; same size, any pitch or region.
    pub fn apply_lut<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        luts: &DeviceLuts,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("LUT", &src, &dst)?;
        if luts.channels != P::CHANNELS {
            return Err(Error::WrongLength {
                what: format!("lookup tables for {}", P::NAME),
                expected: P::CHANNELS,
                actual: luts.channels,
            });
        }
        self.check_context("the lookup tables", luts.buf.context())?;
        let tables = luts.buf.read(&self.raw)?;
        self.apply_lut_at(&src, &mut dst, tables.ptr())
    }

    /// Applies the tables at device address `lut` (256 bytes per channel).
    pub(crate) fn apply_lut_at<P: Pixel>(
        &self,
        src: &DeviceView<'_, P>,
        dst: &mut DeviceViewMut<'_, P>,
        lut: u64,
    ) -> Result<()> {
        let k = &self.gpu.inner.kernels;
        let (sl, dl) = (src.layout(), dst.layout());
        let smem = TABLE_BYTES * P::CHANNELS as u32;
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        if sl.flat && dl.flat {
            let func = match P::LAYOUT {
                Channels::One => &k.lut_c1_flat,
                Channels::Two => &k.lut_c2_flat,
                Channels::Three => &k.lut_c3_flat,
                Channels::Four => &k.lut_c4_flat,
            };
            let n = sl.width as u64 * sl.height as u64;
            let cfg = linear(self, func, n / 16, smem)?;
            // SAFETY: both views are contiguous, 16-byte aligned and hold n * CHANNELS bytes;
            // `lut` holds 256 * CHANNELS bytes; shared memory as the kernel documents.
            unsafe { launch!(self, func, cfg; s, d, n, lut) }?;
        } else {
            let func = &k.lut_pitched;
            let (s_pitch, d_pitch) = (sl.pitch, dl.pitch);
            let (row, height, channels) = (sl.width as u64 * P::CHANNELS as u64, sl.height as u64, P::CHANNELS as u32);
            let cfg = planar(self, func, row, height, smem)?;
            // SAFETY: rows 0..height of `row` bytes at s + y*s_pitch and d + y*d_pitch lie in
            // their images (same dimensions, checked); `lut` holds 256 * channels bytes.
            unsafe { launch!(self, func, cfg; s, s_pitch, d, d_pitch, row, height, channels, lut) }?;
        }
        Ok(())
    }
}

impl Gpu {
    /// Blocking: the same table on every channel.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{Gray8, Image, Lut};
    /// let img = Image::from_fn(17, 5, |x, _| Gray8([x as u8 * 10]));
    /// let out = gpu.apply_lut(&img.view(), &Lut::gamma(2.2))?;
    /// assert_eq!(out, cuimg::cpu::apply_lut(&img.view(), &Lut::gamma(2.2))?);
    /// # Ok(()) }
    /// ```
    pub fn apply_lut<P: Pixel>(&self, src: &ImageView<'_, P>, lut: &Lut) -> Result<Image<P>> {
        self.apply_luts(src, &vec![*lut; P::CHANNELS])
    }

    /// Blocking: table `c` on channel `c`, one per channel.
    pub fn apply_luts<P: Pixel>(&self, src: &ImageView<'_, P>, luts: &[Lut]) -> Result<Image<P>> {
        validate::non_empty(src.width(), src.height())?;
        validate::luts(luts, P::CHANNELS)?;
        let s = self.blocking_stream();
        let d_luts = s.upload_luts(luts)?;
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc::<P>(src.width(), src.height())?;
        s.apply_lut(&d_src, &mut d_dst, &d_luts)?;
        s.download(&d_dst)
    }
}
