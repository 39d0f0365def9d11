//! The file engine: folders of PNG and JPEG files through one registry operation, files to
//! files, on every GPU of the machine (or the ones named) or all CPU cores; what the `cuimg`
//! tool runs, and what a program can run the same way ([`run`]).
//!
//! - **Inputs** (`inputs`): files, folders (their PNG and JPEG files) and glob patterns,
//!   each folder walked once by identity.
//! - **Outputs** (`outputs`): one policy for every path written: never an input (compared by
//!   device and inode), never an existing file unless [`Options::overwrite`], through an
//!   exclusive temporary file, synced, then renamed.
//! - **Memory** (`budget`): every file admitted against [`Options::memory`] at its
//!   header-derived cost before it is read.
//! - **Paths**: the CPU path (`images::on_cpu`), the GPU path for PNG (decode on all cores ->
//!   [`crate::Pipeline`] -> encode), and nvJPEG's path for JPEG (`jpeg_path`).
//! - **What it says** ([`Observer`]): progress, stage times, every thread's spans, warnings.
//!
//! ```no_run
//! use cuimg::files::{self, Command, Options, Quiet};
//! use cuimg::registry::{self, Args};
//! let op = registry::find("grayscale").unwrap();
//! let cmd = Command::new(op, &Args::defaults(op))?;
//! let summary = files::run(&["photos/".into()], &cmd, &Options::new("out"), &Quiet, &[])
//!     .map_err(|e| cuimg::Error::InvalidParameter { what: "the run".into(), why: e })?;
//! println!("{} written, {} failed on {}", summary.written, summary.failures.len(), summary.device);
//! # Ok::<(), cuimg::Error>(())
//! ```

mod budget;
mod formats;
mod identity;
mod images;
mod inputs;
mod jpeg_path;
mod observe;
mod outputs;
mod run;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

pub use budget::{default_budget, parse_size, peak_rss, size};
pub use formats::Command;
pub use observe::{Observer, Quiet, Stage};
pub use outputs::remove_temporaries;

use crate::io::Format;
use crate::registry::{AnyDeviceView, AnyDeviceViewMut, PixelFormat, Target};
use crate::{DeviceImage, DeviceViewMut, GpuPool, Gray8, Pixel, Rgb8, Stream};
use formats::Any;
use jpeg_path::{Shape, into_new, jpeg_on_gpu};
use run::Run;

/// Which hardware a run uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Hardware {
    /// Every GPU, or all CPU cores when there is none (said through the observer).
    #[default]
    AllGpus,
    /// The GPU of this index (an error when it is not there).
    Gpu(usize),
    /// All CPU cores, without looking for a GPU.
    Cpu,
}

/// How a run writes: where, in which format, and within what.
#[derive(Clone, Debug)]
pub struct Options {
    /// The folder written into (made when there is a file to process).
    pub out: PathBuf,
    /// The outputs' extension: `png` or `jpg` for images (default: each input's), `csv`
    /// (default) or `json` for histograms.
    pub format: Option<String>,
    /// JPEG quality, 1 to 100.
    pub quality: u8,
    /// The GPUs, or the CPU.
    pub hardware: Hardware,
    /// Replace existing regular files (never an input, a symlink or a folder).
    pub overwrite: bool,
    /// Sync each output's data before its rename (0.1 to 0.3 ms a file on the lent machine).
    pub sync: bool,
    /// The bytes the files in flight may take; default: [`default_budget`].
    pub memory: Option<u64>,
    /// Tuning of the nvJPEG path, `(key, value)` (the tool's `--tune`): `jpeg-batch`,
    /// `hw-decoders`, `sm-decoders`, `cpu-decoders`, `ramp-decoders`, `encoders`,
    /// `writers`, `gray-via-rgb`.
    pub tuning: Vec<(String, usize)>,
}

impl Options {
    /// Into `out`, each output in its input's format, JPEG quality 90, every GPU, synced,
    /// nothing replaced, half the available memory.
    pub fn new(out: impl Into<PathBuf>) -> Options {
        Options {
            out: out.into(),
            format: None,
            quality: 90,
            hardware: Hardware::AllGpus,
            overwrite: false,
            sync: true,
            memory: None,
            tuning: Vec::new(),
        }
    }
}

/// How a run went.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Outputs written.
    pub written: usize,
    /// Each failure: the path it concerns and why.
    pub failures: Vec<(PathBuf, String)>,
    /// What ran it ("1 x NVIDIA H100 80GB HBM3, nvJPEG (...)", "CPU, 16 threads").
    pub device: String,
    /// Time to open the GPUs, and then nvJPEG (`None` on the CPU).
    pub opening: Option<(Duration, Duration)>,
    /// From the opening of the hardware to the last file.
    pub wall: Duration,
    /// The memory budget the files were admitted against.
    pub budget: u64,
    /// The run was stopped ([`stop`]) before its end.
    pub stopped: bool,
}

/// A file written after the work under the output policy (claimed before it): its path,
/// and its content made from the device description (the tool's plot and trace).
pub type Extra<'a> = (PathBuf, &'a dyn Fn(&str) -> Result<String, String>);

/// Asks every run in progress to stop reading files (the files in flight finish, the others
/// end as not processed); with none in progress, the next run to start. True if a run in
/// progress had been asked already (the tool's second Ctrl-C ends the process). A run started
/// after a stop has its own flag and runs to its end.
pub fn stop() -> bool {
    run::stop_all()
}

/// Runs `cmd` over `inputs` (files, folders and glob patterns) into `o.out`. `extras`: more
/// files written after the work, each claimed under the output policy before any work (a
/// clash is a usage error), its content made from the device description. `Err` when
/// nothing could start (a usage error); each file's own failure is in the summary.
pub fn run(
    inputs: &[String],
    cmd: &Command,
    o: &Options,
    observer: &dyn Observer,
    extras: &[Extra<'_>],
) -> Result<Summary, String> {
    let (histogram, tensor) = (cmd.histograms(), cmd.tensors());
    let luma = cmd.luma && run::knob(&o.tuning, "gray-via-rgb", 0) == 0;
    let ext = match (o.format.as_deref(), histogram, tensor) {
        (None, true, _) => Some("csv"),
        (Some(f @ ("csv" | "json")), true, _) => Some(f),
        (None | Some("npy"), _, true) => Some("npy"),
        (Some(f @ ("png" | "jpg" | "jpeg")), false, false) => Some(f),
        (None, false, false) => None,
        (Some(f), ..) => return Err(format!("--format {f} does not fit this command")),
    };
    let memory = o.memory.unwrap_or_else(default_budget);
    if o.out.is_file() {
        return Err(format!("-o {}: is a file; -o takes a folder", o.out.display()));
    }
    let (files, missing) = inputs::expand(inputs);
    let (policy, files, unresolved) = outputs::Policy::new(files, o.overwrite, o.sync);
    // With no file to process, nothing is made: not even the output folder.
    let extras = if files.is_empty() { &[] } else { extras };
    if !files.is_empty() {
        std::fs::create_dir_all(&o.out)
            .map_err(|e| format!("cannot create the output folder {}: {e}", o.out.display()))?;
        outputs::probe(&o.out).map_err(|e| format!("cannot write into the output folder {}: {e}", o.out.display()))?;
    }
    let (jobs, clashes) = policy.plan(&files, &o.out, ext);
    // The extra files are claimed before any work, as the images are: a usage error.
    for (extra, _) in extras {
        policy.claim(extra).map_err(|why| format!("{}: {why}", extra.display()))?;
    }
    observer.planned(jobs.len() + clashes.len());
    let index = jobs.iter().enumerate().flat_map(|(i, (a, b))| [(a.as_path(), i), (b.as_path(), i)]).collect();
    let run = Run {
        observer,
        tuning: &o.tuning,
        luma,
        failures: Mutex::new(Vec::new()),
        done: AtomicUsize::new(0),
        policy: &policy,
        // Nothing larger than the budget can be held anyway.
        limits: crate::Limits::default().with_max_image_bytes(crate::limits::DEFAULT_MAX_IMAGE_BYTES.min(memory)),
        budget: budget::Budget::new(memory),
        halted: Mutex::new(None),
        index,
        ended: jobs.iter().map(|_| AtomicBool::new(false)).collect(),
        stop: run::stop_flag(),
    };
    for (path, why) in missing.iter().chain(&unresolved).chain(&clashes) {
        run.fail(path, why);
    }
    let start = Instant::now();
    let gpus = if o.hardware == Hardware::Cpu || jobs.is_empty() { None } else { open_gpus(&o.hardware, &run)? };
    let gpus_opened = start.elapsed();
    let device = gpus.as_ref().map_or_else(
        || format!("CPU, {} threads", rayon::current_num_threads()),
        |p| format!("{} x {}", p.len(), p.gpus()[0].name()),
    );
    let jpeg = |path: &Path| Format::from_path(path, o.quality).unwrap_or(Format::Png);
    // JPEG in, on a GPU with nvJPEG: decoded (and, for JPEG out, encoded) on the GPU.
    let all_jpeg = !jobs.is_empty() && jobs.iter().all(|(i, _)| is_jpeg(i));
    // The codecs themselves open inside the JPEG path, while its CPU decoders already work.
    let shape = match (&gpus, all_jpeg && !histogram && !tensor) {
        (Some(_), true) => match crate::jpeg::load() {
            Ok(_) => Some(Shape::new(jobs.iter().all(|(_, o)| is_jpeg(o)), luma, &run)),
            Err(e) => {
                run.say(&format!("JPEG through the CPU: {e}"));
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
        (_, _) if tensor => images::tensors(&other_jobs, gpus.as_ref(), cmd, &run),
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
            return Err(format!("{}: no GPU path for what it makes of RGB ({other:?})", cmd.op.name));
        }
    }
    // Every job ends as written or failed, whatever stopped the others.
    let why = match (run.stopped(), run.halted()) {
        (true, _) => "not processed: the run was interrupted".to_string(),
        (false, Some(why)) => format!("not processed: {why}"),
        (false, None) => "not processed: the stages that take it stopped (see the errors above)".to_string(),
    };
    run.unfinished(&jobs, &why);
    // The extra files: a failure after the work is a failure of the run, with its reason.
    for (path, content) in extras {
        if let Err(why) = content(&device).and_then(|t| policy.write(path, t.as_bytes()).map_err(|e| e.to_string())) {
            run.fail(path, format!("cannot write: {why}"));
        }
    }
    let stopped = run.stopped();
    Ok(Summary {
        written: run.done.load(Relaxed),
        failures: run.failures.into_inner().unwrap_or_else(|e| e.into_inner()),
        device,
        opening: gpus.as_ref().map(|_| (gpus_opened, opened - gpus_opened)),
        wall: start.elapsed(),
        budget: memory,
        stopped,
    })
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
    fn run<Q: crate::jpeg::JpegPixel + crate::io::Encode>(
        &self,
        format: images::Formats<'_>,
        wrap: fn(crate::Image<Q>) -> Any,
        op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> crate::Result<()> + Sync,
    ) {
        if let Some(shape) = self.shape {
            let size = |w, h| self.cmd.bound.size(w, h);
            jpeg_on_gpu(self.jpeg_jobs, self.pool, shape, format, self.run, into_new::<Q>(size, &op));
        }
        images::on_gpu(self.jobs, self.pool, self.cmd, format, self.run, &op, wrap);
    }
}

/// The command's stream form on an RGB device image, into a device image of `Q`.
fn on_stream<Q: Pixel>(
    cmd: &Command,
) -> impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> crate::Result<()> + Sync
where
    for<'a> AnyDeviceViewMut<'a>: From<DeviceViewMut<'a, Q>>,
{
    let bound = &*cmd.bound;
    move |s, src, dst| bound.stream(s, &AnyDeviceView::from(src.view()), Target::Image(dst.view_mut().into()))
}

fn open_gpus(which: &Hardware, run: &Run) -> Result<Option<GpuPool>, String> {
    let pool = match which {
        Hardware::Gpu(n) => GpuPool::with_devices(&[*n]),
        _ => GpuPool::all(),
    };
    match pool {
        Ok(pool) => Ok(Some(pool)),
        Err(e) if e.is_no_gpu() && *which == Hardware::AllGpus => {
            let why = match &e {
                crate::Error::NoDriver(why) | crate::Error::NoDevice(why) => why.clone(),
                e => e.to_string(),
            };
            run.say(&format!("no GPU ({why}); using all CPU cores (--cpu does so without looking for a GPU)"));
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
        .and_then(|f| crate::limits::Header::read(&mut std::io::BufReader::with_capacity(4096, f)).ok());
    header.is_some_and(|h| h.format == crate::limits::FileFormat::Jpeg && h.channels == 1)
}

fn is_jpeg(path: &Path) -> bool {
    matches!(Format::from_path(path, 0), Some(Format::Jpeg { .. }))
}
