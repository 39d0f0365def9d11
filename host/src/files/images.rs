//! Images of any format (PNG and JPEG files, gray, gray + alpha, RGB, RGBA) through the CPU
//! or the GPU, each kept in its format (`formats`): read and checked, decoded, processed,
//! encoded and written on all cores, the GPU work of RGB images on the overlapped pipeline.

use std::path::Path;
use std::sync::Mutex;

use crate::io::Format;
use crate::{Device, DeviceImage, GpuPool, Image, Pipeline, Pixel, Rgb8, Stream};
use rayon::prelude::*;

use super::formats::{Any, Command, apply};
use super::inputs::Job;
use super::observe::Stage;
use super::run::Run;

/// The page-locked buffers a pipeline slot keeps between images, at most (the run's
/// constant beside its budget: 2 threads of 2 slots on each GPU).
pub const KEEP_BUFFERS: usize = 64 << 20;

/// Where each output goes in which format.
pub type Formats<'a> = &'a (dyn Fn(&Path) -> Format + Sync);

/// Reads, checks and decodes one input in its own format, timed (a JPEG's luma plane for
/// `gray`). Samples of more than 8 bits are reduced to 8, and the user is told, file by
/// file. `None` once the run is stopping.
pub fn load(path: &Path, luma: bool, run: &Run) -> Option<crate::Result<Any>> {
    // What the decoded image takes at most: its own channels, or RGB.
    Some(run.read(path, Rgb8::CHANNELS as u32)?.and_then(|(header, bytes)| {
        run.time(Stage::Decode, || {
            if let Some(bits @ 9..) = crate::io::bits_per_channel(&bytes) {
                run.warn(path, &format!("{bits} bits per channel, reduced to 8 (cuimg works on 8-bit images)"));
            }
            Any::decode(&bytes, path, &header, luma, &run.limits)
        })
    }))
}

/// Encodes and writes one result, timed. JPEG has no alpha: an image with one loses it,
/// with a warning.
pub fn save(img: &Any, input: &Path, out: &Path, format: Format, run: &Run) {
    if img.alpha() && matches!(format, Format::Jpeg { .. }) {
        run.warn(input, "its alpha is dropped: JPEG has none (use --format png to keep it)");
    }
    match run.time(Stage::Encode, || img.encode(format)) {
        Err(e) => run.fail(out, e),
        Ok(bytes) => match run.time(Stage::Write, || run.policy.write(out, &bytes)) {
            Err(e) => run.fail(out, format!("cannot write: {e}")),
            Ok(()) => run.ok(out),
        },
    }
}

/// Runs `cmd` on one decoded image on `engine` and saves the result.
fn process(engine: &Device, cmd: &Command, img: Any, (input, out): &Job, format: Formats<'_>, run: &Run) {
    match run.time(Stage::Kernel, || apply(engine, cmd, img)) {
        Err(e) => run.fail(input, e),
        Ok((result, warning)) => {
            if let Some(w) = warning {
                run.warn(input, w);
            }
            save(&result, input, out, format(out), run);
        }
    }
}

/// The CPU path: every image read, processed and written on a core of its own.
pub fn on_cpu(jobs: &[Job], cmd: &Command, format: Formats<'_>, run: &Run) {
    let cpu = Device::cpu();
    jobs.par_iter().for_each(|job| match load(&job.0, run.luma, run) {
        None => {}
        Some(Err(e)) => run.fail(&job.0, e),
        Some(Ok(img)) => process(&cpu, cmd, img, job, format, run),
    });
}

/// The GPU path: decoding on all cores feeds the pipeline with RGB images, whose results
/// are encoded and written on all cores, with bounded queues between the stages. Images of
/// other formats go through the GPU one at a time, on the core that decoded them.
pub fn on_gpu<Q: Pixel>(
    jobs: &[Job],
    pool: &GpuPool,
    cmd: &Command,
    format: Formats<'_>,
    run: &Run,
    op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> crate::Result<()> + Sync,
    wrap: fn(Image<Q>) -> Any,
) {
    if jobs.is_empty() {
        return; // no pipeline to set up (the JPEG path took every file)
    }
    let (decoded_tx, decoded_rx) = std::sync::mpsc::sync_channel::<(usize, Image<Rgb8>)>(32);
    let (result_tx, result_rx) = std::sync::mpsc::sync_channel::<(usize, Image<Q>)>(32);
    let result_rx = Mutex::new(result_rx);
    // Pipeline index -> job index: the pipeline numbers the images it gets in arrival order.
    let order = Mutex::new(Vec::with_capacity(jobs.len()));
    // Images of other formats than RGB, through each GPU's blocking calls.
    let devices: Vec<Device> = pool.gpus().iter().cloned().map(Device::Gpu).collect();
    let devices = &devices;
    std::thread::scope(|scope| {
        scope.spawn(move || {
            jobs.par_iter().enumerate().for_each_with(decoded_tx, |tx, (i, job)| match load(&job.0, run.luma, run) {
                None => {}
                Some(Ok(Any::Rgb(img))) => {
                    // The pipeline gone (it could not start): the others are not read.
                    let sent = tx.send((i, img));
                    if sent.is_err() {
                        run.halt("the GPU pipeline stopped".into());
                    }
                }
                Some(Ok(other)) => process(&devices[i % devices.len()], cmd, other, job, format, run),
                Some(Err(e)) => run.fail(&job.0, e),
            });
        });
        let writers = std::thread::available_parallelism().map_or(4, |n| n.get()).div_ceil(2);
        for _ in 0..writers {
            let result_rx = &result_rx;
            scope.spawn(move || {
                while let Some((i, img)) = next(result_rx, run) {
                    let (input, out) = &jobs[i];
                    save(&wrap(img), input, out, format(out), run);
                }
            });
        }
        let images = decoded_rx.into_iter().map(|(i, img)| {
            order.lock().unwrap_or_else(|e| e.into_inner()).push(i);
            img
        });
        // Slots keep their page-locked buffers between images only when small: a large
        // image's are part of its cost against the budget, and freed with it.
        let size = |w, h| cmd.bound.size(w, h);
        let report = Pipeline::on(pool).keep_buffers_up_to(KEEP_BUFFERS).run_sized(images, &size, op, |k, result| {
            let i = order.lock().unwrap_or_else(|e| e.into_inner())[k];
            match result {
                Ok(img) => {
                    let _ = result_tx.send((i, img));
                }
                Err(e) => run.fail(&jobs[i].0, e),
            }
        });
        drop(result_tx);
        match report {
            Ok(r) => {
                run.observer.stage(Stage::Upload, None, r.upload);
                run.observer.stage(Stage::Kernel, None, r.kernel);
                run.observer.stage(Stage::Download, None, r.download);
                run.observer.stage(Stage::Staging, None, r.host_in + r.host_out);
                for e in r.worker_errors {
                    run.say(&format!("warning: a GPU pipeline worker could not start: {e}"));
                }
            }
            Err(e) => run.halt(format!("the GPU pipeline could not start: {e}")),
        }
    });
}

/// The next item of a queue several threads take from (timed as a wait); `None` once the
/// queue is closed and empty.
pub fn next<T>(queue: &Mutex<std::sync::mpsc::Receiver<T>>, run: &Run) -> Option<T> {
    run.span("wait for results", || queue.lock().unwrap_or_else(|e| e.into_inner()).recv().ok())
}

/// The devices a run of files of numbers spreads its images over: each GPU, or all cores.
fn devices(pool: Option<&GpuPool>) -> Vec<Device> {
    match pool {
        Some(p) => p.gpus().iter().cloned().map(Device::Gpu).collect(),
        None => vec![Device::cpu()],
    }
}

/// Each image as a tensor of its own format's channels, written as a NumPy `.npy` file
/// ([`crate::Tensor::to_npy`]).
pub fn tensors(jobs: &[Job], pool: Option<&GpuPool>, cmd: &Command, run: &Run) {
    let devices = devices(pool);
    jobs.par_iter().enumerate().for_each(|(k, (input, out))| {
        let img = match load(input, false, run) {
            None => return,
            Some(Ok(img)) => crate::registry::AnyImage::from(img),
            Some(Err(e)) => return run.fail(input, e),
        };
        let made = run.time(Stage::Kernel, || devices[k % devices.len()].apply(&*cmd.bound, &img.view()));
        let npy = match made {
            Ok(crate::registry::Output::Tensor(t)) => run.time(Stage::Encode, || t.to_npy()),
            Ok(_) => return run.fail(input, format!("{} made no tensor", cmd.op.name)),
            Err(e) => return run.fail(input, e),
        };
        match run.time(Stage::Write, || run.policy.write(out, &npy)) {
            Ok(()) => run.ok(out),
            Err(e) => run.fail(out, format!("cannot write: {e}")),
        }
    });
}

/// Histograms of every image, channel by channel in its own format, as CSV (`bin,red,green,blue`
/// for RGB, `bin,gray` for gray, with `alpha` where there is one) or JSON files.
pub fn histograms(jobs: &[Job], pool: Option<&GpuPool>, json: bool, run: &Run) {
    let devices = devices(pool);
    jobs.par_iter().enumerate().for_each(|(k, (input, out))| {
        let img = match load(input, false, run) {
            None => return,
            Some(Ok(img)) => img,
            Some(Err(e)) => return run.fail(input, e),
        };
        let hist = run.time(Stage::Kernel, || img.histogram(&devices[k % devices.len()]));
        let (names, hist) = match hist {
            Ok(h) => h,
            Err(e) => return run.fail(input, e),
        };
        let text = run.time(Stage::Encode, || {
            let (w, h) = img.dimensions();
            if json {
                let mut doc = serde_json::json!({"file": input.display().to_string(), "width": w, "height": h});
                for (c, name) in names.iter().enumerate() {
                    doc[*name] = hist.channel(c).to_vec().into();
                }
                doc.to_string()
            } else {
                let mut csv = format!("bin,{}\n", names.join(","));
                for b in 0..256 {
                    csv.push_str(&b.to_string());
                    for c in 0..names.len() {
                        csv.push_str(&format!(",{}", hist.channel(c)[b]));
                    }
                    csv.push('\n');
                }
                csv
            }
        });
        match run.time(Stage::Write, || run.policy.write(out, text.as_bytes())) {
            Ok(()) => run.ok(out),
            Err(e) => run.fail(out, format!("cannot write: {e}")),
        }
    });
}
