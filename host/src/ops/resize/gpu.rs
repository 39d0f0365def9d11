//! The resize launches: each image's plan packed into jobs and tables, one launch per kind
//! of plan (and per pass of Pillow's), whatever the batch's sizes.

use cuimg_abi::resize::{
    Plane, ResizeArea, ResizeAreaC1, ResizeAreaC2, ResizeAreaC3, ResizeAreaC4, ResizeCells, ResizeCellsC1,
    ResizeCellsC2, ResizeCellsC3, ResizeCellsC4, ResizeGather, ResizeGatherC1, ResizeGatherC2, ResizeGatherC3,
    ResizeGatherC4, ResizeJob, ResizePillow, ResizePillowC1, ResizePillowC2, ResizePillowC3, ResizePillowC4,
    ResizeSeparable, ResizeSeparableC1, ResizeSeparableC2, ResizeSeparableC3, ResizeSeparableC4,
};
use cuimg_abi::{DevPtr, Kernel, MAX_BATCH_LAUNCH};

use super::plan::{Plan, cubic_vector_elems};
use super::{Filter, SourceBox, check_sizes, plan_boxed};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::pixel::{Channels, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, DeviceBatch, DeviceBuffer, Gpu, Stream};

/// One image's resize: its plan, where it reads, where it writes.
struct Work {
    plan: Plan,
    src: Plane,
    dst: Plane,
}

/// Offsets as the jobs hold them.
fn offset(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::TooLarge { what: "the resize tables".into(), size: len as u64, limit: u32::MAX as u64 })
}

/// A job as the `u64` words of its `repr(C)` layout (little-endian, as every GPU CUDA runs
/// on), to upload without an unsafe cast.
fn words(j: &ResizeJob) -> [u64; 9] {
    const _: () = assert!(std::mem::size_of::<ResizeJob>() == 72);
    let pair = |lo: u32, hi: u32| lo as u64 | (hi as u64) << 32;
    let plane = |p: &Plane| [p.data, p.pitch, pair(p.width, p.height)];
    let (s, d) = (plane(&j.src), plane(&j.dst));
    [s[0], s[1], s[2], d[0], d[1], d[2], pair(j.x, j.xw), pair(j.y, j.yw), pair(j.extra, j._pad)]
}

/// Which launch a plan takes: plans of one key share it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Key {
    Gather,
    Separable(usize, usize, u32),
    Cells,
    Area,
    Pillow,
}

fn key(plan: &Plan) -> Key {
    match plan {
        Plan::Copy | Plan::Gather { .. } => Key::Gather,
        Plan::Separable { x, y, rule } => Key::Separable(x.taps, y.taps, *rule as u32),
        Plan::Cells { .. } => Key::Cells,
        Plan::Area { .. } => Key::Area,
        Plan::Pillow { .. } => Key::Pillow,
    }
}

impl Stream {
    /// `dst` = `src` resized to `dst`'s size as `filter`'s reference resizes it (a region of
    /// either works).
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
        self.resize_maybe_boxed(src, dst, filter, None)
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
        self.resize_maybe_boxed(src, dst, filter, Some(bx))
    }

    fn resize_maybe_boxed<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        filter: Filter,
        bx: Option<SourceBox>,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        crate::validate::non_empty(src.width(), src.height())?;
        let (src, bx) = match bx.map(|b| b.check(src.width(), src.height(), filter)).transpose()? {
            Some(Some(rect)) => (src.roi(rect)?, None),
            _ => (src, bx),
        };
        let plan = plan_boxed::<P>(src.width(), src.height(), dst.width(), dst.height(), filter, bx)?;
        if !self.same_context(src.img.buf.context()) || !self.same_context(dst.img.buf.context()) {
            return Err(Error::WrongContext("the resize source or destination".into()));
        }
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let plane = |addr: u64, pitch: u64, (width, height): (u32, u32)| Plane { data: addr, pitch, width, height };
        let work = Work {
            plan,
            src: plane(s.addr(), sl.pitch, (sl.width, sl.height)),
            dst: plane(d.addr(), dl.pitch, (dl.width, dl.height)),
        };
        self.resize_work::<P>(vec![work])
    }

    /// Every image of a batch resized to its image in `dst` (any sizes each), as `filter`'s
    /// reference resizes it: one launch for each kind of plan the sizes make (one, for a
    /// batch of photos to one size), and one more per pass of Pillow's.
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
        if src.len() != dst.len() {
            return Err(Error::WrongLength { what: "the resize destination batch".into(), expected: src.len(), actual: dst.len() });
        }
        if !self.same_context(src.buf.context()) || !self.same_context(dst.buf.context()) {
            return Err(Error::WrongContext("the resize source or destination batch".into()));
        }
        let mut plans = Vec::with_capacity(src.len());
        // Per image: the plan, and the crop OpenCV's filters read (a rectangle of the image).
        let mut crops = Vec::with_capacity(src.len());
        for (i, (s, d)) in src.entries.iter().zip(&dst.entries).enumerate() {
            let bx = boxes.get(i).copied().flatten();
            let crop = bx.map(|b| b.check(s.width, s.height, filter)).transpose()?.flatten();
            let (w, h) = crop.map_or((s.width, s.height), |r| (r.width, r.height));
            let pillow_box = if crop.is_some() { None } else { bx };
            plans.push(plan_boxed::<P>(w, h, d.width, d.height, filter, pillow_box)?);
            crops.push(crop);
        }
        let from = src.read(&self.raw)?;
        let base_in = from._data.ptr().addr();
        let mut to = dst.buf.write(&self.raw)?;
        let base_out = to.ptr().addr();
        let c = P::CHANNELS as u64;
        let work = plans
            .into_iter()
            .zip(crops)
            .zip(src.entries.iter().zip(&dst.entries))
            .map(|((plan, crop), (s, d))| Work {
                plan,
                src: {
                    let pitch = s.width as u64 * c;
                    let r = crop.unwrap_or(crate::image::Rect::new(0, 0, s.width, s.height));
                    let at = s.offset as u64 + r.y as u64 * pitch + r.x as u64 * c;
                    Plane { data: base_in + at, pitch, width: r.width, height: r.height }
                },
                dst: Plane { data: base_out + d.offset as u64, pitch: d.width as u64 * c, width: d.width, height: d.height },
            })
            .collect();
        self.resize_work::<P>(work)
    }

    /// Launches every job, grouped by kind of plan.
    fn resize_work<P: Pixel>(&self, work: Vec<Work>) -> Result<()> {
        let mut groups: Vec<(Key, Vec<Work>)> = Vec::new();
        for w in work {
            let k = key(&w.plan);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, v)) => v.push(w),
                None => groups.push((k, vec![w])),
            }
        }
        for (k, group) in groups {
            match k {
                Key::Gather => self.resize_gather::<P>(&group)?,
                Key::Separable(xt, yt, rule) => self.resize_separable::<P>(&group, (xt, yt, rule))?,
                Key::Cells => self.resize_cells::<P>(&group)?,
                Key::Area => self.resize_area::<P>(&group)?,
                Key::Pillow => self.resize_pillow::<P>(group)?,
            }
        }
        Ok(())
    }

    /// Launches `K` over `jobs` (uploaded here), in chunks of at most `MAX_BATCH_LAUNCH`,
    /// with `params` made for each chunk's first job and count.
    ///
    /// # Safety
    /// `params(jobs, count)` are `K`'s parameters for `count` of the jobs from `jobs`, whose
    /// planes and tables hold what `K`'s contract asks.
    unsafe fn resize_launch<K: Kernel>(&self, jobs: &[ResizeJob], params: impl Fn(DevPtr<ResizeJob>, u32) -> K::Params) -> Result<()> {
        let words: Vec<u64> = jobs.iter().flat_map(words).collect();
        let table: DeviceBuffer<u64> = self.upload_slice(&words)?;
        let read = table.buf.read(&self.raw)?;
        let base: DevPtr<ResizeJob> = read.ptr().cast();
        let size = std::mem::size_of::<ResizeJob>() as u64;
        for (i, chunk) in jobs.chunks(MAX_BATCH_LAUNCH as usize).enumerate() {
            let extent = chunk.iter().fold((1u64, 1u64), |(w, h), j| (w.max(j.dst.width as u64), h.max(j.dst.height as u64)));
            let cfg = self.batch_config::<K>(extent, (32, 8), chunk.len() as u32, 0)?;
            let first = base.offset(i as u64 * MAX_BATCH_LAUNCH as u64 * size);
            // SAFETY: the caller's contract, for this chunk's jobs (`count` of them from
            // `first`), one grid layer each.
            unsafe { self.launch::<K>(cfg, params(first, chunk.len() as u32))? };
        }
        Ok(())
    }

    fn resize_gather<P: Pixel>(&self, group: &[Work]) -> Result<()> {
        let mut ints: Vec<u32> = Vec::new();
        let mut jobs = Vec::with_capacity(group.len());
        for w in group {
            let mut job = ResizeJob { src: w.src, dst: w.dst, ..Default::default() };
            job.x = offset(ints.len())?;
            match &w.plan {
                Plan::Gather { xs, ys } => {
                    ints.extend(xs);
                    job.y = offset(ints.len())?;
                    ints.extend(ys);
                }
                _ => {
                    // A copy: each pixel from the same place.
                    ints.extend(0..w.dst.width);
                    job.y = offset(ints.len())?;
                    ints.extend(0..w.dst.height);
                }
            }
            jobs.push(job);
        }
        let tables = self.upload_slice(&ints)?;
        let read = tables.buf.read(&self.raw)?;
        let ints = read.ptr().cast();
        let p = |jobs, count| ResizeGather { jobs, count, _pad: 0, ints };
        // SAFETY: each job's tables hold `dst.width` column and `dst.height` row indices at
        // its offsets; the planes are guarded views of P's channel count (the kernel's, by
        // the match).
        unsafe {
            match P::LAYOUT {
                Channels::One => self.resize_launch::<ResizeGatherC1>(&jobs, p),
                Channels::Two => self.resize_launch::<ResizeGatherC2>(&jobs, p),
                Channels::Three => self.resize_launch::<ResizeGatherC3>(&jobs, p),
                Channels::Four => self.resize_launch::<ResizeGatherC4>(&jobs, p),
            }
        }
    }

    fn resize_separable<P: Pixel>(&self, group: &[Work], (xt, yt, rule): (usize, usize, u32)) -> Result<()> {
        let (mut ints, mut shorts): (Vec<i32>, Vec<i16>) = (Vec::new(), Vec::new());
        let mut jobs = Vec::with_capacity(group.len());
        for w in group {
            let Plan::Separable { x, y, .. } = &w.plan else { unreachable!("grouped by kind") };
            let job = ResizeJob {
                src: w.src,
                dst: w.dst,
                x: offset(ints.len())?,
                xw: offset(shorts.len())?,
                y: offset(ints.len() + x.first.len())?,
                yw: offset(shorts.len() + x.weights.len())?,
                extra: offset(cubic_vector_elems(w.dst.width as usize * P::CHANNELS))?,
                _pad: 0,
            };
            ints.extend(&x.first);
            ints.extend(&y.first);
            shorts.extend(&x.weights);
            shorts.extend(&y.weights);
            jobs.push(job);
        }
        let (ti, ts) = (self.upload_slice(&ints)?, self.upload_slice(&shorts)?);
        let (ri, rs) = (ti.buf.read(&self.raw)?, ts.buf.read(&self.raw)?);
        let (ints, shorts) = (ri.ptr().cast(), rs.ptr().cast());
        let p = |jobs, count| ResizeSeparable { jobs, count, x_taps: xt as u32, y_taps: yt as u32, rule, ints, shorts };
        // SAFETY: each job's tables hold `dst.width` first columns and `x_taps` weights each,
        // `dst.height` first rows and `y_taps` weights each (at most 8), at its offsets; the
        // planes are guarded views of P's channel count (the kernel's, by the match).
        unsafe {
            match P::LAYOUT {
                Channels::One => self.resize_launch::<ResizeSeparableC1>(&jobs, p),
                Channels::Two => self.resize_launch::<ResizeSeparableC2>(&jobs, p),
                Channels::Three => self.resize_launch::<ResizeSeparableC3>(&jobs, p),
                Channels::Four => self.resize_launch::<ResizeSeparableC4>(&jobs, p),
            }
        }
    }

    fn resize_cells<P: Pixel>(&self, group: &[Work]) -> Result<()> {
        let mut jobs = Vec::with_capacity(group.len());
        for w in group {
            let Plan::Cells { fx, fy, halving } = &w.plan else { unreachable!("grouped by kind") };
            jobs.push(ResizeJob { src: w.src, dst: w.dst, x: offset(*fx)?, y: offset(*fy)?, extra: u32::from(*halving), ..Default::default() });
        }
        let p = |jobs, count| ResizeCells { jobs, count, _pad: 0 };
        // SAFETY: the planes are guarded views of P's channel count (the kernel's, by the
        // match); every read is clamped into the source.
        unsafe {
            match P::LAYOUT {
                Channels::One => self.resize_launch::<ResizeCellsC1>(&jobs, p),
                Channels::Two => self.resize_launch::<ResizeCellsC2>(&jobs, p),
                Channels::Three => self.resize_launch::<ResizeCellsC3>(&jobs, p),
                Channels::Four => self.resize_launch::<ResizeCellsC4>(&jobs, p),
            }
        }
    }

    fn resize_area<P: Pixel>(&self, group: &[Work]) -> Result<()> {
        let (mut ints, mut floats): (Vec<u32>, Vec<f32>) = (Vec::new(), Vec::new());
        let mut jobs = Vec::with_capacity(group.len());
        for w in group {
            let Plan::Area { x, y } = &w.plan else { unreachable!("grouped by kind") };
            let mut job = ResizeJob { src: w.src, dst: w.dst, ..Default::default() };
            job.x = offset(ints.len())?;
            job.xw = offset(floats.len())?;
            ints.extend(&x.start);
            ints.extend(&x.index);
            floats.extend(&x.weight);
            job.y = offset(ints.len())?;
            job.yw = offset(floats.len())?;
            ints.extend(&y.start);
            ints.extend(&y.index);
            floats.extend(&y.weight);
            jobs.push(job);
        }
        let (ti, tf) = (self.upload_slice(&ints)?, self.upload_slice(&floats)?);
        let (ri, rf) = (ti.buf.read(&self.raw)?, tf.buf.read(&self.raw)?);
        let (ints, floats) = (ri.ptr().cast(), rf.ptr().cast());
        let p = |jobs, count| ResizeArea { jobs, count, _pad: 0, ints, floats };
        // SAFETY: each job's lists (starts, then indices; weights) are at its offsets, the
        // starts ascending into them; the planes are guarded views of P's channel count.
        unsafe {
            match P::LAYOUT {
                Channels::One => self.resize_launch::<ResizeAreaC1>(&jobs, p),
                Channels::Two => self.resize_launch::<ResizeAreaC2>(&jobs, p),
                Channels::Three => self.resize_launch::<ResizeAreaC3>(&jobs, p),
                Channels::Four => self.resize_launch::<ResizeAreaC4>(&jobs, p),
            }
        }
    }

    /// Pillow's plans, pass by pass: all images' first passes in one launch, then their
    /// second, each into a device image of its own between passes.
    fn resize_pillow<P: Pixel>(&self, group: Vec<Work>) -> Result<()> {
        // Images whose plans have the same passes (direction and count) share launches.
        let mut shapes: Vec<(Vec<bool>, Vec<Work>)> = Vec::new();
        for w in group {
            let Plan::Pillow { passes, .. } = &w.plan else { unreachable!("grouped by kind") };
            let shape: Vec<bool> = passes.iter().map(|p| p.horizontal).collect();
            match shapes.iter_mut().find(|(s, _)| *s == shape) {
                Some((_, v)) => v.push(w),
                None => shapes.push((shape, vec![w])),
            }
        }
        for (shape, works) in shapes {
            // The previous pass's outputs (this pass's inputs), one device image a job.
            let mut prev: Vec<DeviceBuffer<u8>> = Vec::new();
            for (i, &horizontal) in shape.iter().enumerate() {
                let last = i + 1 == shape.len();
                let pass_of = |w: &Work| match &w.plan {
                    Plan::Pillow { passes, .. } => passes[i].clone(),
                    _ => unreachable!("grouped by kind"),
                };
                let mut next: Vec<DeviceBuffer<u8>> = match last {
                    true => Vec::new(),
                    false => works
                        .iter()
                        .map(|w| {
                            let (pw, ph) = pass_of(w).out;
                            self.alloc_slice::<u8>(pw * ph * P::CHANNELS)
                        })
                        .collect::<Result<_>>()?,
                };
                let reads = prev.iter().map(|b| b.buf.read(&self.raw)).collect::<Result<Vec<_>, _>>()?;
                let mut writes = next.iter_mut().map(|b| b.buf.write(&self.raw)).collect::<Result<Vec<_>, _>>()?;
                let packed = |addr: u64, (w, h): (usize, usize)| Plane {
                    data: addr,
                    pitch: (w * P::CHANNELS) as u64,
                    width: w as u32,
                    height: h as u32,
                };
                let (mut ints, mut weights): (Vec<i32>, Vec<i32>) = (Vec::new(), Vec::new());
                let mut jobs = Vec::with_capacity(works.len());
                for (k, w) in works.iter().enumerate() {
                    let pass = pass_of(w);
                    let src = match i {
                        0 => w.src,
                        _ => {
                            let Plan::Pillow { passes, .. } = &w.plan else { unreachable!("grouped by kind") };
                            packed(reads[k].ptr().addr(), passes[i - 1].out)
                        }
                    };
                    let dst = if last { w.dst } else { packed(writes[k].ptr().addr(), pass.out) };
                    jobs.push(ResizeJob {
                        src,
                        dst,
                        x: offset(ints.len())?,
                        xw: offset(weights.len())?,
                        y: offset(pass.taps.taps)?,
                        yw: 0,
                        extra: offset(pass.offset)?,
                        _pad: 0,
                    });
                    ints.extend(&pass.taps.first);
                    weights.extend(&pass.taps.weights);
                }
                let premultiply = works.iter().any(|w| matches!(w.plan, Plan::Pillow { premultiply: true, .. }));
                let (ti, tw) = (self.upload_slice(&ints)?, self.upload_slice(&weights)?);
                let (ri, rw) = (ti.buf.read(&self.raw)?, tw.buf.read(&self.raw)?);
                let (ints, weights) = (ri.ptr().cast(), rw.ptr().cast());
                let p = |jobs, count| ResizePillow {
                    jobs,
                    count,
                    horizontal: u32::from(horizontal),
                    premultiply: u32::from(premultiply && i == 0),
                    divide: u32::from(premultiply && last),
                    ints,
                    weights,
                };
                // SAFETY: each job's tables hold one first index and `job.y` weights per
                // output index along the pass, at its offsets; its source is the image or
                // the previous pass's output, its output the destination or a new device
                // image of the pass's size, each under its guard, of P's channel count.
                unsafe {
                    match P::LAYOUT {
                        Channels::One => self.resize_launch::<ResizePillowC1>(&jobs, p),
                        Channels::Two => self.resize_launch::<ResizePillowC2>(&jobs, p),
                        Channels::Three => self.resize_launch::<ResizePillowC3>(&jobs, p),
                        Channels::Four => self.resize_launch::<ResizePillowC4>(&jobs, p),
                    }
                }?;
                drop((reads, writes));
                prev = next;
            }
        }
        Ok(())
    }
}

impl Gpu {
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
