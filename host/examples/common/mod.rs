//! What every example shares: arguments, the GPU (or why not), and the stage timings table.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Instant;

use cuimg::{Gpu, Image, Rgb8, Stream};

/// `[input] [output]`; no input means the embedded photo.
pub fn args(default_out: &str) -> (Option<PathBuf>, PathBuf) {
    let mut a = std::env::args_os().skip(1);
    let input = a.next().map(PathBuf::from);
    let output = a.next().map(PathBuf::from).unwrap_or_else(|| PathBuf::from(default_out));
    (input, output)
}

/// Stage timings, printed as a table.
pub struct Stages(Vec<(&'static str, f64)>);

impl Stages {
    pub fn new() -> Stages {
        Stages(Vec::new())
    }

    pub fn add(&mut self, stage: &'static str, ms: f64) {
        self.0.push((stage, ms));
    }

    /// Times `f` on the host clock.
    pub fn host<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.add(stage, t.elapsed().as_secs_f64() * 1e3);
        out
    }

    /// Times `f` with device events on `stream`.
    pub fn device<T>(
        &mut self,
        stage: &'static str,
        stream: &Stream,
        f: impl FnOnce() -> cuimg::Result<T>,
    ) -> cuimg::Result<T> {
        let start = stream.mark()?;
        let out = f()?;
        let ms = start.elapsed_ms(&stream.mark()?)?;
        self.add(stage, ms as f64);
        Ok(out)
    }

    pub fn print(&self, title: &str) {
        println!("\n{title}");
        for (stage, ms) in &self.0 {
            println!("  {stage:<28} {ms:>10.3} ms");
        }
        println!("  {:<28} {:>10.3} ms", "total", self.0.iter().map(|s| s.1).sum::<f64>());
    }
}

/// Decodes the input (or the embedded photo), timed.
pub fn decode(stages: &mut Stages, input: &Option<PathBuf>) -> cuimg::Result<Image<Rgb8>> {
    match input {
        Some(path) => stages.host("decode", || cuimg::io::load_rgb(path)),
        None => Ok(stages.host("decode (embedded photo)", cuimg::io::sample_rgb)),
    }
}

/// The GPU, or `None` with the reason printed (the example then shows the CPU path only).
///
/// Only "no GPU here" ([`cuimg::Error::is_no_gpu`]) falls back: a GPU that is there but
/// fails (a driver too old for the kernels, a lost context) is an error, and so is a missing
/// GPU under `CUIMG_REQUIRE_GPU=1` (the GPU bundle sets it), so a GPU run of the examples
/// cannot pass on the CPU path.
pub fn gpu() -> cuimg::Result<Option<Gpu>> {
    let t = Instant::now();
    match Gpu::new() {
        Ok(gpu) => {
            ON_GPU.store(true, std::sync::atomic::Ordering::Relaxed);
            let s = gpu.startup();
            println!(
                "GPU: {} (sm_{}{}, {} SMs), ready in {:.1} ms (open {:.1}, kernels {:.1} as {}, warm-up {:.1})",
                gpu.name(),
                gpu.compute_capability().0,
                gpu.compute_capability().1,
                gpu.multiprocessors(),
                t.elapsed().as_secs_f64() * 1e3,
                s.open.as_secs_f64() * 1e3,
                s.load.as_secs_f64() * 1e3,
                s.code,
                s.warm_up.as_secs_f64() * 1e3,
            );
            Ok(Some(gpu))
        }
        Err(e) => skip_without_gpu(e, "showing the CPU reference only").map(|()| None),
    }
}

/// `Ok` (with the reason printed) when `e` means "no GPU here" and the run does not require
/// one (`CUIMG_REQUIRE_GPU=1`); `e` itself otherwise.
pub fn skip_without_gpu(e: cuimg::Error, then: &str) -> cuimg::Result<()> {
    if e.is_no_gpu() && std::env::var("CUIMG_REQUIRE_GPU").map_or(true, |v| v != "1") {
        println!("no GPU ({e}); {then}");
        Ok(())
    } else {
        Err(e)
    }
}

/// The repository's photos (tests/data/photos: CC0, their licences in LICENSES.md there).
pub fn photos_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/photos")
}

/// Whether the example found a GPU ([`gpu`]).
static ON_GPU: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The title of the first stage table: the GPU's path, or what ran without one.
pub fn first_title() -> &'static str {
    match ON_GPU.load(std::sync::atomic::Ordering::Relaxed) {
        true => "GPU pipeline",
        false => "no GPU: decode and encode (the work ran on the CPU, below)",
    }
}

/// The exit of an example: its error said in words (`Display`, with the hint of what to
/// do), not in `Debug` form, and a failing status.
pub fn exit(result: cuimg::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
