//! Lookup tables on the GPU.

use cuimg_abi::lut::{LutC1Flat, LutC2Flat, LutC3Flat, LutC4Flat, LutFlat, LutPitched, LutPitchedKernel, shared_bytes};
use cuimg_abi::{DevPtr, Kernel};

use super::Lut;
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::pixel::{Channels, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, DeviceView, DeviceViewMut, Gpu, Stream, Tracked};
use crate::validate;

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
        Ok(DeviceLuts { buf: self.upload_tracked(&flat)?, channels: luts.len() })
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

    /// Applies the tables at `lut` (256 bytes per channel, ordered by the caller's guard) to
    /// checked views: same size, non-empty, this context.
    pub(crate) fn apply_lut_at<P: Pixel>(
        &self,
        src: &DeviceView<'_, P>,
        dst: &mut DeviceViewMut<'_, P>,
        lut: DevPtr<u8>,
    ) -> Result<()> {
        let (sl, dl) = (src.layout(), dst.layout());
        let smem = shared_bytes(P::CHANNELS as u32);
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        if sl.flat && dl.flat {
            let params = LutFlat { src: s, dst: d, n: sl.width as u64 * sl.height as u64, lut };
            return match P::LAYOUT {
                Channels::One => self.lut_flat::<LutC1Flat>(params, smem),
                Channels::Two => self.lut_flat::<LutC2Flat>(params, smem),
                Channels::Three => self.lut_flat::<LutC3Flat>(params, smem),
                Channels::Four => self.lut_flat::<LutC4Flat>(params, smem),
            };
        }
        let row_bytes = sl.width as u64 * P::CHANNELS as u64;
        let params = LutPitched {
            src: s,
            s_pitch: sl.pitch,
            dst: d,
            d_pitch: dl.pitch,
            row_bytes,
            height: sl.height as u64,
            lut,
            channels: P::CHANNELS as u32,
        };
        let cfg = self.planar::<LutPitchedKernel>(row_bytes, sl.height as u64, smem)?;
        // SAFETY: rows 0..height of `row_bytes` bytes at src + y*s_pitch and dst + y*d_pitch
        // lie in their images (same dimensions, checked); `lut` holds 256 * channels bytes;
        // shared memory as the kernel documents.
        unsafe { self.launch::<LutPitchedKernel>(cfg, params) }
    }

    /// One of the contiguous kernels, whose channel count is `P::CHANNELS` (the caller's
    /// exhaustive match picks it).
    fn lut_flat<K: Kernel<Params = LutFlat>>(&self, params: LutFlat, smem: u32) -> Result<()> {
        let cfg = self.linear::<K>(params.n / 16, smem)?;
        // SAFETY: both views are contiguous, 16-byte aligned and hold n * CHANNELS bytes;
        // `lut` holds 256 * CHANNELS bytes; shared memory as the kernel documents.
        unsafe { self.launch::<K>(cfg, params) }
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
        super::check_count(luts, P::CHANNELS)?;
        let s = self.blocking_stream();
        let d_luts = s.upload_luts(luts)?;
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<P>(src.width(), src.height())?;
        let tables = d_luts.buf.read(&s.raw)?;
        s.apply_lut_at(&d_src.view(), &mut d_dst.view_mut(), tables.ptr())?;
        drop(tables);
        s.download(&d_dst)
    }
}
