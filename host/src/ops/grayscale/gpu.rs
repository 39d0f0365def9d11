//! Grayscale and "black and white" on the GPU: the launches, and the blocking calls.

use cuimg_abi::grayscale::{
    BlackWhiteBatch, BlackWhiteBatchKernel, GrayBatch, GrayC3Batch, GrayC3Flat, GrayC4Batch, GrayC4Flat, GrayFlat,
    GrayPlanes, GrayPlanesKernel,
};
use cuimg_abi::{BLOCK, DevPtr, DevPtrMut};

use super::{Fixed, GrayWeights, in_byte_order};
use crate::error::Result;
use crate::image::{Image, ImageView, PlanarView};
use crate::pixel::{Color, ColorChannels, Gray8};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, Chunk, DeviceBatch, DeviceView, DeviceViewMut, Gpu, Stream};
use crate::validate;

/// Where the general kernel writes: one plane (gray) or three (black and white), plus
/// alpha.
struct Outputs {
    dst: [DevPtrMut<u8>; 3],
    alpha: DevPtrMut<u8>,
    pitch: u64,
    step: u64,
}

impl Stream {
    /// Luma of every pixel: `dst = weights(src)`, same size. Any pitch or region.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
        self.queue_grayscale(&src, &mut dst, weights.fixed()?)
    }

    /// [`Stream::grayscale`] on checked views: same size, non-empty, this context.
    pub(crate) fn queue_grayscale<P: Color>(
        &self,
        src: &DeviceView<'_, P>,
        dst: &mut DeviceViewMut<'_, Gray8>,
        w: Fixed,
    ) -> Result<()> {
        let (sl, dl) = (src.layout(), dst.layout());
        if sl.flat && dl.flat {
            let n = sl.width as u64 * sl.height as u64;
            let (s, _read) = src.ptr(&self.raw)?;
            let (d, _write) = dst.ptr_mut(&self.raw)?;
            let params = GrayFlat { src: s, dst: d, n, weights: in_byte_order(w, P::RGB) };
            return match P::COLOR_LAYOUT {
                ColorChannels::Three => {
                    let cfg = self.linear::<GrayC3Flat>(n / 16, 0)?;
                    // SAFETY: both views are contiguous and 16-byte aligned (layout().flat),
                    // `s` holds 3n bytes and `d` n bytes (same dimensions, checked); 1-D.
                    unsafe { self.launch::<GrayC3Flat>(cfg, params) }
                }
                ColorChannels::Four => {
                    let cfg = self.linear::<GrayC4Flat>(n / 16, 0)?;
                    // SAFETY: as above, with 4n source bytes.
                    unsafe { self.launch::<GrayC4Flat>(cfg, params) }
                }
            };
        }
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let out =
            Outputs { dst: [d, DevPtrMut::NULL, DevPtrMut::NULL], alpha: DevPtrMut::NULL, pitch: dl.pitch, step: 1 };
        self.gray_general::<P>(src, out, w)
    }

    /// Luma written into red, green and blue of `dst` (same format and size); alpha copied.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
        self.queue_black_and_white(&src, &mut dst, weights.fixed()?)
    }

    /// [`Stream::black_and_white`] on checked views.
    pub(crate) fn queue_black_and_white<P: Color>(
        &self,
        src: &DeviceView<'_, P>,
        dst: &mut DeviceViewMut<'_, P>,
        w: Fixed,
    ) -> Result<()> {
        let dl = dst.layout();
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let dst = P::RGB.map(|c| d.offset(c as u64));
        let alpha = P::ALPHA.map_or(DevPtrMut::NULL, |a| d.offset(a as u64));
        let out = Outputs { dst, alpha, pitch: dl.pitch, step: P::CHANNELS as u64 };
        self.gray_general::<P>(src, out, w)
    }

    /// Luma of a planar (CHW) image held as one gray image of `3 * height` rows: the red
    /// plane, then green, then blue.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
        let first = planes.roi(crate::Rect::new(0, 0, planes.width(), planes.height() / 3))?;
        self.check_pair("planar grayscale", &first, &dst)?;
        self.queue_grayscale_planar(&planes, &mut dst, weights.fixed()?)
    }

    /// [`Stream::grayscale_planar`] on checked views (`planes` has `3 * height` rows).
    fn queue_grayscale_planar(
        &self,
        planes: &DeviceView<'_, Gray8>,
        dst: &mut DeviceViewMut<'_, Gray8>,
        w: Fixed,
    ) -> Result<()> {
        let h = planes.height() / 3;
        let (sl, dl) = (planes.layout(), dst.layout());
        let plane_bytes = h as u64 * sl.pitch;
        let (s, _read) = planes.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let src = [s, s.offset(plane_bytes), s.offset(2 * plane_bytes)];
        let out =
            Outputs { dst: [d, DevPtrMut::NULL, DevPtrMut::NULL], alpha: DevPtrMut::NULL, pitch: dl.pitch, step: 1 };
        self.launch_gray_planes(src, DevPtr::NULL, sl.pitch, 1, out, (sl.width, h), w)
    }

    fn gray_general<P: Color>(&self, src: &DeviceView<'_, P>, out: Outputs, w: Fixed) -> Result<()> {
        let sl = src.layout();
        let (s, _read) = src.ptr(&self.raw)?;
        let rgb = P::RGB.map(|c| s.offset(c as u64));
        let s_alpha = match (out.alpha.is_null(), P::ALPHA) {
            (false, Some(a)) => s.offset(a as u64),
            _ => DevPtr::NULL,
        };
        self.launch_gray_planes(rgb, s_alpha, sl.pitch, P::CHANNELS as u64, out, (sl.width, sl.height), w)
    }

    #[allow(clippy::too_many_arguments)]
    fn launch_gray_planes(
        &self,
        src: [DevPtr<u8>; 3],
        s_alpha: DevPtr<u8>,
        s_pitch: u64,
        s_step: u64,
        out: Outputs,
        (width, height): (u32, u32),
        weights: Fixed,
    ) -> Result<()> {
        let (width, height) = (width as u64, height as u64);
        let cfg = self.planar::<GrayPlanesKernel>(width, height, 0)?;
        let Outputs { dst, alpha: d_alpha, pitch: d_pitch, step: d_step } = out;
        let params =
            GrayPlanes { src, s_alpha, s_pitch, s_step, dst, d_alpha, d_pitch, d_step, width, height, weights };
        // SAFETY: every source address src[c] + y*s_pitch + x*s_step and destination address
        // dst[c] + y*d_pitch + x*d_step with x < width, y < height lies in a view checked to
        // be inside its image, on this stream's context; dst[1]/dst[2] and the alpha pair are
        // both set or both null; the callers' guards keep the buffers alive and ordered.
        unsafe { self.launch::<GrayPlanesKernel>(cfg, params) }
    }
}

impl Gpu {
    /// Blocking grayscale of a host view: upload, kernel, download.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{GrayWeights, Image, Rgb8};
    /// let img = Image::<Rgb8>::from_fn(33, 7, |x, y| Rgb8([x as u8, y as u8, 9]));
    /// let gray = gpu.grayscale(&img.view(), GrayWeights::Bt601)?;
    /// assert_eq!(gray, cuimg::cpu::grayscale(&img.view(), GrayWeights::Bt601)?);
    /// # Ok(()) }
    /// ```
    pub fn grayscale<P: Color>(&self, src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<Gray8>> {
        validate::non_empty(src.width(), src.height())?;
        let w = weights.fixed()?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<Gray8>(src.width(), src.height())?;
        s.queue_grayscale(&d_src.view(), &mut d_dst.view_mut(), w)?;
        s.download(&d_dst)
    }

    /// Blocking "black and white" (luma into red, green and blue; alpha kept).
    pub fn black_and_white<P: Color>(&self, src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<P>> {
        validate::non_empty(src.width(), src.height())?;
        let w = weights.fixed()?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<P>(src.width(), src.height())?;
        s.queue_black_and_white(&d_src.view(), &mut d_dst.view_mut(), w)?;
        s.download(&d_dst)
    }

    /// Blocking grayscale of a planar (CHW) host image.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// let chw = [255, 0, /* G */ 0, 255, /* B */ 0, 0];
    /// let v = cuimg::PlanarView::from_chw(&chw, 2, 1)?;
    /// assert_eq!(gpu.grayscale_planar(&v, cuimg::GrayWeights::Bt601)?.as_bytes(), &[76, 150]);
    /// # Ok(()) }
    /// ```
    pub fn grayscale_planar(&self, src: &PlanarView<'_>, weights: GrayWeights) -> Result<Image<Gray8>> {
        validate::non_empty(src.width(), src.height())?;
        let w = weights.fixed()?;
        let (width, h) = (src.width(), src.height());
        if h > u32::MAX / 3 {
            return Err(crate::Error::TooLarge {
                what: "planar image height".into(),
                size: h as u64,
                limit: (u32::MAX / 3) as u64,
            });
        }
        let s = self.blocking_stream();
        let mut d_src = s.alloc_for_output::<Gray8>(width, 3 * h)?;
        for c in 0..3 {
            let rows = crate::Rect::new(0, c as u32 * h, width, h);
            s.upload_rows(&src.plane_view(c), &mut d_src, rows)?;
        }
        let mut d_dst = s.alloc_for_output::<Gray8>(width, h)?;
        s.queue_grayscale_planar(&d_src.view(), &mut d_dst.view_mut(), w)?;
        s.download(&d_dst)
    }
}

impl Stream {
    /// Luma of every image of a batch (any sizes), in one launch per 65,535 images.
    pub fn grayscale_batch<P: Color>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<Gray8>,
        weights: GrayWeights,
    ) -> Result<()> {
        self.check_batch_pair("grayscale", src, dst)?;
        self.queue_grayscale_batch(src, dst, weights.fixed()?)
    }

    /// [`Stream::grayscale_batch`] on checked batches.
    pub(crate) fn queue_grayscale_batch<P: Color>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<Gray8>,
        w: Fixed,
    ) -> Result<()> {
        let from = src.read(&self.raw)?;
        let to_table = dst.table.read(&self.raw)?;
        let _to = dst.buf.write(&self.raw)?;
        let weights = in_byte_order(w, P::RGB);
        for chunk in Chunk::all(src.len()) {
            let params = GrayBatch { src: chunk.table(from.table.ptr()), dst: chunk.table(to_table.ptr()), weights };
            let per_image = (src.max_pixels() / 16, 1);
            match P::COLOR_LAYOUT {
                ColorChannels::Three => {
                    let cfg = self.batch_config::<GrayC3Batch>(per_image, (BLOCK, 1), chunk.count, 0)?;
                    // SAFETY: both tables hold `count` entries from `start` on, of equal
                    // sizes (checked), pointing at packed, 256-byte aligned images of 3 and 1
                    // bytes per pixel inside the guarded allocations; 1-D per image.
                    unsafe { self.launch::<GrayC3Batch>(cfg, params) }?;
                }
                ColorChannels::Four => {
                    let cfg = self.batch_config::<GrayC4Batch>(per_image, (BLOCK, 1), chunk.count, 0)?;
                    // SAFETY: as above, with 4 source bytes per pixel.
                    unsafe { self.launch::<GrayC4Batch>(cfg, params) }?;
                }
            }
        }
        Ok(())
    }

    /// "Black and white" of every image of a batch: luma into red, green and blue; alpha kept.
    pub fn black_and_white_batch<P: Color>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        weights: GrayWeights,
    ) -> Result<()> {
        self.check_batch_pair("black-and-white", src, dst)?;
        self.queue_black_and_white_batch(src, dst, weights.fixed()?)
    }

    fn queue_black_and_white_batch<P: Color>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        weights: Fixed,
    ) -> Result<()> {
        let from = src.read(&self.raw)?;
        let to_table = dst.table.read(&self.raw)?;
        let _to = dst.buf.write(&self.raw)?;
        for chunk in Chunk::all(src.len()) {
            let params = BlackWhiteBatch {
                src: chunk.table(from.table.ptr()),
                dst: chunk.table(to_table.ptr()),
                channels: P::CHANNELS as u64,
                rgb: P::RGB.map(|c| c as u64),
                alpha: P::ALPHA.map_or(u64::MAX, |a| a as u64),
                weights,
            };
            let cfg = self.batch_config::<BlackWhiteBatchKernel>(src.max_extent(), (32, BLOCK / 32), chunk.count, 0)?;
            // SAFETY: both tables hold `count` entries of equal sizes (checked) pointing at
            // packed images of `channels` bytes per pixel inside the guarded allocations;
            // the offsets are the format's; 2-D per image.
            unsafe { self.launch::<BlackWhiteBatchKernel>(cfg, params) }?;
        }
        Ok(())
    }
}

impl Gpu {
    /// Blocking grayscale of many host images (any sizes): one upload, one launch, one
    /// download for all of them.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{GrayWeights, Image, Rgb8};
    /// let a = Image::<Rgb8>::filled(33, 7, 90);
    /// let b = Image::<Rgb8>::from_fn(5, 9, |x, y| Rgb8([x as u8, y as u8, 7]));
    /// let gray = gpu.grayscale_batch(&[a.view(), b.view()], GrayWeights::Bt601)?;
    /// assert_eq!(gray[1], cuimg::cpu::grayscale(&b.view(), GrayWeights::Bt601)?);
    /// # Ok(()) }
    /// ```
    pub fn grayscale_batch<P: Color>(
        &self,
        images: &[ImageView<'_, P>],
        weights: GrayWeights,
    ) -> Result<Vec<Image<Gray8>>> {
        let w = weights.fixed()?;
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<Gray8>(&src.sizes())?;
        s.queue_grayscale_batch(&src, &mut dst, w)?;
        s.download_batch(&dst)
    }

    /// Blocking "black and white" of many host images.
    pub fn black_and_white_batch<P: Color>(
        &self,
        images: &[ImageView<'_, P>],
        weights: GrayWeights,
    ) -> Result<Vec<Image<P>>> {
        let w = weights.fixed()?;
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<P>(&src.sizes())?;
        s.queue_black_and_white_batch(&src, &mut dst, w)?;
        s.download_batch(&dst)
    }
}
