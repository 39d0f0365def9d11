//! Histogram equalization entirely on the device: histogram -> LUT -> apply, queued on one
//! stream with no copy back to the host in between.

use cudarc::driver::LaunchConfig;
use cuimg_abi::equalize::{
    EqualizeHistTable, EqualizeHistTableKernel, EqualizeLuma, EqualizeLumaBatch, EqualizeLumaBatchKernel,
    EqualizeLumaC3Flat, EqualizeLumaC4Flat, EqualizeLumaFlat, EqualizeLumaKernel, EqualizeLut, EqualizeLutKernel,
    LUT_BLOCK, LUT_SHARED_BYTES,
};
use cuimg_abi::grayscale_histogram::{LumaHistogramC3Flat, LumaHistogramC4Flat, LumaHistogramFlat};
use cuimg_abi::histogram::{HistogramLuma, HistogramLumaBatch, HistogramLumaBatchKernel, HistogramLumaKernel};
use cuimg_abi::{BLOCK, DevPtr, DevPtrMut};

use super::EqualizeMode;
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::ops::grayscale::{GrayWeights, in_byte_order};
use crate::pixel::{Color, ColorChannels, Gray, Pixel, color_channels};
use crate::runtime::{
    AsDeviceView, AsDeviceViewMut, Chunk, DeviceBatch, DeviceView, DeviceViewMut, Gpu, Scratch, Stream, knobs,
};
use crate::validate;

impl Stream {
    /// Histogram equalization of a gray image, bit-exact with OpenCV's `equalizeHist`; a
    /// gray + alpha image ([`La8`](crate::La8)) keeps its alpha.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
        let tables = self.equalization_tables(src)?;
        self.apply_lut_at(src, dst, tables, apply_order())
    }

    /// The equalization tables of `src`, one per channel (alpha, the last channel where there
    /// is one, is not a color: the kernel writes the identity for it), in this stream's
    /// scratch. The address is for work queued next on this stream (the stream orders it
    /// after the tables' kernel; the next use of the scratch overwrites them).
    fn equalization_tables<P: Pixel>(&self, src: &DeviceView<'_, P>) -> Result<DevPtr<u8>> {
        let mut scratch = self.scratch(P::CHANNELS)?;
        let Scratch { hist, lut } = &mut *scratch;
        let mut hist = hist.write(&self.raw)?;
        let mut lut = lut.write(&self.raw)?;
        if P::CHANNELS == 1 && src.layout().flat && knobs::equalize_one_launch() {
            // One launch: the histogram, and the table in the block that finishes last
            // (the count of finished blocks in the word after the bins, zeroed with them).
            self.raw.memset_zeros(&mut hist.slice().slice_mut(0..257))?;
            let (h, l) = (hist.ptr(), lut.ptr());
            let layout = src.layout();
            let n = layout.width as u64 * layout.height as u64;
            let (s, _read) = src.ptr(&self.raw)?;
            let params = EqualizeHistTable { src: s, n, hist: h, lut: l };
            let cfg = self.linear::<EqualizeHistTableKernel>(n / 16, cuimg_abi::histogram::shared_bytes(1))?;
            // SAFETY: the view is contiguous and 16-byte aligned with n bytes (one channel),
            // n <= u32::MAX (`countable`, checked by every caller); `h` holds 257 u32, zeroed
            // above on this stream, `l` 256 bytes; 1-D blocks of 256 with the histogram's
            // shared memory, as the kernel documents.
            unsafe { self.launch::<EqualizeHistTableKernel>(cfg, params) }?;
            return Ok(l.as_const());
        }
        self.raw.memset_zeros(&mut hist.slice().slice_mut(0..256 * P::CHANNELS))?;
        let (h, l) = (hist.ptr(), lut.ptr());
        self.histogram_into::<P>(src, h)?;
        self.equalization_luts(h.as_const(), l, 1, P::CHANNELS as u32, color_channels::<P>() as u32)?;
        Ok(l.as_const())
    }

    /// Equalizes a gray (or gray + alpha) image in place: its histogram, then its tables
    /// applied over the same bytes (the second step of a chain such as grayscale then
    /// equalize, with no second image).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Gray8, Image};
    /// let img = Image::<Gray8>::from_bytes(4, 1, &[50, 50, 60, 70])?;
    /// let stream = gpu.stream()?;
    /// let mut dev = stream.upload(&img.view())?;
    /// stream.equalize_in_place(&mut dev)?;
    /// assert_eq!(stream.download(&dev)?.as_bytes(), &[0, 0, 128, 255]);
    /// # Ok(()) }
    /// ```
    pub fn equalize_in_place<P: Gray>(&self, img: &mut impl AsDeviceViewMut<P>) -> Result<()> {
        let mut img = img.device_view_mut();
        validate::non_empty(img.width(), img.height())?;
        validate::countable(img.width(), img.height())?;
        self.check_context("the equalize image", img.img.buf.context())?;
        let tables = self.equalization_tables(&img.as_view())?;
        self.apply_lut_in_place_at(&mut img, tables, apply_order())
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

        let smem = cuimg_abi::histogram::shared_bytes(1);
        if sl.flat {
            // Whole images: the luma histogram in 16-pixel vector groups
            // (`grayscale_histogram`'s kernel without the gray writes).
            let n = width * height;
            let params = LumaHistogramFlat { src: s, n, weights: in_byte_order(weights, P::RGB), hist: h };
            match P::COLOR_LAYOUT {
                ColorChannels::Three => {
                    let cfg = self.linear::<LumaHistogramC3Flat>(n / 16, smem)?;
                    // SAFETY: the source is contiguous and 16-byte aligned (layout().flat)
                    // and holds 3n bytes; `h` holds 256 u32; 1-D with the shared memory the
                    // kernel documents.
                    unsafe { self.launch::<LumaHistogramC3Flat>(cfg, params) }?;
                }
                ColorChannels::Four => {
                    let cfg = self.linear::<LumaHistogramC4Flat>(n / 16, smem)?;
                    // SAFETY: as above, with 4n bytes.
                    unsafe { self.launch::<LumaHistogramC4Flat>(cfg, params) }?;
                }
            }
        } else {
            let params = HistogramLuma { src: s, pitch: sl.pitch, width, height, channels, rgb, weights, hist: h };
            let cfg = self.planar::<HistogramLumaKernel>(width, height, smem)?;
            // SAFETY: pixels (x < width, y < height) at s + y*pitch + x*channels lie in the
            // source image; `h` holds 256 u32; shared memory as the kernel documents.
            unsafe { self.launch::<HistogramLumaKernel>(cfg, params) }?;
        }
        self.equalization_luts(h.as_const(), l, 1, 1, 1)?;
        let smem = cuimg_abi::lut::shared_bytes(1);
        if sl.flat && dl.flat {
            // Whole images: 16 pixels per step in 16-byte vectors.
            let n = width * height;
            let params =
                EqualizeLumaFlat { src: s, dst: d, n, weights: in_byte_order(weights, P::RGB), lut: l.as_const() };
            return match P::COLOR_LAYOUT {
                ColorChannels::Three => {
                    let cfg = self.linear::<EqualizeLumaC3Flat>(n / 16, smem)?;
                    // SAFETY: both images are contiguous and 16-byte aligned (layout().flat)
                    // with 3n bytes each (same size, checked); `l` holds 256 bytes; 1-D with
                    // the shared memory the kernel documents.
                    unsafe { self.launch::<EqualizeLumaC3Flat>(cfg, params) }
                }
                ColorChannels::Four => {
                    let cfg = self.linear::<EqualizeLumaC4Flat>(n / 16, smem)?;
                    // SAFETY: as above, with 4n bytes each.
                    unsafe { self.launch::<EqualizeLumaC4Flat>(cfg, params) }
                }
            };
        }
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
        let cfg = self.planar::<EqualizeLumaKernel>(width, height, smem)?;
        // SAFETY: as above for the source, and likewise for `d` with its pitch (same size,
        // checked); `l` holds 256 bytes; shared memory as the kernel documents.
        unsafe { self.launch::<EqualizeLumaKernel>(cfg, params) }
    }

    /// The `equalizeHist` tables of `images` groups of `channels` histograms at `hist`,
    /// written to `lut`: one block of 256 threads per table; channels from `colors` on
    /// (alpha) get the identity.
    pub(crate) fn equalization_luts(
        &self,
        hist: DevPtr<u32>,
        lut: DevPtrMut<u8>,
        images: u32,
        channels: u32,
        colors: u32,
    ) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (images * channels, 1, 1),
            block_dim: (LUT_BLOCK, 1, 1),
            shared_mem_bytes: LUT_SHARED_BYTES,
        };
        // SAFETY: `hist` holds 256 u32 per table (each group filled from an image of at most
        // u32::MAX pixels, checked) and `lut` 256 bytes per table; the block and shared
        // memory the kernel needs.
        unsafe { self.launch::<EqualizeLutKernel>(cfg, EqualizeLut { hist, lut, channels, colors }) }
    }
}

impl Gpu {
    /// Blocking equalization of a gray (or gray + alpha) host image, bit-exact with OpenCV's
    /// `equalizeHist`.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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

impl Stream {
    /// Equalizes every image of a gray (or gray + alpha) batch on its own histogram, each
    /// bit-exact with OpenCV's `equalizeHist`: one histogram launch, one table launch and one
    /// apply launch for the whole batch.
    pub fn equalize_batch<P: Gray>(&self, src: &DeviceBatch<P>, dst: &mut DeviceBatch<P>) -> Result<()> {
        self.check_batch_pair("equalize", src, dst)?;
        self.check_countable(src)?;
        self.equalize_batch_per_channel(src, dst)
    }

    /// Equalizes every image of a color batch, per channel or on luma, each on its own
    /// histogram; alpha is kept.
    pub fn equalize_color_batch<P: Color>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        mode: EqualizeMode,
    ) -> Result<()> {
        self.check_batch_pair("equalize", src, dst)?;
        self.check_countable(src)?;
        match mode {
            EqualizeMode::PerChannel => self.equalize_batch_per_channel(src, dst),
            EqualizeMode::Luma => self.equalize_batch_luma(src, dst),
        }
    }

    fn check_countable<P: Pixel>(&self, src: &DeviceBatch<P>) -> Result<()> {
        src.sizes().into_iter().try_for_each(|(w, h)| validate::countable(w, h))
    }

    fn equalize_batch_per_channel<P: Pixel>(&self, src: &DeviceBatch<P>, dst: &mut DeviceBatch<P>) -> Result<()> {
        let tables = src.len() * P::CHANNELS;
        let mut hist = self.alloc_overwritten::<u32>(256 * tables)?;
        let mut lut = self.alloc_overwritten::<u8>(256 * tables)?;
        let mut h = hist.write(&self.raw)?;
        let mut l = lut.write(&self.raw)?;
        self.raw.memset_zeros(h.slice())?;
        self.histogram_batch_into(src, h.ptr())?;
        let images = u32::try_from(src.len()).map_err(|_| too_many(src.len()))?;
        self.equalization_luts(h.ptr().as_const(), l.ptr(), images, P::CHANNELS as u32, color_channels::<P>() as u32)?;
        self.apply_lut_batch_at(src, dst, l.ptr().as_const(), 256 * P::CHANNELS as u64)
    }

    fn equalize_batch_luma<P: Color>(&self, src: &DeviceBatch<P>, dst: &mut DeviceBatch<P>) -> Result<()> {
        let images = u32::try_from(src.len()).map_err(|_| too_many(src.len()))?;
        let mut hist = self.alloc_overwritten::<u32>(256 * src.len())?;
        let mut lut = self.alloc_overwritten::<u8>(256 * src.len())?;
        let mut h = hist.write(&self.raw)?;
        let mut l = lut.write(&self.raw)?;
        self.raw.memset_zeros(h.slice())?;
        let (channels, rgb, weights) = (P::CHANNELS as u64, P::RGB.map(|c| c as u64), GrayWeights::Bt601.fixed()?);
        let from = src.read(&self.raw)?;
        let to_table = dst.table.read(&self.raw)?;
        let _to = dst.buf.write(&self.raw)?;
        for chunk in Chunk::all(src.len()) {
            let params = HistogramLumaBatch {
                src: chunk.table(from.table.ptr()),
                channels,
                rgb,
                weights,
                hist: h.ptr().offset(chunk.start as u64 * 256 * 4),
            };
            let smem = cuimg_abi::histogram::shared_bytes(1);
            let cfg =
                self.batch_config::<HistogramLumaBatchKernel>(src.max_extent(), (32, BLOCK / 32), chunk.count, smem)?;
            // SAFETY: the table holds `count` entries pointing at packed color images of
            // `channels` bytes per pixel inside the guarded allocation; `hist` holds 256 u32
            // per image of the chunk; shared memory as the kernel documents.
            unsafe { self.launch::<HistogramLumaBatchKernel>(cfg, params) }?;
        }
        self.equalization_luts(h.ptr().as_const(), l.ptr(), images, 1, 1)?;
        for chunk in Chunk::all(src.len()) {
            let params = EqualizeLumaBatch {
                src: chunk.table(from.table.ptr()),
                dst: chunk.table(to_table.ptr()),
                channels,
                rgb,
                weights,
                lut: l.ptr().as_const().offset(chunk.start as u64 * 256),
            };
            let smem = cuimg_abi::lut::shared_bytes(1);
            let cfg =
                self.batch_config::<EqualizeLumaBatchKernel>(src.max_extent(), (32, BLOCK / 32), chunk.count, smem)?;
            // SAFETY: as above for the sources, and the destination table's entries (equal
            // sizes, checked) for the outputs; `lut` holds 256 bytes per image of the chunk.
            unsafe { self.launch::<EqualizeLumaBatchKernel>(cfg, params) }?;
        }
        Ok(())
    }
}

/// More images than one table launch covers (`gridDim.x` of the table kernel).
fn too_many(n: usize) -> crate::Error {
    crate::Error::TooLarge { what: "images in a batch".into(), size: n as u64, limit: u32::MAX as u64 }
}

impl Gpu {
    /// Blocking equalization of many gray (or gray + alpha) host images, each on its own
    /// histogram.
    pub fn equalize_batch<P: Gray>(&self, images: &[ImageView<'_, P>]) -> Result<Vec<Image<P>>> {
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<P>(&src.sizes())?;
        s.equalize_batch(&src, &mut dst)?;
        s.download_batch(&dst)
    }

    /// Blocking equalization of many color host images (per channel or on luma).
    pub fn equalize_color_batch<P: Color>(
        &self,
        images: &[ImageView<'_, P>],
        mode: EqualizeMode,
    ) -> Result<Vec<Image<P>>> {
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<P>(&src.sizes())?;
        s.equalize_color_batch(&src, &mut dst, mode)?;
        s.download_batch(&dst)
    }
}

/// The order equalization applies its table in: reversed by default (the part of the image
/// the histogram read last, still in L2, first), forward through the benchmark knob
/// `cuimg::bench::EQUALIZE_REVERSE_APPLY`. The runtime's knob is a bool: it knows no
/// operation's types.
fn apply_order() -> crate::ops::lut::Order {
    match knobs::equalize_apply_reversed() {
        true => crate::ops::lut::Order::Reverse,
        false => crate::ops::lut::Order::Forward,
    }
}
