//! Grayscale and "black and white" on the GPU.

use super::context::Gpu;
use super::launch::{launch, linear, planar};
use super::memory::{AsDeviceView, AsDeviceViewMut, DeviceView};
use super::stream::Stream;
use crate::error::Result;
use crate::image::{Image, ImageView, PlanarView};
use crate::ops::weights::{Fixed, GrayWeights};
use crate::pixel::{Color, ColorChannels, Gray8};
use crate::validate;

/// The weights in byte order (byte 0, 1, 2 of the pixel), for a format with red, green and
/// blue at `rgb`.
fn byte_order(w: Fixed, rgb: [usize; 3]) -> [i32; 3] {
    let mut out = [0; 3];
    for (at, weight) in w.for_offsets(rgb) {
        out[at] = weight;
    }
    out
}

/// Where the general kernel writes: one plane (gray) or three (black and white), plus
/// alpha.
struct Outputs {
    d: [u64; 3],
    d_alpha: u64,
    pitch: u64,
    step: u64,
}

impl Stream {
    /// Luma of every pixel: `dst = weights(src)`, same size. Any pitch or region.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{Bgra8, Gray8, GrayWeights, Image, Rect};
    /// let img = Image::<Bgra8>::filled(100, 80, 50);
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut gray = stream.alloc::<Gray8>(40, 30)?;
    /// stream.grayscale(&src.roi(Rect::new(10, 10, 40, 30))?, &mut gray, GrayWeights::Bt709)?;
    /// assert!(stream.download(&gray)?.pixels().iter().all(|p| p.0 == [50]));
    /// # Ok(()) }
    /// ```
    pub fn grayscale<P: Color>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<Gray8>,
        weights: GrayWeights,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("grayscale", &src, &dst)?;
        let w = weights.fixed()?;
        let (sl, dl) = (src.layout(), dst.layout());
        if sl.flat && dl.flat {
            let k = &self.gpu.inner.kernels;
            let func = match P::COLOR_LAYOUT {
                ColorChannels::Three => &k.gray_c3_flat,
                ColorChannels::Four => &k.gray_c4_flat,
            };
            let n = sl.width as u64 * sl.height as u64;
            let cfg = linear(self, func, n / 16, 0)?;
            let [w0, w1, w2] = byte_order(w, P::RGB);
            let (bias, shift) = (w.bias, w.shift);
            let (s, _read) = src.ptr(&self.raw)?;
            let (d, _write) = dst.ptr_mut(&self.raw)?;
            // SAFETY: both views are contiguous and 16-byte aligned (layout().flat), `s` holds
            // n * CHANNELS bytes and `d` n bytes (same dimensions, checked), 1-D launch.
            unsafe { launch!(self, func, cfg; s, d, n, w0, w1, w2, bias, shift) }?;
            return Ok(());
        }
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let out = Outputs { d: [d, 0, 0], d_alpha: 0, pitch: dl.pitch, step: 1 };
        self.gray_general::<P>(&src, out, w)
    }

    /// Luma written into red, green and blue of `dst` (same format and size); alpha copied.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{GrayWeights, Image, Rgba8};
    /// let img = Image::from_pixels(1, 1, vec![Rgba8([255, 0, 0, 7])])?;
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut bw = stream.alloc::<Rgba8>(1, 1)?;
    /// stream.black_and_white(&src, &mut bw, GrayWeights::Bt601)?;
    /// assert_eq!(stream.download(&bw)?.get(0, 0), Rgba8([76, 76, 76, 7]));
    /// # Ok(()) }
    /// ```
    pub fn black_and_white<P: Color>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        weights: GrayWeights,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("black-and-white", &src, &dst)?;
        let w = weights.fixed()?;
        let dl = dst.layout();
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let [r, g, b] = P::RGB.map(|c| d + c as u64);
        let d_alpha = P::ALPHA.map_or(0, |a| d + a as u64);
        let out = Outputs { d: [r, g, b], d_alpha, pitch: dl.pitch, step: P::CHANNELS as u64 };
        self.gray_general::<P>(&src, out, w)
    }

    /// Luma of a planar (CHW) image held as one gray image of `3 * height` rows: the red
    /// plane, then green, then blue.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{Gray8, GrayWeights, Image};
    /// let chw = Image::<Gray8>::from_bytes(2, 3, &[255, 0, 0, 255, 0, 0])?; // 2x1, planes R G B
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&chw.view())?;
    /// let mut gray = stream.alloc::<Gray8>(2, 1)?;
    /// stream.grayscale_planar(&src, &mut gray, GrayWeights::Bt601)?;
    /// assert_eq!(stream.download(&gray)?.as_bytes(), &[76, 150]);
    /// # Ok(()) }
    /// ```
    pub fn grayscale_planar(
        &self,
        planes: &impl AsDeviceView<Gray8>,
        dst: &mut impl AsDeviceViewMut<Gray8>,
        weights: GrayWeights,
    ) -> Result<()> {
        let (planes, mut dst) = (planes.device_view(), dst.device_view_mut());
        if planes.height() % 3 != 0 {
            return Err(crate::Error::WrongLength {
                what: "rows of a planar image (three planes)".into(),
                expected: (planes.height() as usize).div_ceil(3) * 3,
                actual: planes.height() as usize,
            });
        }
        let h = planes.height() / 3;
        let first = planes.roi(crate::Rect::new(0, 0, planes.width(), h))?;
        self.check_pair("planar grayscale", &first, &dst)?;
        let w = weights.fixed()?;
        let (sl, dl) = (planes.layout(), dst.layout());
        let plane_bytes = h as u64 * sl.pitch;
        let (s, _read) = planes.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let src = [s, s + plane_bytes, s + 2 * plane_bytes];
        self.launch_gray_planes(
            src,
            0,
            sl.pitch,
            1,
            Outputs { d: [d, 0, 0], d_alpha: 0, pitch: dl.pitch, step: 1 },
            (sl.width, h),
            w,
        )
    }

    fn gray_general<P: Color>(&self, src: &DeviceView<'_, P>, out: Outputs, w: Fixed) -> Result<()> {
        let sl = src.layout();
        let (s, _read) = src.ptr(&self.raw)?;
        let rgb = P::RGB.map(|c| s + c as u64);
        let s_alpha = if out.d_alpha != 0 { P::ALPHA.map_or(0, |a| s + a as u64) } else { 0 };
        self.launch_gray_planes(rgb, s_alpha, sl.pitch, P::CHANNELS as u64, out, (sl.width, sl.height), w)
    }

    #[allow(clippy::too_many_arguments)]
    fn launch_gray_planes(
        &self,
        s: [u64; 3],
        s_alpha: u64,
        s_pitch: u64,
        s_step: u64,
        out: Outputs,
        size: (u32, u32),
        w: Fixed,
    ) -> Result<()> {
        let func = &self.gpu.inner.kernels.gray_planes;
        let (width, height) = (size.0 as u64, size.1 as u64);
        let cfg = planar(self, func, width, height, 0)?;
        let [s_r, s_g, s_b] = s;
        let [d0, d1, d2] = out.d;
        let (d_alpha, d_pitch, d_step) = (out.d_alpha, out.pitch, out.step);
        let (wr, wg, wb, bias, shift) = (w.r, w.g, w.b, w.bias, w.shift);
        // SAFETY: every source address s_c + y*s_pitch + x*s_step and destination address
        // d_c + y*d_pitch + x*d_step with x < width, y < height lies in a view checked to be
        // inside its image, on this stream's context; d1/d2 and the alpha pair are both set
        // or both 0; the guards of the callers keep the buffers alive and ordered.
        unsafe {
            launch!(self, func, cfg; s_r, s_g, s_b, s_alpha, s_pitch, s_step, d0, d1, d2, d_alpha, d_pitch, d_step, width, height, wr, wg, wb, bias, shift)
        }?;
        Ok(())
    }
}

impl Gpu {
    /// Blocking grayscale of a host view: upload, kernel, download.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// use cuimg::{GrayWeights, Image, Rgb8};
    /// let img = Image::<Rgb8>::from_fn(33, 7, |x, y| Rgb8([x as u8, y as u8, 9]));
    /// let gray = gpu.grayscale(&img.view(), GrayWeights::Bt601)?;
    /// assert_eq!(gray, cuimg::cpu::grayscale(&img.view(), GrayWeights::Bt601)?);
    /// # Ok(()) }
    /// ```
    pub fn grayscale<P: Color>(&self, src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<Gray8>> {
        validate::non_empty(src.width(), src.height())?;
        weights.fixed()?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc::<Gray8>(src.width(), src.height())?;
        s.grayscale(&d_src, &mut d_dst, weights)?;
        s.download(&d_dst)
    }

    /// Blocking "black and white" (luma into red, green and blue; alpha kept).
    pub fn black_and_white<P: Color>(&self, src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<P>> {
        validate::non_empty(src.width(), src.height())?;
        weights.fixed()?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc::<P>(src.width(), src.height())?;
        s.black_and_white(&d_src, &mut d_dst, weights)?;
        s.download(&d_dst)
    }

    /// Blocking grayscale of a planar (CHW) host image.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// let chw = [255, 0, /* G */ 0, 255, /* B */ 0, 0];
    /// let v = cuimg::PlanarView::from_chw(&chw, 2, 1)?;
    /// assert_eq!(gpu.grayscale_planar(&v, cuimg::GrayWeights::Bt601)?.as_bytes(), &[76, 150]);
    /// # Ok(()) }
    /// ```
    pub fn grayscale_planar(&self, src: &PlanarView<'_>, weights: GrayWeights) -> Result<Image<Gray8>> {
        validate::non_empty(src.width(), src.height())?;
        weights.fixed()?;
        let (w, h) = (src.width(), src.height());
        if h > u32::MAX / 3 {
            return Err(crate::Error::TooLarge {
                what: "planar image height".into(),
                size: h as u64,
                limit: (u32::MAX / 3) as u64,
            });
        }
        let mut stacked = Image::<Gray8>::new(w, 3 * h);
        for c in 0..3 {
            let rows = crate::Rect::new(0, c as u32 * h, w, h);
            stacked.view_mut().roi(rows)?.copy_from(&src.plane_view(c))?;
        }
        let s = self.blocking_stream();
        let d_src = s.upload(&stacked.view())?;
        let mut d_dst = s.alloc::<Gray8>(w, h)?;
        s.grayscale_planar(&d_src, &mut d_dst, weights)?;
        s.download(&d_dst)
    }
}
