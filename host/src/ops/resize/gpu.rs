//! The resize forms on the GPU: on a stream (into any region, with a source box, or laid
//! out with a letterbox in the same launch) and blocking; single images and ragged batches.
//! `launch.rs` packs the jobs and launches them.

use cuimg_abi::resize::Plane;


use super::launch::{Frame, Work};
use super::plan::Plan;
use super::replay::{self, Call, Found, Kept, Replays};
use super::{Filter, ResizeLayout, SourceBox, check_sizes, plan_cached, plans_cached};
use crate::runtime::knobs::{host_span, host_span_end, host_span_start};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::ops::border::Padding;
use crate::pixel::{Gray8, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, DeviceBatch, DeviceView, Gpu, Stream};

/// The size a resize writes inside an output of `size` padded by `pad`.
fn inner_size(size: (u32, u32), pad: Option<(Padding, [u8; 4])>) -> Result<(u32, u32)> {
    let Some((p, _)) = pad else { return Ok(size) };
    let w = size.0.checked_sub(p.left).and_then(|w| w.checked_sub(p.right)).filter(|&w| w > 0);
    let h = size.1.checked_sub(p.top).and_then(|h| h.checked_sub(p.bottom)).filter(|&h| h > 0);
    match (w, h) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(Error::InvalidParameter {
            what: "the letterbox".into(),
            why: format!("{p:?} leaves nothing of a {}x{} output to resize into", size.0, size.1),
        }),
    }
}

/// An image of a batch planned: its plan, the crop OpenCV's filters read, the size it is
/// resized to.
type Planned = (std::sync::Arc<Plan>, Option<crate::image::Rect>, (u32, u32));

/// The height of one of `planes` planes of a source and a destination image.
fn plane_heights(src: u32, dst: u32, planes: u32) -> Result<(u32, u32)> {
    let bad = |why: String| Error::InvalidParameter { what: "a planar resize".into(), why };
    if planes == 0 {
        return Err(bad("0 planes".into()));
    }
    if !src.is_multiple_of(planes) || !dst.is_multiple_of(planes) {
        return Err(bad(format!("{src} and {dst} rows are not both {planes} planes of whole rows")));
    }
    let (sh, dh) = (src / planes, dst / planes);
    if dh == 0 {
        return Err(bad(format!("{dst} rows leave an empty output plane")));
    }
    Ok((sh, dh))
}

/// The region of `outer` a resize of `inner` writes, and the frame around it (none without
/// padding).
fn framed<P: Pixel>(outer: Plane, pad: Option<(Padding, [u8; 4])>, inner: (u32, u32)) -> (Plane, Option<Frame>) {
    let Some((p, value)) = pad else { return (outer, None) };
    let at = outer.data + p.top as u64 * outer.pitch + p.left as u64 * P::CHANNELS as u64;
    let dst = Plane { data: at, pitch: outer.pitch, width: inner.0, height: inner.1 };
    (dst, Some(Frame { outer, left: p.left, top: p.top, fill: u32::from_le_bytes(value) }))
}

impl Stream {
    /// `dst` = `src` resized to `dst`'s size as `filter`'s reference resizes it (a region of
    /// either works).
    ///
    /// The stream keeps each size's tables on the device after its first call, so a size
    /// seen before uploads nothing (but for copies and Pillow's plans too tall for one
    /// tiled launch): the first call of a size costs its plan (once per process) and one
    /// upload, later ones only the launch. The tables take about
    /// `(width + height) * taps * 4` bytes a size (a few KB to a few hundred KB), in one
    /// arena a stream that doubles as it fills (to 1 GiB at most) and is freed with the
    /// stream.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{CvInterpolation, Filter, Image, Rgb8};
    /// let img = Image::from_fn(64, 48, |x, y| Rgb8([x as u8, y as u8, 7]));
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Rgb8>(21, 13)?;
    /// let linear = Filter::OpenCv(CvInterpolation::Linear);
    /// stream.resize(&src, &mut dst, linear)?;
    /// assert_eq!(stream.download(&dst)?, cuimg::cpu::resize(&img.view(), 21, 13, linear)?);
    /// # Ok(()) }
    /// ```
    pub fn resize<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        filter: Filter,
    ) -> Result<()> {
        self.resize_into(src, dst, filter, None, None)
    }

    /// [`Stream::resize`] of `src`'s box `bx` (see [`SourceBox`]): Pillow's fractional box,
    /// or OpenCV's whole-pixel crop.
    pub fn resize_box<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        filter: Filter,
        bx: SourceBox,
    ) -> Result<()> {
        self.resize_into(src, dst, filter, Some(bx), None)
    }

    /// `src` laid out in `dst` as `layout` says, in one launch: its box resized into the
    /// inner region, and, for a letterbox, the constant written around it by the same
    /// kernel (no intermediate image). `dst` is `layout.size()`.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Border, Filter, Image, Rgb8, Sizing};
    /// let img = Image::from_fn(64, 48, |x, y| Rgb8([x as u8, y as u8, 7]));
    /// let filter: Filter = "pil-bilinear".parse()?;
    /// let layout = Sizing::Fit(40, 40, Some([114, 114, 114, 0])).layout(64, 48, filter)?; // a letterbox
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Rgb8>(40, 40)?;
    /// stream.resize_layout(&src, &mut dst, filter, &layout)?;
    /// let inner = cuimg::cpu::resize(&img.view(), layout.inner.0, layout.inner.1, filter)?;
    /// let (pad, value) = layout.pad.unwrap();
    /// let want = cuimg::cpu::copy_make_border(&inner.view(), pad, Border::Constant(value))?;
    /// assert_eq!(stream.download(&dst)?, want);
    /// # Ok(()) }
    /// ```
    pub fn resize_layout<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        filter: Filter,
        layout: &ResizeLayout,
    ) -> Result<()> {
        let mut dst = dst.device_view_mut();
        crate::image::check_same_size("the resize destination", dst.dimensions(), layout.size())?;
        self.resize_into(src, &mut dst, filter, layout.source, layout.pad)
    }

    fn resize_into<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        filter: Filter,
        bx: Option<SourceBox>,
        pad: Option<(Padding, [u8; 4])>,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        crate::validate::non_empty(src.width(), src.height())?;
        let (src, bx) = match bx.map(|b| b.check(src.width(), src.height(), filter)).transpose()? {
            Some(Some(rect)) => (src.roi(rect)?, None),
            _ => (src, bx),
        };
        let inner = inner_size(dst.dimensions(), pad)?;
        let plan = plan_cached::<P>(src.width(), src.height(), inner.0, inner.1, filter, bx)?;
        if !self.same_context(src.img.buf.context()) || !self.same_context(dst.img.buf.context()) {
            return Err(Error::WrongContext("the resize source or destination".into()));
        }
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let outer = Plane { data: d.addr(), pitch: dl.pitch, width: dl.width, height: dl.height };
        let (dst, frame) = framed::<P>(outer, pad, inner);
        let src = Plane { data: s.addr(), pitch: sl.pitch, width: sl.width, height: sl.height };
        self.resize_work::<P>(vec![Work { plan, src, dst, frame }])
    }

    /// Each plane of a planar image (CHW: a gray image of `planes * height` rows, as
    /// [`Stream::grayscale_planar`] takes it) resized into the same plane of `dst` (`planes *`
    /// its height rows), in one launch. Each plane is resized as `filter`'s reference resizes
    /// a gray image: `cv2.resize` of each plane, Pillow's `Image.resize` of each band.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Filter, Gray8, Image};
    /// let chw = Image::from_fn(64, 3 * 48, |x, y| Gray8([(x * 3 + y) as u8])); // 3 planes
    /// let filter: Filter = "pil-bicubic".parse()?;
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&chw.view())?;
    /// let mut dst = stream.alloc::<Gray8>(20, 3 * 15)?;
    /// stream.resize_planar(&src, &mut dst, 3, filter)?;
    /// let out = stream.download(&dst)?;
    /// let g = chw.view().roi(cuimg::Rect::new(0, 48, 64, 48))?; // the second plane
    /// let want = cuimg::cpu::resize(&g, 20, 15, filter)?;
    /// assert_eq!(out.view().roi(cuimg::Rect::new(0, 15, 20, 15))?.to_image(), want);
    /// # Ok(()) }
    /// ```
    pub fn resize_planar(
        &self,
        src: &impl AsDeviceView<Gray8>,
        dst: &mut impl AsDeviceViewMut<Gray8>,
        planes: u32,
        filter: Filter,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        crate::validate::non_empty(src.width(), src.height())?;
        let (sh, dh) = plane_heights(src.height(), dst.height(), planes)?;
        let plan = plan_cached::<Gray8>(src.width(), sh, dst.width(), dh, filter, None)?;
        if !self.same_context(src.img.buf.context()) || !self.same_context(dst.img.buf.context()) {
            return Err(Error::WrongContext("the resize source or destination".into()));
        }
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let work = (0..planes as u64)
            .map(|k| Work {
                plan: plan.clone(),
                src: Plane { data: s.addr() + k * sh as u64 * sl.pitch, pitch: sl.pitch, width: sl.width, height: sh },
                dst: Plane { data: d.addr() + k * dh as u64 * dl.pitch, pitch: dl.pitch, width: dl.width, height: dh },
                frame: None,
            })
            .collect();
        self.resize_work::<Gray8>(work)
    }

    /// Images that are not one batch (each its own allocation, as nvJPEG decodes them, or
    /// regions of any images) resized into the images of `dst`, as [`Stream::resize_batch`]
    /// resizes a batch: one launch for each kind of plan.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Filter, Image, Rgb8};
    /// let (a, b) = (Image::<Rgb8>::filled(40, 30, 9), Image::<Rgb8>::filled(64, 48, 200));
    /// let s = gpu.stream()?;
    /// let (da, db) = (s.upload(&a.view())?, s.upload(&b.view())?);
    /// let mut out = s.alloc_batch::<Rgb8>(&[(16, 16), (16, 16)])?;
    /// s.resize_images(&[da.view(), db.view()], &mut out, "pil-bilinear".parse::<Filter>()?)?;
    /// assert_eq!(s.download_batch(&out)?[1], Image::<Rgb8>::filled(16, 16, 200));
    /// # Ok(()) }
    /// ```
    pub fn resize_images<P: Pixel>(
        &self,
        src: &[crate::runtime::DeviceView<'_, P>],
        dst: &mut DeviceBatch<P>,
        filter: Filter,
    ) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::WrongLength { what: "the resize destination batch".into(), expected: src.len(), actual: dst.len() });
        }
        if !self.same_context(dst.buf.context()) || src.iter().any(|v| !self.same_context(v.img.buf.context())) {
            return Err(Error::WrongContext("a resize source or the destination batch".into()));
        }
        let mut requests = Vec::with_capacity(src.len());
        for (v, d) in src.iter().zip(&dst.entries) {
            crate::validate::non_empty(v.width(), v.height())?;
            requests.push(((v.width(), v.height()), (d.width, d.height), None));
        }
        // (New plans kept once the launches are queued: `Keep`.)
        let (plans, _keep) = plans_cached::<P>(&requests, filter)?;
        let (ptrs, _reads) = DeviceView::ptrs(src, &self.raw)?;
        let mut to = dst.buf.write(&self.raw)?;
        let base_out = to.ptr().addr();
        let c = P::CHANNELS as u64;
        let work = plans
            .into_iter()
            .zip(src.iter().zip(&ptrs))
            .zip(&dst.entries)
            .map(|((plan, (v, s)), d)| {
                let l = v.layout();
                let src = Plane { data: s.addr(), pitch: l.pitch, width: l.width, height: l.height };
                let dst = Plane { data: base_out + d.offset as u64, pitch: d.width as u64 * c, width: d.width, height: d.height };
                Work { plan, src, dst, frame: None }
            })
            .collect();
        self.resize_work::<P>(work)
    }

    /// Every image of a batch resized to its image in `dst` (any sizes each), as `filter`'s
    /// reference resizes it: one launch for each kind of plan the sizes make (one, for a
    /// batch of photos to one size), and one more per pass of Pillow's.
    ///
    /// A call like one of the stream's last four (the same sizes, from and into the same
    /// buffers) is recorded, and a call like a recorded one queues the recorded launches
    /// again, without planning: the same bytes, 6 to 15 us of host time where planning a
    /// batch of 256 photos took 35 to 90. A batch of new sizes pays only a hash of its
    /// sizes (1 to 2 us for 256 images). The forms with boxes and layouts replay too.
    pub fn resize_batch<P: Pixel>(&self, src: &DeviceBatch<P>, dst: &mut DeviceBatch<P>, filter: Filter) -> Result<()> {
        self.resize_batch_boxed(src, dst, filter, &[])
    }

    /// [`Stream::resize_batch`] with a source box per image (`boxes[i]`, or the whole image
    /// where `boxes` is shorter or holds `None`): Pillow's fractional boxes, or OpenCV's
    /// whole-pixel crops.
    pub fn resize_batch_boxed<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        filter: Filter,
        boxes: &[Option<SourceBox>],
    ) -> Result<()> {
        host_span("batch: call", || self.resize_batch_into(src, dst, filter, boxes, &[]))
    }

    /// Every image of a batch laid out in its image in `dst` as its layout says (see
    /// [`Stream::resize_layout`]): letterboxes of any paddings and colors, and crops, in one
    /// launch per kind of plan (one for photos to one size).
    pub fn resize_batch_layouts<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        filter: Filter,
        layouts: &[ResizeLayout],
    ) -> Result<()> {
        if layouts.len() != src.len() {
            return Err(Error::WrongLength { what: "the resize layouts".into(), expected: src.len(), actual: layouts.len() });
        }
        for (l, d) in layouts.iter().zip(&dst.entries) {
            crate::image::check_same_size("a resize destination of the batch", (d.width, d.height), l.size())?;
        }
        let boxes: Vec<Option<SourceBox>> = layouts.iter().map(|l| l.source).collect();
        let pads: Vec<Option<(Padding, [u8; 4])>> = layouts.iter().map(|l| l.pad).collect();
        self.resize_batch_into(src, dst, filter, &boxes, &pads)
    }

    fn resize_batch_into<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        filter: Filter,
        boxes: &[Option<SourceBox>],
        pads: &[Option<(Padding, [u8; 4])>],
    ) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::WrongLength { what: "the resize destination batch".into(), expected: src.len(), actual: dst.len() });
        }
        if !self.same_context(src.buf.context()) || !self.same_context(dst.buf.context()) {
            return Err(Error::WrongContext("the resize source or destination batch".into()));
        }
        if !replay::enabled() {
            return self.resize_batch_planned(src, dst, filter, boxes, pads);
        }
        // A call seen before queues the launches it queued then (`replay.rs`).
        let images = src.entries.iter().zip(&dst.entries).enumerate();
        let images = images.map(|(i, (s, d))| (s, d, boxes.get(i).copied().flatten(), pads.get(i).copied().flatten()));
        let call = Call::new::<P>(filter, src.buf.device_addr(), dst.buf.device_addr(), src.len(), images);
        let found = host_span("batch: find", || self.kept(|r: &mut Replays| r.find(&call)));
        let hash = match found {
            Found::Recorded(kept) => {
                let (_from, _to) = (src.read(&self.raw)?, dst.buf.write(&self.raw)?);
                // SAFETY: the call is the recorded one: its launches read and write these
                // buffers, at the addresses, offsets and sizes they had then, under the
                // guards above, with the same choices; its tables are the recording's own,
                // and its arena is read by `with_arena`, where it is still the stream's.
                if self.with_arena(kept.arena, || unsafe { self.replay(&kept.recording) })?.is_some() {
                    replay::replayed();
                    return Ok(());
                }
                // Another arena since: recorded again.
                self.kept(|r: &mut Replays| r.forget(&call));
                call.hash()
            }
            Found::New(hash) => {
                self.resize_batch_planned(src, dst, filter, boxes, pads)?;
                self.kept(|r: &mut Replays| r.saw(hash));
                return Ok(());
            }
            Found::Planned => return self.resize_batch_planned(src, dst, filter, boxes, pads),
            Found::Again(hash) => hash,
        };
        // Replayable where no launch reads memory of this call alone; kept where the arena
        // its launches read is still the stream's (else recorded again next time).
        let key = call.key(hash);
        let arena = self.arena_generation();
        let ((), recording) = self.record(|| self.resize_batch_planned(src, dst, filter, boxes, pads))?;
        match recording {
            Some(recording) if self.arena_generation() == arena => {
                self.kept(|r: &mut Replays| r.keep(key, Some(Kept { recording, arena })))
            }
            Some(_) => {}
            None => self.kept(|r: &mut Replays| r.keep(key, None)),
        }
        Ok(())
    }

    /// [`Stream::resize_batch_into`]'s call, planned.
    fn resize_batch_planned<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        filter: Filter,
        boxes: &[Option<SourceBox>],
        pads: &[Option<(Padding, [u8; 4])>],
    ) -> Result<()> {
        // Per image: the crop OpenCV's filters read (a rectangle of the image), the size it
        // resizes into, and the plan (kept ones found under one lock, new ones made of their
        // kept axes: a new Pillow axis of a photo takes tens of microseconds).
        let requests_start = host_span_start();
        let mut requests = Vec::with_capacity(src.len());
        let mut crops = Vec::with_capacity(src.len());
        for (i, (s, d)) in src.entries.iter().zip(&dst.entries).enumerate() {
            let bx = boxes.get(i).copied().flatten();
            let crop = bx.map(|b| b.check(s.width, s.height, filter)).transpose()?.flatten();
            let (w, h) = crop.map_or((s.width, s.height), |r| (r.width, r.height));
            let pillow_box = if crop.is_some() { None } else { bx };
            let inner = inner_size((d.width, d.height), pads.get(i).copied().flatten())?;
            requests.push(((w, h), inner, pillow_box));
            crops.push((crop, inner));
        }
        host_span_end("batch: requests", requests_start);
        // (New plans kept once the launches are queued: `Keep`.)
        let (plans, _keep) = host_span("batch: plans", || plans_cached::<P>(&requests, filter))?;
        let planned: Vec<Planned> = plans
            .into_iter()
            .zip(crops)
            .map(|(p, (crop, inner))| (p, crop, inner))
            .collect();
        let (from, mut to) = host_span("batch: guards", || Ok::<_, Error>((src.read(&self.raw)?, dst.buf.write(&self.raw)?)))?;
        let base_in = from._data.ptr().addr();
        let base_out = to.ptr().addr();
        let c = P::CHANNELS as u64;
        let work = host_span("batch: work", || planned
            .into_iter()
            .zip(src.entries.iter().zip(&dst.entries))
            .enumerate()
            .map(|(i, ((plan, crop, inner), (s, d)))| {
                let pitch = s.width as u64 * c;
                let r = crop.unwrap_or(crate::image::Rect::new(0, 0, s.width, s.height));
                let at = s.offset as u64 + r.y as u64 * pitch + r.x as u64 * c;
                let src = Plane { data: base_in + at, pitch, width: r.width, height: r.height };
                let outer = Plane { data: base_out + d.offset as u64, pitch: d.width as u64 * c, width: d.width, height: d.height };
                let (dst, frame) = framed::<P>(outer, pads.get(i).copied().flatten(), inner);
                Work { plan, src, dst, frame }
            })
            .collect());
        host_span("batch: launches", || self.resize_work::<P>(work))
    }
}

impl Gpu {
    /// Blocking: each plane of a planar image (`planes * height` rows) resized to `width` x
    /// `height`, as [`Stream::resize_planar`].
    pub fn resize_planar(
        &self,
        src: &ImageView<'_, Gray8>,
        planes: u32,
        width: u32,
        height: u32,
        filter: Filter,
    ) -> Result<Image<Gray8>> {
        crate::validate::non_empty(src.width(), src.height())?;
        let rows = height.checked_mul(planes).ok_or_else(|| Error::TooLarge {
            what: "the planar output's rows".into(),
            size: height as u64 * planes as u64,
            limit: u32::MAX as u64,
        })?;
        plane_heights(src.height(), rows, planes)?;
        check_sizes(src.width(), src.height(), width, rows)?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut dst = s.alloc_for_output::<Gray8>(width, rows)?;
        s.resize_planar(&d_src, &mut dst, planes, filter)?;
        s.download(&dst)
    }

    /// Blocking: `src` laid out as `layout` says (see [`Stream::resize_layout`]), one launch.
    pub fn resize_layout<P: Pixel>(&self, src: &ImageView<'_, P>, filter: Filter, layout: &ResizeLayout) -> Result<Image<P>> {
        crate::validate::non_empty(src.width(), src.height())?;
        let (w, h) = layout.size();
        check_sizes(src.width(), src.height(), w, h)?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut dst = s.alloc_for_output::<P>(w, h)?;
        s.resize_layout(&d_src, &mut dst, filter, layout)?;
        s.download(&dst)
    }

    /// Blocking: every image laid out as its layout says (see
    /// [`Stream::resize_batch_layouts`]), one launch per kind of plan.
    pub fn resize_batch_layouts<P: Pixel>(
        &self,
        images: &[ImageView<'_, P>],
        filter: Filter,
        layouts: &[ResizeLayout],
    ) -> Result<Vec<Image<P>>> {
        if layouts.len() != images.len() {
            return Err(Error::WrongLength { what: "the resize layouts".into(), expected: images.len(), actual: layouts.len() });
        }
        for (img, l) in images.iter().zip(layouts) {
            let (w, h) = l.size();
            check_sizes(img.width(), img.height(), w, h)?;
        }
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let sizes: Vec<(u32, u32)> = layouts.iter().map(|l| l.size()).collect();
        let mut dst = s.alloc_batch_for_output::<P>(&sizes)?;
        s.resize_batch_layouts(&src, &mut dst, filter, layouts)?;
        s.download_batch(&dst)
    }

    /// Blocking: `src`'s box `bx` resized to `width` x `height` (see [`SourceBox`]).
    pub fn resize_box<P: Pixel>(
        &self,
        src: &ImageView<'_, P>,
        width: u32,
        height: u32,
        filter: Filter,
        bx: SourceBox,
    ) -> Result<Image<P>> {
        check_sizes(src.width(), src.height(), width, height)?;
        bx.check(src.width(), src.height(), filter)?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut dst = s.alloc_for_output::<P>(width, height)?;
        s.resize_box(&d_src, &mut dst, filter, bx)?;
        s.download(&dst)
    }

    /// Blocking: `src` resized to `width` x `height` as `filter`'s reference resizes it.
    pub fn resize<P: Pixel>(&self, src: &ImageView<'_, P>, width: u32, height: u32, filter: Filter) -> Result<Image<P>> {
        check_sizes(src.width(), src.height(), width, height)?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut dst = s.alloc_for_output::<P>(width, height)?;
        s.resize(&d_src, &mut dst, filter)?;
        s.download(&dst)
    }

    /// Blocking: every image resized to `width` x `height` (the ML case), one launch for all.
    pub fn resize_batch<P: Pixel>(
        &self,
        images: &[ImageView<'_, P>],
        width: u32,
        height: u32,
        filter: Filter,
    ) -> Result<Vec<Image<P>>> {
        for img in images {
            check_sizes(img.width(), img.height(), width, height)?;
        }
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<P>(&vec![(width, height); images.len()])?;
        s.resize_batch(&src, &mut dst, filter)?;
        s.download_batch(&dst)
    }
}
