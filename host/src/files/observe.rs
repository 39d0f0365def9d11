//! What a run tells whoever runs it: the [`Observer`] trait (progress, stage times, every
//! thread's waits, messages), which the `cuimg` tool implements with its progress bar, its
//! stage table and its Chrome trace; and the threads the engine starts, named for it.

use std::path::Path;
use std::time::{Duration, Instant};

/// The stages of one file's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Reading the file (after its header is checked).
    Read,
    /// Decoding it (CPU or nvJPEG).
    Decode,
    /// Host copies into and out of pinned memory (the GPU pipeline).
    Staging,
    /// Copies to the device.
    Upload,
    /// The operation's launches.
    Kernel,
    /// Copies back to the host.
    Download,
    /// Encoding the result (CPU or nvJPEG).
    Encode,
    /// Writing it under the output policy.
    Write,
}

impl Stage {
    /// Every stage, in the order a file goes through them.
    pub const ALL: [Stage; 8] = [
        Stage::Read,
        Stage::Decode,
        Stage::Staging,
        Stage::Upload,
        Stage::Kernel,
        Stage::Download,
        Stage::Encode,
        Stage::Write,
    ];

    /// Its name in reports (`pinned copies` for [`Stage::Staging`]).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Read => "read",
            Stage::Decode => "decode",
            Stage::Staging => "pinned copies",
            Stage::Upload => "upload",
            Stage::Kernel => "kernel",
            Stage::Download => "download",
            Stage::Encode => "encode",
            Stage::Write => "write",
        }
    }
}

/// What a run reports as it goes; every method has a default that ignores it. Called from
/// many threads at once.
pub trait Observer: Sync {
    /// The run will end `jobs` jobs (each written or failed).
    fn planned(&self, _jobs: usize) {}
    /// The calling thread is the run's `label` ("gpu 0 hardware decoder 0", "writer 3").
    fn thread(&self, _label: &str) {}
    /// One file's `stage` ran on the calling thread from `start` for `took` (or, with no
    /// start, took that long in all on a device: the pipeline's summed copy and kernel times).
    fn stage(&self, _stage: Stage, _start: Option<Instant>, _took: Duration) {}
    /// The calling thread spent `took` from `start` on `what`, outside the stages ("wait for
    /// files", "wait for memory", "open").
    fn span(&self, _what: &'static str, _start: Instant, _took: Duration) {}
    /// A job ended: its output written, or a failure with the path it concerns.
    fn ended(&self, _path: &Path, _result: Result<(), &str>) {}
    /// A line for the user: a warning about one file, or news about the run ("GPU 0: no
    /// nvJPEG codec ...").
    fn say(&self, _line: &str) {}
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {}

/// Starts a thread of `scope` that tells `observer` it is `label`, named for the OS too,
/// shortened to the 15 bytes Linux keeps ("g0 hw 0"): `top -H`, cuda-gdb's backtraces and a
/// CUPTI trace name it.
pub(crate) fn spawn<'scope, F: FnOnce() + Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    observer: &'scope dyn Observer,
    label: String,
    f: F,
) -> std::thread::ScopedJoinHandle<'scope, ()> {
    let short = [
        ("gpu ", "g"),
        ("hardware decoder", "hw"),
        ("ramp CPU decoder", "ramp"),
        ("CPU decoder", "cpu"),
        ("SM decoder", "sm"),
        ("encoder", "enc"),
        ("writer", "wr"),
    ]
    .iter()
    .fold(label.clone(), |l, (long, short)| l.replace(long, short));
    std::thread::Builder::new()
        .name(short)
        .spawn_scoped(scope, move || {
            observer.thread(&label);
            f()
        })
        // As `Scope::spawn` does.
        .expect("failed to spawn thread")
}
