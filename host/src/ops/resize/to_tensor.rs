//! Resize and `to_tensor` in one pass (issue 29, parts 2, 3 and 5): the tiled kernels
//! (OpenCV's separable filters, Pillow's two passes) write each output pixel normalized
//! into the tensor, with no image between; from YUV frames, they also decode each source
//! pixel as they read it. Plans of other kinds (nearest, area, one of Pillow's passes
//! alone, the same size) are resized into a scratch batch and normalized by `to_tensor`'s
//! kernel after: two launches, the same elements.

use cuimg_abi::resize::Plane;
use cuimg_abi::tensor::{TensorFormat, TensorJob};

use super::launch::{Frame, Sink, Work};
use super::plan::Plan;
use super::{Filter, plans_cached};
use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::ops::tensor::gpu::check_shape;
use crate::ops::tensor::{DeviceTensor, Tensor, TensorSpec};
use crate::ops::yuv::{DeviceYuvFrame, YuvFrame, YuvLayout, YuvSpec};
use crate::pixel::{Pixel, Rgb8};
use crate::runtime::knobs::host_span;
use crate::runtime::{DeviceView, Gpu, Stream};

/// A fused launch's tensor, checked: `count` images of `width` x `height` from image
/// `first` of `dst` under `spec` (of `channels`); the tensor's image size, the kernels'
/// format and the bytes of one image.
fn tensor_target(
    spec: &TensorSpec,
    dst: &DeviceTensor,
    channels: usize,
    count: usize,
    (width, height): (u32, u32),
    first: usize,
) -> Result<((u32, u32), TensorFormat, u64)> {
    crate::validate::non_empty(width, height)?;
    let size = spec.extent(std::iter::repeat_n((width, height), count))?;
    check_shape(&dst.shape, spec, channels, size, first + count)?;
    Ok((size, spec.format(size), dst.shape.image_bytes() as u64))
}

/// One image's work into the tensor image at `at`: resized to `out` in a tensor image of
/// `size`, the padding (where larger) written by the same launch.
fn into_tensor(plan: std::sync::Arc<Plan>, src: Plane, at: u64, out: (u32, u32), size: (u32, u32)) -> Work {
    // `pitch` unused: the tensor's format places each element.
    let dst = Plane { data: at, pitch: 0, width: out.0, height: out.1 };
    let outer = Plane { data: at, pitch: 0, width: size.0, height: size.1 };
    Work { plan, src, dst, frame: (size != out).then_some(Frame { outer, left: 0, top: 0, fill: 0 }) }
}

impl Stream {
    /// Each image of `src` resized to `width` x `height` as `filter`'s reference resizes
    /// it, then normalized into image `first + i` of `dst` as [`Stream::to_tensor`]
    /// normalizes (`dst`'s shape is the one `spec` gives, with at least `first +
    /// src.len()` images): the elements of [`crate::cpu::resize_to_tensor`], bit for bit.
    ///
    /// One launch, with no image between, for the plans the tiled kernels take (OpenCV's
    /// linear, exact linear, cubic and Lanczos-4; Pillow's filters where both sides
    /// change); others are resized into a scratch batch first (nearest, area, a side
    /// unchanged).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{DType, Filter, Image, Normalize, Rgb8, TensorShape, TensorSpec};
    /// let (a, b) = (Image::from_fn(64, 48, |x, y| Rgb8([x as u8, y as u8, 9])), Image::<Rgb8>::filled(30, 40, 77));
    /// let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET);
    /// let filter: Filter = "pil-bilinear".parse()?;
    /// let s = gpu.stream()?;
    /// let (da, db) = (s.upload(&a.view())?, s.upload(&b.view())?);
    /// let mut t = s.alloc_tensor(spec.shape_of::<Rgb8>(2, 16, 16))?;
    /// s.resize_to_tensor(&[da.view(), db.view()], 16, 16, filter, &spec, &mut t, 0)?;
    /// let want = cuimg::cpu::resize_to_tensor(&[a.view(), b.view()], 16, 16, filter, &spec)?;
    /// assert_eq!(s.download_tensor(&t)?, want);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)] // the resize's and the tensor's, as their own forms take them
    pub fn resize_to_tensor<P: Pixel>(
        &self,
        src: &[DeviceView<'_, P>],
        width: u32,
        height: u32,
        filter: Filter,
        spec: &TensorSpec,
        dst: &mut DeviceTensor,
        first: usize,
    ) -> Result<()> {
        let (size, format, per) = tensor_target(spec, dst, P::CHANNELS, src.len(), (width, height), first)?;
        if !self.same_context(dst.buf.buf.context()) || src.iter().any(|v| !self.same_context(v.img.buf.context())) {
            return Err(Error::WrongContext("a resize source or the tensor".into()));
        }
        let mut requests = Vec::with_capacity(src.len());
        for v in src {
            crate::validate::non_empty(v.width(), v.height())?;
            requests.push(((v.width(), v.height()), (width, height), None));
        }
        // (New plans kept once the launches are queued: `Keep`.)
        let (plans, _keep) = host_span("tensor: plans", || plans_cached::<P>(&requests, filter))?;
        let (ptrs, reads) = host_span("tensor: reads", || DeviceView::ptrs(src, &self.raw))?;
        // The images the tiled kernels do not take: (source, byte offset in the tensor, plan).
        let left: Vec<(Plane, u64, std::sync::Arc<Plan>)> = host_span("tensor: resize", || {
            let mut write = dst.buf.buf.write(&self.raw)?;
            let base = write.ptr().addr();
            let work = plans
                .into_iter()
                .zip(src.iter().zip(&ptrs))
                .enumerate()
                .map(|(i, (plan, (v, s)))| {
                    let l = v.layout();
                    let src = Plane { data: s.addr(), pitch: l.pitch, width: l.width, height: l.height };
                    into_tensor(plan, src, base + (first + i) as u64 * per, (width, height), size)
                })
                .collect();
            Ok::<_, Error>(
                self.resize_work_into::<P>(work, Sink::Tensor(format))?
                    .into_iter()
                    .map(|w| (w.src, w.dst.data - base, w.plan))
                    .collect(),
            )
        })?;
        // The sources' reads recorded, by one event for all of them.
        host_span("tensor: release", || drop(reads));
        if left.is_empty() {
            return Ok(());
        }
        // The others: resized into a scratch batch (a plan of the same size reads its source
        // as it is), then normalized.
        let resized: Vec<usize> = (0..left.len()).filter(|&i| !matches!(*left[i].2, Plan::Copy)).collect();
        let mut scratch = match resized.len() {
            0 => None,
            n => Some(self.alloc_batch::<P>(&vec![(width, height); n])?),
        };
        if let Some(scratch) = scratch.as_mut() {
            let mut to = scratch.buf.write(&self.raw)?;
            let at = to.ptr().addr();
            let c = P::CHANNELS as u64;
            let work = resized
                .iter()
                .zip(&scratch.entries)
                .map(|(&i, e)| Work {
                    plan: left[i].2.clone(),
                    src: left[i].0,
                    dst: Plane { data: at + e.offset as u64, pitch: width as u64 * c, width, height },
                    frame: None,
                })
                .collect();
            self.resize_work::<P>(work)?;
        }
        let from = scratch.as_ref().map(|b| b.read(&self.raw)).transpose()?;
        let scratch_at = from.as_ref().map_or(0, |r| r._data.ptr().addr());
        let mut entries = scratch.iter().flat_map(|b| &b.entries);
        let jobs: Vec<TensorJob> = left
            .iter()
            .map(|(s, offset, plan)| {
                let (data, pitch) = match **plan {
                    Plan::Copy => (s.data, s.pitch),
                    _ => {
                        let e = entries.next().expect("a scratch image for each plan resized");
                        (scratch_at + e.offset as u64, width as u64 * P::CHANNELS as u64)
                    }
                };
                TensorJob { data, pitch, width, height, offset: *offset }
            })
            .collect();
        // SAFETY: each job's rectangle is a guarded image of P's channels (a scratch image
        // of the batch, or a source of the resize's own size); the tensor holds each job's
        // image at its offset (`check_shape`), aligned.
        unsafe { self.to_tensor_launch::<P>(&jobs, dst, format) }
    }
}

impl Stream {
    /// Each frame of `src` decoded to RGB as `yuv` says ([`Stream::yuv_to_image`]'s bytes),
    /// resized to `width` x `height` as `filter`'s reference resizes the decoded image, and
    /// normalized into image `first + i` of `dst` as [`Stream::resize_to_tensor`] does: the
    /// elements of [`crate::cpu::yuv_resize_to_tensor`], bit for bit.
    ///
    /// One launch for each layout among the frames, with no image between, for the plans the
    /// tiled kernels take (each pixel decoded as the resize reads it); other plans decode
    /// their frames into scratch images first.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{DType, Filter, Normalize, Rgb8, TensorSpec, YuvFrame, YuvLayout, YuvSpec};
    /// let bytes: Vec<u8> = (0..64 * 48 * 3 / 2).map(|i| (i * 7 % 251) as u8).collect();
    /// let frame = YuvFrame::from_bytes(YuvLayout::Nv12, 64, 48, bytes)?;
    /// let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET);
    /// let filter: Filter = "cv-linear".parse()?;
    /// let s = gpu.stream()?;
    /// let d = s.upload_yuv(&frame)?;
    /// let mut t = s.alloc_tensor(spec.shape_of::<Rgb8>(1, 24, 24))?;
    /// s.yuv_resize_to_tensor(&[&d], YuvSpec::default(), 24, 24, filter, &spec, &mut t, 0)?;
    /// let want = cuimg::cpu::yuv_resize_to_tensor(&[&frame], YuvSpec::default(), 24, 24, filter, &spec)?;
    /// assert_eq!(s.download_tensor(&t)?, want);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)] // the decoding's, the resize's and the tensor's
    pub fn yuv_resize_to_tensor(
        &self,
        src: &[&DeviceYuvFrame],
        yuv: YuvSpec,
        width: u32,
        height: u32,
        filter: Filter,
        spec: &TensorSpec,
        dst: &mut DeviceTensor,
        first: usize,
    ) -> Result<()> {
        let (size, format, per) = tensor_target(spec, dst, 3, src.len(), (width, height), first)?;
        if !self.same_context(dst.buf.buf.context()) || src.iter().any(|f| !self.same_context(f.buf.buf.context())) {
            return Err(Error::WrongContext("a YUV frame or the tensor".into()));
        }
        for f in src {
            // The kernels' offsets into a frame are 32-bit.
            let n = f.layout.frame_bytes(f.width, f.height)?;
            if n > u32::MAX as usize {
                return Err(Error::TooLarge { what: "a YUV frame to resize".into(), size: n as u64, limit: u32::MAX as u64 });
            }
        }
        let requests: Vec<_> = src.iter().map(|f| ((f.width, f.height), (width, height), None)).collect();
        let (plans, _keep) = plans_cached::<Rgb8>(&requests, filter)?;
        let reads = src.iter().map(|f| f.buf.buf.read(&self.raw)).collect::<Result<Vec<_>, _>>()?;
        // The frames the tiled kernels do not take, by index.
        let mut left: Vec<usize> = Vec::new();
        {
            let mut write = dst.buf.buf.write(&self.raw)?;
            let base = write.ptr().addr();
            let mut layouts: Vec<YuvLayout> = src.iter().map(|f| f.layout).collect();
            layouts.sort_by_key(|l| l.code());
            layouts.dedup();
            for layout in layouts {
                let mut work = Vec::new();
                for (i, (f, r)) in src.iter().zip(&reads).enumerate().filter(|(_, (f, _))| f.layout == layout) {
                    // `pitch` unused: a frame's planes are packed, as its layout says.
                    let frame = Plane { data: r.ptr().addr(), pitch: 0, width: f.width, height: f.height };
                    work.push(into_tensor(plans[i].clone(), frame, base + (first + i) as u64 * per, (width, height), size));
                }
                let sink = Sink::YuvTensor(format, layout.code(), yuv.decode());
                for w in self.resize_work_into::<Rgb8>(work, sink)? {
                    let at = (w.dst.data - base) / per;
                    left.push(at as usize - first);
                }
            }
        }
        drop(reads);
        // The others: decoded into scratch images, then resized and normalized.
        for i in left {
            let mut img = self.alloc::<Rgb8>(src[i].width, src[i].height)?;
            self.yuv_to_image(src[i], yuv, &mut img)?;
            self.resize_to_tensor(&[img.view()], width, height, filter, spec, dst, first + i)?;
        }
        Ok(())
    }
}

impl Gpu {
    /// Blocking: `images` resized to `width` x `height` and normalized into one tensor (see
    /// [`Stream::resize_to_tensor`]).
    pub fn resize_to_tensor<P: Pixel>(
        &self,
        images: &[ImageView<'_, P>],
        width: u32,
        height: u32,
        filter: Filter,
        spec: &TensorSpec,
    ) -> Result<Tensor> {
        let size = spec.extent(std::iter::repeat_n((width, height), images.len()))?;
        let s = self.blocking_stream();
        let shape = spec.shape(images.len(), P::CHANNELS, size);
        let src = images.iter().map(|i| s.upload(i)).collect::<Result<Vec<_>>>()?;
        let views: Vec<DeviceView<'_, P>> = src.iter().map(|d| d.view()).collect();
        let mut dst = DeviceTensor { buf: s.alloc_slice_for_output(shape.bytes()?)?, shape };
        s.resize_to_tensor(&views, width, height, filter, spec, &mut dst, 0)?;
        s.download_tensor(&dst)
    }

    /// Blocking: `frames` decoded, resized to `width` x `height` and normalized into one
    /// tensor (see [`Stream::yuv_resize_to_tensor`]).
    pub fn yuv_resize_to_tensor(
        &self,
        frames: &[&YuvFrame],
        yuv: YuvSpec,
        width: u32,
        height: u32,
        filter: Filter,
        spec: &TensorSpec,
    ) -> Result<Tensor> {
        let size = spec.extent(std::iter::repeat_n((width, height), frames.len()))?;
        let s = self.blocking_stream();
        let shape = spec.shape(frames.len(), 3, size);
        let src = frames.iter().map(|f| s.upload_yuv(f)).collect::<Result<Vec<_>>>()?;
        let mut dst = DeviceTensor { buf: s.alloc_slice_for_output(shape.bytes()?)?, shape };
        s.yuv_resize_to_tensor(&src.iter().collect::<Vec<_>>(), yuv, width, height, filter, spec, &mut dst, 0)?;
        s.download_tensor(&dst)
    }
}
