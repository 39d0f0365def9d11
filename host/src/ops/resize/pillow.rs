//! Pillow's launches (`cuimg_abi::resize::ResizePillow*`): a plan's two passes in one tiled
//! launch where its tiles fit, else pass by pass, each into a device image of its own; and
//! the choice among the tiled kernels (by bytes, by words, by dot products). Their plans and
//! tables are `pil.rs`'s.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

use cuimg_abi::DevPtr;
use cuimg_abi::resize::{PILLOW_MMA_PAD, PILLOW_MMA_STEPS, PILLOW_MMA_TILE_ROWS, SEPARABLE_TILE_ROWS, SEPARABLE_TILE_W};
use cuimg_abi::resize::{
    Plane, ResizeJob, ResizePillow, ResizePillowC1, ResizePillowC2, ResizePillowC3, ResizePillowC4, ResizePillowTiled,
    ResizePillowTiledC1, ResizePillowTiledC1Tensor, ResizePillowTiledC2, ResizePillowTiledC2Tensor, ResizePillowTiledC3,
    ResizePillowTiledC3Tensor, ResizePillowTiledC4, ResizePillowTiledC4Tensor, ResizePillowTiledMmaC1,
    ResizePillowTiledMmaC1Tensor, ResizePillowTiledMmaC3, ResizePillowTiledMmaC3Tensor, ResizePillowTiledPlanesC1,
    ResizePillowTiledPlanesC1Tensor, ResizePillowTiledPlanesC3, ResizePillowTiledPlanesC3Tensor, ResizePillowTiledTensor,
    ResizePillowTiledWordsC3, ResizePillowTiledWordsC3Tensor, ResizePillowTiledWordsC4, ResizePillowTiledWordsC4Tensor,
    ResizePillowTiledYuv, ResizePillowTiledYuvTensor,
};

use super::launch::{Blob, Sink, Work, group_by, offset, tensor_out};
use super::axis::PilAxis;
use super::plan::{PilPass, Plan};
use super::resident::{ACROSS, Block, DOWN, Placed};
use super::tiles::{Shape, TileRows, tile_shape};
use crate::error::Result;
use crate::pixel::{Channels, Pixel};
use crate::runtime::knobs::{host_span, host_span_end, host_span_start};
use crate::runtime::{DeviceBuffer, Stream};

/// The horizontal taps from which Pillow's RGB8 and RGBA8 plans take the tiled kernels that
/// read taps four at a time as words (`resize_pillow_tiled_words_*`): session 10 measured
/// them 13 to 25% faster for Pillow's bicubic and Lanczos downscales (13 taps and more),
/// but 8 to 36% slower for 3 to 7 taps, where their extra registers spill.
const PILLOW_WORDS_TAPS: usize = 8;

/// The horizontal taps from which Pillow's Gray8 (`channels` 1) and RGB8 plans take the
/// `_planes` kernels (four taps a group by dot products, `pil::Planes`), where every plan of
/// the launch has that form. Session 12's call 1 timed both on the same machine: Gray8 was
/// faster at every count (5 taps, 8K->4K bilinear, 118 -> 103 us; 53, 1080p->224x224
/// Lanczos, 43 -> 17); RGB8 faster from 11 taps (the batch's bicubic, 11 to 15, 493 -> 440
/// queued; 8K->4K Lanczos, 13, 238 -> 224), even at 7 to 9 (the batch's bilinear 337 ->
/// 344, 8K->4K bicubic 186 -> 182), slower at 5 (8K->4K bilinear 136 -> 154, x2 bicubic
/// 65 -> 77): a group pads 5 taps to 8, and the RGB8 kernel before did well with few.
const fn pillow_planes_taps(channels: usize) -> usize {
    if channels == 1 { 4 } else { 10 }
}

/// Which of Pillow's plans take the `_mma` kernels (see [`pillow_mma`]): those where they
/// were measured faster ([`mma_pays`]), every one they fit, or none.
static MMA: AtomicU8 = AtomicU8::new(MMA_MEASURED);
const MMA_MEASURED: u8 = 0;
const MMA_ALWAYS: u8 = 1;
const MMA_NEVER: u8 = 2;

/// Launches of the `_mma` kernels so far (see [`pillow_mma_launches`]).
static MMA_LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// For tests and the benchmark: which of Pillow's Gray8 and RGB8 plans take the kernels that
/// make both passes by the tensor cores' integer products: `None` (the default) where they
/// were measured faster, `Some(true)` every plan they fit (so that the tests run them on
/// every filter, up and down), `Some(false)` none. Every choice gives the same bytes. Not
/// part of the API.
pub fn pillow_mma(always: Option<bool>) {
    let v = match always {
        None => MMA_MEASURED,
        Some(true) => MMA_ALWAYS,
        Some(false) => MMA_NEVER,
    };
    MMA.store(v, Ordering::Relaxed);
}

/// Whether a plan of a horizontal pass then a vertical one, of `channels` 1 or 3, is one
/// the `_mma` kernels were measured faster for, into images and tensors alike: each row's
/// `--all-mma` against `--no-mma` on one H200 in session 18's call 5 (median of three
/// rounds; the kernels of both passes in one loop a count of steps, 4 blocks an SM;
/// docs/BENCHMARKS.md):
/// - Gray8 downscales and upscales, every filter (8K->4K box, 3 taps, 0.85 of the others'
///   time, bilinear 0.77, bicubic 0.69, Lanczos 0.59; 4K->1080p 0.88, 0.78, 0.71, 0.62;
///   1080p x2 0.91, 0.90, 0.79, 0.80);
/// - RGB8 downscales from 7 horizontal taps (the batch of 256 to 224x224: bilinear, 7 to 9
///   taps, 0.69 into images, 0.79 into f16 tensors, bicubic 0.64, Lanczos 0.55; 8K->4K and
///   4K->1080p bicubic, 9 taps, 0.76 and 0.68); not below (5 taps: bilinear 0.97 and 1.00;
///   box, 3 taps, 1.23 and 1.41);
/// - RGB8 upscales from 5 taps (1080p x2: bicubic 0.93, Lanczos 0.81; 3 taps: box 1.17,
///   bilinear 1.14).
///
/// Plans that shrink one side and grow the other were not measured and keep the others.
fn mma_pays(passes: &[PilPass], channels: usize) -> bool {
    let (h, v) = (&passes[0], &passes[1]);
    let down = h.taps.input > h.out.0 && v.taps.input > v.out.1;
    let up = h.taps.input < h.out.0 && v.taps.input < v.out.1;
    match (channels, down, up) {
        (1, _, _) => down || up,
        (_, true, _) => h.taps.taps >= 7,
        (_, _, true) => h.taps.taps >= 5,
        _ => false,
    }
}

/// The choices of [`pillow_mma`] and [`pillow_planes`], as a number (for `replay.rs`).
pub(super) fn choices() -> u64 {
    MMA.load(Ordering::Relaxed) as u64 | u64::from(PLANES.load(Ordering::Relaxed)) << 2
}

/// For tests: how many launches of the `_mma` kernels this process has made. Not part of
/// the API.
pub fn pillow_mma_launches() -> u64 {
    MMA_LAUNCHES.load(Ordering::Relaxed)
}

/// The tiles of the `_mma` kernels for the tiles `rows` and `words` the tile choice made
/// (`words` the bytes of the tiles' most source rows, one a channel and column): the same
/// rows, and each column's rows `rs` bytes, at least those rows, a multiple of 16
/// whose quarter is odd times 4 (so that a warp's 8 columns fall in distinct banks), and
/// `PILLOW_MMA_PAD` bytes more; `None` past the 48 KiB a block takes without opting in.
fn mma_tiles(rows: u32, words: u32, channels: u32) -> Option<Shape> {
    let per_row = SEPARABLE_TILE_W * channels;
    let most = (words * 4).div_ceil(per_row).max(1);
    let mut rs = most.next_multiple_of(16);
    if (rs / 16).is_multiple_of(2) {
        rs += 16;
    }
    let bytes = per_row * rs + PILLOW_MMA_PAD;
    (bytes <= 48 * 1024).then_some(Shape::Tiles { rows, words: bytes / 4 })
}

/// Whether Pillow's plans may take the `_planes` kernels (see [`pillow_planes`]).
static PLANES: AtomicBool = AtomicBool::new(true);

/// Launches of the `_planes` kernels so far (see [`pillow_planes_launches`]).
static PLANES_LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// For tests and the benchmark: whether Pillow's Gray8 and RGB8 plans may take the kernels
/// that sum four taps at a time by dot products (the default), or only the others, so that
/// both are tested and timed. Either gives the same bytes. Not part of the API.
pub fn pillow_planes(on: bool) {
    PLANES.store(on, Ordering::Relaxed);
}

/// For tests: how many launches of the `_planes` kernels this process has made, so that a
/// test of them can tell that they ran. Not part of the API.
pub fn pillow_planes_launches() -> u64 {
    PLANES_LAUNCHES.load(Ordering::Relaxed)
}

/// A Pillow plan's passes, their directions in order: plans alike share launches. Bits, not
/// a `Vec<bool>`, so that grouping a batch makes no allocation an image.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Passes {
    count: usize,
    /// Bit `i`: pass `i` is horizontal.
    across: u32,
}

impl Passes {
    /// A horizontal pass then a vertical one (the tiled launch's).
    const ACROSS_THEN_DOWN: Passes = Passes { count: 2, across: 1 };

    fn of(passes: &[PilPass]) -> Passes {
        let across = passes.iter().enumerate().fold(0, |m, (i, p)| m | u32::from(p.horizontal) << i);
        Passes { count: passes.len(), across }
    }

    fn len(self) -> usize {
        self.count
    }

    /// Whether each pass is horizontal, in order.
    fn iter(self) -> impl Iterator<Item = bool> {
        (0..self.count).map(move |i| self.across >> i & 1 != 0)
    }
}

impl Stream {
    /// Pillow's plans, pass by pass: all images' first passes in one launch, then their
    /// second, each into a device image of its own between passes. Into a tensor, only
    /// the tiled launch: the plans it does not take are returned.
    pub(super) fn resize_pillow<P: Pixel>(&self, group: Vec<Work>, sink: Sink) -> Result<Vec<Work>> {
        let mut left = Vec::new();
        let shapes_start = host_span_start();
        // Images whose plans have the same passes (direction and count) share launches.
        let shape_of = |w: &Work| match w.plan.as_ref() {
            Plan::Pillow { passes, .. } => Passes::of(passes),
            _ => unreachable!("grouped by kind"),
        };
        let shapes = group_by(group, shape_of);
        host_span_end("pillow: shapes", shapes_start);
        for (shape, works) in shapes {
            if shape == Passes::ACROSS_THEN_DOWN && host_span("pillow: tiled", || self.resize_pillow_tiled::<P>(&works, sink))? {
                continue;
            }
            if !matches!(sink, Sink::Image) {
                left.extend(works);
                continue;
            }
            // The previous pass's outputs (this pass's inputs), one device image a job: this
            // call's alone, so its launches are not replayed (`replay.rs`).
            self.spoil_recording();
            let mut prev: Vec<DeviceBuffer<u8>> = Vec::new();
            for (i, horizontal) in shape.iter().enumerate() {
                let last = i + 1 == shape.len();
                let pass_of = |w: &Work| match w.plan.as_ref() {
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
                            let Plan::Pillow { passes, .. } = w.plan.as_ref() else { unreachable!("grouped by kind") };
                            packed(reads[k].ptr().addr(), passes[i - 1].out)
                        }
                    };
                    // The last pass writes the output, and its letterbox if any.
                    let base = if last { w.job() } else { ResizeJob::default() };
                    let dst = if last { w.dst } else { packed(writes[k].ptr().addr(), pass.out) };
                    jobs.push(ResizeJob {
                        src,
                        dst,
                        x: offset(ints.len())?,
                        xw: offset(weights.len())?,
                        y: offset(pass.taps.taps)?,
                        yw: 0,
                        extra: offset(pass.offset)?,
                        ..base
                    });
                    ints.extend(&pass.taps.first);
                    weights.extend(&pass.taps.weights);
                }
                let premultiply = works.iter().any(|w| matches!(*w.plan, Plan::Pillow { premultiply: true, .. }));
                let mut blob = Blob::default();
                let (at_i, at_w) = (blob.add(&ints), blob.add(&weights));
                let p = |jobs, count, base: u64| ResizePillow {
                    jobs,
                    count,
                    horizontal: u32::from(horizontal),
                    premultiply: u32::from(premultiply && i == 0),
                    divide: u32::from(premultiply && last),
                    ints: DevPtr::new(base + at_i),
                    weights: DevPtr::new(base + at_w),
                };
                // SAFETY: each job's tables hold one first index and `job.y` weights per
                // output index along the pass, at its offsets; its source is the image or
                // the previous pass's output, its output the destination or a new device
                // image of the pass's size, each under its guard, of P's channel count.
                unsafe {
                    match P::LAYOUT {
                        Channels::One => self.resize_launch::<ResizePillowC1>(&jobs, blob, Shape::Pixels(1), p),
                        Channels::Two => self.resize_launch::<ResizePillowC2>(&jobs, blob, Shape::Pixels(1), p),
                        Channels::Three => self.resize_launch::<ResizePillowC3>(&jobs, blob, Shape::Pixels(1), p),
                        Channels::Four => self.resize_launch::<ResizePillowC4>(&jobs, blob, Shape::Pixels(1), p),
                    }
                }?;
                drop((reads, writes));
                prev = next;
            }
        }
        Ok(left)
    }

    /// Pillow's plans of a horizontal pass then a vertical one, both in one tiled launch;
    /// `false` (nothing launched) where a tile's rows or a plan's taps do not fit it.
    fn resize_pillow_tiled<P: Pixel>(&self, works: &[Work], sink: Sink) -> Result<bool> {
        // What the launch asks of each plan, read in one pass over them (each pass over a
        // batch's 256 plans, one heap block each, took 1 to 3 us).
        let choice = MMA.load(Ordering::Relaxed);
        let mut taps = Vec::with_capacity(works.len());
        let (mut premultiply, mut mma_plans) = (false, true);
        for w in works {
            let Plan::Pillow { passes, premultiply: pre } = w.plan.as_ref() else { unreachable!("grouped by kind") };
            let (h, v) = (passes[0].taps.taps, passes[1].taps.taps);
            if h > 0xFFFF || v > 0xFFFF {
                return Ok(false);
            }
            taps.push((h, v));
            premultiply |= *pre;
            // The `_mma` kernels: every window of 8 outputs within their steps.
            mma_plans = mma_plans
                && passes.iter().all(|p| p.taps.window <= 16 * PILLOW_MMA_STEPS as usize)
                && (choice == MMA_ALWAYS || mma_pays(passes, P::CHANNELS));
        }
        // Each plan's two axes, across then down: a block each in the arena, shared by every
        // size that has them (`axis.rs`), so that sizes never seen whose widths and heights
        // were upload no tables.
        let items: Vec<(&Arc<PilAxis>, u8)> = works
            .iter()
            .flat_map(|w| match w.plan.as_ref() {
                Plan::Pillow { passes, .. } => [(&passes[0].taps, ACROSS), (&passes[1].taps, DOWN)],
                _ => unreachable!("grouped by kind"),
            })
            .collect();
        // Parts 0 and 1: the first inputs and the weights; then the planes form, where the
        // axis has one (across: its first columns and its words; down: its words, its first
        // rows being part 0). Down, the spans of its tiles.
        let block = |axis: &PilAxis, role: u8| {
            let b = Block::default().part(&axis.first).part(&axis.weights);
            let b = match (role == ACROSS, axis.planes(role == ACROSS)) {
                (true, Some(p)) => b.part(&p.first).part(&p.words),
                (false, Some(p)) => b.part(&p.words),
                (_, None) => b,
            };
            match role {
                ACROSS => b,
                _ => b.spans(&axis.first, axis.taps),
            }
        };
        self.with_blocks(&items, block, |arena, placed| {
            // A job's blocks: across, down.
            let placed: Vec<(&Placed<'_>, &Placed<'_>)> = placed.chunks_exact(2).map(|xy| (&xy[0], &xy[1])).collect();
            let choice_start = host_span_start();
            let tiled: Vec<TileRows> = works.iter().zip(&placed).map(|(w, (_, down))| (down.spans(), w.dst.height, w.dst.width)).collect();
            // The `_planes` kernels (Gray8 and RGB8 images), where every plan has the form
            // and enough taps, and its vectors lie at 16-byte boundaries (weighed only where
            // the `_mma` kernels are not taken: a pass over every job).
            let planes = || {
                PLANES.load(Ordering::Relaxed)
                    && matches!(P::LAYOUT, Channels::One | Channels::Three)
                    && !matches!(sink, Sink::YuvTensor(..))
                    && arena % 16 == 0
                    && taps.iter().zip(&placed).all(|(&(h, _), (across, down))| {
                        across.parts() == 4
                            && down.parts() == 3
                            && h >= pillow_planes_taps(P::CHANNELS)
                            && [(across, 3), (down, 2)].iter().all(|&(at, i)| at.at::<u32>(i).is_ok_and(|o| o % 4 == 0))
                    })
            };
            // The `_mma` kernels (Gray8 and RGB8 images and tensors), where every plan's
            // windows of 8 outputs fit their steps and its tiles their shared memory.
            let mma_fits = choice != MMA_NEVER
                && matches!(P::LAYOUT, Channels::One | Channels::Three)
                && !matches!(sink, Sink::YuvTensor(..))
                && mma_plans;
            // Their own tiles, up to `PILLOW_MMA_TILE_ROWS` rows, where they fit; else the
            // others' (chosen only then: each choice takes every job's spans again, about
            // 3 us a batch of 256), for them or for the other kernels. No tile of the
            // others' (none of up to 32 rows fits) is none of theirs either.
            let own = match mma_fits {
                true => match tile_shape(&tiled, P::CHANNELS, 1, PILLOW_MMA_TILE_ROWS, self.sms()) {
                    Some(Shape::Tiles { rows, words }) => mma_tiles(rows, words, P::CHANNELS as u32),
                    _ => None,
                },
                false => None,
            };
            let others = match own {
                Some(_) => None,
                None => tile_shape(&tiled, P::CHANNELS, 1, SEPARABLE_TILE_ROWS, self.sms()),
            };
            let Some(shape @ Shape::Tiles { rows, words }) = own.or(others) else {
                return Ok(false);
            };
            let mma_shape = own.or_else(|| mma_fits.then(|| mma_tiles(rows, words, P::CHANNELS as u32)).flatten());
            let mma = mma_shape.is_some();
            let planes = !mma && planes();
            let count = move || {
                MMA_LAUNCHES.fetch_add(u64::from(mma), Ordering::Relaxed);
                PLANES_LAUNCHES.fetch_add(u64::from(planes), Ordering::Relaxed);
            };
            count();
            self.on_replay(count);
            host_span_end("pillow: choice", choice_start);
            let jobs_start = host_span_start();
            let mut jobs = Vec::with_capacity(works.len());
            for ((w, (across, down)), &(h, v)) in works.iter().zip(&placed).zip(&taps) {
                let (x, xw, yw) = match planes {
                    true => (across.at::<i32>(2)?, across.at::<u32>(3)?, down.at::<u32>(2)?),
                    false => (across.at::<i32>(0)?, across.at::<i32>(1)?, down.at::<i32>(1)?),
                };
                jobs.push(ResizeJob {
                    x,
                    y: down.at::<i32>(0)?,
                    xw,
                    yw,
                    extra: (h | v << 16) as u32,
                    ..w.job()
                });
            }
            host_span_end("pillow: jobs", jobs_start);
            let (shape, rows, tile_words) = match mma_shape {
                Some(s @ Shape::Tiles { rows, words }) => (s, rows, words),
                _ => (shape, rows, words),
            };
            let p = |jobs, count, _| ResizePillowTiled {
                jobs,
                count,
                premultiply: u32::from(premultiply),
                ints: DevPtr::new(arena),
                weights: DevPtr::new(arena),
                tile_rows: rows,
                tile_words,
            };
            let blob = Blob::default();
            // The kernels that read taps four at a time as words, where every plan has many
            // (see `PILLOW_WORDS_TAPS`).
            let words = taps.iter().all(|&(h, _)| h >= PILLOW_WORDS_TAPS);
            // SAFETY: each job's tables hold one first column and `extra & 0xFFFF` weights
            // per output column, one first source row and `extra >> 16` weights per output
            // row, at its offsets (with `planes`, a first column per output column, and each
            // pass's groups of four taps as 16-byte vectors, 16-byte aligned: `pil::planes`,
            // the axes' parts 2 and 3 across, 2 down); the planes are guarded views of P's
            // channel count (the kernel's, by the match), or images of the guarded tensor of
            // `sink`'s format; blocks of `SEPARABLE_THREADS` with `tile_words` of shared
            // memory (with `mma`, the plain tables, Pillow's first indices all at least 0,
            // and `mma_tiles`' words: every tile's source rows within `rs`).
            unsafe {
                match sink {
                    Sink::Image => match P::LAYOUT {
                        Channels::One if mma => self.resize_launch::<ResizePillowTiledMmaC1>(&jobs, blob, shape, p),
                        Channels::Three if mma => self.resize_launch::<ResizePillowTiledMmaC3>(&jobs, blob, shape, p),
                        Channels::One if planes => self.resize_launch::<ResizePillowTiledPlanesC1>(&jobs, blob, shape, p),
                        Channels::Three if planes => self.resize_launch::<ResizePillowTiledPlanesC3>(&jobs, blob, shape, p),
                        Channels::One => self.resize_launch::<ResizePillowTiledC1>(&jobs, blob, shape, p),
                        Channels::Two => self.resize_launch::<ResizePillowTiledC2>(&jobs, blob, shape, p),
                        Channels::Three if words => self.resize_launch::<ResizePillowTiledWordsC3>(&jobs, blob, shape, p),
                        Channels::Four if words => self.resize_launch::<ResizePillowTiledWordsC4>(&jobs, blob, shape, p),
                        Channels::Three => self.resize_launch::<ResizePillowTiledC3>(&jobs, blob, shape, p),
                        Channels::Four => self.resize_launch::<ResizePillowTiledC4>(&jobs, blob, shape, p),
                    },
                    Sink::YuvTensor(format, layout, coef) => {
                        let (blob, out) = tensor_out(format);
                        let p = |jobs, count, base| ResizePillowTiledYuv {
                            resize: p(jobs, count, base),
                            out: out(base),
                            layout,
                            _pad: 0,
                            coef,
                        };
                        match P::LAYOUT {
                            Channels::Three => self.resize_launch::<ResizePillowTiledYuvTensor>(&jobs, blob, shape, p),
                            _ => unreachable!("frames decode to RGB"),
                        }
                    }
                    Sink::Tensor(format) => {
                        let (blob, out) = tensor_out(format);
                        let p = |jobs, count, base| ResizePillowTiledTensor { resize: p(jobs, count, base), out: out(base) };
                        match P::LAYOUT {
                            Channels::One if mma => {
                                self.resize_launch::<ResizePillowTiledMmaC1Tensor>(&jobs, blob, shape, p)
                            }
                            Channels::Three if mma => {
                                self.resize_launch::<ResizePillowTiledMmaC3Tensor>(&jobs, blob, shape, p)
                            }
                            Channels::One if planes => {
                                self.resize_launch::<ResizePillowTiledPlanesC1Tensor>(&jobs, blob, shape, p)
                            }
                            Channels::Three if planes => {
                                self.resize_launch::<ResizePillowTiledPlanesC3Tensor>(&jobs, blob, shape, p)
                            }
                            Channels::One => self.resize_launch::<ResizePillowTiledC1Tensor>(&jobs, blob, shape, p),
                            Channels::Two => self.resize_launch::<ResizePillowTiledC2Tensor>(&jobs, blob, shape, p),
                            Channels::Three if words => {
                                self.resize_launch::<ResizePillowTiledWordsC3Tensor>(&jobs, blob, shape, p)
                            }
                            Channels::Four if words => {
                                self.resize_launch::<ResizePillowTiledWordsC4Tensor>(&jobs, blob, shape, p)
                            }
                            Channels::Three => self.resize_launch::<ResizePillowTiledC3Tensor>(&jobs, blob, shape, p),
                            Channels::Four => self.resize_launch::<ResizePillowTiledC4Tensor>(&jobs, blob, shape, p),
                        }
                    }
                }
            }?;
            Ok(true)
        })
    }
}
