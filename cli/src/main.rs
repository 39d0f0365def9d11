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
mod jpeg_path;
mod outputs;
mod report;
mod run;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use clap::{Args, FromArgMatches};
use cuimg::io::Format;
use cuimg::registry::{AnyDeviceView, AnyDeviceViewMut, OPERATIONS, PixelFormat, Target};
use cuimg::{DeviceImage, DeviceViewMut, GpuPool, Gray8, Pixel, Rgb8, Stream};
use indicatif::{ProgressBar, ProgressStyle};

use formats::{Any, Command};
use jpeg_path::{Shape, into_new, jpeg_on_gpu};
use report::Stages;
use run::{Run, STOP};

/// The tool's arguments: a subcommand per registry operation that has a tool form
/// (`cuimg::registry`), its parameters as options, and the options every command shares.
fn cli() -> clap::Command {
    let mut cmd = clap::Command::new("cuimg")
        .version(env!("CARGO_PKG_VERSION"))
        .about("GPU image processing, files to files")
        .after_help(
            "Exit codes: 0 all written; 1 some files failed (each named) or a plot or trace could not be \
             written; 2 a usage error, found before any work; 130 interrupted (SIGINT or SIGTERM).",
        )
        .subcommand_required(true)
        .arg_required_else_help(true);
    for op in OPERATIONS {
        let Some(form) = op.cli else { continue };
        // The first sentence in the list of commands, all of it in the command's own help.
        let first = form.about.split_once(". ").map_or(form.about, |(s, _)| s);
        let sub = clap::Command::new(form.command).about(first.trim_end_matches('.')).long_about(form.about);
        let mut sub = Common::augment_args(sub);
        for p in op.params {
            let arg = clap::Arg::new(p.name).long(p.name).help(p.help);
            sub = sub.arg(match p.default {
                // Negative numbers are taken as values, so `--clip -1` gets the operation's message.
                Some(d) => arg.default_value(d).allow_negative_numbers(true),
                None => arg.action(clap::ArgAction::SetTrue),
            });
        }
        cmd = cmd.subcommand(sub);
    }
    cmd
}

/// The command line's operation, bound to its parameters (a bad value is a usage error).
fn command(name: &str, m: &clap::ArgMatches) -> Result<Command, String> {
    let op = OPERATIONS.iter().find(|op| op.cli.is_some_and(|c| c.command == name)).expect("a subcommand of cli()");
    let given: Vec<(&str, String)> = op
        .params
        .iter()
        .filter_map(|p| match p.default {
            Some(_) => m.get_one::<String>(p.name).map(|v| (p.name, v.clone())),
            None => m.get_flag(p.name).then(|| (p.name, String::new())),
        })
        .collect();
    let given: Vec<(&str, &str)> = given.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let args = cuimg::registry::Args::parse(op, &given).map_err(|e| e.to_string())?;
    let bound = (op.bind)(&args).map_err(|e| match e {
        cuimg::Error::InvalidParameter { what, why } if what.starts_with("--") => format!("{what}: {why}"),
        e => {
            let shown: Vec<String> =
                given.iter().filter(|(_, v)| !v.is_empty()).map(|(n, v)| format!("--{n} {v}")).collect();
            format!("{}: {e}", shown.join(" "))
        }
    })?;
    // A JPEG's gray is its luma plane, decoded as such (`Jpeg::decode_gray`, `io::decode_luma`):
    // no RGB image and no conversion. `CUIMG_GRAY_VIA_RGB=1` decodes to RGB and converts, to
    // compare.
    let luma = op.name == "grayscale" && args.get("weights") == Some("bt601") && knob("gray-via-rgb", 0) == 0;
    Ok(Command { op, bound, luma })
}

#[derive(Args, Clone)]
pub(crate) struct Common {
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
    /// Expert tuning of the nvJPEG path, KEY=N[,KEY=N]: jpeg-batch, hw-decoders, sm-decoders,
    /// cpu-decoders, ramp-decoders, encoders, writers, gray-via-rgb (see --help-tuning).
    #[arg(long, value_name = "KEY=N,...")]
    tune: Option<String>,
    /// Prints what each --tune key sets, and exits.
    #[arg(long, hide = true)]
    help_tuning: bool,
    /// The memory the run's files may take at once (bytes, or with K, M, G: 8G); default:
    /// half the memory available. A file that alone needs more is reported, not read.
    #[arg(long)]
    memory: Option<String>,
}

fn main() {
    let matches = cli().get_matches();
    let (name, sub) = matches.subcommand().expect("a subcommand is required");
    let common = Common::from_arg_matches(sub).unwrap_or_else(|e| e.exit());
    if common.help_tuning {
        for (k, what) in TUNING {
            println!("{k:14} {what}");
        }
        return;
    }
    match parse_tuning(common.tune.as_deref()) {
        Ok(t) => TUNED.set(t).expect("set once"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
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
    std::process::exit(match command(name, sub).and_then(|cmd| run(&cmd, &common)) {
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
fn run(cmd: &Command, c: &Common) -> Result<usize, String> {
    let histogram = cmd.histograms();
    let luma = cmd.luma;
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
    // nvJPEG's path decodes to RGB for the commands but gray: a gray JPEG goes the other
    // way, which keeps it gray.
    let (jpeg_jobs, other_jobs): (Vec<inputs::Job>, Vec<inputs::Job>) = match &shape {
        Some(_) if !luma => jobs.iter().cloned().partition(|(i, _)| !is_gray_jpeg(i)),
        Some(_) => (jobs.clone(), Vec::new()),
        None => (Vec::new(), jobs.clone()),
    };
    let json = ext == Some("json");
    let on = |pool| Gpus { pool, shape: shape.as_ref(), jpeg_jobs: &jpeg_jobs, jobs: &other_jobs, cmd, run: &run };
    match (&gpus, cmd.makes_of_rgb()) {
        (_, _) if histogram => images::histograms(&other_jobs, gpus.as_ref(), json, &run),
        (None, _) => images::on_cpu(&other_jobs, cmd, &jpeg, &run),
        // A JPEG's gray is its luma plane: nvJPEG's, with no work after it.
        (Some(pool), _) if luma && shape.is_some() => {
            let shape = shape.as_ref().expect("matched");
            jpeg_on_gpu::<Gray8, Gray8>(&jpeg_jobs, pool, shape, &jpeg, &run, |_, luma| Ok(luma));
            images::on_gpu(&other_jobs, pool, cmd, &jpeg, &run, on_stream::<Gray8>(cmd), Any::Gray);
        }
        (Some(pool), Some(PixelFormat::Gray8)) => on(pool).run(&jpeg, Any::Gray, on_stream::<Gray8>(cmd)),
        (Some(pool), Some(PixelFormat::Rgb8)) => on(pool).run(&jpeg, Any::Rgb, on_stream::<Rgb8>(cmd)),
        (Some(_), other) => {
            return Err(format!("{}: the tool has no GPU path for what it makes of RGB ({other:?})", cmd.op.name));
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

/// A run's GPU work: the JPEG files nvJPEG's path takes (when it is open), and the others.
struct Gpus<'a> {
    pool: &'a GpuPool,
    shape: Option<&'a Shape>,
    jpeg_jobs: &'a [inputs::Job],
    jobs: &'a [inputs::Job],
    cmd: &'a Command,
    run: &'a Run<'a>,
}

impl Gpus<'_> {
    /// One command's operation on RGB device images, written once for both paths: the JPEG
    /// path's decoded images (into a new image), then the pipeline's (RGB) and each other
    /// format's through the GPU's calls (`wrap` makes a result an `Any`).
    fn run<Q: cuimg::jpeg::JpegPixel + cuimg::io::Encode>(
        &self,
        format: images::Formats<'_>,
        wrap: fn(cuimg::Image<Q>) -> Any,
        op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync,
    ) {
        if let Some(shape) = self.shape {
            jpeg_on_gpu(self.jpeg_jobs, self.pool, shape, format, self.run, into_new::<Q>(&op));
        }
        images::on_gpu(self.jobs, self.pool, self.cmd, format, self.run, &op, wrap);
    }
}

/// The command's stream form on an RGB device image, into a device image of `Q`.
fn on_stream<Q: Pixel>(
    cmd: &Command,
) -> impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync
where
    for<'a> AnyDeviceViewMut<'a>: From<DeviceViewMut<'a, Q>>,
{
    let bound = &*cmd.bound;
    move |s, src, dst| bound.stream(s, &AnyDeviceView::from(src.view()), Target::Image(dst.view_mut().into()))
}

/// CPU seconds this process has used, user and system (Linux: /proc/self/stat).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    // utime and stime, the 14th and 15th fields (11 and 12 after the name), at 100 ticks/s.
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
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

/// The tuning keys `--tune` takes, each with what it sets (docs/BENCHMARKS.md has the
/// measurements behind each default).
const TUNING: &[(&str, &str)] = &[
    ("jpeg-batch", "files per hardware decoder call (default: about 32, a multiple of its cores)"),
    ("hw-decoders", "batched (hardware) decoders per GPU (default 1)"),
    ("sm-decoders", "nvJPEG decoders on the SMs per GPU (default: five eighths of the cores, at most 10)"),
    ("cpu-decoders", "CPU decoders beside the GPU's (default: an eighth of the cores for gray output, else 0)"),
    ("ramp-decoders", "extra CPU decoders while the hardware decoder opens (default: half the cores for gray, else 0)"),
    ("encoders", "encoders per GPU (default 4 for JPEG output, else half the cores)"),
    ("writers", "writer threads (default 8 per GPU)"),
    ("gray-via-rgb", "1: gray decodes JPEGs to RGB and converts, instead of taking their luma plane"),
];

/// `--tune`'s values, set once before the run.
static TUNED: std::sync::OnceLock<Vec<(String, usize)>> = std::sync::OnceLock::new();

/// Parses `--tune KEY=N,KEY=N` (a usage error names the keys).
fn parse_tuning(spec: Option<&str>) -> Result<Vec<(String, usize)>, String> {
    let keys = || TUNING.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ");
    spec.into_iter()
        .flat_map(|s| s.split(','))
        .filter(|kv| !kv.trim().is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("--tune {kv}: use KEY=NUMBER"))?;
            let (k, v) = (k.trim(), v.trim());
            if !TUNING.iter().any(|(t, _)| *t == k) {
                return Err(format!("--tune {k}: not a tuning key; the keys are {}", keys()));
            }
            let n = v.parse().map_err(|_| format!("--tune {k}={v}: not a whole number"))?;
            Ok((k.to_string(), n))
        })
        .collect()
}

/// A tuning value from `--tune`, or `default`.
fn knob(name: &str, default: usize) -> usize {
    TUNED.get().and_then(|t| t.iter().rev().find(|(k, _)| k == name)).map_or(default, |(_, v)| *v)
}
