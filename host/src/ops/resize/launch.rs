//! The resize launches: each image's plan packed into jobs and tables (one upload per
//! launch), one launch per kind of plan (and per pass of Pillow's), whatever the batch's
//! sizes; here the grouping, the launch itself and the gather, cell and area kernels'
//! launches, in `separable.rs` and `pillow.rs` those of OpenCV's separable filters and of
//! Pillow's. `gpu.rs` holds the public forms that call them.

use cuimg_abi::resize::{
    CELLS_PER_THREAD, GATHER_PER_THREAD, Jobs, Plane, RULE_AREA, ResizeArea, ResizeAreaC1, ResizeAreaC2, ResizeAreaC3,
    ResizeAreaC4, ResizeCells, ResizeCellsC1, ResizeCellsC2, ResizeCellsC3, ResizeCellsC4, ResizeGather,
    ResizeGatherC1, ResizeGatherC2, ResizeGatherC3, ResizeGatherC4, ResizeJob, SEPARABLE_THREADS, TENSOR_TABLE_LEN,
    TensorOut, pair,
};
use cuimg_abi::tensor::TensorFormat;
use cuimg_abi::yuv::Decode;
use cuimg_abi::{DevPtr, Kernel, MAX_BATCH_LAUNCH};
use cudarc::driver::LaunchConfig;

use super::plan::{Lists, Plan, area_taps};
use super::resident::{ACROSS, Block, DOWN};
use super::tiles::Shape;
use std::sync::{Arc, Mutex};
use crate::runtime::knobs::{host_span, host_span_end, host_span_start};
use crate::error::{Error, Result};
use crate::pixel::{Channels, Pixel};
use crate::runtime::Stream;

/// One image's resize: its plan, where it reads, where it writes, and the letterbox around
/// that, if any.
pub(super) struct Work {
    pub plan: std::sync::Arc<Plan>,
    pub src: Plane,
    pub dst: Plane,
    pub frame: Option<Frame>,
}

/// Where a launch's pixels go: 8-bit images, or a float tensor's images (each job's `dst`
/// the address of its image's first element, its frame the tensor's image around it; see
/// `cuimg_abi::resize::ResizeSeparableTensor`), which only the tiled kernels write; or a
/// tensor's images from YUV frames of a layout (its code) decoded by a `Decode` to RGB as
/// they are read (each job's `src` a frame: `ResizeSeparableYuv`).
#[derive(Clone, Copy, Debug)]
pub(super) enum Sink {
    Image,
    Tensor(TensorFormat),
    YuvTensor(TensorFormat, u32, Decode),
}

/// A launch's upload holding the tensor table of `format` (see `TensorOut`), and the
/// kernels' `TensorOut` given the upload's device address.
pub(super) fn tensor_out(format: TensorFormat) -> (Blob, impl Fn(u64) -> TensorOut) {
    let mut blob = Blob::default();
    let at = blob.add(&tensor_table(&format));
    (blob, move |base| TensorOut { format, table: DevPtr::new(base + at) })
}

/// The tensor table of `format`, made once for each element type and affine (what it
/// depends on) among the last few: its 1024 conversions took about 14 us of each batch
/// call's host time on the lent H100's host.
fn tensor_table(format: &TensorFormat) -> Arc<[u32]> {
    /// A table and its key: the element type, the affine's kind and coefficients' bits.
    type Kept = ([u32; 10], Arc<[u32]>);
    static TABLES: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
    const KEEP: usize = 16;
    let a = &format.affine;
    let mut key = [format.dtype, a.kind, 0, 0, 0, 0, 0, 0, 0, 0];
    for (k, v) in key[2..].iter_mut().zip(a.a.iter().chain(&a.b)) {
        *k = v.to_bits();
    }
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, t)) = tables.iter().find(|(k, _)| *k == key) {
        return t.clone();
    }
    let t: Arc<[u32]> = (0..TENSOR_TABLE_LEN).map(|i| format.bits((i / 4) as u8, i % 4)).collect();
    if tables.len() == KEEP {
        tables.remove(0);
    }
    tables.push((key, t.clone()));
    t
}

/// A letterbox: the whole output, where in it the resize writes, the constant around that.
#[derive(Clone, Copy, Debug)]
pub(super) struct Frame {
    pub outer: Plane,
    pub left: u32,
    pub top: u32,
    pub fill: u32,
}

impl Work {
    /// The job's planes and frame, its tables' offsets left for the caller.
    pub(super) fn job(&self) -> ResizeJob {
        let mut j = ResizeJob { src: self.src, dst: self.dst, ..Default::default() };
        if let Some(f) = self.frame {
            (j.outer, j.left, j.top, j.fill) = (f.outer, f.left, f.top, f.fill);
        }
        j
    }
}

/// `items` grouped by `key`, the groups in the order their keys are first seen. Where every
/// item has one key (a batch of photos to one size) the items stay as they are, not moved
/// one by one (256 jobs took 6 to 9 us, session 19's call 2).
pub(super) fn group_by<K: Copy + PartialEq, T>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<(K, Vec<T>)> {
    match items.first().map(&key) {
        Some(one) if items.iter().all(|i| key(i) == one) => vec![(one, items)],
        _ => {
            let mut groups: Vec<(K, Vec<T>)> = Vec::new();
            for i in items {
                let k = key(&i);
                match groups.iter_mut().find(|(g, _)| *g == k) {
                    Some((_, v)) => v.push(i),
                    None => groups.push((k, vec![i])),
                }
            }
            groups
        }
    }
}

/// Offsets as the jobs hold them.
pub(super) fn offset(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::TooLarge { what: "the resize tables".into(), size: len as u64, limit: u32::MAX as u64 })
}

/// A job as the `u64` words of its `repr(C)` layout (little-endian, as every GPU CUDA runs
/// on), to upload without an unsafe cast.
fn words(j: &ResizeJob) -> [u64; 13] {
    const _: () = assert!(std::mem::size_of::<ResizeJob>() == 104);
    let (s, d, o) = (j.src.words(), j.dst.words(), j.outer.words());
    [
        s[0],
        s[1],
        s[2],
        d[0],
        d[1],
        d[2],
        pair(j.x, j.xw),
        pair(j.y, j.yw),
        pair(j.extra, j.fill),
        o[0],
        o[1],
        o[2],
        pair(j.left, j.top),
    ]
}

/// One launch's tables and jobs, packed into one device upload (one allocation and one copy
/// per launch, not one per table: a call's fixed cost is most of a small resize's time).
#[derive(Default)]
pub(super) struct Blob(Vec<u8>);

impl Blob {
    /// `v` appended at an 8-byte boundary; its byte offset in the blob.
    pub(super) fn add<T: bytemuck::Pod>(&mut self, v: &[T]) -> u64 {
        self.0.resize(self.0.len().next_multiple_of(8), 0);
        let at = self.0.len() as u64;
        self.0.extend_from_slice(bytemuck::cast_slice(v));
        at
    }
}

/// Which launch a plan takes: plans of one key share it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Key {
    Copy,
    Gather,
    Separable(usize, usize, u32),
    Cells,
    /// The area's plans whose lists are too long for the separable kernels.
    Area,
    Pillow,
}

fn key(plan: &Plan) -> Key {
    match plan {
        Plan::Copy => Key::Copy,
        Plan::Gather { .. } => Key::Gather,
        Plan::Separable { x, y, rule } => Key::Separable(x.taps, y.taps, *rule as u32),
        Plan::Cells { .. } => Key::Cells,
        Plan::Area { x, y } => match area_taps(x, y) {
            Some((tx, ty)) => Key::Separable(tx, ty, RULE_AREA),
            None => Key::Area,
        },
        Plan::Pillow { .. } => Key::Pillow,
    }
}

impl Stream {
    /// The multiprocessors the tile choice spreads tiles over (see `tiles::tile_shape`).
    pub(super) fn sms(&self) -> u64 {
        self.gpu.multiprocessors() as u64
    }

    /// Launches every job, grouped by kind of plan.
    pub(super) fn resize_work<P: Pixel>(&self, work: Vec<Work>) -> Result<()> {
        let left = self.resize_work_into::<P>(work, Sink::Image)?;
        debug_assert!(left.is_empty(), "every kind of plan writes images");
        Ok(())
    }

    /// Launches every job whose kind of plan a kernel of `sink` takes, grouped by kind;
    /// returns the others (for a tensor: all but the tiled plans; none for images).
    pub(super) fn resize_work_into<P: Pixel>(&self, work: Vec<Work>, sink: Sink) -> Result<Vec<Work>> {
        let groups_start = host_span_start();
        let mut groups = group_by(work, |w| key(w.plan.as_ref()));
        host_span_end("work: groups", groups_start);
        // The smallest group first: the GPU waits for the first launch's host work alone.
        // (The groups' outputs are disjoint: any order gives the same bytes.)
        if crate::runtime::knobs::kept_tables() {
            groups.sort_by_key(|(_, v)| v.len());
        }
        let mut left = Vec::new();
        for (k, group) in groups {
            match (k, sink) {
                // No kernel decodes frames for the area: left for scratch images.
                (Key::Separable(.., RULE_AREA), Sink::YuvTensor(..)) => left.extend(group),
                (Key::Separable(xt, yt, rule), _) => self.resize_separable::<P>(&group, (xt, yt, rule), sink)?,
                (Key::Pillow, _) => left.extend(self.resize_pillow::<P>(group, sink)?),
                (_, Sink::Tensor(_) | Sink::YuvTensor(..)) => left.extend(group),
                (Key::Copy, _) => self.resize_copy::<P>(&group)?,
                (Key::Gather, _) => self.resize_gather::<P>(&group)?,
                (Key::Cells, _) => self.resize_cells::<P>(&group)?,
                (Key::Area, _) => self.resize_area::<P>(&group)?,
            }
        }
        Ok(left)
    }

    /// Launches `K` over `jobs`, uploaded here with the launch's tables (`blob`), in chunks
    /// of at most `MAX_BATCH_LAUNCH`, with `params(jobs, count, blob's device address)` for
    /// each chunk, covering each job as `shape` says. One job with no tables to upload goes
    /// in the parameters themselves: nothing is uploaded.
    ///
    /// # Safety
    /// `params(jobs, count, base)` are `K`'s parameters for `count` of the jobs from `jobs`,
    /// whose planes, and tables at `base`, hold what `K`'s contract asks, for blocks and
    /// shared memory as `shape` gives them.
    pub(super) unsafe fn resize_launch<K: Kernel>(
        &self,
        jobs: &[ResizeJob],
        mut blob: Blob,
        shape: Shape,
        params: impl Fn(Jobs, u32, u64) -> K::Params,
    ) -> Result<()> {
        let config = |chunk: &[ResizeJob]| -> Result<LaunchConfig> {
            let extent = chunk.iter().fold((1u64, 1u64), |(w, h), j| {
                let (jw, jh) = shape.threads(j.extent());
                (w.max(jw), h.max(jh))
            });
            Ok(match shape {
                // Every tile a block: a tile is short, and a grid capped at what is resident
                // made each block of a 256-image batch walk its image's tiles one by one.
                Shape::Tiles { .. } => LaunchConfig {
                    grid_dim: (
                        extent.0.div_ceil(SEPARABLE_THREADS as u64).min(i32::MAX as u64) as u32,
                        extent.1.min(65535) as u32,
                        chunk.len() as u32,
                    ),
                    block_dim: (SEPARABLE_THREADS, 1, 1),
                    shared_mem_bytes: shape.smem(),
                },
                Shape::Pixels(_) => self.batch_config::<K>(extent, shape.block(), chunk.len() as u32, shape.smem())?,
            })
        };
        if let ([one], true) = (jobs, blob.0.is_empty()) {
            // SAFETY: the caller's contract, for its one job (carried in the parameters).
            return unsafe { self.launch::<K>(config(jobs)?, params(Jobs { list: DevPtr::NULL, one: *one }, 1, 0)) };
        }
        let words: Vec<u64> = host_span("launch: words", || jobs.iter().flat_map(words).collect());
        let at = blob.add(&words);
        let size = std::mem::size_of::<ResizeJob>() as u64;
        let upload = host_span_start();
        self.with_table(&blob.0, |base| {
            host_span_end("launch: upload", upload);
            for (i, chunk) in jobs.chunks(MAX_BATCH_LAUNCH as usize).enumerate() {
                let list = DevPtr::new(base + at + i as u64 * MAX_BATCH_LAUNCH as u64 * size);
                let jobs = Jobs { list, one: ResizeJob::default() };
                let config = host_span("launch: config", || config(chunk))?;
                // SAFETY: the caller's contract, for this chunk's jobs (`count` of them from
                // `list`), one grid layer each; the blob is on the device for the launches
                // `with_table` runs, on this stream.
                host_span("launch: launch", || unsafe { self.launch::<K>(config, params(jobs, chunk.len() as u32, base)) })?;
            }
            Ok(())
        })
    }

    fn resize_gather<P: Pixel>(&self, group: &[Work]) -> Result<()> {
        // Each plan's indices across and down, a block each (shared by every size that has
        // them: `cv.rs`).
        let items: Vec<(&Arc<Vec<u32>>, u8)> = group
            .iter()
            .flat_map(|w| match w.plan.as_ref() {
                Plan::Gather { xs, ys } => [(xs, ACROSS), (ys, DOWN)],
                _ => unreachable!("grouped by kind"),
            })
            .collect();
        self.with_blocks(&items, |v: &Vec<u32>, _| Block::default().part(v), |arena, placed| {
            let jobs = group
                .iter()
                .zip(placed.chunks_exact(2))
                .map(|(w, xy)| Ok(ResizeJob { x: xy[0].at::<u32>(0)?, y: xy[1].at::<u32>(0)?, ..w.job() }))
                .collect::<Result<Vec<_>>>()?;
            // SAFETY: each job's tables hold `dst.width` column and `dst.height` row indices
            // at its offsets in the arena; the planes are guarded views of P's channel count.
            unsafe { self.gather_launch::<P>(&jobs, Blob::default(), |_| arena) }
        })
    }

    /// Copies (a plan of the same size): the gather kernel with each pixel from the same
    /// place, its indices uploaded with the launch (they are the job's sizes, not a plan's).
    fn resize_copy<P: Pixel>(&self, group: &[Work]) -> Result<()> {
        let mut ints: Vec<u32> = Vec::new();
        let mut jobs = Vec::with_capacity(group.len());
        for w in group {
            let x = offset(ints.len())?;
            ints.extend(0..w.dst.width);
            let y = offset(ints.len())?;
            ints.extend(0..w.dst.height);
            jobs.push(ResizeJob { x, y, ..w.job() });
        }
        let mut blob = Blob::default();
        let at = blob.add(&ints);
        // SAFETY: each job's tables hold `dst.width` column and `dst.height` row indices at
        // its offsets in the launch's upload; the planes are guarded views of P's channels.
        unsafe { self.gather_launch::<P>(&jobs, blob, |base| base + at) }
    }

    /// The gather kernel of P's channel count over `jobs`, its tables at `tables(blob's
    /// device address)`.
    ///
    /// # Safety
    /// Each job's tables there hold `dst.width` column and `dst.height` row indices at its
    /// offsets; its planes are guarded views of P's channel count.
    unsafe fn gather_launch<P: Pixel>(&self, jobs: &[ResizeJob], blob: Blob, tables: impl Fn(u64) -> u64) -> Result<()> {
        let p = |jobs, count, base: u64| ResizeGather { jobs, count, _pad: 0, ints: DevPtr::new(tables(base)) };
        let shape = Shape::Pixels(GATHER_PER_THREAD as u64);
        // SAFETY: the caller's contract, for the kernel of P's channel count (by the match).
        unsafe {
            match P::LAYOUT {
                Channels::One => self.resize_launch::<ResizeGatherC1>(jobs, blob, shape, p),
                Channels::Two => self.resize_launch::<ResizeGatherC2>(jobs, blob, shape, p),
                Channels::Three => self.resize_launch::<ResizeGatherC3>(jobs, blob, shape, p),
                Channels::Four => self.resize_launch::<ResizeGatherC4>(jobs, blob, shape, p),
            }
        }
    }

    fn resize_cells<P: Pixel>(&self, group: &[Work]) -> Result<()> {
        let mut jobs = Vec::with_capacity(group.len());
        for w in group {
            let Plan::Cells { fx, fy, halving } = w.plan.as_ref() else { unreachable!("grouped by kind") };
            jobs.push(ResizeJob { x: offset(*fx)?, y: offset(*fy)?, extra: u32::from(*halving), ..w.job() });
        }
        let p = |jobs, count, _| ResizeCells { jobs, count, _pad: 0 };
        let per = CELLS_PER_THREAD as u64;
        // SAFETY: the planes are guarded views of P's channel count (the kernel's, by the
        // match); every read is clamped into the source, or checked inside it where the
        // kernel reads whole words.
        unsafe {
            match P::LAYOUT {
                Channels::One => self.resize_launch::<ResizeCellsC1>(&jobs, Blob::default(), Shape::Pixels(per), p),
                Channels::Two => self.resize_launch::<ResizeCellsC2>(&jobs, Blob::default(), Shape::Pixels(per), p),
                Channels::Three => self.resize_launch::<ResizeCellsC3>(&jobs, Blob::default(), Shape::Pixels(per), p),
                Channels::Four => self.resize_launch::<ResizeCellsC4>(&jobs, Blob::default(), Shape::Pixels(per), p),
            }
        }
    }

    fn resize_area<P: Pixel>(&self, group: &[Work]) -> Result<()> {
        // Per axis (a block each, shared by every size that has it): the list starts then
        // the indices (one part), and the weights. (The same lists' padded forms, in the
        // separable kernels, are blocks of other roles.)
        let items: Vec<(&Arc<Lists>, u8)> = group
            .iter()
            .flat_map(|w| match w.plan.as_ref() {
                Plan::Area { x, y } => [(x, ACROSS), (y, DOWN)],
                _ => unreachable!("grouped by kind"),
            })
            .collect();
        let block = |a: &Lists, _| Block::default().part(&[a.start.as_slice(), a.index.as_slice()].concat()).part(&a.weight);
        self.with_blocks(&items, block, |arena, placed| {
            let jobs = group
                .iter()
                .zip(placed.chunks_exact(2))
                .map(|(w, xy)| {
                    let (x, y) = (&xy[0], &xy[1]);
                    Ok(ResizeJob { x: x.at::<u32>(0)?, xw: x.at::<f32>(1)?, y: y.at::<u32>(0)?, yw: y.at::<f32>(1)?, ..w.job() })
                })
                .collect::<Result<Vec<_>>>()?;
            let p = |jobs, count, _| ResizeArea { jobs, count, _pad: 0, ints: DevPtr::new(arena), floats: DevPtr::new(arena) };
            // SAFETY: each job's lists (starts, then indices; weights) are at its offsets in
            // the arena, the starts ascending into them; the planes are guarded views of P's
            // channel count.
            unsafe {
                match P::LAYOUT {
                    Channels::One => self.resize_launch::<ResizeAreaC1>(&jobs, Blob::default(), Shape::Pixels(1), p),
                    Channels::Two => self.resize_launch::<ResizeAreaC2>(&jobs, Blob::default(), Shape::Pixels(1), p),
                    Channels::Three => self.resize_launch::<ResizeAreaC3>(&jobs, Blob::default(), Shape::Pixels(1), p),
                    Channels::Four => self.resize_launch::<ResizeAreaC4>(&jobs, Blob::default(), Shape::Pixels(1), p),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use cuimg_abi::tensor::{AFFINE_MEAN_STD, AFFINE_SCALE_OFFSET, Affine, DTYPE_BF16, DTYPE_F16, DTYPE_F32, TensorFormat};

    use super::{TENSOR_TABLE_LEN, group_by, tensor_table};

    /// Groups in the order their keys are first seen, each item in its order; one key, one
    /// group of every item.
    #[test]
    fn groups_keep_first_seen_order() {
        let mixed = group_by(vec![3, 10, 4, 11, 5], |&i| i >= 10);
        assert_eq!(mixed, vec![(false, vec![3, 4, 5]), (true, vec![10, 11])]);
        assert_eq!(group_by(vec![1, 2, 3], |_| 7), vec![(7, vec![1, 2, 3])]);
        assert!(group_by(Vec::<u8>::new(), |_| 0).is_empty());
    }

    /// Kept tables are each format's own: formats differing only in the element type, the
    /// affine's kind, or one channel's coefficient, more of them than are kept, asked for
    /// twice in turn.
    #[test]
    fn kept_tensor_tables_are_each_formats_own() {
        let mut formats = Vec::new();
        for dtype in [DTYPE_F32, DTYPE_F16, DTYPE_BF16] {
            for kind in [AFFINE_MEAN_STD, AFFINE_SCALE_OFFSET] {
                for c in 0..4 {
                    let mut affine = Affine { kind, a: [0.5, 0.25, 0.125, 1.0], b: [1.0, 2.0, 4.0, 8.0] };
                    affine.b[c] += 0.5;
                    formats.push(TensorFormat {
                        width: 1,
                        height: 1,
                        dtype,
                        planar: 1,
                        reverse: 0,
                        flip: 0,
                        fill: 0.0,
                        _pad: 0,
                        affine,
                    });
                }
            }
        }
        for _ in 0..2 {
            for f in &formats {
                let want: Vec<u32> = (0..TENSOR_TABLE_LEN).map(|i| f.bits((i / 4) as u8, i % 4)).collect();
                assert_eq!(*tensor_table(f), *want, "{f:?}");
            }
        }
    }
}
