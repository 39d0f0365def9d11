//! `cuimg`: folders of images through the GPU (every GPU of the machine, or the one named),
//! or all CPU cores, files to files.
//!
//! ```text
//! cuimg gray photos/ -o out/                 # every PNG/JPEG of photos/ to gray PNG/JPEG in out/
//! cuimg equalize 'shots/*.jpg' -o out/ --quality 90 --gpu all --report --plot stages.svg
//! cuimg lut a.png b.png -o out/ --table gamma:2.2
//! cuimg histogram photos/ -o hist/ --format json
//! cuimg clahe photos/ -o out/ --clip 3 --tiles 16x16
//! ```
//!
//! Reading and decoding run on all cores, the GPU work on the overlapped pipeline
//! (`cuimg::Pipeline`), encoding and writing on all cores again, all at the same time and
//! with bounded memory. A file that cannot be read, decoded or written is reported with its
//! path and the others go on; the exit code is 1 when any failed. Outputs are written through
//! a temporary file and a rename, and never over an input.

mod inputs;
mod report;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use cuimg::io::{Encode, Format};
use cuimg::{
    Clahe, DeviceImage, EqualizeMode, GpuPool, Gray8, GrayWeights, Image, Lut, Pipeline, Pixel, Rgb8, Stream, cpu,
};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use report::{Stage, Stages};

#[derive(Parser)]
#[command(name = "cuimg", version, about = "GPU image processing, files to files", long_about = None)]
struct Cli {
    #[command(subcommand)]
    op: Op,
}

#[derive(Subcommand)]
enum Op {
    /// RGB to gray (BT.601, as OpenCV's cvtColor).
    Gray(Common),
    /// Gray written back into red, green and blue.
    Bw(Common),
    /// Histogram equalization on luma (colors keep their hue), as OpenCV's equalizeHist.
    Equalize(Common),
    /// A lookup table on every channel: invert, gamma:G or threshold:T.
    Lut {
        #[command(flatten)]
        common: Common,
        /// invert, gamma:GAMMA (above 0) or threshold:LEVEL (0 to 255)
        #[arg(long, default_value = "invert")]
        table: String,
    },
    /// The 256-bin histogram of each image's red, green and blue, as CSV or JSON files.
    Histogram(Common),
    /// Contrast-limited adaptive histogram equalization (OpenCV's CLAHE) on luma, or on each
    /// channel with --per-channel.
    Clahe {
        #[command(flatten)]
        common: Common,
        /// How many times the average bin count a bin may hold before it is clipped (above 0).
        // Negative numbers are taken as values, so `--clip -1` gets this tool's message.
        #[arg(long, default_value_t = 2.0, allow_negative_numbers = true)]
        clip: f64,
        /// The tile grid, COLUMNSxROWS.
        #[arg(long, default_value = "8x8")]
        tiles: String,
        /// Each of red, green and blue through its own tables instead of the luma (changes hues).
        #[arg(long)]
        per_channel: bool,
    },
}

#[derive(Args, Clone)]
struct Common {
    /// Image files, folders (their PNG and JPEG files) and glob patterns.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The folder to write into (made if missing).
    #[arg(short, long)]
    out: PathBuf,
    /// Output format: png or jpg (images; default: the input's), csv or json (histogram).
    #[arg(long)]
    format: Option<String>,
    /// JPEG quality, 1 to 100.
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u8).range(1..=100))]
    quality: u8,
    /// The GPU to use (an index) or "all".
    #[arg(long, default_value = "all")]
    gpu: String,
    /// Use the CPU (all cores) even when a GPU is there.
    #[arg(long)]
    cpu: bool,
    /// Print the time of each stage (read, decode, upload, kernel, download, encode, write).
    #[arg(long)]
    report: bool,
    /// Draw the stage times to an SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Write every thread's timeline (each stage and each wait) as a Chrome trace (JSON;
    /// open it in Perfetto or chrome://tracing); `--report` then also sums it per thread.
    #[arg(long)]
    trace: Option<PathBuf>,
}

/// Everything one run shares between its threads.
struct Run {
    stages: Stages,
    progress: ProgressBar,
    failures: Mutex<Vec<inputs::Problem>>,
    done: AtomicUsize,
}

impl Run {
    fn fail(&self, path: &Path, why: impl std::fmt::Display) {
        self.progress.suspend(|| eprintln!("error: {}: {why}", path.display()));
        self.failures.lock().unwrap_or_else(|e| e.into_inner()).push((path.to_path_buf(), why.to_string()));
        self.progress.inc(1);
    }

    fn ok(&self) {
        self.done.fetch_add(1, Relaxed);
        self.progress.inc(1);
    }
}

fn main() {
    let cli = Cli::parse();
    let (op, common) = match &cli.op {
        Op::Gray(c) | Op::Bw(c) | Op::Equalize(c) | Op::Histogram(c) => (&cli.op, c),
        Op::Lut { common, .. } | Op::Clahe { common, .. } => (&cli.op, common),
    };
    std::process::exit(match run(op, common) {
        Ok(0) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    });
}

/// The run; `Ok(failures)`, or `Err` when nothing could start.
fn run(op: &Op, c: &Common) -> Result<usize, String> {
    let lut = match op {
        Op::Lut { table, .. } => Some(parse_lut(table)?),
        _ => None,
    };
    let clahe = match op {
        Op::Clahe { clip, tiles, per_channel, .. } => {
            let mode = if *per_channel { EqualizeMode::PerChannel } else { EqualizeMode::Luma };
            Some((parse_clahe(*clip, tiles)?, mode))
        }
        _ => None,
    };
    let histogram = matches!(op, Op::Histogram(_));
    let ext = match (c.format.as_deref(), histogram) {
        (None, true) => Some("csv"),
        (Some(f @ ("csv" | "json")), true) => Some(f),
        (Some(f @ ("png" | "jpg" | "jpeg")), false) => Some(f),
        (None, false) => None,
        (Some(f), _) => return Err(format!("--format {f} does not fit this command")),
    };
    std::fs::create_dir_all(&c.out).map_err(|e| format!("cannot create the output folder {}: {e}", c.out.display()))?;
    let probe = c.out.join(format!(".cuimg-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("cannot write into the output folder {}: {e}", c.out.display()))?;
    let _ = std::fs::remove_file(&probe);

    let (files, missing) = inputs::expand(&c.inputs);
    let (jobs, clashes) = inputs::outputs(&files, &c.out, ext);
    let progress = ProgressBar::new((jobs.len() + clashes.len()) as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} images, {per_sec}, {eta} left").expect("a valid template"),
    );
    let run = Run {
        stages: Stages::new(c.trace.is_some()),
        progress,
        failures: Mutex::new(Vec::new()),
        done: AtomicUsize::new(0),
    };
    for (path, why) in missing.iter().chain(&clashes) {
        run.fail(path, why);
    }
    let start = Instant::now();
    let gpus = if c.cpu { None } else { open_gpus(&c.gpu)? };
    let device = gpus.as_ref().map_or_else(
        || format!("CPU, {} threads", rayon::current_num_threads()),
        |p| format!("{} x {}", p.len(), p.gpus()[0].name()),
    );
    let jpeg = |path: &Path| Format::from_path(path, c.quality).unwrap_or(Format::Png);
    // JPEG in, on a GPU with nvJPEG: decoded (and, for JPEG out, encoded) on the GPU.
    let all_jpeg = !jobs.is_empty() && jobs.iter().all(|(i, _)| is_jpeg(i));
    let codecs = match (&gpus, all_jpeg && !histogram) {
        (Some(pool), true) => match open_codecs(pool, jobs.iter().all(|(_, o)| is_jpeg(o))) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("JPEG through the CPU: {e}");
                None
            }
        },
        _ => None,
    };
    let opened = start.elapsed();
    let device = match &codecs {
        Some(c) => format!("{device}, nvJPEG ({})", c[0].describe()),
        None => device,
    };
    let jpeg_path = codecs.is_some();
    match (op, &gpus, codecs) {
        (Op::Gray(_), Some(_), Some(codecs)) => {
            jpeg_on_gpu::<Gray8>(&jobs, codecs, &jpeg, &run, |s, a, b| s.grayscale(a, b, GrayWeights::Bt601))
        }
        (Op::Bw(_), Some(_), Some(codecs)) => {
            jpeg_on_gpu::<Rgb8>(&jobs, codecs, &jpeg, &run, |s, a, b| s.black_and_white(a, b, GrayWeights::Bt601))
        }
        (Op::Equalize(_), Some(_), Some(codecs)) => {
            jpeg_on_gpu::<Rgb8>(&jobs, codecs, &jpeg, &run, |s, a, b| s.equalize_color(a, b, EqualizeMode::Luma))
        }
        (Op::Clahe { .. }, Some(_), Some(codecs)) => {
            let (p, mode) = clahe.expect("parsed above");
            jpeg_on_gpu::<Rgb8>(&jobs, codecs, &jpeg, &run, move |s, a, b| s.clahe_color(a, b, p, mode))
        }
        (Op::Lut { .. }, Some(_), Some(codecs)) => {
            let lut = lut.expect("parsed above");
            jpeg_on_gpu::<Rgb8>(&jobs, codecs, &jpeg, &run, move |s, a, b| {
                s.apply_lut(a, b, &s.upload_lut::<Rgb8>(&lut)?)
            })
        }
        _ => {}
    }
    if !jpeg_path {
        match (op, &gpus) {
            (Op::Histogram(_), _) => histograms(&jobs, gpus.as_ref(), ext == Some("json"), &run),
            (Op::Gray(_), Some(pool)) => {
                on_gpu::<Gray8>(&jobs, pool, &jpeg, &run, |s, a, b| s.grayscale(a, b, GrayWeights::Bt601))
            }
            (Op::Bw(_), Some(pool)) => {
                on_gpu::<Rgb8>(&jobs, pool, &jpeg, &run, |s, a, b| s.black_and_white(a, b, GrayWeights::Bt601))
            }
            (Op::Equalize(_), Some(pool)) => {
                on_gpu::<Rgb8>(&jobs, pool, &jpeg, &run, |s, a, b| s.equalize_color(a, b, EqualizeMode::Luma))
            }
            (Op::Clahe { .. }, Some(pool)) => {
                let (p, mode) = clahe.expect("parsed above");
                on_gpu::<Rgb8>(&jobs, pool, &jpeg, &run, move |s, a, b| s.clahe_color(a, b, p, mode))
            }
            (Op::Lut { .. }, Some(pool)) => {
                let lut = lut.expect("parsed above");
                on_gpu::<Rgb8>(&jobs, pool, &jpeg, &run, move |s, a, b| {
                    // One upload of 768 bytes per image: small against the image's own.
                    s.apply_lut(a, b, &s.upload_lut::<Rgb8>(&lut)?)
                })
            }
            (Op::Gray(_), None) => {
                on_cpu::<Gray8>(&jobs, &jpeg, &run, |i| cpu::grayscale(&i.view(), GrayWeights::Bt601))
            }
            (Op::Bw(_), None) => {
                on_cpu::<Rgb8>(&jobs, &jpeg, &run, |i| cpu::black_and_white(&i.view(), GrayWeights::Bt601))
            }
            (Op::Equalize(_), None) => {
                on_cpu::<Rgb8>(&jobs, &jpeg, &run, |i| cpu::equalize_color(&i.view(), EqualizeMode::Luma))
            }
            (Op::Clahe { .. }, None) => {
                let (p, mode) = clahe.expect("parsed above");
                on_cpu::<Rgb8>(&jobs, &jpeg, &run, move |i| cpu::clahe_color(&i.view(), p, mode))
            }
            (Op::Lut { .. }, None) => {
                let lut = lut.expect("parsed above");
                on_cpu::<Rgb8>(&jobs, &jpeg, &run, move |i| cpu::apply_lut(&i.view(), &lut))
            }
        }
    }
    run.progress.finish_and_clear();
    let wall = start.elapsed();
    let failures = run.failures.into_inner().unwrap_or_else(|e| e.into_inner());
    let done = run.done.load(Relaxed);
    eprintln!(
        "{done} images written, {} failed, in {:.2} s ({:.1} images/s) on {device}; {:.0} ms of it opening the GPU and codecs",
        failures.len(),
        wall.as_secs_f64(),
        done as f64 / wall.as_secs_f64().max(1e-9),
        opened.as_secs_f64() * 1e3
    );
    if c.report {
        eprintln!("{}", run.stages.table(done, wall));
        if let Some(threads) = run.stages.threads_table(wall) {
            eprint!("{threads}");
        }
        if let Some(cpu) = process_cpu_seconds() {
            eprintln!(
                "CPU time {cpu:.2} s (user + system) in {:.2} s: {:.1} cores busy on average",
                wall.as_secs_f64(),
                cpu / wall.as_secs_f64().max(1e-9)
            );
        }
    }
    if let Some(trace) = &c.trace {
        run.stages.write_trace(trace).map_err(|e| format!("cannot write {}: {e}", trace.display()))?;
    }
    if let Some(svg) = &c.plot {
        run.stages.plot(svg, &device).map_err(|e| format!("cannot draw {}: {e}", svg.display()))?;
    }
    Ok(failures.len())
}

/// CPU seconds this process has used, user and system (Linux: /proc/self/stat).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    // utime and stime, the 14th and 15th fields (11 and 12 after the name), at 100 ticks/s.
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// `--clip` and `--tiles COLUMNSxROWS`, checked before any file is read.
fn parse_clahe(clip: f64, tiles: &str) -> Result<Clahe, String> {
    let grid = tiles
        .split_once(['x', 'X'])
        .and_then(|(c, r)| Some((c.trim().parse::<u32>().ok()?, r.trim().parse::<u32>().ok()?)))
        .ok_or_else(|| format!("--tiles {tiles}: use COLUMNSxROWS, for example 8x8"))?;
    Clahe::new(clip, grid).map_err(|e| format!("--clip {clip} --tiles {tiles}: {e}"))
}

fn parse_lut(table: &str) -> Result<Lut, String> {
    let (name, arg) = table.split_once(':').unwrap_or((table, ""));
    let number = |what: &str| arg.parse::<f64>().map_err(|_| format!("--table {name}:{arg}: {what} must be a number"));
    match name {
        "invert" => Ok(Lut::invert()),
        "gamma" => {
            let g = number("the gamma")?;
            if g.is_finite() && g > 0.0 {
                Ok(Lut::gamma(g))
            } else {
                Err(format!("--table gamma:{arg}: must be above 0"))
            }
        }
        "threshold" => {
            let t = number("the threshold")?;
            if (0.0..=255.0).contains(&t) {
                Ok(Lut::threshold(t as u8))
            } else {
                Err(format!("--table threshold:{arg}: 0 to 255"))
            }
        }
        _ => Err(format!("--table {table}: use invert, gamma:<G> or threshold:<T>")),
    }
}

fn open_gpus(which: &str) -> Result<Option<GpuPool>, String> {
    let pool = match which {
        "all" => GpuPool::all(),
        n => GpuPool::with_devices(&[n.parse().map_err(|_| format!("--gpu {n}: an index or \"all\""))?]),
    };
    match pool {
        Ok(pool) => Ok(Some(pool)),
        Err(e) if e.is_no_gpu() && which == "all" => {
            eprintln!("no GPU ({e}); using the CPU on all cores");
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Reads and decodes one input, timed. A source with more than 8 bits per channel is
/// reduced to 8 (cuimg's images are 8-bit) and the user is told, file by file.
fn load(path: &Path, run: &Run) -> cuimg::Result<Image<Rgb8>> {
    let stages = &run.stages;
    let bytes = stages
        .time(Stage::Read, || std::fs::read(path).map_err(|source| cuimg::Error::Io { path: path.into(), source }))?;
    stages.time(Stage::Decode, || {
        if let Some(bits @ 9..) = cuimg::io::bits_per_channel(&bytes) {
            run.progress.suspend(|| {
                eprintln!(
                    "warning: {}: {bits} bits per channel, reduced to 8 (cuimg works on 8-bit images)",
                    path.display()
                )
            });
        }
        cuimg::io::decode_converted(&bytes, path)
    })
}

/// Encodes and writes one result, timed.
fn save<Q: Pixel + Encode>(img: &Image<Q>, out: &Path, format: Format, run: &Run) {
    match run.stages.time(Stage::Encode, || cuimg::io::encode(img, format)) {
        Err(e) => run.fail(out, e),
        Ok(bytes) => match run.stages.time(Stage::Write, || inputs::write_atomically(out, &bytes)) {
            Err(e) => run.fail(out, format!("cannot write: {e}")),
            Ok(()) => run.ok(),
        },
    }
}

/// The CPU path: every image read, processed and written on a core of its own.
fn on_cpu<Q: Pixel + Encode>(
    jobs: &[inputs::Job],
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Image<Rgb8>) -> cuimg::Result<Image<Q>> + Sync,
) {
    jobs.par_iter().for_each(|(input, out)| match load(input, run) {
        Err(e) => run.fail(input, e),
        Ok(img) => match run.stages.time(Stage::Kernel, || op(&img)) {
            Err(e) => run.fail(input, e),
            Ok(result) => save(&result, out, format(out), run),
        },
    });
}

/// The GPU path: decoding on all cores feeds the pipeline, whose results are encoded and
/// written on all cores, with bounded queues between the stages.
fn on_gpu<Q: Pixel + Encode>(
    jobs: &[inputs::Job],
    pool: &GpuPool,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync,
) {
    let (decoded_tx, decoded_rx) = std::sync::mpsc::sync_channel::<(usize, Image<Rgb8>)>(32);
    let (result_tx, result_rx) = std::sync::mpsc::sync_channel::<(usize, Image<Q>)>(32);
    let result_rx = Mutex::new(result_rx);
    // Pipeline index -> job index: the pipeline numbers the images it gets in arrival order.
    let order = Mutex::new(Vec::with_capacity(jobs.len()));
    std::thread::scope(|scope| {
        scope.spawn(move || {
            jobs.par_iter().enumerate().for_each_with(decoded_tx, |tx, (i, (input, _))| match load(input, run) {
                Ok(img) => {
                    let _ = tx.send((i, img));
                }
                Err(e) => run.fail(input, e),
            });
        });
        let writers = std::thread::available_parallelism().map_or(4, |n| n.get()).div_ceil(2);
        for _ in 0..writers {
            let result_rx = &result_rx;
            scope.spawn(move || {
                while let Some((i, img)) = next(result_rx, run) {
                    let out = &jobs[i].1;
                    save(&img, out, format(out), run);
                }
            });
        }
        let images = decoded_rx.into_iter().map(|(i, img)| {
            order.lock().unwrap_or_else(|e| e.into_inner()).push(i);
            img
        });
        let report = Pipeline::on(pool).run(images, op, |k, result| {
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
                run.stages.add(Stage::Upload, r.upload);
                run.stages.add(Stage::Kernel, r.kernel);
                run.stages.add(Stage::Download, r.download);
                run.stages.add(Stage::Staging, r.host_in + r.host_out);
            }
            Err(e) => {
                run.progress.suspend(|| eprintln!("error: the GPU pipeline could not start: {e}"));
            }
        }
    });
}

/// Histograms of every image, as CSV (`bin,red,green,blue`) or JSON files.
fn histograms(jobs: &[inputs::Job], pool: Option<&GpuPool>, json: bool, run: &Run) {
    jobs.par_iter().enumerate().for_each(|(k, (input, out))| {
        let img = match load(input, run) {
            Ok(img) => img,
            Err(e) => return run.fail(input, e),
        };
        let hist = run.stages.time(Stage::Kernel, || match pool {
            Some(p) => p.gpus()[k % p.len()].histogram(&img.view()),
            None => cpu::histogram(&img.view()),
        });
        let hist = match hist {
            Ok(h) => h,
            Err(e) => return run.fail(input, e),
        };
        let text = run.stages.time(Stage::Encode, || {
            if json {
                let channel = |c: usize| hist.channel(c).to_vec();
                serde_json::json!({"file": input.display().to_string(), "width": img.width(), "height": img.height(),
                    "red": channel(0), "green": channel(1), "blue": channel(2)})
                .to_string()
            } else {
                let mut csv = String::from("bin,red,green,blue\n");
                for b in 0..256 {
                    csv.push_str(&format!(
                        "{b},{},{},{}\n",
                        hist.channel(0)[b],
                        hist.channel(1)[b],
                        hist.channel(2)[b]
                    ));
                }
                csv
            }
        });
        match run.stages.time(Stage::Write, || inputs::write_atomically(out, text.as_bytes())) {
            Ok(()) => run.ok(),
            Err(e) => run.fail(out, format!("cannot write: {e}")),
        }
    });
}

/// Formats nvJPEG encodes from device images.
trait GpuJpeg: Pixel + Encode {
    fn encode_on_gpu(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        img: &DeviceImage<Self>,
        quality: u8,
    ) -> cuimg::Result<Vec<u8>>;
}

impl GpuJpeg for Gray8 {
    fn encode_on_gpu(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        img: &DeviceImage<Self>,
        quality: u8,
    ) -> cuimg::Result<Vec<u8>> {
        jpeg.encode_gray(s, img, quality)
    }
}

impl GpuJpeg for Rgb8 {
    fn encode_on_gpu(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        img: &DeviceImage<Self>,
        quality: u8,
    ) -> cuimg::Result<Vec<u8>> {
        jpeg.encode_rgb(s, img, quality)
    }
}

fn is_jpeg(path: &Path) -> bool {
    matches!(Format::from_path(path, 0), Some(Format::Jpeg { .. }))
}

/// Files per hardware decoder call: `CUIMG_JPEG_BATCH`, or about 32 rounded up to a
/// multiple of the decoder's cores (engines times cores per engine), so that every core
/// has work (the decoder wants large batches: 543 images/s of 12 megapixels at 32 on the
/// H100, 342 at 8; docs/BENCHMARKS.md).
fn batch_size(jpeg: &cuimg::jpeg::Jpeg) -> usize {
    let cores = jpeg.hardware_decoder().map_or(1, |(engines, cores)| (engines * cores).max(1) as usize);
    knob("CUIMG_JPEG_BATCH", 32usize.div_ceil(cores) * cores).max(1)
}

/// A count from the environment, or `default`.
fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A codec and its stream: one worker's, so no two workers share an nvJPEG state.
struct Worker {
    jpeg: std::sync::Arc<cuimg::jpeg::Jpeg>,
    stream: Stream,
}

/// Every nvJPEG codec of a run on one GPU, all made before any decoding starts (making
/// decoder states while others decode is what hung nvJPEG; cuimg also serializes it).
struct GpuCodecs {
    gpu: cuimg::Gpu,
    /// Batched decoders (the hardware decoder where the GPU has one) to open: their library
    /// handle takes 0.6 to 0.8 s to make on the H100, so they open while the others work.
    hardware: usize,
    /// Decoders on the SMs (nvJPEG's GPU decoder), one file at a time, beside the hardware.
    on_sms: Vec<Worker>,
    encoders: Vec<Worker>,
}

impl GpuCodecs {
    fn describe(&self) -> String {
        format!(
            "{} batched (hardware) decoders, {} on the SMs, {} encoders per GPU",
            self.hardware,
            self.on_sms.len(),
            self.encoders.len()
        )
    }
}

/// The codecs of every GPU of `pool`. Counts per GPU: `CUIMG_HW_DECODERS` (default 1: one
/// fed the engines as well as two alone, and did better among the other stages),
/// `CUIMG_SM_DECODERS` (default: half the cores, at most 6; each takes a core, 12 to
/// 19 CPU ms per 12-megapixel image, and 6 beside the hardware decoder measured best;
/// docs/BENCHMARKS.md) and `CUIMG_ENCODERS` (4; all cores' half when the
/// outputs are encoded on the CPU).
fn open_codecs(pool: &GpuPool, jpeg_out: bool) -> cuimg::Result<Vec<GpuCodecs>> {
    let cores = std::thread::available_parallelism().map_or(8, |n| n.get());
    let (hw, sm) = (knob("CUIMG_HW_DECODERS", 1).max(1), knob("CUIMG_SM_DECODERS", (cores / 2).min(6)));
    let encoders = knob("CUIMG_ENCODERS", if jpeg_out { 4 } else { (cores / 2).max(4) }).max(1);
    use cuimg::StreamPriority::{Low, Normal};
    // One library handle per GPU and backend, on every GPU at once; every worker its own
    // states (`Jpeg::another`) and stream. The hardware decoders (`open_batched`) open later,
    // while these work. Their streams go first on the SMs and the SM decoders' last (no
    // difference measured yet: docs/BENCHMARKS.md).
    std::thread::scope(|scope| {
        let opening: Vec<_> = pool
            .gpus()
            .iter()
            .map(|gpu| {
                scope.spawn(move || -> cuimg::Result<_> {
                    let on_sms = cuimg::jpeg::Jpeg::without_hardware(gpu)?;
                    Ok(GpuCodecs {
                        gpu: gpu.clone(),
                        hardware: hw,
                        on_sms: workers(gpu, on_sms.another()?, sm, Low)?,
                        encoders: workers(gpu, on_sms, encoders, Normal)?,
                    })
                })
            })
            .collect();
        opening.into_iter().map(|o| o.join().expect("opening a codec panicked")).collect()
    })
}

/// The batched decoders of one GPU, opened (the slow part) while the other stages work:
/// `hardware` of them on one library handle (the hardware decoder's where there is one).
fn open_batched(gpu: &cuimg::Gpu, hardware: usize) -> cuimg::Result<Vec<Worker>> {
    workers(gpu, cuimg::jpeg::Jpeg::new(gpu)?, hardware, cuimg::StreamPriority::High)
}

/// `n` workers on `first`'s library handle (`first` itself, then codecs with states of
/// their own), each with a stream of `priority`.
fn workers(
    gpu: &cuimg::Gpu,
    first: std::sync::Arc<cuimg::jpeg::Jpeg>,
    n: usize,
    priority: cuimg::StreamPriority,
) -> cuimg::Result<Vec<Worker>> {
    (0..n)
        .map(|k| {
            let jpeg = if k == 0 { first.clone() } else { first.another()? };
            Ok(Worker { jpeg, stream: gpu.stream_with_priority(priority)? })
        })
        .collect()
}

/// JPEG files on the GPU, in stages that all run at once, joined by bounded queues (so
/// memory stays bounded however large the folder):
///
/// 1. one reader thread reads the files in order, a few dozen ahead;
/// 2. on each GPU, batched decoders (the hardware decoder) take a batch of files per
///    call and decoders on the SMs one file at a time, whichever is free first, so the
///    split between them follows their speeds; each runs the operation on its own stream;
/// 3. on each GPU, encoders (each its own stream and codec) encode JPEG outputs on the GPU
///    (other formats are downloaded and encoded on the CPU) and write them.
///
/// A result crosses from a decoder's stream to an encoder's: cuimg's device images order
/// that themselves (the encoder's read waits for the operation's write, and the free for
/// the encoder's read).
fn jpeg_on_gpu<Q: GpuJpeg>(
    jobs: &[inputs::Job],
    codecs: Vec<GpuCodecs>,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync,
) {
    use std::sync::mpsc::sync_channel;
    // Queues of about two hardware batches per GPU.
    const QUEUE: usize = 70;
    let (file_tx, file_rx) = sync_channel::<(usize, Vec<u8>)>(QUEUE * codecs.len());
    let file_rx = Mutex::new(file_rx);
    // One queue of results per GPU: its decoders to its encoders.
    let (result_txs, result_rxs): (Vec<_>, Vec<_>) = codecs
        .iter()
        .map(|_| {
            let (tx, rx) = sync_channel::<(usize, DeviceImage<Q>)>(QUEUE);
            (tx, Mutex::new(rx))
        })
        .unzip();
    // Writer threads behind the encoders (writing a file took 0.4 to 4 ms on the lent machine,
    // as long as encoding it): `CUIMG_WRITERS`, by default 8 per GPU.
    let writers = knob("CUIMG_WRITERS", 8 * codecs.len()).max(1);
    let (write_tx, write_rx) = sync_channel::<(PathBuf, Vec<u8>)>(QUEUE * codecs.len());
    let write_rx = Mutex::new(write_rx);
    let (op, file_rx, write_rx) = (&op, &file_rx, &write_rx);
    std::thread::scope(|scope| {
        for k in 0..writers {
            scope.spawn(move || {
                report::label_thread(format!("writer {k}"));
                while let Some((out, bytes)) = next(write_rx, run) {
                    match run.stages.time(Stage::Write, || inputs::write_atomically(&out, &bytes)) {
                        Err(e) => run.fail(&out, format!("cannot write: {e}")),
                        Ok(()) => run.ok(),
                    }
                }
            });
        }
        scope.spawn(move || {
            report::label_thread("reader".into());
            for (k, chunk) in jobs.chunks(16).enumerate() {
                let read: Vec<_> =
                    chunk.par_iter().map(|(input, _)| run.stages.time(Stage::Read, || std::fs::read(input))).collect();
                for (j, bytes) in read.into_iter().enumerate() {
                    let i = k * 16 + j;
                    match bytes {
                        Ok(b) => {
                            if run.stages.span("wait to hand on", || file_tx.send((i, b))).is_err() {
                                return;
                            }
                        }
                        Err(e) => run.fail(&jobs[i].0, format!("cannot read: {e}")),
                    }
                }
            }
        });
        for (g, ((gpu, result_tx), result_rx)) in codecs.into_iter().zip(result_txs).zip(&result_rxs).enumerate() {
            for (k, w) in gpu.on_sms.into_iter().enumerate() {
                let result_tx = result_tx.clone();
                scope.spawn(move || {
                    report::label_thread(format!("gpu {g} SM decoder {k}"));
                    while let Some(files) = run.stages.span("wait for files", || take(file_rx, 1)) {
                        decode_and_apply(&w, &files, jobs, run, op, &result_tx);
                    }
                });
            }
            // The batched decoders open here, while the others already work.
            let (device, hardware, result_tx_hw) = (gpu.gpu, gpu.hardware, result_tx.clone());
            scope.spawn(move || {
                report::label_thread(format!("gpu {g} hardware decoder 0"));
                let workers = match run.stages.span("open", || open_batched(&device, hardware)) {
                    Ok(w) => w,
                    Err(e) => {
                        // Nothing may wait on this decoder: take files and report them, so
                        // the run ends whatever the other decoders do.
                        run.progress.suspend(|| eprintln!("error: GPU {g}: the batched decoder could not open: {e}"));
                        while let Some(files) = take(file_rx, 1) {
                            for (i, _) in files {
                                run.fail(&jobs[i].0, &e);
                            }
                        }
                        return;
                    }
                };
                let batch = batch_size(&workers[0].jpeg);
                let mut workers = workers.into_iter();
                let first = workers.next().expect("at least one batched decoder");
                for (k, w) in workers.enumerate() {
                    let result_tx = result_tx_hw.clone();
                    scope.spawn(move || {
                        report::label_thread(format!("gpu {g} hardware decoder {}", k + 1));
                        while let Some(files) = run.stages.span("wait for files", || take(file_rx, batch)) {
                            decode_and_apply(&w, &files, jobs, run, op, &result_tx);
                        }
                    });
                }
                while let Some(files) = run.stages.span("wait for files", || take(file_rx, batch)) {
                    decode_and_apply(&first, &files, jobs, run, op, &result_tx_hw);
                }
            });
            // The decoders hold the only senders: the encoders stop when the last one ends.
            drop(result_tx);
            for (k, w) in gpu.encoders.into_iter().enumerate() {
                let write_tx = write_tx.clone();
                scope.spawn(move || {
                    report::label_thread(format!("gpu {g} encoder {k}"));
                    while let Some((i, dst)) = next(result_rx, run) {
                        encode_and_write(&w, &dst, &jobs[i].1, format, run, &write_tx);
                    }
                });
            }
        }
        // The encoders hold the only senders now: the writers stop when the last one ends.
        drop(write_tx);
    });
}

/// The next item of a queue several threads take from (timed as a wait); `None` once the
/// queue is closed and empty.
fn next<T>(queue: &Mutex<std::sync::mpsc::Receiver<T>>, run: &Run) -> Option<T> {
    run.stages.span("wait for results", || queue.lock().unwrap_or_else(|e| e.into_inner()).recv().ok())
}

/// Up to `n` files from the reader (fewer only at the end); `None` when none are left.
/// Waits for all `n` under the lock: the hardware decoder wants whole batches.
fn take(files: &Mutex<std::sync::mpsc::Receiver<(usize, Vec<u8>)>>, n: usize) -> Option<Vec<(usize, Vec<u8>)>> {
    let rx = files.lock().unwrap_or_else(|e| e.into_inner());
    let batch: Vec<_> = rx.iter().take(n).collect();
    (!batch.is_empty()).then_some(batch)
}

/// Decodes `files` on the worker's codec (what nvJPEG refuses, on the CPU), runs the
/// operation on its stream, and queues each result for the encoders.
fn decode_and_apply<Q: Pixel>(
    w: &Worker,
    files: &[(usize, Vec<u8>)],
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync),
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
) {
    let s = &w.stream;
    let bytes: Vec<&[u8]> = files.iter().map(|(_, b)| b.as_slice()).collect();
    let decoded = run.stages.time(Stage::Decode, || {
        let r = w.jpeg.decode_batch_rgb(s, &bytes);
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
    for ((i, raw), img) in files.iter().zip(decoded) {
        let input = &jobs[*i].0;
        // What nvJPEG refuses (progressive files on the hardware decoder, CMYK) goes
        // through the CPU decoder, which also names the problem of a file neither reads.
        let img = img.or_else(|_| {
            let cpu = run.stages.time(Stage::Decode, || cuimg::io::decode_rgb(raw, input))?;
            s.upload(&cpu.view())
        });
        let result = img.and_then(|src| {
            let mut dst = s.alloc::<Q>(src.width(), src.height())?;
            run.stages.time(Stage::Kernel, || op(s, &src, &mut dst))?;
            Ok(dst)
        });
        match result {
            Ok(dst) => {
                if !run.stages.span("wait to hand on", || results.send((*i, dst)).is_ok()) {
                    return;
                }
            }
            Err(e) => run.fail(input, e),
        }
    }
}

/// Encodes one result (JPEG on the GPU, other formats on the CPU after a download) and
/// writes it (JPEG through the writer threads).
fn encode_and_write<Q: GpuJpeg>(
    w: &Worker,
    dst: &DeviceImage<Q>,
    out: &Path,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    writers: &std::sync::mpsc::SyncSender<(PathBuf, Vec<u8>)>,
) {
    let s = &w.stream;
    match format(out) {
        Format::Jpeg { quality } => match run.stages.time(Stage::Encode, || Q::encode_on_gpu(&w.jpeg, s, dst, quality))
        {
            Err(e) => run.fail(out, e),
            // Written by the writer threads: a slow disk holds up no GPU work.
            Ok(bytes) => {
                if !run.stages.span("wait to hand on", || writers.send((out.to_path_buf(), bytes)).is_ok()) {
                    run.fail(out, "the writer threads stopped");
                }
            }
        },
        png => match run.stages.time(Stage::Download, || s.download(dst)) {
            Err(e) => run.fail(out, e),
            Ok(img) => save(&img, out, png, run),
        },
    }
}
