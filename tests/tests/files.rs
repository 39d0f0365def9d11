//! The file engine as a library (`cuimg::files::run`): what the tool runs, called directly
//! with an observer, on all CPU cores (in CI) and, where there is one, on the GPU. The tool's
//! own tests (cli/tests) run the same engine through the binary.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use cuimg::files::{self, Command, Hardware, Observer, Options, Stage};
use cuimg::registry::{self, Args};
use cuimg::{GrayWeights, Image, Rgb8, cpu};

/// Counts what the engine reports.
#[derive(Default)]
struct Counted {
    planned: AtomicUsize,
    ended_ok: AtomicUsize,
    ended_failed: AtomicUsize,
    decodes: AtomicUsize,
    said: Mutex<Vec<String>>,
}

impl Observer for Counted {
    fn planned(&self, jobs: usize) {
        self.planned.store(jobs, Relaxed);
    }
    fn stage(&self, stage: Stage, _: Option<Instant>, _: Duration) {
        if stage == Stage::Decode {
            self.decodes.fetch_add(1, Relaxed);
        }
    }
    fn ended(&self, _: &Path, result: Result<(), &str>) {
        match result {
            Ok(()) => self.ended_ok.fetch_add(1, Relaxed),
            Err(_) => self.ended_failed.fetch_add(1, Relaxed),
        };
    }
    fn say(&self, line: &str) {
        self.said.lock().unwrap().push(line.to_string());
    }
}

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cuimg-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("in")).unwrap();
    dir
}

fn photo(seed: u8) -> Image<Rgb8> {
    Image::from_fn(37, 23, |x, y| Rgb8([(x * 7) as u8 ^ seed, (y * 11) as u8, (x + y) as u8]))
}

fn grayscale() -> Command {
    let op = registry::find("grayscale").unwrap();
    Command::new(op, &Args::defaults(op)).unwrap()
}

fn run_on(hardware: Hardware, name: &str) {
    let dir = folder(name);
    for i in 0..3u8 {
        cuimg::io::save(&photo(i), dir.join(format!("in/p{i}.png"))).unwrap();
    }
    std::fs::write(dir.join("in/bad.png"), b"not a png").unwrap();
    let mut o = Options::new(dir.join("out"));
    o.hardware = hardware;
    let seen = Counted::default();
    let notes = |device: &str| Ok(format!("ran on {device}"));
    let extras: Vec<files::Extra<'_>> = vec![(dir.join("notes.txt"), &notes)];
    let inputs = [dir.join("in").to_string_lossy().into_owned()];
    let summary = files::run(&inputs, &grayscale(), &o, &seen, &extras).unwrap();
    // Every job ends once: three written, the bad file reported with its path.
    assert_eq!(summary.written, 3, "{summary:?}");
    assert_eq!(summary.failures.len(), 1, "{summary:?}");
    assert!(summary.failures[0].0.ends_with("bad.png"), "{summary:?}");
    assert_eq!(seen.planned.load(Relaxed), 4);
    assert_eq!((seen.ended_ok.load(Relaxed), seen.ended_failed.load(Relaxed)), (3, 1));
    assert!(seen.decodes.load(Relaxed) >= 3);
    assert!(seen.said.lock().unwrap().iter().any(|l| l.contains("bad.png")), "the failure is said");
    for i in 0..3u8 {
        let got = cuimg::io::load_gray(dir.join(format!("out/p{i}.png"))).unwrap();
        assert_eq!(got, cpu::grayscale(&photo(i).view(), GrayWeights::Bt601).unwrap(), "{name} p{i}");
    }
    let notes = std::fs::read_to_string(dir.join("notes.txt")).unwrap();
    assert!(notes.starts_with("ran on ") && notes.contains(&summary.device), "{notes}");
    // Again, without `overwrite`: nothing is replaced, each output is a failure that says so.
    let again = files::run(&inputs, &grayscale(), &o, &files::Quiet, &[]).unwrap();
    assert_eq!(again.written, 0, "{again:?}");
    assert_eq!(again.failures.len(), 4, "{again:?}");
    o.overwrite = true;
    let replaced = files::run(&inputs, &grayscale(), &o, &files::Quiet, &[]).unwrap();
    assert_eq!(replaced.written, 3, "{replaced:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_engine_runs_on_all_cpu_cores() {
    run_on(Hardware::Cpu, "cpu");
}

/// Every GPU, or all cores where there is none (the engine says so through the observer).
#[test]
fn the_engine_runs_on_whatever_is_there() {
    run_on(Hardware::AllGpus, "any");
}

/// Usage errors come before any work, and make nothing.
#[test]
fn usage_errors_make_nothing() {
    let dir = folder("usage");
    cuimg::io::save(&photo(1), dir.join("in/p.png")).unwrap();
    let inputs = [dir.join("in").to_string_lossy().into_owned()];
    let mut o = Options::new(dir.join("out"));
    o.format = Some("tiff".into());
    let e = files::run(&inputs, &grayscale(), &o, &files::Quiet, &[]).unwrap_err();
    assert!(e.contains("--format tiff"), "{e}");
    assert!(!dir.join("out").exists());
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let e = files::run(&inputs, &grayscale(), &Options::new(&file), &files::Quiet, &[]).unwrap_err();
    assert!(e.contains("is a file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
