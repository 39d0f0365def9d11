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
//! path and the others go on; the exit code is 1 when any failed. Outputs follow one policy
//! (`outputs`): never over an input or an existing file (unless `--overwrite`), through a
//! temporary file and a rename. Every file is checked from its header before it is read
//! (`cuimg::Limits`), and admitted against the run's memory budget (`budget`).

mod budget;
mod formats;
mod identity;
mod images;
mod inputs;
mod outputs;
mod report;
mod run;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use cuimg::io::{Encode, Format};
use cuimg::{Clahe, DeviceImage, EqualizeMode, GpuPool, Gray8, GrayWeights, Image, Lut, Pixel, Rgb8, Stream};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use formats::{Any, Command};
use images::next;
use report::{Stage, Stages};
use run::{Run, STOP};

#[derive(Parser)]
#[command(
    name = "cuimg",
    version,
    about = "GPU image processing, files to files",
    long_about = None,
    after_help = "Exit codes: 0 all written; 1 some files failed (each named) or a plot or trace could not be \
                  written; 2 a usage error, found before any work; 130 interrupted (SIGINT or SIGTERM)."
)]
struct Cli {
    #[command(subcommand)]
    op: Op,
}

#[derive(Subcommand)]
enum Op {
    /// RGB to gray (BT.601, as OpenCV's cvtColor). A JPEG gives its own luma plane, decoded
    /// as such (as OpenCV's imread with IMREAD_GRAYSCALE): within rounding of the same.
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
    /// Replace existing files (regular files only; never an input). Without it, a
    /// destination that exists is reported and left as it is.
    #[arg(long)]
    overwrite: bool,
    /// Skip syncing each output's data to the disk before its rename (faster; a power cut
    /// may then leave an empty file where an output was).
    #[arg(long)]
    no_sync: bool,
    /// The memory the run's files may take at once (bytes, or with K, M, G: 8G); default:
    /// half the memory available. A file that alone needs more is reported, not read.
    #[arg(long)]
    memory: Option<String>,
}

fn main() {
    let cli = Cli::parse();
    // The driver feeds the GPU through 8 hardware queues by default; this tool's 30 or so
    // streams (and nvJPEG's own) then share them, and work on a stream waits behind another
    // stream's blocked work: in the CUPTI timeline the SM decoders' kernels started up to
    // 35 ms late, behind the hardware decoder's copies, which wait for its engines. 16 queues
    // took the SM decoders from 34 to 23 ms an image for 0.13 s more opening the GPU; 32
    // cost 0.4 s and ran slower end to end (docs/BENCHMARKS.md). A value the user set stays.
    if std::env::var_os("CUDA_DEVICE_MAX_CONNECTIONS").is_none() {
        // SAFETY: no other thread runs yet, so none reads the environment meanwhile.
        unsafe { std::env::set_var("CUDA_DEVICE_MAX_CONNECTIONS", "16") };
    }
    let (op, common) = match &cli.op {
        Op::Gray(c) | Op::Bw(c) | Op::Equalize(c) | Op::Histogram(c) => (&cli.op, c),
        Op::Lut { common, .. } | Op::Clahe { common, .. } => (&cli.op, common),
    };
    // SIGINT and SIGTERM: the first stops the reading of new files (the files in flight
    // finish, the others are reported as not processed, and the summary is printed); a
    // second ends the process at once, removing the temporary files being written.
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Relaxed) {
            outputs::remove_temporaries();
            eprintln!("\nstopped");
            std::process::exit(130);
        }
        eprintln!("\nstopping: finishing the files in flight (again to stop at once)");
    });
    std::process::exit(match run(op, common) {
        Ok(_) if STOP.load(Relaxed) => 130,
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
    // A JPEG's gray is its luma plane, decoded as such (`Jpeg::decode_gray`, `io::decode_luma`):
    // no RGB image and no conversion. `CUIMG_GRAY_VIA_RGB=1` decodes to RGB and converts, to
    // compare.
    let luma = matches!(op, Op::Gray(_)) && knob("CUIMG_GRAY_VIA_RGB", 0) == 0;
    let ext = match (c.format.as_deref(), histogram) {
        (None, true) => Some("csv"),
        (Some(f @ ("csv" | "json")), true) => Some(f),
        (Some(f @ ("png" | "jpg" | "jpeg")), false) => Some(f),
        (None, false) => None,
        (Some(f), _) => return Err(format!("--format {f} does not fit this command")),
    };
    let memory = match &c.memory {
        Some(m) => budget::parse_size(m)?,
        None => budget::default_budget(),
    };
    if c.out.is_file() {
        return Err(format!("-o {}: is a file; -o takes a folder", c.out.display()));
    }
    let (files, missing) = inputs::expand(&c.inputs);
    let (policy, files, unresolved) = outputs::Policy::new(files, c.overwrite, !c.no_sync);
    // With no file to process, nothing is made: not even the output folder.
    let extras: Vec<&PathBuf> = if files.is_empty() { Vec::new() } else { c.plot.iter().chain(&c.trace).collect() };
    if !files.is_empty() {
        std::fs::create_dir_all(&c.out)
            .map_err(|e| format!("cannot create the output folder {}: {e}", c.out.display()))?;
        outputs::probe(&c.out).map_err(|e| format!("cannot write into the output folder {}: {e}", c.out.display()))?;
    }
    let (jobs, clashes) = policy.plan(&files, &c.out, ext);
    // The plot and the trace are claimed before any work, as the images are: a usage error.
    for extra in &extras {
        policy.claim(extra).map_err(|why| format!("{}: {why}", extra.display()))?;
    }
    let progress = ProgressBar::new((jobs.len() + clashes.len()) as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} images, {per_sec}, {eta} left").expect("a valid template"),
    );
    let index = jobs.iter().enumerate().flat_map(|(i, (a, b))| [(a.as_path(), i), (b.as_path(), i)]).collect();
    let run = Run {
        stages: Stages::new(c.trace.is_some()),
        progress,
        failures: Mutex::new(Vec::new()),
        done: AtomicUsize::new(0),
        policy: &policy,
        // Nothing larger than the budget can be held anyway.
        limits: cuimg::Limits::default().with_max_image_bytes(cuimg::limits::DEFAULT_MAX_IMAGE_BYTES.min(memory)),
        budget: budget::Budget::new(memory),
        halted: Mutex::new(None),
        index,
        ended: jobs.iter().map(|_| AtomicBool::new(false)).collect(),
        luma: knob("CUIMG_GRAY_VIA_RGB", 0) == 0,
    };
    for (path, why) in missing.iter().chain(&unresolved).chain(&clashes) {
        run.fail(path, why);
    }
    let start = Instant::now();
    let gpus = if c.cpu || jobs.is_empty() { None } else { open_gpus(&c.gpu)? };
    let gpus_opened = start.elapsed();
    let device = gpus.as_ref().map_or_else(
        || format!("CPU, {} threads", rayon::current_num_threads()),
        |p| format!("{} x {}", p.len(), p.gpus()[0].name()),
    );
    let jpeg = |path: &Path| Format::from_path(path, c.quality).unwrap_or(Format::Png);
    // JPEG in, on a GPU with nvJPEG: decoded (and, for JPEG out, encoded) on the GPU.
    let all_jpeg = !jobs.is_empty() && jobs.iter().all(|(i, _)| is_jpeg(i));
    // The codecs themselves open inside the JPEG path, while its CPU decoders already work.
    let shape = match (&gpus, all_jpeg && !histogram) {
        (Some(_), true) => match cuimg::jpeg::load() {
            Ok(_) => Some(Shape::new(jobs.iter().all(|(_, o)| is_jpeg(o)), luma)),
            Err(e) => {
                eprintln!("JPEG through the CPU: {e}");
                None
            }
        },
        _ => None,
    };
    let opened = start.elapsed();
    let device = match &shape {
        Some(shape) => format!("{device}, nvJPEG ({})", shape.describe()),
        None => device,
    };
    let cmd = match op {
        Op::Gray(_) => Command::Gray,
        Op::Bw(_) => Command::Bw,
        Op::Equalize(_) => Command::Equalize,
        Op::Lut { .. } => Command::Lut(Box::new(lut.expect("parsed above"))),
        Op::Clahe { .. } => {
            let (p, mode) = clahe.expect("parsed above");
            Command::Clahe(p, mode)
        }
        Op::Histogram(_) => Command::Histogram,
    };
    // nvJPEG's path decodes to RGB for the commands but gray: a gray JPEG goes the other
    // way, which keeps it gray.
    let (jpeg_jobs, other_jobs): (Vec<inputs::Job>, Vec<inputs::Job>) = match &shape {
        Some(_) if !matches!(cmd, Command::Gray) => jobs.iter().cloned().partition(|(i, _)| !is_gray_jpeg(i)),
        Some(_) => (jobs.clone(), Vec::new()),
        None => (Vec::new(), jobs.clone()),
    };
    match (op, &gpus, &shape) {
        (Op::Gray(_), Some(pool), Some(shape)) if luma => {
            jpeg_on_gpu::<Gray8, Gray8>(&jpeg_jobs, pool, shape, &jpeg, &run, |_, luma| Ok(luma))
        }
        (Op::Gray(_), Some(pool), Some(shape)) => jpeg_on_gpu(
            &jpeg_jobs,
            pool,
            shape,
            &jpeg,
            &run,
            into_new::<Gray8>(|s, a, b| s.grayscale(a, b, GrayWeights::Bt601)),
        ),
        (Op::Bw(_), Some(pool), Some(shape)) => jpeg_on_gpu(
            &jpeg_jobs,
            pool,
            shape,
            &jpeg,
            &run,
            into_new::<Rgb8>(|s, a, b| s.black_and_white(a, b, GrayWeights::Bt601)),
        ),
        (Op::Equalize(_), Some(pool), Some(shape)) => jpeg_on_gpu(
            &jpeg_jobs,
            pool,
            shape,
            &jpeg,
            &run,
            into_new::<Rgb8>(|s, a, b| s.equalize_color(a, b, EqualizeMode::Luma)),
        ),
        (Op::Clahe { .. }, Some(pool), Some(shape)) => {
            let (p, mode) = clahe.expect("parsed above");
            jpeg_on_gpu(
                &jpeg_jobs,
                pool,
                shape,
                &jpeg,
                &run,
                into_new::<Rgb8>(move |s, a, b| s.clahe_color(a, b, p, mode)),
            )
        }
        (Op::Lut { .. }, Some(pool), Some(shape)) => {
            let lut = lut.expect("parsed above");
            jpeg_on_gpu(
                &jpeg_jobs,
                pool,
                shape,
                &jpeg,
                &run,
                into_new::<Rgb8>(move |s, a, b| s.apply_lut(a, b, &s.upload_lut::<Rgb8>(&lut)?)),
            )
        }
        _ => {}
    }
    let (jobs_left, json) = (&other_jobs, ext == Some("json"));
    match (op, &gpus) {
        (Op::Histogram(_), _) => images::histograms(jobs_left, gpus.as_ref(), json, &run),
        (_, None) => images::on_cpu(jobs_left, &cmd, &jpeg, &run),
        (Op::Gray(_), Some(pool)) => {
            let op =
                |s: &Stream, a: &DeviceImage<Rgb8>, b: &mut DeviceImage<Gray8>| s.grayscale(a, b, GrayWeights::Bt601);
            images::on_gpu(jobs_left, pool, &cmd, &jpeg, &run, op, Any::Gray)
        }
        (Op::Bw(_), Some(pool)) => {
            let op = |s: &Stream, a: &DeviceImage<Rgb8>, b: &mut DeviceImage<Rgb8>| {
                s.black_and_white(a, b, GrayWeights::Bt601)
            };
            images::on_gpu(jobs_left, pool, &cmd, &jpeg, &run, op, Any::Rgb)
        }
        (Op::Equalize(_), Some(pool)) => {
            let op = |s: &Stream, a: &DeviceImage<Rgb8>, b: &mut DeviceImage<Rgb8>| {
                s.equalize_color(a, b, EqualizeMode::Luma)
            };
            images::on_gpu(jobs_left, pool, &cmd, &jpeg, &run, op, Any::Rgb)
        }
        (Op::Clahe { .. }, Some(pool)) => {
            let (p, mode) = clahe.expect("parsed above");
            let op = move |s: &Stream, a: &DeviceImage<Rgb8>, b: &mut DeviceImage<Rgb8>| s.clahe_color(a, b, p, mode);
            images::on_gpu(jobs_left, pool, &cmd, &jpeg, &run, op, Any::Rgb)
        }
        (Op::Lut { .. }, Some(pool)) => {
            let lut = lut.expect("parsed above");
            // One upload of 768 bytes per image: small against the image's own.
            let op = move |s: &Stream, a: &DeviceImage<Rgb8>, b: &mut DeviceImage<Rgb8>| {
                s.apply_lut(a, b, &s.upload_lut::<Rgb8>(&lut)?)
            };
            images::on_gpu(jobs_left, pool, &cmd, &jpeg, &run, op, Any::Rgb)
        }
    }
    // Every job ends as written or failed, whatever stopped the others.
    let why = match (STOP.load(Relaxed), run.halted()) {
        (true, _) => "not processed: the run was interrupted".to_string(),
        (false, Some(why)) => format!("not processed: {why}"),
        (false, None) => "not processed: the stages that take it stopped (see the errors above)".to_string(),
    };
    run.unfinished(&jobs, &why);
    // The plot and the trace: a failure after the work is exit 1 with its reason.
    let texts = extras.iter().map(|p| match Some(*p) == c.plot.as_ref() {
        true => (*p, run.stages.plot(&device)),
        false => (*p, Ok(run.stages.trace())),
    });
    for (path, text) in texts.collect::<Vec<_>>() {
        if let Err(why) = text.and_then(|t| policy.write(path, t.as_bytes()).map_err(|e| e.to_string())) {
            run.fail(path, format!("cannot write: {why}"));
        }
    }
    run.progress.finish_and_clear();
    let wall = start.elapsed();
    let failures = run.failures.into_inner().unwrap_or_else(|e| e.into_inner());
    let done = run.done.load(Relaxed);
    let opening = match &gpus {
        Some(_) => format!("; {:.0} ms of it opening the GPU and nvJPEG", opened.as_secs_f64() * 1e3),
        None => String::new(),
    };
    eprintln!(
        "{done} images written, {} failed, in {:.2} s ({:.1} images/s) on {device}{opening}",
        failures.len(),
        wall.as_secs_f64(),
        done as f64 / wall.as_secs_f64().max(1e-9),
    );
    if c.report {
        if gpus.is_some() {
            eprintln!(
                "opening: {:.0} ms the GPUs (driver, contexts, kernels), then {:.0} ms loading nvJPEG (its codecs open while the CPU decoders work)",
                gpus_opened.as_secs_f64() * 1e3,
                (opened - gpus_opened).as_secs_f64() * 1e3
            );
        }
        if let Some(peak) = budget::peak_rss() {
            eprintln!(
                "memory: peak resident {} (VmHWM) with a budget of {} for the files in flight",
                budget::size(peak),
                budget::size(run.budget.cap())
            );
        }
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
            let why = match &e {
                cuimg::Error::NoDriver(why) | cuimg::Error::NoDevice(why) => why.clone(),
                e => e.to_string(),
            };
            eprintln!("no GPU ({why}); using all CPU cores (--cpu does so without looking for a GPU)");
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
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

/// What the JPEG path decodes into: RGB, or gray (a JPEG's luma plane).
trait GpuDecode: Pixel {
    fn decode_batch(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        files: &[&[u8]],
    ) -> cuimg::Result<Vec<cuimg::Result<DeviceImage<Self>>>>;
    /// A file decoded on the CPU (which also names what is wrong with one nvJPEG refused).
    fn decode_on_cpu(bytes: &[u8], path: &Path) -> cuimg::Result<Image<Self>>;
}

impl GpuDecode for Rgb8 {
    fn decode_batch(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        files: &[&[u8]],
    ) -> cuimg::Result<Vec<cuimg::Result<DeviceImage<Self>>>> {
        jpeg.decode_batch_rgb(s, files)
    }
    fn decode_on_cpu(bytes: &[u8], path: &Path) -> cuimg::Result<Image<Self>> {
        cuimg::io::decode_rgb(bytes, path)
    }
}

impl GpuDecode for Gray8 {
    fn decode_batch(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        files: &[&[u8]],
    ) -> cuimg::Result<Vec<cuimg::Result<DeviceImage<Self>>>> {
        jpeg.decode_batch_gray(s, files)
    }
    fn decode_on_cpu(bytes: &[u8], path: &Path) -> cuimg::Result<Image<Self>> {
        cuimg::io::decode_luma(bytes, path)
    }
}

/// An operation that writes its result into an image it is given, as one that returns a
/// new image (made for it on the same stream) from the decoded one.
fn into_new<Q: Pixel>(
    op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync,
) -> impl Fn(&Stream, DeviceImage<Rgb8>) -> cuimg::Result<DeviceImage<Q>> + Sync {
    move |s, src| {
        let mut dst = s.alloc::<Q>(src.width(), src.height())?;
        op(s, &src, &mut dst)?;
        Ok(dst)
    }
}

/// A JPEG of one component, from its header (a file that cannot be read is not: the
/// JPEG path reports it).
fn is_gray_jpeg(path: &Path) -> bool {
    let header = std::fs::File::open(path)
        .ok()
        .and_then(|f| cuimg::limits::Header::read(&mut std::io::BufReader::with_capacity(4096, f)).ok());
    header.is_some_and(|h| h.format == cuimg::limits::FileFormat::Jpeg && h.channels == 1)
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

/// How many workers of each kind the JPEG path runs on each GPU.
struct Shape {
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
    /// Counts per GPU: `CUIMG_HW_DECODERS` (default 1: one fed the engines as well as two
    /// alone, and did better among the other stages), `CUIMG_SM_DECODERS` (default: five
    /// eighths of the cores, at most 10; each takes most of a core, about 20 ms per
    /// 12-megapixel image), `CUIMG_CPU_DECODERS` and `CUIMG_RAMP_DECODERS` (an eighth and a
    /// half of the cores when the output is gray, none else: a JPEG's luma alone decodes on a
    /// core quickly enough to add to the GPU's) and `CUIMG_ENCODERS` (4; all cores' half when
    /// the outputs are encoded on the CPU). On 16 cores, 10 on the SMs and 2 on the CPU beat
    /// 6 and 4 by 6% (docs/BENCHMARKS.md).
    fn new(jpeg_out: bool, luma: bool) -> Shape {
        let cores = std::thread::available_parallelism().map_or(8, |n| n.get());
        let cpu = |name, share: usize| knob(name, if luma { cores / share } else { 0 });
        Shape {
            hardware: knob("CUIMG_HW_DECODERS", 1).max(1),
            on_sms: knob("CUIMG_SM_DECODERS", (cores * 5 / 8).min(10)),
            on_cpu: cpu("CUIMG_CPU_DECODERS", 8),
            ramp: cpu("CUIMG_RAMP_DECODERS", 2),
            encoders: knob("CUIMG_ENCODERS", if jpeg_out { 4 } else { (cores / 2).max(4) }).max(1),
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} batched (hardware) decoders, {} on the SMs, {} on the CPU (and {} more while the hardware decoder opens), {} encoders per GPU",
            self.hardware, self.on_sms, self.on_cpu, self.ramp, self.encoders
        )
    }
}

/// The batched decoders of one GPU: `hardware` of them on `first`'s library handle (the
/// hardware decoder's where there is one).
fn open_batched(
    gpu: &cuimg::Gpu,
    first: &std::sync::Arc<cuimg::jpeg::Jpeg>,
    hardware: usize,
) -> cuimg::Result<Vec<Worker>> {
    (0..hardware)
        .map(|k| {
            let jpeg = if k == 0 { first.clone() } else { first.another()? };
            Ok(Worker { jpeg, stream: gpu.stream_with_priority(cuimg::StreamPriority::High)? })
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
fn jpeg_on_gpu<S: GpuDecode, Q: GpuJpeg>(
    jobs: &[inputs::Job],
    pool: &GpuPool,
    shape: &Shape,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Stream, DeviceImage<S>) -> cuimg::Result<DeviceImage<Q>> + Sync,
) {
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc::sync_channel;
    // Queues of about two hardware batches per GPU.
    const QUEUE: usize = 70;
    let gpus = pool.gpus();
    let (file_tx, file_rx) = sync_channel::<(usize, Vec<u8>)>(QUEUE * gpus.len());
    let file_rx = Mutex::new(file_rx);
    // Writer threads behind the encoders (writing a file took 0.4 to 13 ms on the lent machine,
    // up to three times as long as encoding it): `CUIMG_WRITERS`, by default 8 per GPU.
    let writers = knob("CUIMG_WRITERS", 8 * gpus.len()).max(1);
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
                report::spawn(scope, format!("gpu {g} {kind} {k}"), move || {
                    decode_on_cpu::<S, Q>(gpu, jobs, run, op, file_rx, &result_tx, until);
                });
            }
            // One library handle per GPU, the hardware decoder's: nvJPEG makes handles one at
            // a time (0.27 s for the first on the H100), so the decoders on the SMs and the
            // encoders share it. The encoders start as soon as it is made, the decoders on
            // the SMs once the hardware decoder's batched state is (0.34 s more).
            let write_tx = write_tx.clone();
            report::spawn(scope, format!("gpu {g} hardware decoder 0"), move || {
                let hw =
                    run.stages.span("open", || failing("hardware").map_or_else(|| cuimg::jpeg::Jpeg::new(gpu), Err));
                // Without it, the others make a handle of their own (nvJPEG's default backend).
                let codec = run.stages.span("open", || match (failing("default"), &hw) {
                    (Some(e), _) => Err(e),
                    (None, Ok(hw)) => hw.another_without_hardware(),
                    (None, Err(_)) => cuimg::jpeg::Jpeg::without_hardware(gpu),
                });
                if let Err(e) = &codec {
                    run.progress.suspend(|| eprintln!("GPU {g}: no nvJPEG codec ({e}); its work goes to the CPU"));
                }
                let another = || codec.as_ref().ok().and_then(|c| c.another().ok());
                for k in 0..shape.encoders {
                    let (write_tx, jpeg) = (write_tx.clone(), another());
                    report::spawn(scope, format!("gpu {g} encoder {k}"), move || {
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
                let workers = run.stages.span("open", || {
                    let workers = open_batched(gpu, &hw?, shape.hardware)?;
                    workers.iter().try_for_each(|w| w.jpeg.prepare_hardware_decoder()).map(|()| workers)
                });
                for k in 0..shape.on_sms {
                    let (result_tx, jpeg) = (result_tx.clone(), another());
                    report::spawn(scope, format!("gpu {g} SM decoder {k}"), move || {
                        let w = jpeg.map(|jpeg| {
                            gpu.stream_with_priority(cuimg::StreamPriority::Low).map(|stream| Worker { jpeg, stream })
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
                        run.progress.suspend(|| eprintln!("GPU {g}: no batched decoder ({e}); decoding on the CPU"));
                        return decode_on_cpu::<S, Q>(gpu, jobs, run, op, file_rx, &result_tx, None);
                    }
                };
                hardware_decodes.store(true, Relaxed);
                let batch = batch_size(&workers[0].jpeg);
                let mut workers = workers.into_iter();
                let first = workers.next().expect("at least one batched decoder");
                for (k, w) in workers.enumerate() {
                    let result_tx = result_tx.clone();
                    report::spawn(scope, format!("gpu {g} hardware decoder {}", k + 1), move || {
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
            report::spawn(scope, format!("writer {k}"), move || {
                while let Some((out, bytes)) = next(write_rx, run) {
                    match run.stages.time(Stage::Write, || run.policy.write(&out, &bytes)) {
                        Err(e) => run.fail(&out, format!("cannot write: {e}")),
                        Ok(()) => run.ok(&out),
                    }
                }
            });
        }
        report::label_thread("reader".into());
        // Each file checked from its header (nvJPEG is called on none over the limits) and
        // admitted against the memory budget before it is read.
        let bytes_per_pixel = S::CHANNELS as u32;
        for (k, chunk) in jobs.chunks(16).enumerate() {
            // Admitted here, read on all cores: a rayon thread waiting for memory could hold
            // up the batched decoder's checks, which run on rayon's threads too.
            let admitted: Vec<_> = chunk.iter().map(|(input, _)| run.admit(input, bytes_per_pixel)).collect();
            let read: Vec<_> =
                admitted.into_par_iter().map(|file| Some(file?.and_then(|file| run.read_admitted(file)))).collect();
            for (j, bytes) in read.into_iter().enumerate() {
                let i = k * 16 + j;
                match bytes {
                    None => {}
                    Some(Ok((_, b))) => {
                        let sent = run.stages.span("wait to hand on", || file_tx.send((i, b)));
                        if sent.is_err() {
                            return;
                        }
                    }
                    Some(Err(e)) => run.fail(&jobs[i].0, e),
                }
            }
        }
        drop(file_tx);
    });
}

/// `CUIMG_FAIL_CODECS=hardware,default` (a test hook): the codecs named fail to open, as
/// when nvJPEG cannot make them, so that the tests run the paths that take over their work.
fn failing(codec: &str) -> Option<cuimg::Error> {
    let named = std::env::var("CUIMG_FAIL_CODECS").unwrap_or_default();
    named.split(',').any(|c| c.trim() == codec).then(|| cuimg::Error::NoNvjpeg(format!("CUIMG_FAIL_CODECS={named}")))
}

/// A CPU decoder: takes files one at a time, decodes each on this core (`GpuDecode::decode_on_cpu`),
/// uploads it and runs the operation on a stream of its own; until the queue is empty, or
/// until `until` is set.
fn decode_on_cpu<S: GpuDecode, Q: Pixel>(
    gpu: &cuimg::Gpu,
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> cuimg::Result<DeviceImage<Q>> + Sync),
    files: &Mutex<std::sync::mpsc::Receiver<(usize, Vec<u8>)>>,
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
    until: Option<&std::sync::atomic::AtomicBool>,
) {
    let stream = match gpu.stream_with_priority(cuimg::StreamPriority::Low) {
        Ok(s) => s,
        Err(e) => return run.progress.suspend(|| eprintln!("error: a CPU decoder has no stream: {e}")),
    };
    while until.is_none_or(|u| !u.load(Relaxed))
        && let Some(files) = run.stages.span("wait for files", || take(files, 1))
    {
        for (i, raw) in &files {
            let img = run
                .stages
                .time(Stage::Decode, || S::decode_on_cpu(raw, &jobs[*i].0))
                // Through the stream's page-locked buffer: from ordinary memory the driver
                // holds its lock while it stages the copy, and the other threads wait.
                .and_then(|img| run.stages.time(Stage::Upload, || stream.upload_staged(&img.view())));
            if !apply_and_hand_on(&stream, *i, img, jobs, run, op, results) {
                return;
            }
        }
    }
}

/// A file a GPU decoder passes on (nvJPEG refused it, or it is turned by its EXIF
/// orientation), decoded on the CPU and uploaded.
fn decode_and_upload<S: GpuDecode>(s: &Stream, raw: &[u8], input: &Path, run: &Run) -> cuimg::Result<DeviceImage<S>> {
    let img = run.stages.time(Stage::Decode, || S::decode_on_cpu(raw, input))?;
    run.stages.time(Stage::Upload, || s.upload(&img.view()))
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
fn decode_all<S: GpuDecode, Q: Pixel>(
    w: &Worker,
    n: usize,
    files: &Mutex<std::sync::mpsc::Receiver<(usize, Vec<u8>)>>,
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> cuimg::Result<DeviceImage<Q>> + Sync),
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
) {
    while let Some(batch) = run.stages.span("wait for files", || take(files, n)) {
        decode_and_apply(w, &batch, jobs, run, op, results);
    }
}

/// Decodes `files` on the worker's codec (what nvJPEG refuses, on the CPU), runs the
/// operation on its stream, and queues each result for the encoders.
fn decode_and_apply<S: GpuDecode, Q: Pixel>(
    w: &Worker,
    files: &[(usize, Vec<u8>)],
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> cuimg::Result<DeviceImage<Q>> + Sync),
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
) {
    let s = &w.stream;
    // nvJPEG decodes the pixels as stored: a file whose EXIF orientation turns it (a phone's
    // photo) goes through the CPU decoder, which applies it, as the CPU path does.
    let upright: Vec<bool> = files.iter().map(|(_, b)| cuimg::io::jpeg_orientation(b).is_none()).collect();
    let bytes: Vec<&[u8]> = files.iter().zip(&upright).filter(|(_, u)| **u).map(|((_, b), _)| b.as_slice()).collect();
    let decoded = match bytes.is_empty() {
        true => Ok(Vec::new()),
        false => run.stages.time(Stage::Decode, || {
            let r = S::decode_batch(&w.jpeg, s, &bytes);
            let _ = s.synchronize();
            r
        }),
    };
    let mut decoded = match decoded {
        Ok(d) => d.into_iter(),
        Err(e) => {
            for ((i, _), _) in files.iter().zip(&upright).filter(|(_, u)| **u) {
                run.fail(&jobs[*i].0, &e);
            }
            Vec::new().into_iter()
        }
    };
    for ((i, raw), upright) in files.iter().zip(upright) {
        let input = &jobs[*i].0;
        let img = match upright {
            // What nvJPEG refuses (progressive files on the hardware decoder, CMYK) goes
            // through the CPU decoder, which also names the problem of a file neither reads.
            true => match decoded.next() {
                Some(img) => img.or_else(|_| decode_and_upload::<S>(s, raw, input, run)),
                None => continue, // the batch failed as a whole: reported above
            },
            false => decode_and_upload::<S>(s, raw, input, run),
        };
        if !apply_and_hand_on(s, *i, img, jobs, run, op, results) {
            return;
        }
    }
}

/// Runs the operation on a decoded image and queues the result for the encoders (a
/// failure is reported with the input's path); false once the encoders are gone.
fn apply_and_hand_on<S: Pixel, Q: Pixel>(
    s: &Stream,
    i: usize,
    img: cuimg::Result<DeviceImage<S>>,
    jobs: &[inputs::Job],
    run: &Run,
    op: &(impl Fn(&Stream, DeviceImage<S>) -> cuimg::Result<DeviceImage<Q>> + Sync),
    results: &std::sync::mpsc::SyncSender<(usize, DeviceImage<Q>)>,
) -> bool {
    match img.and_then(|src| run.stages.time(Stage::Kernel, || op(s, src))) {
        Ok(dst) => run.stages.span("wait to hand on", || results.send((i, dst)).is_ok()),
        Err(e) => {
            run.fail(&jobs[i].0, e);
            true
        }
    }
}

/// Encodes one result (JPEG on the GPU where there is a codec, else on the CPU after a
/// download, as other formats) and hands it to the writer threads.
fn encode_and_write<Q: GpuJpeg>(
    jpeg: Option<&cuimg::jpeg::Jpeg>,
    s: &Stream,
    dst: &DeviceImage<Q>,
    out: &Path,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    writers: &std::sync::mpsc::SyncSender<(PathBuf, Vec<u8>)>,
) {
    let encoded = match (format(out), jpeg) {
        (Format::Jpeg { quality }, Some(jpeg)) => {
            run.stages.time(Stage::Encode, || Q::encode_on_gpu(jpeg, s, dst, quality))
        }
        (other, _) => run
            .stages
            .time(Stage::Download, || s.download(dst))
            .and_then(|img| run.stages.time(Stage::Encode, || cuimg::io::encode(&img, other))),
    };
    match encoded {
        Err(e) => run.fail(out, e),
        // Written by the writer threads: a slow disk holds up no GPU work.
        Ok(bytes) => {
            if !run.stages.span("wait to hand on", || writers.send((out.to_path_buf(), bytes)).is_ok()) {
                run.fail(out, "the writer threads stopped");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

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
