//! `cuimg::files::stop` as a library sees it: it stops the runs in progress (or, with none,
//! the next one), and a run started after it runs to its end. Its own test binary: the stop
//! is process-wide, and would reach the runs of tests beside it.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use cuimg::files::{self, Command, Hardware, Observer, Options, Stage};
use cuimg::registry::{self, Args};
use cuimg::{Image, Rgb8};

/// Stops the run from inside it once `after` files have ended.
struct StopAfter {
    after: usize,
    ended: AtomicUsize,
    second_stop_said_asked: AtomicUsize,
}

impl Observer for StopAfter {
    fn planned(&self, _: usize) {}
    fn stage(&self, _: Stage, _: Option<Instant>, _: Duration) {}
    fn ended(&self, _: &Path, _: Result<(), &str>) {
        if self.ended.fetch_add(1, Relaxed) + 1 == self.after {
            assert!(!files::stop(), "the first stop of this run");
            if files::stop() {
                self.second_stop_said_asked.fetch_add(1, Relaxed);
            }
        }
    }
    fn say(&self, _: &str) {}
}

fn run(dir: &Path, out: &str, observer: &dyn Observer) -> files::Summary {
    let op = registry::find("grayscale").unwrap();
    let cmd = Command::new(op, &Args::defaults(op)).unwrap();
    let mut o = Options::new(dir.join(out));
    o.hardware = Hardware::Cpu;
    let inputs = [dir.join("in").to_string_lossy().into_owned()];
    files::run(&inputs, &cmd, &o, observer, &[]).unwrap()
}

#[test]
fn a_stop_ends_the_runs_in_progress_and_not_the_ones_after() {
    let dir = std::env::temp_dir().join(format!("cuimg-files-stop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("in")).unwrap();
    // More files than the cores take at once, so that a stop after two leaves some unread.
    let n = 64;
    for i in 0..n {
        let img = Image::from_fn(31, 17, |x, y| Rgb8([(x * 7 + i) as u8, (y * 5) as u8, i as u8]));
        cuimg::io::save(&img, dir.join(format!("in/p{i:02}.png"))).unwrap();
    }
    let never =
        StopAfter { after: usize::MAX, ended: AtomicUsize::new(0), second_stop_said_asked: AtomicUsize::new(0) };

    // A stop with no run in progress stops the next run, and only that one.
    assert!(!files::stop());
    let stopped = run(&dir, "out1", &never);
    assert!(stopped.stopped, "{stopped:?}");
    assert_eq!(stopped.written, 0, "{stopped:?}");
    assert_eq!(stopped.failures.len(), n as usize, "every job ends, as not processed");
    assert!(stopped.failures.iter().all(|(_, why)| why.contains("interrupted")), "{stopped:?}");
    let whole = run(&dir, "out2", &never);
    assert!(!whole.stopped && whole.written == n as usize && whole.failures.is_empty(), "{whole:?}");

    // A stop from inside a run ends that run early; a second stop says it was asked.
    let inside = StopAfter { after: 2, ended: AtomicUsize::new(0), second_stop_said_asked: AtomicUsize::new(0) };
    let cut = run(&dir, "out3", &inside);
    assert!(cut.stopped, "{cut:?}");
    assert!(cut.written >= 2 && cut.written < n as usize, "{cut:?}");
    assert_eq!(cut.written + cut.failures.len(), n as usize, "every job ends once");
    assert_eq!(inside.second_stop_said_asked.load(Relaxed), 1);

    // And the run after it is whole again.
    let again = run(&dir, "out4", &never);
    assert!(!again.stopped && again.written == n as usize, "{again:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
