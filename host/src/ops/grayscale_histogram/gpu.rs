//! Grayscale and its histogram on the GPU: one launch over whole (contiguous) images; a
//! region takes the grayscale launch and then the histogram launch, with the same results.

use cuimg_abi::grayscale::GrayFlat;
use cuimg_abi::grayscale_histogram::{GrayHistogramC3Flat, GrayHistogramC4Flat, GrayHistogramFlat};
use cuimg_abi::histogram::shared_bytes;

use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::ops::grayscale::{GrayWeights, in_byte_order};
use crate::ops::histogram::{DeviceHistogram, Histogram};
use crate::pixel::{Color, ColorChannels, Gray8};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, Gpu, Stream};
use crate::validate;

impl Stream {
    /// Luma of every pixel into `dst` (same size) and the luma's histogram into `hist`
    /// (one channel; replaced), reading the source once: equal to [`Stream::grayscale`]
    /// then [`Stream::histogram`] of its result, without the second read.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Gray8, GrayWeights, Image, Rgb8};
    /// let img = Image::<Rgb8>::from_fn(300, 200, |x, y| Rgb8([x as u8, y as u8, 7]));
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut gray = stream.alloc::<Gray8>(300, 200)?;
    /// let mut hist = stream.alloc_histogram(1)?;
    /// stream.grayscale_histogram(&src, &mut gray, &mut hist, GrayWeights::Bt601)?;
    /// let (want_gray, want_hist) = cuimg::cpu::grayscale_histogram(&img.view(), GrayWeights::Bt601)?;
    /// assert_eq!(stream.download(&gray)?, want_gray);
    /// assert_eq!(stream.download_histogram(&hist)?, want_hist);
    /// # Ok(()) }
    /// ```
    pub fn grayscale_histogram<P: Color>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<Gray8>,
        hist: &mut DeviceHistogram,
        weights: GrayWeights,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("grayscale-histogram", &src, &dst)?;
        validate::countable(src.width(), src.height())?;
        if hist.channels() != 1 {
            return Err(Error::WrongLength {
                what: "histogram channels for the gray image".into(),
                expected: 1,
                actual: hist.channels(),
            });
        }
        self.check_context("the histogram", hist.buf.context())?;
        let w = weights.fixed()?;
        let (sl, dl) = (src.layout(), dst.layout());
        let mut bins = hist.buf.write(&self.raw)?;
        self.raw.memset_zeros(bins.slice())?;
        if !(sl.flat && dl.flat) {
            self.queue_grayscale(&src, &mut dst, w)?;
            return self.histogram_into::<Gray8>(&dst.as_view(), bins.ptr());
        }
        let n = sl.width as u64 * sl.height as u64;
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let params = GrayHistogramFlat {
            image: GrayFlat { src: s, dst: d, n, weights: in_byte_order(w, P::RGB) },
            hist: bins.ptr(),
        };
        let smem = shared_bytes(1);
        match P::COLOR_LAYOUT {
            ColorChannels::Three => {
                let cfg = self.linear::<GrayHistogramC3Flat>(n / 16, smem)?;
                // SAFETY: both views are contiguous and 16-byte aligned (layout().flat), `s`
                // holds 3n bytes and `d` n bytes (same dimensions, checked); the bins hold
                // 256 u32, zeroed above on this stream, and n fits the u32 counts
                // (`countable`); 1-D with the histogram's shared memory.
                unsafe { self.launch::<GrayHistogramC3Flat>(cfg, params) }
            }
            ColorChannels::Four => {
                let cfg = self.linear::<GrayHistogramC4Flat>(n / 16, smem)?;
                // SAFETY: as above, with 4n source bytes.
                unsafe { self.launch::<GrayHistogramC4Flat>(cfg, params) }
            }
        }
    }
}

impl Gpu {
    /// Blocking grayscale and histogram of a host view; see [`Stream::grayscale_histogram`].
    pub fn grayscale_histogram<P: Color>(
        &self,
        src: &ImageView<'_, P>,
        weights: GrayWeights,
    ) -> Result<(Image<Gray8>, Histogram)> {
        validate::non_empty(src.width(), src.height())?;
        validate::countable(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut gray = s.alloc_for_output::<Gray8>(src.width(), src.height())?;
        let mut hist = s.alloc_histogram(1)?;
        s.grayscale_histogram(&d_src, &mut gray, &mut hist, weights)?;
        Ok((s.download(&gray)?, s.download_histogram(&hist)?))
    }

    /// Blocking grayscale and histogram of many host images (any sizes): one upload, the
    /// batch's grayscale launch and its histogram launch (two passes: the fused kernel
    /// works on one image), one download each.
    pub fn grayscale_histogram_batch<P: Color>(
        &self,
        images: &[ImageView<'_, P>],
        weights: GrayWeights,
    ) -> Result<Vec<(Image<Gray8>, Histogram)>> {
        for v in images {
            validate::non_empty(v.width(), v.height())?;
            validate::countable(v.width(), v.height())?;
        }
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut gray = s.alloc_batch_for_output::<Gray8>(&src.sizes())?;
        s.grayscale_batch(&src, &mut gray, weights)?;
        let mut bins = s.alloc_batch_histograms(1, src.len())?;
        s.histogram_batch(&gray, &mut bins)?;
        Ok(s.download_batch(&gray)?.into_iter().zip(s.download_batch_histograms(&bins)?).collect())
    }
}
