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

mod report;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, FromArgMatches};
use cuimg::files::{self, Command, Hardware, Options};
use cuimg::registry::OPERATIONS;
use indicatif::{ProgressBar, ProgressStyle};

use report::{Shown, Stages};

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
    let mut cmd = Command::new(op, &args).map_err(|e| match e {
        cuimg::Error::InvalidParameter { what, why } if what.starts_with("--") => format!("{what}: {why}"),
        e => {
            let shown: Vec<String> =
                given.iter().filter(|(_, v)| !v.is_empty()).map(|(n, v)| format!("--{n} {v}")).collect();
            format!("{}: {e}", shown.join(" "))
        }
    })?;
    if let Some(size) = m.get_one::<String>("resize") {
        let filter = m.get_one::<String>("resize_filter").map_or("cv-area", |f| f.as_str());
        let resize = cuimg::registry::find("resize").expect("resize is an operation");
        let args =
            cuimg::registry::Args::parse(resize, &[("size", size), ("filter", filter)]).map_err(|e| e.to_string())?;
        let first = (resize.bind)(&args).map_err(|e| format!("--resize {size} --resize-filter {filter}: {e}"))?;
        cmd.bound = Box::new(cuimg::registry::Then::new(first, cmd.bound));
        // A JPEG's luma plane is gray before the resize, not after it: decode the colors.
        cmd.luma = false;
    }
    Ok(cmd)
}

#[derive(Args, Clone)]
pub(crate) struct Common {
    /// Image files, folders (their PNG and JPEG files) and glob patterns.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The folder to write into (made if missing).
    #[arg(short, long)]
    out: PathBuf,
    /// Output format: png or jpg (images; default: the input's), csv or json (histogram), npy (tensor).
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
    /// Resize each image first, to WIDTHxHEIGHT (as `cuimg resize --size`), then run the
    /// command on it.
    #[arg(long, value_name = "WxH")]
    resize: Option<String>,
    /// The filter of --resize (as `cuimg resize --filter`).
    #[arg(long, default_value = "cv-area", requires = "resize")]
    resize_filter: String,
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
        if files::stop() {
            files::remove_temporaries();
            eprintln!("\nstopped");
            std::process::exit(130);
        }
        eprintln!("\nstopping: finishing the files in flight (again to stop at once)");
    });
    std::process::exit(match command(name, sub).and_then(|cmd| run(&cmd, &common)) {
        Ok(summary) if summary.stopped => 130,
        Ok(summary) if summary.failures.is_empty() => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    });
}

/// The run through the library's file engine, then its summary (and, with `--report`, the
/// stage table, the threads and the memory); `Err` when nothing could start.
fn run(cmd: &Command, c: &Common) -> Result<files::Summary, String> {
    let hardware = match (c.cpu, c.gpu.as_str()) {
        (true, _) => Hardware::Cpu,
        (false, "all") => Hardware::AllGpus,
        (false, n) => Hardware::Gpu(n.parse().map_err(|_| format!("--gpu {n}: an index or \"all\""))?),
    };
    let options = Options {
        out: c.out.clone(),
        format: c.format.clone(),
        quality: c.quality,
        hardware,
        overwrite: c.overwrite,
        sync: !c.no_sync,
        memory: c.memory.as_deref().map(files::parse_size).transpose()?,
        tuning: parse_tuning(c.tune.as_deref())?,
    };
    let progress = ProgressBar::new(0);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} images, {per_sec}, {eta} left").expect("a valid template"),
    );
    let shown = Shown { stages: Stages::new(c.trace.is_some()), progress };
    let plot = |device: &str| shown.stages.plot(device);
    let trace = |_: &str| Ok(shown.stages.trace());
    let mut extras: Vec<files::Extra<'_>> = Vec::new();
    extras.extend(c.plot.iter().map(|p| (p.clone(), &plot as &dyn Fn(&str) -> _)));
    extras.extend(c.trace.iter().map(|p| (p.clone(), &trace as &dyn Fn(&str) -> _)));
    let summary = files::run(&c.inputs, cmd, &options, &shown, &extras)?;
    shown.progress.finish_and_clear();
    let (done, wall) = (summary.written, summary.wall);
    let opening = match summary.opening {
        Some((gpus, nvjpeg)) => format!("; {:.0} ms of it opening the GPU and nvJPEG", ms(gpus + nvjpeg)),
        None => String::new(),
    };
    eprintln!(
        "{done} images written, {} failed, in {:.2} s ({:.1} images/s) on {}{opening}",
        summary.failures.len(),
        wall.as_secs_f64(),
        done as f64 / wall.as_secs_f64().max(1e-9),
        summary.device,
    );
    if c.report {
        if let Some((gpus, nvjpeg)) = summary.opening {
            eprintln!(
                "opening: {:.0} ms the GPUs (driver, contexts, kernels), then {:.0} ms loading nvJPEG (its codecs open while the CPU decoders work)",
                ms(gpus),
                ms(nvjpeg)
            );
        }
        if let Some(peak) = files::peak_rss() {
            eprintln!(
                "memory: peak resident {} (VmHWM) with a budget of {} for the files in flight",
                files::size(peak),
                files::size(summary.budget)
            );
        }
        eprintln!("{}", shown.stages.table(done, wall));
        if let Some(threads) = shown.stages.threads_table(wall) {
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
    Ok(summary)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// CPU seconds this process has used, user and system (Linux: /proc/self/stat).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    // utime and stime, the 14th and 15th fields (11 and 12 after the name), at 100 ticks/s.
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
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
