//! JPEG files on the GPU with nvJPEG: a reader, then per GPU a hardware decoder (batches),
//! decoders on the SMs and on the CPU, encoders, then writer threads, joined by bounded
//! queues (see [`jpeg_on_gpu`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use crate::io::{Encode, Format};
use crate::jpeg::{JpegFile, JpegPixel};
use crate::{DeviceImage, GpuPool, Pixel, Rgb8, Stream};
use rayon::prelude::*;

use super::images::next;
use super::inputs;
use super::observe::{Stage, spawn};
use super::run::{Admission, Run};

/// An operation that writes its result into an image it is given, as one that returns a
/// new image (made for it on the same stream, of `size` of the decoded one's) from the
/// decoded one.
pub(crate) fn into_new<Q: Pixel>(
    size: impl Fn(u32, u32) -> (u32, u32) + Sync,
    op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> crate::Result<()> + Sync,
) -> impl Fn(&Stream, DeviceImage<Rgb8>) -> crate::Result<DeviceImage<Q>> + Sync {
    move |s, src| {
        let (w, h) = size(src.width(), src.height());
        let mut dst = s.alloc::<Q>(w, h)?;
        op(s, &src, &mut dst)?;
        Ok(dst)
    }
}

/// Files per hardware decoder call: `--tune jpeg-batch`, or about 32 rounded up to a
/// multiple of the decoder's cores (engines times cores per engine), so that every core
/// has work (the decoder wants large batches: 543 images/s of 12 megapixels at 32 on the
/// H100, 342 at 8; docs/BENCHMARKS.md).
fn batch_size(jpeg: &crate::jpeg::Jpeg, run: &Run) -> usize {
    let cores = jpeg.hardware_decoder().map_or(1, |(engines, cores)| (engines * cores).max(1) as usize);
    run.knob("jpeg-batch", 32usize.div_ceil(cores) * cores).max(1)
}

/// A codec and its stream: one worker's, so no two workers share an nvJPEG state.
struct Worker {
    jpeg: std::sync::Arc<crate::jpeg::Jpeg>,
    stream: Stream,
}

/// How many workers of each kind the JPEG path runs on each GPU.
pub(crate) struct Shape {
    /// Batched decoders: the hardware decoder where the GPU has one.
    hardware: usize,
    /// Decoders on the SMs (nvJPEG's GPU decoder), one file at a time, beside the hardware.
    on_sms: usize,
    /// CPU decoders, one file at a time, on cores the others leave idle: they upload what
    /// they decode.
    on_cpu: usize,
    /// More CPU decoders while the hardware decoder opens (its handle and state take 0.6 s
    /// after the GPU opens on the H100, with most cores idle), which stop once it can decode.
    ramp: usize,
    encoders: usize,
}

impl Shape {
    /// Counts per GPU: `--tune hw-decoders` (default 1: one fed the engines as well as two
    /// alone, and did better among the other stages), `--tune sm-decoders` (default: five
    /// eighths of the cores, at most 10; each takes most of a core, about 20 ms per
    /// 12-megapixel image), `--tune cpu-decoders` and `--tune ramp-decoders` (an eighth and a
    /// half of the cores when the output is gray, none else: a JPEG's luma alone decodes on a
    /// core quickly enough to add to the GPU's) and `--tune encoders` (4; all cores' half when
    /// the outputs are encoded on the CPU). On 16 cores, 10 on the SMs and 2 on the CPU beat
    /// 6 and 4 by 6% (docs/BENCHMARKS.md).
    pub(crate) fn new(jpeg_out: bool, luma: bool, run: &Run) -> Shape {
        let cores = std::thread::available_parallelism().map_or(8, |n| n.get());
        let cpu = |name, share: usize| run.knob(name, if luma { cores / share } else { 0 });
        Shape {
            hardware: run.knob("hw-decoders", 1).max(1),
            on_sms: run.knob("sm-decoders", (cores * 5 / 8).min(10)),
            on_cpu: cpu("cpu-decoders", 8),
            ramp: cpu("ramp-decoders", 2),
            encoders: run.knob("encoders", if jpeg_out { 4 } else { (cores / 2).max(4) }).max(1),
        }
    }

    pub(crate) fn describe(&self) -> String {
        format!(
            "{} batched (hardware) decoders, {} on the SMs, {} on the CPU (and {} more while the hardware decoder opens), {} encoders per GPU",
            self.hardware, self.on_sms, self.on_cpu, self.ramp, self.encoders
        )
    }
}

/// The batched decoders of one GPU: `hardware` of them on `first`'s library handle (the
/// hardware decoder's where there is one).
fn open_batched(
    gpu: &crate::Gpu,
    first: &std::sync::Arc<crate::jpeg::Jpeg>,
    hardware: usize,
) -> crate::Result<Vec<Worker>> {
    (0..hardware)
        .map(|k| {
            let jpeg = if k == 0 { first.clone() } else { first.another()? };
            Ok(Worker { jpeg, stream: gpu.stream_with_priority(crate::StreamPriority::High)? })
        })
        .collect()
}

/// JPEG files on the GPU, in stages that all run at once, joined by bounded queues (so
/// memory stays bounded however large the folder):
///
/// 1. one reader thread reads the files in order, a few dozen ahead;
/// 2. on each GPU, batched decoders (the hardware decoder) take a batch of files per
///    call, decoders on the SMs and on the CPU one file at a time, whichever is free first,
///    so the split between them follows their speeds; each runs the operation on its own
///    stream;
/// 3. on each GPU, encoders (each its own stream and codec) encode JPEG outputs on the GPU
///    (other formats are downloaded and encoded on the CPU);
/// 4. writer threads write the files.
///
/// Nothing waits for the codecs to open: the CPU decoders start at once, the encoders when
/// the GPU's one library handle is made (0.27 s on the H100), the hardware decoder and the
/// decoders on the SMs once the hardware decoder's batched state is (0.34 s more; no decode
/// runs while it is made). A codec that cannot be made leaves its threads to the CPU: its
/// decoders decode there, its encoders encode there.
///
/// A result crosses from a decoder's stream to an encoder's: cuimg's device images order
/// that themselves (the encoder's read waits for the operation's write, and the free for
/// the encoder's read).
pub(crate) fn jpeg_on_gpu<S: JpegPixel, Q: JpegPixel + Encode>(
    jobs: &[inputs::Job],
    pool: &GpuPool,
    shape: &Shape,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Stream, DeviceImage<S>) -> crate::Result<DeviceImage<Q>> + Sync,
) {
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc::sync_channel;
    // Queues of about two hardware batches per GPU.
    const QUEUE: usize = 70;
    let gpus = pool.gpus();
    let (file_tx, file_rx) = sync_channel::<(usize, Vec<u8>)>(QUEUE * gpus.len());
    let file_rx = Mutex::new(file_rx);
    // Writer threads behind the encoders (writing a file took 0.4 to 13 ms on the lent machine,
    // up to three times as long as encoding it): `--tune writers`, by default 8 per GPU.
    let writers = run.knob("writers", 8 * gpus.len()).max(1);
    let (write_tx, write_rx) = sync_channel::<(PathBuf, Vec<u8>)>(QUEUE * gpus.len());
    let write_rx = Mutex::new(write_rx);
    // One queue of results per GPU: its decoders to its encoders.
    let results: Vec<_> = gpus.iter().map(|_| sync_channel::<(usize, DeviceImage<Q>)>(QUEUE)).collect();
    let (result_txs, result_rxs): (Vec<_>, Vec<_>) = results.into_iter().map(|(tx, rx)| (tx, Mutex::new(rx))).unzip();
    let hardware_decodes: Vec<AtomicBool> = gpus.iter().map(|_| AtomicBool::new(false)).collect();
    let (op, file_rx, write_rx) = (&op, &file_rx, &write_rx);
    std::thread::scope(|scope| {
        for (g, ((gpu, result_tx), result_rx)) in gpus.iter().zip(result_txs).zip(&result_rxs).enumerate() {
            let hardware_decodes = &hardware_decodes[g];
            for k in 0..shape.on_cpu + shape.ramp {
                let result_tx = result_tx.clone();
                // The ramp's decoders stop once the hardware decoder decodes.
                let until = (k >= shape.on_cpu).then_some(hardware_decodes);
                let kind = if until.is_some() { "ramp CPU decoder" } else { "CPU decoder" };
                spawn(scope, run.observer, format!("gpu {g} {kind} {k}"), move || {
                    decode_on_cpu::<S, Q>(gpu, jobs, run, op, file_rx, &result_tx, until);
                });
            }
            // One library handle per GPU, the hardware decoder's: nvJPEG makes handles one at
            // a time (0.27 s for the first on the H100), so the decoders on the SMs and the
            // encoders share it. The encoders start as soon as it is made, the decoders on
            // the SMs once the hardware decoder's batched state is (0.34 s more).
            let write_tx = write_tx.clone();
            spawn(scope, run.observer, format!("gpu {g} hardware decoder 0"), move || {
                let hw = run.span("open", || failing("hardware").map_or_else(|| crate::jpeg::Jpeg::new(gpu), Err));
                // Without it, the others make a handle of their own (nvJPEG's default backend).
                let codec = run.span("open", || match (failing("default"), &hw) {
                    (Some(e), _) => Err(e),
                    (None, Ok(hw)) => hw.another_without_hardware(),
                    (None, Err(_)) => crate::jpeg::Jpeg::without_hardware(gpu),
                });
                if let Err(e) = &codec {
                    run.say(&format!("GPU {g}: no nvJPEG codec ({e}); its work goes to the CPU"));
                }
                let another = || codec.as_ref().ok().and_then(|c| c.another().ok());
                for k in 0..shape.encoders {
                    let (write_tx, jpeg) = (write_tx.clone(), another());
                    spawn(scope, run.observer, format!("gpu {g} encoder {k}"), move || {
                        let stream = match gpu.stream() {
                            Ok(s) => s,
                            Err(e) => {
                                while let Some((i, _)) = next(result_rx, run) {
                                    run.fail(&jobs[i].1, &e);
                                }
                                return;
                            }
                        };
                        while let Some((i, dst)) = next(result_rx, run) {
                            encode_and_write(jpeg.as_deref(), &stream, &dst, &jobs[i].1, format, run, &write_tx);
                        }
                    });
                }
                drop(write_tx);
                // The batched states before the decoders on the SMs start: while one is made
                // (0.34 s for the first), no other decode of the process runs.
                let workers = run.span("open", || {
                    let workers = open_batched(gpu, &hw?, shape.hardware)?;
                    workers.iter().try_for_each(|w| w.jpeg.prepare_hardware_decoder()).map(|()| workers)
                });
                for k in 0..shape.on_sms {
                    let (result_tx, jpeg) = (result_tx.clone(), another());
                    spawn(scope, run.observer, format!("gpu {g} SM decoder {k}"), move || {
                        let w = jpeg.map(|jpeg| {
                            gpu.stream_with_priority(crate::StreamPriority::Low).map(|stream| Worker { jpeg, stream })
                        });
                        match w {
                            Some(Ok(w)) => {
                                decode_all(&w, 1, file_rx, jobs, run, op, &result_tx);
                            }
                            _ => decode_on_cpu::<S, Q>(gpu, jobs, run, op, file_rx, &result_tx, None),
                        }
                    });
                }
                let workers = match workers {
                    Ok(w) => w,
                    Err(e) => {
                        run.say(&format!("GPU {g}: no batched decoder ({e}); decoding on the CPU"));
                        return decode_on_cpu::<S, Q>(gpu, jobs, run, op, file_rx, &result_tx, None);
                    }
                };
                hardware_decodes.store(true, Relaxed);
                let batch = batch_size(&workers[0].jpeg, run);
                let mut workers = workers.into_iter();
                let first = workers.next().expect("at least one batched decoder");
                for (k, w) in workers.enumerate() {
                    let result_tx = result_tx.clone();
                    spawn(scope, run.observer, format!("gpu {g} hardware decoder {}", k + 1), move || {
                        decode_all(&w, batch, file_rx, jobs, run, op, &result_tx);
                    });
                }
                // The decoders hold the only senders: the encoders stop when the last one ends.
                decode_all(&first, batch, file_rx, jobs, run, op, &result_tx);
            });
        }
        // The encoders hold the only senders now: the writers stop when the last one ends.
        drop(write_tx);
        for k in 0..writers {
            spawn(scope, run.observer, format!("writer {k}"), move || {
                while let Some((out, bytes)) = next(write_rx, run) {
                    match run.time(Stage::Write, || run.policy.write(&out, &bytes)) {
                        Err(e) => run.fail(&out, format!("cannot write: {e}")),
                        Ok(()) => run.ok(&out),
                    }
                }
            });
        }
        run.observer.thread("reader");
        // Each file checked from its header (nvJPEG is called on none over the limits) and
        // admitted against the memory budget here, then read on all cores, 16 at a time (a
        // rayon thread waiting for memory could hold up the batched decoder's checks, which
        // run on rayon's threads too).
        let bytes_per_pixel = S::CHANNELS as u32;
        admit_in_groups(
            jobs.len(),
            16,
            |i, wait| run.admit_if(&jobs[i].0, bytes_per_pixel, wait),
            |admitted| {
                let read: Vec<_> = admitted
                    .into_par_iter()
                    .map(|(i, file)| (i, file.and_then(|file| run.read_admitted(file))))
                    .collect();
                for (i, bytes) in read {
                    match bytes {
                        Ok((_, b)) => {
                            if run.span("wait to hand on", || file_tx.send((i, b))).is_err() {
                                return false;
                            }
                        }
                        Err(e) => run.fail(&jobs[i].0, e),
                    }
                }
                true
            },
        );
        drop(file_tx);
    });
}

/// Admits jobs `0..jobs` in order, and hands them on in groups of up to `group` (each
/// admitted or refused, with its index); stops when `hand_on` says false or `admit` says
/// stop. `admit(i, wait)` may wait for memory only when `wait`: that is, only when no job
/// is admitted and not yet handed on, since the memory it would wait for may be theirs
/// (the reader once admitted 16 before handing any on, and a budget of three files
/// stalled the run on the H100).
fn admit_in_groups<F>(
    jobs: usize,
    group: usize,
    mut admit: impl FnMut(usize, bool) -> Admission<F>,
    mut hand_on: impl FnMut(Vec<(usize, crate::Result<F>)>) -> bool,
) {
    let mut admitted = Vec::with_capacity(group);
    let mut next = 0;
    loop {
        if admitted.len() < group && next < jobs {
            match admit(next, admitted.is_empty()) {
                Admission::Stop => break,
                Admission::Done(file) => {
                    admitted.push((next, file));
                    next += 1;
                    continue;
                }
                Admission::Later => {} // hand on what is admitted first
            }
        }
        if admitted.is_empty() || !hand_on(std::mem::take(&mut admitted)) {
            return; // every job taken, or nobody takes them any more
        }
    }
    if !admitted.is_empty() {
        hand_on(admitted);
    }
}

/// `CUIMG_FAIL_CODECS=hardware,default` (a test hook, built only with the `test-hooks`
/// feature, which the GPU bundle's binary has and a release build has not): the codecs
/// named fail to open, as when nvJPEG cannot make them, so that the tests run the paths
/// that take over their work.
#[cfg(feature = "test-hooks")]
fn failing(codec: &str) -> Option<crate::Error> {
    let named = std::env::var("CUIMG_FAIL_CODECS").unwrap_or_default();
    named.split(',').any(|c| c.trim() == codec).then(|| crate::Error::NoNvjpeg(format!("CUIMG_FAIL_CODECS={named}")))
}

#[cfg(not(feature = "test-hooks"))]
fn failing(_: &str) -> Option<crate::Error> {
    None
}

/// A CPU decoder: takes files one at a time, decodes each on this core (`cuimg::io::decode_jpeg_as`),
/// uploads it and runs the operation on a stream of its own; until the queue is empty, or
/// until `until` is set.
fn decode_on_cpu<S: JpegPixel, Q: Pixel>(
    gpu: &crate::Gpu,
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> crate::Result<DeviceImage<Q>> + Sync),
    files: &Mutex<std::sync::mpsc::Receiver<(usize, Vec<u8>)>>,
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
    until: Option<&std::sync::atomic::AtomicBool>,
) {
    let stream = match gpu.stream_with_priority(crate::StreamPriority::Low) {
        Ok(s) => s,
        Err(e) => return run.say(&format!("error: a CPU decoder has no stream: {e}")),
    };
    while until.is_none_or(|u| !u.load(Relaxed))
        && let Some(files) = run.span("wait for files", || take(files, 1))
    {
        for (i, raw) in &files {
            let img = run
                .time(Stage::Decode, || crate::io::decode_jpeg_as::<S>(raw, &jobs[*i].0, &run.limits))
                // Through the stream's page-locked buffer: from ordinary memory the driver
                // holds its lock while it stages the copy, and the other threads wait.
                .and_then(|img| run.time(Stage::Upload, || stream.upload_staged(&img.view())));
            if !apply_and_hand_on(&stream, *i, img, jobs, run, op, results) {
                return;
            }
        }
    }
}

/// A file a GPU decoder passes on (nvJPEG refused it, or it is turned by its EXIF
/// orientation), decoded on the CPU and uploaded.
fn decode_and_upload<S: JpegPixel>(
    s: &Stream,
    file: Option<&JpegFile>,
    raw: &[u8],
    input: &Path,
    run: &Run,
) -> crate::Result<DeviceImage<S>> {
    let img = run.time(Stage::Decode, || match file {
        Some(file) => crate::io::decode_jpeg_file::<S>(file, input, &run.limits),
        // (Its header does not parse: the CPU decoder names the problem.)
        None => crate::io::decode_jpeg_as::<S>(raw, input, &run.limits),
    })?;
    run.time(Stage::Upload, || s.upload(&img.view()))
}

/// Up to `n` files from the reader; `None` when none are left. Waits for the first, then
/// up to [`BATCH_WAIT`] more for the rest of a batch (the hardware decoder wants whole
/// batches, and the reader is usually far enough ahead to fill one at once), under the
/// lock. Never for ever: with a memory budget of a few files, a batch of 32 never fills,
/// and a decoder waiting for it, holding the queue, stalled the run (seen on the H100 with
/// `--memory 9M`: the files it held were the only ones admitted).
fn take(files: &Mutex<std::sync::mpsc::Receiver<(usize, Vec<u8>)>>, n: usize) -> Option<Vec<(usize, Vec<u8>)>> {
    take_within(&files.lock().unwrap_or_else(|e| e.into_inner()), n, BATCH_WAIT)
}

/// How long a batch may wait to fill once its first file is there.
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

fn take_within<T>(rx: &std::sync::mpsc::Receiver<T>, n: usize, wait: std::time::Duration) -> Option<Vec<T>> {
    let mut batch = vec![rx.recv().ok()?];
    let deadline = Instant::now() + wait;
    while batch.len() < n {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(item) => batch.push(item),
            Err(_) => break, // the time is up, or the reader is done
        }
    }
    Some(batch)
}

/// A decoder's loop: `n` files at a time from the reader through [`decode_and_apply`], until
/// none are left.
fn decode_all<S: JpegPixel, Q: Pixel>(
    w: &Worker,
    n: usize,
    files: &Mutex<std::sync::mpsc::Receiver<(usize, Vec<u8>)>>,
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> crate::Result<DeviceImage<Q>> + Sync),
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
) {
    while let Some(batch) = run.span("wait for files", || take(files, n)) {
        decode_and_apply(w, &batch, jobs, run, op, results);
    }
}

/// Decodes `files` on the worker's codec (what nvJPEG refuses, on the CPU), runs the
/// operation on its stream, and queues each result for the encoders.
fn decode_and_apply<S: JpegPixel, Q: Pixel>(
    w: &Worker,
    files: &[(usize, Vec<u8>)],
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> crate::Result<DeviceImage<Q>> + Sync),
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
) {
    use rayon::prelude::*;
    let s = &w.stream;
    // Each file's one header parse (on all cores: the completeness check reads all of it),
    // read by the GPU decoder, the CPU decoder and the orientation alike.
    let parsed: Vec<Option<JpegFile>> = files.par_iter().map(|(_, b)| JpegFile::parse(b).ok()).collect();
    let good: Vec<JpegFile> = parsed.iter().flatten().copied().collect();
    let decoded = run.time(Stage::Decode, || {
        let r = w.jpeg.decode_files::<S>(s, &good);
        let _ = s.synchronize();
        r
    });
    let decoded = match decoded {
        Ok(d) => d,
        Err(e) => {
            for (i, _) in files {
                run.fail(&jobs[*i].0, &e);
            }
            return;
        }
    };
    let mut decoded = decoded.into_iter();
    for ((i, raw), file) in files.iter().zip(&parsed) {
        let input = &jobs[*i].0;
        // What nvJPEG refuses (progressive files on the hardware decoder, CMYK) goes
        // through the CPU decoder, which also names the problem of a file neither reads
        // (and turns it upright itself).
        let img = match (file, file.as_ref().map(|_| decoded.next().expect("one result a parsed file"))) {
            (Some(file), Some(Ok(img))) => upright(s, img, file, run),
            (Some(file), _) => decode_and_upload::<S>(s, Some(file), raw, input, run),
            (None, _) => decode_and_upload::<S>(s, None, raw, input, run),
        };
        if !apply_and_hand_on(s, *i, img, jobs, run, op, results) {
            return;
        }
    }
}

/// nvJPEG decodes the pixels as stored: a file whose EXIF orientation turns it (a phone's
/// photo) is turned on the GPU, as the CPU decoder turns it.
fn upright<S: Pixel>(s: &Stream, img: DeviceImage<S>, file: &JpegFile, run: &Run) -> crate::Result<DeviceImage<S>> {
    let o = file.header().orientation;
    if o == crate::Orientation::Identity {
        return Ok(img);
    }
    run.time(Stage::Kernel, || {
        let (w, h) = o.size(img.width(), img.height());
        let mut turned = s.alloc::<S>(w, h)?;
        s.orient(&img, &mut turned, o)?;
        Ok(turned)
    })
}

/// Runs the operation on a decoded image and queues the result for the encoders (a
/// failure is reported with the input's path); false once the encoders are gone.
fn apply_and_hand_on<S: Pixel, Q: Pixel>(
    s: &Stream,
    i: usize,
    img: crate::Result<DeviceImage<S>>,
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> crate::Result<DeviceImage<Q>> + Sync),
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
) -> bool {
    match img.and_then(|src| run.time(Stage::Kernel, || op(s, src))) {
        Ok(dst) => run.span("wait to hand on", || results.send((i, dst)).is_ok()),
        Err(e) => {
            run.fail(&jobs[i].0, e);
            true
        }
    }
}

/// Encodes one result (JPEG on the GPU where there is a codec, else on the CPU after a
/// download, as other formats) and hands it to the writer threads.
fn encode_and_write<Q: JpegPixel + Encode>(
    jpeg: Option<&crate::jpeg::Jpeg>,
    s: &Stream,
    dst: &DeviceImage<Q>,
    out: &Path,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    writers: &std::sync::mpsc::SyncSender<(PathBuf, Vec<u8>)>,
) {
    let encoded = match (format(out), jpeg) {
        (Format::Jpeg { quality }, Some(jpeg)) => run.time(Stage::Encode, || jpeg.encode(s, dst, quality)),
        (other, _) => run
            .time(Stage::Download, || s.download(dst))
            .and_then(|img| run.time(Stage::Encode, || crate::io::encode(&img, other))),
    };
    match encoded {
        Err(e) => run.fail(out, e),
        // Written by the writer threads: a slow disk holds up no GPU work.
        Ok(bytes) => {
            if !run.span("wait to hand on", || writers.send((out.to_path_buf(), bytes)).is_ok()) {
                run.fail(out, "the writer threads stopped");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// With a budget of three files, the reader hands on what it admitted before it waits
    /// for more: every job goes through, in order, none waiting on memory held by files
    /// the reader itself still holds.
    #[test]
    fn the_reader_never_waits_for_memory_its_own_files_hold() {
        use super::{Admission, admit_in_groups};
        let held = std::cell::Cell::new(0);
        let order = std::cell::RefCell::new(Vec::new());
        admit_in_groups(
            40,
            16,
            |i, wait| match held.get() < 3 {
                true => {
                    held.set(held.get() + 1);
                    Admission::Done(Ok(i))
                }
                // Nothing else runs here: waiting now would be for ever.
                false => {
                    assert!(!wait, "job {i} waits for memory that only the reader's own files hold");
                    Admission::Later
                }
            },
            |group| {
                assert!(!group.is_empty() && group.len() <= 16);
                held.set(held.get() - group.len()); // decoded, written: released
                order.borrow_mut().extend(group.into_iter().map(|(i, f)| (i, f.unwrap())));
                true
            },
        );
        let order = order.into_inner();
        assert_eq!(order.iter().map(|(i, _)| *i).collect::<Vec<_>>(), (0..40).collect::<Vec<_>>());
        assert!(order.iter().all(|(i, f)| i == f));
    }

    /// A batch fills from what is there, waits a little for the rest, and never for ever.
    #[test]
    fn batches_wait_a_little_and_never_for_ever() {
        let (tx, rx) = std::sync::mpsc::channel();
        for i in 0..40 {
            tx.send(i).unwrap();
        }
        assert_eq!(super::take_within(&rx, 32, Duration::from_secs(60)).unwrap().len(), 32, "a full batch at once");
        let start = Instant::now();
        assert_eq!(super::take_within(&rx, 32, Duration::from_millis(100)).unwrap().len(), 8);
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        drop(tx);
        assert!(super::take_within(&rx, 32, Duration::from_millis(100)).is_none(), "none left");
    }
}
