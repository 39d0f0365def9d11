//! Throughput on many images: a [`GpuPool`] of every GPU (or the ones named), batches spread
//! over it, and a [`Pipeline`] that streams host images through them with copies and kernels
//! of different images overlapped.
//!
//! Each GPU gets a few worker threads (so host copies of different images run on different
//! cores), each with a ring of slots; a slot is a stream with its own pinned input and output
//! buffers and device images, reused from image to image (no allocation in steady state
//! while the size stays the same). For image `i`, a slot copies it into pinned
//! memory on the host, uploads it, runs the operation and downloads the result, all queued on
//! its stream; the worker moves on to the next slot at once, so one slot's upload overlaps
//! another's kernel and a third's download. Before reusing a slot, the worker waits for its
//! previous image and hands the result to the collector, which emits results in input order.
//! Memory is bounded however long the input: a window of images may be in flight between the
//! reader and the collector.

mod pool;
mod queue;
mod report;

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cudarc::driver::CudaEvent;
use cudarc::driver::sys::CUevent_flags;

use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;
use crate::runtime::{DeviceImage, Gpu, PinnedImage, Stream, is_registered};

pub use pool::GpuPool;
use queue::{Pop, Window, WorkQueue, copy_parallel};
pub use report::Report;
use report::SlotTimes;

/// Streams host images through one GPU or a pool; see the module note.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// use cuimg::{GrayWeights, Image, Pipeline, Rgb8};
/// let inputs = (0..20u8).map(|i| Image::<Rgb8>::filled(320, 240, i));
/// let mut out = Vec::new();
/// let report = Pipeline::new(&gpu).run(
///     inputs,
///     |s, src, dst| {
///         s.grayscale(src, dst, GrayWeights::Bt601)?;
///         s.equalize_in_place(dst) // a chain: gray, then equalize
///     },
///     |i, result| out.push((i, result)),
/// )?;
/// assert_eq!(report.images, 20);
/// assert!(out.iter().enumerate().all(|(k, (i, r))| k == *i && r.is_ok())); // input order
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Pipeline {
    gpus: Vec<Gpu>,
    depth: usize,
    threads: usize,
    /// Workers that fail to start, as when their streams cannot be made (test builds).
    failing: usize,
    /// A slot's buffers are kept for the next image only up to this many host bytes.
    keep: usize,
}

/// One image in flight on a slot. The input is held until the slot finishes: an upload
/// straight from page-locked input memory reads it asynchronously.
struct InFlight<T> {
    index: usize,
    host_in: Duration,
    launched: Result<()>,
    _input: T,
}

struct Slot<P: Pixel, Q: Pixel, T> {
    stream: Stream,
    buffers: Option<Buffers<P, Q>>,
    events: [CudaEvent; 4],
    busy: Option<InFlight<T>>,
}

/// A slot's reusable memory for one image size.
struct Buffers<P: Pixel, Q: Pixel> {
    pin_in: PinnedImage<P>,
    pin_out: PinnedImage<Q>,
    dev_in: DeviceImage<P>,
    dev_out: DeviceImage<Q>,
}

impl Pipeline {
    /// A pipeline on one GPU.
    pub fn new(gpu: &Gpu) -> Pipeline {
        Pipeline::on_gpus(vec![gpu.clone()])
    }

    /// A pipeline over every GPU of a pool.
    pub fn on(pool: &GpuPool) -> Pipeline {
        Pipeline::on_gpus(pool.gpus.clone())
    }

    /// Defaults: 2 worker threads per GPU, 2 slots each: the best of a sweep of 1 to 8
    /// threads and 2 to 4 slots on the lent H100 (more threads contend for host memory
    /// bandwidth with the copies; see docs/BENCHMARKS.md).
    fn on_gpus(gpus: Vec<Gpu>) -> Pipeline {
        Pipeline { gpus, depth: 2, threads: 2, failing: 0, keep: usize::MAX }
    }

    /// Slots (streams, each with its own buffers) per worker thread: 2 or more keep copies
    /// and kernels of different images overlapping.
    pub fn depth(mut self, slots: usize) -> Pipeline {
        self.depth = slots.max(1);
        self
    }

    /// Keeps a slot's page-locked buffers for the next image only while they take at most
    /// `bytes` (input and output together); larger ones are freed once their image is done.
    /// By default they are kept whatever their size, which saves allocating them again for
    /// images of one size; a caller that bounds its memory (the `cuimg` tool) sets this, so
    /// that the slots hold at most `bytes` each between images.
    pub fn keep_buffers_up_to(mut self, bytes: usize) -> Pipeline {
        self.keep = bytes;
        self
    }

    /// Worker threads per GPU: each does the host copies of its own images.
    pub fn threads(mut self, per_gpu: usize) -> Pipeline {
        self.threads = per_gpu.max(1);
        self
    }

    /// The first `n` worker threads fail to start, as when their streams cannot be made
    /// (test builds only: feature `test-hooks`).
    #[cfg(feature = "test-hooks")]
    pub fn fail_workers_for_tests(mut self, n: usize) -> Pipeline {
        self.failing = n;
        self
    }

    /// Runs `op` on every image of `inputs` (`op` gets the uploaded image and an output of
    /// the same size, on the slot's stream), and calls `sink` with each result in input
    /// order. An image whose operation fails reaches `sink` as its `Err`; the others go on.
    /// Returns the run's [`Report`]. Workers that cannot start (their streams or buffers)
    /// leave the images to the others, and [`Report::worker_errors`] says why; when none
    /// can start, the run returns at once with the first one's error, having passed no image
    /// to `sink` (and dropped the rest of `inputs` unread).
    ///
    /// The inputs may be owned images or references (`&Image<P>`), so a caller that holds
    /// its images need not copy them first.
    pub fn run<P, Q, T, I, F, S>(&self, inputs: I, op: F, sink: S) -> Result<Report>
    where
        P: Pixel,
        Q: Pixel,
        T: Borrow<Image<P>> + Send,
        I: IntoIterator<Item = T>,
        I::IntoIter: Send,
        F: Fn(&Stream, &DeviceImage<P>, &mut DeviceImage<Q>) -> Result<()> + Sync,
        S: FnMut(usize, Result<Image<Q>>),
    {
        self.run_sized(inputs, &|w, h| (w, h), op, sink)
    }

    /// [`Pipeline::run`] for an operation whose output is `size(width, height)` of its
    /// input's (a resize, a rotation by 90 degrees): `op` gets an output of that size.
    pub fn run_sized<P, Q, T, I, F, S>(
        &self,
        inputs: I,
        size: &(dyn Fn(u32, u32) -> (u32, u32) + Sync),
        op: F,
        mut sink: S,
    ) -> Result<Report>
    where
        P: Pixel,
        Q: Pixel,
        T: Borrow<Image<P>> + Send,
        I: IntoIterator<Item = T>,
        I::IntoIter: Send,
        F: Fn(&Stream, &DeviceImage<P>, &mut DeviceImage<Q>) -> Result<()> + Sync,
        S: FnMut(usize, Result<Image<Q>>),
    {
        let start = Instant::now();
        let lanes = self.gpus.len() * self.threads * self.depth;
        // Room for every slot to hold an image, as many again waiting, and results the
        // collector holds back for order.
        let window = Window::new(4 * lanes + self.gpus.len());
        let work = WorkQueue::<(usize, T)>::new(lanes);
        // Workers still running: the last to end abandons the queue, so a feeder whose
        // workers all failed to start never waits for room in it.
        let live = std::sync::atomic::AtomicUsize::new(self.gpus.len() * self.threads);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, usize, Result<Image<Q>>, SlotTimes)>();
        let mut report = Report { per_gpu: vec![0; self.gpus.len()], ..Report::default() };
        let inputs = inputs.into_iter();
        let setup: Vec<Result<()>> = std::thread::scope(|scope| {
            let window = &window;
            let work = &work;
            let live = &live;
            scope.spawn(move || {
                for (i, img) in inputs.enumerate() {
                    window.acquire();
                    if !work.push((i, img)) {
                        break; // no worker is left
                    }
                }
                work.close();
            });
            let workers: Vec<_> = self
                .gpus
                .iter()
                .enumerate()
                .flat_map(|(g, gpu)| std::iter::repeat_n((g, gpu), self.threads))
                .enumerate()
                .map(|(k, (g, gpu))| {
                    let (done_tx, op) = (done_tx.clone(), &op);
                    let fail = k < self.failing;
                    scope.spawn(move || {
                        let r = match fail {
                            true => Err(Error::InvalidParameter {
                                what: "pipeline worker".into(),
                                why: "made to fail by a test (Pipeline::fail_workers_for_tests)".into(),
                            }),
                            false => worker::<P, Q, T, F>(gpu, g, (self.depth, self.keep), work, done_tx, (size, op)),
                        };
                        if live.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
                            work.abandon();
                        }
                        r
                    })
                })
                .collect();
            drop(done_tx);
            // The collector: results in input order.
            let mut pending = BTreeMap::new();
            let mut next = 0usize;
            for (i, g, result, times) in done_rx {
                report.per_gpu[g] += 1;
                report.add(&times);
                pending.insert(i, result);
                while let Some(result) = pending.remove(&next) {
                    match &result {
                        Ok(img) => {
                            report.bytes_in += (img.width() as u64 * img.height() as u64) * P::CHANNELS as u64;
                            report.bytes_out += img.as_bytes().len() as u64;
                        }
                        Err(_) => report.failed += 1,
                    }
                    report.images += 1;
                    sink(next, result);
                    next += 1;
                    window.release();
                }
            }
            workers.into_iter().map(|w| w.join().expect("a pipeline worker panicked")).collect()
        });
        let started = setup.iter().filter(|r| r.is_ok()).count();
        let mut errors = setup.into_iter().filter_map(|r| r.err());
        if started == 0 {
            return Err(errors.next().expect("no worker started, so one failed"));
        }
        report.worker_errors = errors.map(|e| e.to_string()).collect();
        report.wall = start.elapsed();
        Ok(report)
    }
}

type Done<Q> = std::sync::mpsc::Sender<(usize, usize, Result<Image<Q>>, SlotTimes)>;

/// One GPU's loop: take an image, queue it on the next slot (after emitting that slot's
/// previous image), until the input ends; then drain the slots in order. A worker never
/// blocks for input while it holds finished work: with none waiting, it emits its oldest
/// image first, so the collector (which emits in input order) can always move on.
fn worker<P, Q, T, F>(
    gpu: &Gpu,
    g: usize,
    (depth, keep): (usize, usize),
    work: &WorkQueue<(usize, T)>,
    done: Done<Q>,
    (size, op): (&(dyn Fn(u32, u32) -> (u32, u32) + Sync), &F),
) -> Result<()>
where
    P: Pixel,
    Q: Pixel,
    T: Borrow<Image<P>>,
    F: Fn(&Stream, &DeviceImage<P>, &mut DeviceImage<Q>) -> Result<()> + Sync,
{
    let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut slots: Vec<Slot<P, Q, T>> = (0..depth)
        .map(|_| {
            let stream = gpu.stream()?;
            let ctx = stream.raw.context().clone();
            let events =
                [ctx.new_event(timing)?, ctx.new_event(timing)?, ctx.new_event(timing)?, ctx.new_event(timing)?];
            Ok(Slot { stream, buffers: None, events, busy: None })
        })
        .collect::<Result<_>>()?;
    let mut k = 0usize;
    loop {
        let busy = slots.iter().any(|s| s.busy.is_some());
        // With work in flight, never block for input: emit the oldest image instead.
        match work.pop(!busy) {
            Pop::Item((index, img)) => {
                let slot = &mut slots[k % depth];
                k += 1;
                finish(slot, g, &done, keep);
                let (host_in, launched) = queue(slot, img.borrow(), size, op);
                slot.busy = Some(InFlight { index, host_in, launched, _input: img });
            }
            Pop::Closed => break,
            Pop::Empty => {
                if let Some(i) = (0..depth).map(|i| (k + i) % depth).find(|&i| slots[i].busy.is_some()) {
                    finish(&mut slots[i], g, &done, keep);
                }
            }
        }
    }
    for i in 0..depth {
        finish(&mut slots[(k + i) % depth], g, &done, keep);
    }
    Ok(())
}

/// Queues one image on a slot: host copy into pinned memory (timed), upload, `op`, download.
fn queue<P, Q, T, F>(
    slot: &mut Slot<P, Q, T>,
    img: &Image<P>,
    size: &(dyn Fn(u32, u32) -> (u32, u32) + Sync),
    op: &F,
) -> (Duration, Result<()>)
where
    P: Pixel,
    Q: Pixel,
    F: Fn(&Stream, &DeviceImage<P>, &mut DeviceImage<Q>) -> Result<()> + Sync,
{
    let mut host_in = Duration::ZERO;
    let mut run = || -> Result<()> {
        let (w, h) = img.dimensions();
        let (ow, oh) = size(w, h);
        if slot.buffers.as_ref().is_none_or(|b| b.dev_in.dimensions() != (w, h) || b.dev_out.dimensions() != (ow, oh)) {
            // New size: new buffers (the old ones' drops wait for their copies).
            slot.buffers = None;
            let gpu = slot.stream.gpu();
            slot.buffers = Some(Buffers {
                pin_in: gpu.alloc_pinned(w, h)?,
                pin_out: gpu.alloc_pinned(ow, oh)?,
                dev_in: slot.stream.alloc_for_output(w, h)?,
                dev_out: slot.stream.alloc_for_output(ow, oh)?,
            });
        }
        let b = slot.buffers.as_mut().expect("set above");
        let raw = &slot.stream.raw;
        if is_registered(img.as_bytes()) {
            // Page-locked by `Gpu::register`: DMA straight from the caller's image (held in
            // the slot until done), no staging copy.
            slot.events[0].record(raw)?;
            slot.stream.upload_into(&img.view(), &mut b.dev_in)?;
        } else {
            let t = Instant::now();
            copy_parallel(b.pin_in.as_bytes_mut()?, img.as_bytes());
            host_in = t.elapsed();
            slot.events[0].record(raw)?;
            slot.stream.upload_pinned_into(&b.pin_in, &mut b.dev_in)?;
        }
        slot.events[1].record(raw)?;
        op(&slot.stream, &b.dev_in, &mut b.dev_out)?;
        slot.events[2].record(raw)?;
        slot.stream.download_pinned(&b.dev_out, &mut b.pin_out)?;
        slot.events[3].record(raw)?;
        Ok(())
    };
    let result = run();
    (host_in, result)
}

/// Waits for a slot's image, if any, and hands its result to the collector.
fn finish<P: Pixel, Q: Pixel, T>(slot: &mut Slot<P, Q, T>, g: usize, done: &Done<Q>, keep: usize) {
    let Some(flight) = slot.busy.take() else { return };
    if flight.launched.is_err() {
        // Part of the image's work may be queued (an upload from its memory among it): let
        // it finish before the input is let go. An error here repeats the one reported.
        let _ = slot.stream.synchronize();
    }
    let mut times = SlotTimes { host_in: flight.host_in, ..SlotTimes::default() };
    let result = flight.launched.and_then(|()| {
        let b = slot.buffers.as_ref().expect("a busy slot has buffers");
        let bytes = b.pin_out.as_bytes()?; // waits for the download
        let t = Instant::now();
        // One pass: allocate and copy (no zeroing first).
        let out = Image::<Q>::from_bytes(b.pin_out.width(), b.pin_out.height(), bytes)?;
        times.host_out = t.elapsed();
        let ms = |a: &CudaEvent, z: &CudaEvent| a.elapsed_ms(z).map(|m| Duration::from_secs_f32(m.max(0.0) / 1e3));
        times.upload = ms(&slot.events[0], &slot.events[1])?;
        times.kernel = ms(&slot.events[1], &slot.events[2])?;
        times.download = ms(&slot.events[2], &slot.events[3])?;
        Ok(out)
    });
    let bytes = |b: &Buffers<P, Q>| {
        b.pin_in.width() as usize * b.pin_in.height() as usize * P::CHANNELS
            + b.pin_out.width() as usize * b.pin_out.height() as usize * Q::CHANNELS
    };
    if slot.buffers.as_ref().is_some_and(|b| bytes(b) > keep) {
        slot.buffers = None; // their copies are done: the download was waited for above
    }
    // The collector is gone only when the run is over: nothing to report to.
    let _ = done.send((flight.index, g, result, times));
}

/// Host images of any sizes as views, for the batch calls.
pub fn views<P: Pixel>(images: &[Image<P>]) -> Vec<ImageView<'_, P>> {
    images.iter().map(|i| i.view()).collect()
}
