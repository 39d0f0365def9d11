//! One run's shared state: its jobs and how each ended, its limits and memory budget, its
//! observer and tuning; and the stop flag ([`super::stop`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};

use super::budget;
use super::inputs::{Job, Problem};
use super::observe::{Observer, Stage};
use super::outputs::Policy;
use crate::limits::Header;

/// The stop flags of the runs in progress, and whether a stop came while none was: set by
/// [`super::stop`] (the tool: the first SIGINT or SIGTERM). A stopped run reads no new file;
/// the files in flight finish. Each run has its own flag, so a run started after a stop
/// (a library's next batch of work) is not stopped by it.
static RUNNING: Mutex<(Vec<Weak<AtomicBool>>, bool)> = Mutex::new((Vec::new(), false));

/// Stops every run in progress, or the next one to start if none is; true if a run in
/// progress had been asked already.
pub(crate) fn stop_all() -> bool {
    let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    running.0.retain(|flag| flag.strong_count() > 0);
    if running.0.is_empty() {
        running.1 = true;
        return false;
    }
    running.0.iter().filter_map(Weak::upgrade).fold(false, |asked, flag| flag.swap(true, Relaxed) | asked)
}

/// A new run's stop flag: set already if a stop came while no run was in progress.
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let flag = Arc::new(AtomicBool::new(std::mem::take(&mut running.1)));
    running.0.push(Arc::downgrade(&flag));
    flag
}

/// How [`Run::admit_if`] ended.
pub enum Admission<F = crate::io::CheckedFile> {
    /// Checked and admitted, or refused with its reason.
    Done(crate::Result<F>),
    /// It does not fit now (only when not waiting): nothing is held.
    Later,
    /// The run is stopping: the job is left for [`Run::unfinished`].
    Stop,
}

/// Everything one run shares between its threads.
pub(crate) struct Run<'a> {
    pub observer: &'a dyn Observer,
    /// `Options::tuning`.
    pub tuning: &'a [(String, usize)],
    /// A JPEG's gray is its luma plane (the command allows it, and `gray-via-rgb` is off).
    pub luma: bool,
    pub failures: Mutex<Vec<Problem>>,
    pub done: AtomicUsize,
    pub policy: &'a Policy,
    pub limits: crate::Limits,
    pub budget: budget::Budget,
    /// Why the run stopped taking files before the end (a stage that could not start).
    pub halted: Mutex<Option<String>>,
    /// Each job's input and output path to its index.
    pub index: HashMap<&'a Path, usize>,
    /// Whether each job has ended (written or failed): each ends once.
    pub ended: Vec<AtomicBool>,
    /// This run's stop flag ([`stop_flag`]).
    pub stop: Arc<AtomicBool>,
}

impl Run<'_> {
    /// Reports a failure. A job's (named by its input or output) ends with it, and lets go
    /// of its memory.
    pub fn fail(&self, path: &Path, why: impl std::fmt::Display) {
        if let Some(&i) = self.index.get(path) {
            if self.ended[i].swap(true, Relaxed) {
                return;
            }
            self.budget.release(i);
        }
        let why = why.to_string();
        // The library's errors name the file already: said once.
        let shown = path.display().to_string();
        let line = if why.contains(&shown) { why.clone() } else { format!("{shown}: {why}") };
        self.observer.say(&format!("error: {line}"));
        self.observer.ended(path, Err(&why));
        self.failures.lock().unwrap_or_else(|e| e.into_inner()).push((path.to_path_buf(), why));
    }

    /// A job's output is written.
    pub fn ok(&self, out: &Path) {
        if let Some(&i) = self.index.get(out) {
            if self.ended[i].swap(true, Relaxed) {
                return;
            }
            self.budget.release(i);
        }
        self.done.fetch_add(1, Relaxed);
        self.observer.ended(out, Ok(()));
    }

    /// Reads job `i`'s input after checking its header against the limits (for an image
    /// held at `bytes_per_pixel`) and admitting its work against the memory budget. `None`
    /// once the run is stopping: the job is left for [`Run::unfinished`].
    pub fn read(&self, input: &Path, bytes_per_pixel: u32) -> Option<crate::Result<(Header, Vec<u8>)>> {
        let file = self.admit(input, bytes_per_pixel)?;
        Some(file.and_then(|file| self.read_admitted(file)))
    }

    /// The first half of [`Run::read`]: the checks and the admission, which may wait for
    /// memory. A reader that reads on rayon's threads admits on its own thread first, so
    /// that no pool thread waits for memory that only work needing the pool can free.
    pub fn admit(&self, input: &Path, bytes_per_pixel: u32) -> Option<crate::Result<crate::io::CheckedFile>> {
        match self.admit_if(input, bytes_per_pixel, true) {
            Admission::Stop => None,
            Admission::Done(file) => Some(file),
            Admission::Later => unreachable!("a waiting admission is never put off"),
        }
    }

    /// [`Run::admit`]; with `wait` false, [`Admission::Later`] instead of waiting for
    /// memory. A reader that holds admitted files it has not handed on yet must not wait:
    /// the memory it would wait for may be theirs (the nvJPEG path's reader did, and a
    /// budget of three files stalled it).
    pub fn admit_if(&self, input: &Path, bytes_per_pixel: u32, wait: bool) -> Admission {
        if self.stopped() || self.halted().is_some() {
            return Admission::Stop;
        }
        let i = self.index[input];
        let file = match self.span("read header", || crate::io::CheckedFile::open(input, bytes_per_pixel, &self.limits))
        {
            Ok(f) => f,
            Err(e) => return Admission::Done(Err(e)),
        };
        let cost = budget::cost(&file.header, file.len, bytes_per_pixel);
        if cost > self.budget.cap() {
            return Admission::Done(Err(crate::Error::Limit {
                path: input.into(),
                what: "the memory its work needs (the run's budget is --memory)".into(),
                size: cost,
                limit: self.budget.cap(),
            }));
        }
        match self.span("wait for memory", || self.budget.admit(i, cost, &self.stop, wait)) {
            Ok(true) => Admission::Done(Ok(file)),
            Ok(false) => Admission::Later,
            Err(_) => Admission::Stop,
        }
    }

    /// The second half of [`Run::read`]: the whole file, once admitted.
    pub fn read_admitted(&self, file: crate::io::CheckedFile) -> crate::Result<(Header, Vec<u8>)> {
        let header = file.header;
        self.time(Stage::Read, || file.read()).map(|bytes| (header, bytes))
    }

    /// A warning about one file (what it lost).
    pub fn warn(&self, path: &Path, what: &str) {
        self.observer.say(&format!("warning: {}: {what}", path.display()));
    }

    /// Stops the reading of files, for `why` (the first reason is kept).
    pub fn halt(&self, why: String) {
        let mut halted = self.halted.lock().unwrap_or_else(|e| e.into_inner());
        if halted.is_none() {
            self.observer.say(&format!("error: {why}"));
            *halted = Some(why);
        }
    }

    /// Whether [`super::stop`] asked this run to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }

    pub fn halted(&self) -> Option<String> {
        self.halted.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Ends every job that has not ended, with `why`.
    pub fn unfinished(&self, jobs: &[Job], why: &str) {
        for (input, _) in jobs {
            self.fail(input, why);
        }
    }

    /// Runs `f` as one file's `stage` on this thread.
    pub fn time<T>(&self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let t = std::time::Instant::now();
        let out = f();
        self.observer.stage(stage, Some(t), t.elapsed());
        out
    }

    /// Runs `f` as a span of this thread outside the stages (a wait, an opening).
    pub fn span<T>(&self, what: &'static str, f: impl FnOnce() -> T) -> T {
        let t = std::time::Instant::now();
        let out = f();
        self.observer.span(what, t, t.elapsed());
        out
    }

    /// A line for the user.
    pub fn say(&self, line: &str) {
        self.observer.say(line);
    }

    /// A tuning value (`Options::tuning`), or `default`.
    pub fn knob(&self, name: &str, default: usize) -> usize {
        knob(self.tuning, name, default)
    }
}

/// The last value `tuning` gives `name`, or `default`.
pub(crate) fn knob(tuning: &[(String, usize)], name: &str, default: usize) -> usize {
    tuning.iter().rev().find(|(k, _)| k == name).map_or(default, |(_, v)| *v)
}
