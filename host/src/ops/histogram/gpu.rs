//! Histograms on the GPU.

use cuimg_abi::histogram::{
    HistogramBatch, HistogramC1Batch, HistogramC1Flat, HistogramC1Runs, HistogramC2Batch, HistogramC2Flat,
    HistogramC3Batch, HistogramC3Flat, HistogramC4Batch, HistogramC4Flat, HistogramFlat, HistogramPitched,
    HistogramPitchedKernel, shared_bytes,
};
use cuimg_abi::{BLOCK, DevPtrMut, Kernel};

use super::Histogram;
use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::pixel::{Channels, Pixel};
use crate::runtime::{AsDeviceView, Chunk, DeviceBatch, DeviceView, Gpu, Stream, Tracked, knobs};
use crate::validate;

/// Histogram bins in device memory: 256 `u32` per channel.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
        self.queue_histogram(&src, out)
    }

    /// [`Stream::histogram`] on a checked view.
    fn queue_histogram<P: Pixel>(&self, src: &DeviceView<'_, P>, out: &mut DeviceHistogram) -> Result<()> {
        let mut bins = out.buf.write(&self.raw)?;
        self.raw.memset_zeros(bins.slice())?;
        self.histogram_into::<P>(src, bins.ptr())
    }

    /// Adds the histogram of `src` (checked: non-empty, countable, this context) to the
    /// zeroed bins at `hist`, which hold `256 * CHANNELS` u32 and stay ordered by the
    /// caller's guard.
    pub(crate) fn histogram_into<P: Pixel>(&self, src: &DeviceView<'_, P>, hist: DevPtrMut<u32>) -> Result<()> {
        let l = src.layout();
        let smem = shared_bytes(P::CHANNELS as u32);
        let (s, _read) = src.ptr(&self.raw)?;
        if l.flat {
            let params = HistogramFlat { src: s, n: l.width as u64 * l.height as u64, hist };
            return match P::LAYOUT {
                Channels::One if knobs::gray_histogram_runs() => self.histogram_flat::<HistogramC1Runs>(params, smem),
                Channels::One => self.histogram_flat::<HistogramC1Flat>(params, smem),
                Channels::Two => self.histogram_flat::<HistogramC2Flat>(params, smem),
                Channels::Three => self.histogram_flat::<HistogramC3Flat>(params, smem),
                Channels::Four => self.histogram_flat::<HistogramC4Flat>(params, smem),
            };
        }
        let row_bytes = l.width as u64 * P::CHANNELS as u64;
        let params = HistogramPitched {
            src: s,
            pitch: l.pitch,
            row_bytes,
            height: l.height as u64,
            hist,
            channels: P::CHANNELS as u32,
        };
        let cfg = self.planar::<HistogramPitchedKernel>(row_bytes, l.height as u64, smem)?;
        // SAFETY: rows 0..height of `row_bytes` bytes at src + y * pitch lie inside the
        // image; `hist` holds 256 * channels u32; shared memory as the kernel documents.
        unsafe { self.launch::<HistogramPitchedKernel>(cfg, params) }
    }

    /// One of the contiguous kernels, whose channel count is `P::CHANNELS` (the caller's
    /// exhaustive match picks it).
    fn histogram_flat<K: Kernel<Params = HistogramFlat>>(&self, params: HistogramFlat, smem: u32) -> Result<()> {
        let cfg = self.linear::<K>(params.n / 16, smem)?;
        // SAFETY: the view is contiguous and 16-byte aligned with n * CHANNELS bytes; `hist`
        // holds 256 * CHANNELS u32; shared memory as the kernel documents for CHANNELS.
        unsafe { self.launch::<K>(cfg, params) }
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
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
        // Not zeroed here: `queue_histogram` clears the bins on the stream first.
        let mut bins = DeviceHistogram { buf: s.alloc_overwritten::<u32>(256 * P::CHANNELS)?, channels: P::CHANNELS };
        s.queue_histogram(&d_src.view(), &mut bins)?;
        s.download_histogram(&bins)
    }
}

/// The histograms of a batch's images on the device: 256 `u32` per channel per image.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// use cuimg::{Gray8, Image};
/// let stream = gpu.stream()?;
/// let (a, b) = (Image::<Gray8>::filled(8, 8, 1), Image::<Gray8>::filled(3, 5, 200));
/// let batch = stream.upload_batch(&[a.view(), b.view()])?;
/// let mut bins = stream.alloc_batch_histograms(1, batch.len())?;
/// stream.histogram_batch(&batch, &mut bins)?;
/// let h = stream.download_batch_histograms(&bins)?;
/// assert_eq!((h[0].channel(0)[1], h[1].channel(0)[200]), (64, 15));
/// # Ok(()) }
/// ```
pub struct DeviceHistograms {
    pub(crate) buf: Tracked<u32>,
    channels: usize,
    images: usize,
}

impl std::fmt::Debug for DeviceHistograms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceHistograms({} images, {} channels)", self.images, self.channels)
    }
}

impl DeviceHistograms {
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.images
    }

    /// Never true: at least one image.
    pub fn is_empty(&self) -> bool {
        self.images == 0
    }
}

impl Stream {
    /// Zeroed bins for `images` images of `channels` (1 to 4) channels.
    pub fn alloc_batch_histograms(&self, channels: usize, images: usize) -> Result<DeviceHistograms> {
        if !(1..=4).contains(&channels) {
            return Err(Error::WrongLength {
                what: "histogram channels (1 to 4)".into(),
                expected: 4,
                actual: channels,
            });
        }
        if images == 0 {
            return Err(Error::EmptyBatch);
        }
        let len = images.checked_mul(256 * channels).ok_or_else(|| Error::TooLarge {
            what: "batch histograms".into(),
            size: images as u64,
            limit: (usize::MAX / 1024) as u64,
        })?;
        Ok(DeviceHistograms { buf: self.alloc_tracked::<u32>(len)?, channels, images })
    }

    /// Replaces `out` with the histograms of every image of `src` (one per channel per
    /// image), in one launch per 65,535 images.
    pub fn histogram_batch<P: Pixel>(&self, src: &DeviceBatch<P>, out: &mut DeviceHistograms) -> Result<()> {
        if out.channels != P::CHANNELS || out.images != src.len() {
            return Err(Error::WrongLength {
                what: format!("batch histograms (images x channels) for {} images of {}", src.len(), P::NAME),
                expected: src.len() * P::CHANNELS,
                actual: out.images * out.channels,
            });
        }
        for e in &src.entries {
            validate::countable(e.width, e.height)?;
        }
        self.check_context("the histogram batch", src.buf.context())?;
        self.check_context("the histograms", out.buf.context())?;
        let mut bins = out.buf.write(&self.raw)?;
        self.raw.memset_zeros(bins.slice())?;
        self.histogram_batch_into(src, bins.ptr())
    }

    /// Adds the histograms of a checked batch to the zeroed bins at `hist` (`256 * CHANNELS`
    /// u32 per image, under the caller's guard).
    pub(crate) fn histogram_batch_into<P: Pixel>(&self, src: &DeviceBatch<P>, hist: DevPtrMut<u32>) -> Result<()> {
        let from = src.read(&self.raw)?;
        let smem = shared_bytes(P::CHANNELS as u32);
        for chunk in Chunk::all(src.len()) {
            let params = HistogramBatch {
                src: chunk.table(from.table.ptr()),
                hist: hist.offset(chunk.start as u64 * 256 * P::CHANNELS as u64 * 4),
            };
            let per_image = (src.max_pixels() / 16, 1);
            match P::LAYOUT {
                Channels::One => self.histogram_batch_launch::<HistogramC1Batch>(params, per_image, chunk, smem),
                Channels::Two => self.histogram_batch_launch::<HistogramC2Batch>(params, per_image, chunk, smem),
                Channels::Three => self.histogram_batch_launch::<HistogramC3Batch>(params, per_image, chunk, smem),
                Channels::Four => self.histogram_batch_launch::<HistogramC4Batch>(params, per_image, chunk, smem),
            }?;
        }
        Ok(())
    }

    fn histogram_batch_launch<K: Kernel<Params = HistogramBatch>>(
        &self,
        params: HistogramBatch,
        per_image: (u64, u64),
        chunk: Chunk,
        smem: u32,
    ) -> Result<()> {
        let cfg = self.batch_config::<K>(per_image, (BLOCK, 1), chunk.count, smem)?;
        // SAFETY: the table holds `count` entries pointing at packed, 256-byte aligned images
        // of CHANNELS bytes per pixel (the kernel's, by the caller's exhaustive match) inside
        // the guarded allocation; `hist` holds 256 * CHANNELS u32 per image of the chunk;
        // shared memory as the kernel documents.
        unsafe { self.launch::<K>(cfg, params) }
    }

    /// Copies batch histograms back, waiting for the stream.
    pub fn download_batch_histograms(&self, h: &DeviceHistograms) -> Result<Vec<Histogram>> {
        self.check_context("the histograms", h.buf.context())?;
        let bins = h.buf.read(&self.raw)?;
        let flat = self.raw.clone_dtoh(bins.slice())?;
        Ok(flat.chunks_exact(256 * h.channels).map(|one| Histogram::from_flat(one, h.channels)).collect())
    }
}

impl Gpu {
    /// Blocking histograms of many host images (any sizes), one launch for all.
    pub fn histogram_batch<P: Pixel>(&self, images: &[ImageView<'_, P>]) -> Result<Vec<Histogram>> {
        for v in images {
            validate::non_empty(v.width(), v.height())?;
            validate::countable(v.width(), v.height())?;
        }
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut bins = s.alloc_batch_histograms(P::CHANNELS, src.len())?;
        s.histogram_batch(&src, &mut bins)?;
        s.download_batch_histograms(&bins)
    }
}
