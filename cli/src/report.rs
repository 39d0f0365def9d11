//! Stage times of a run, summed over threads (stages overlap, so the sums exceed the wall
//! time), printed as a table and drawn as a bar chart; and, when asked, every thread's
//! timeline: each stage and each wait as a span, written as a Chrome trace (Perfetto or
//! chrome://tracing open it) and summed per kind of thread, which shows which queue runs dry.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use cuimg::files::{Observer, Stage};
use indicatif::ProgressBar;
use plotters::prelude::*;

const STAGES: [Stage; 8] = Stage::ALL;

#[derive(Default)]
pub struct Stages {
    nanos: [AtomicU64; 8],
    /// The spans of every thread, when a timeline was asked for.
    timeline: Option<Timeline>,
}

/// Spans on one clock: (thread label, span name, start, length).
struct Timeline {
    origin: Instant,
    spans: Mutex<Vec<(String, &'static str, Duration, Duration)>>,
}

thread_local! {
    /// What this thread does ("gpu 0 hardware decoder 0"), for the timeline; threads nobody
    /// named are numbered workers (rayon's, on the CPU path).
    static LABEL: RefCell<String> = RefCell::new({
        static NEXT: AtomicU64 = AtomicU64::new(0);
        format!("worker {}", NEXT.fetch_add(1, Relaxed))
    });
}

impl Stages {
    /// Stage sums, and every thread's spans when `timeline`.
    pub fn new(timeline: bool) -> Stages {
        Stages {
            timeline: timeline.then(|| Timeline { origin: Instant::now(), spans: Mutex::new(Vec::new()) }),
            ..Stages::default()
        }
    }

    fn add(&self, stage: Stage, d: Duration) {
        self.nanos[stage as usize].fetch_add(d.as_nanos() as u64, Relaxed);
    }

    fn record(&self, name: &'static str, start: Instant, took: Duration) {
        if let Some(tl) = &self.timeline {
            let label = LABEL.with(|l| l.borrow().clone());
            let span = (label, name, start.saturating_duration_since(tl.origin), took);
            tl.spans.lock().unwrap_or_else(|e| e.into_inner()).push(span);
        }
    }

    /// Per kind of thread (its label without the number), the share of the threads' time
    /// in each span, busiest first: which stage works and which waits.
    pub fn threads_table(&self, wall: Duration) -> Option<String> {
        let tl = self.timeline.as_ref()?;
        let spans = tl.spans.lock().unwrap_or_else(|e| e.into_inner());
        let kind = |label: &str| label.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end().to_string();
        let mut threads: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        let mut time: BTreeMap<(String, &'static str), f64> = BTreeMap::new();
        for (label, name, _, len) in spans.iter() {
            threads.entry(kind(label)).or_default().insert(label.clone());
            *time.entry((kind(label), name)).or_default() += len.as_secs_f64();
        }
        let mut s = String::from("threads (share of their time, over the whole run)\n");
        for (k, members) in &threads {
            let total = members.len() as f64 * wall.as_secs_f64();
            let mut parts: Vec<(&str, f64)> =
                time.iter().filter(|((t, _), _)| t == k).map(|((_, n), v)| (*n, v / total)).collect();
            parts.sort_by(|a, b| b.1.total_cmp(&a.1));
            let listed: Vec<String> = parts.iter().map(|(n, f)| format!("{n} {:.0}%", f * 100.0)).collect();
            let rest = 1.0 - parts.iter().map(|p| p.1).sum::<f64>();
            s.push_str(&format!(
                "  {} x {k}: {}, other {:.0}%\n",
                members.len(),
                listed.join(", "),
                rest.max(0.0) * 100.0
            ));
        }
        Some(s)
    }

    /// The timeline as a Chrome trace (JSON), to be written by the output policy.
    pub fn trace(&self) -> String {
        let Some(tl) = &self.timeline else { return String::new() };
        let spans = tl.spans.lock().unwrap_or_else(|e| e.into_inner());
        let mut tids: BTreeMap<&str, usize> = BTreeMap::new();
        for (label, ..) in spans.iter() {
            let next = tids.len() + 1;
            tids.entry(label.as_str()).or_insert(next);
        }
        let mut events: Vec<serde_json::Value> = tids
            .iter()
            .map(|(label, tid)| {
                serde_json::json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": label}})
            })
            .collect();
        events.extend(spans.iter().map(|(label, name, start, len)| {
            serde_json::json!({"name": name, "ph": "X", "pid": 1, "tid": tids[label.as_str()],
                "ts": start.as_secs_f64() * 1e6, "dur": len.as_secs_f64() * 1e6})
        }));
        serde_json::json!({"traceEvents": events}).to_string()
    }

    fn ms(&self, stage: Stage) -> f64 {
        self.nanos[stage as usize].load(Relaxed) as f64 / 1e6
    }

    /// The stage breakdown as a table.
    pub fn table(&self, images: usize, wall: Duration) -> String {
        let mut s = format!("{:<14} {:>12} {:>14}\n", "stage", "total ms", "ms per image");
        for stage in STAGES {
            let (ms, name) = (self.ms(stage), stage.name());
            s.push_str(&format!("{name:<14} {ms:>12.1} {:>14.3}\n", ms / images.max(1) as f64));
        }
        s.push_str(&format!(
            "{:<14} {:>12.1}   (stages overlap: their sums exceed the wall time)",
            "wall",
            wall.as_secs_f64() * 1e3
        ));
        s
    }

    /// The stage breakdown as an SVG bar chart, to be written by the output policy.
    pub fn plot(&self, device: &str) -> Result<String, String> {
        let mut svg = String::new();
        self.draw(&mut svg, device).map_err(|e| e.to_string())?;
        Ok(svg)
    }

    fn draw(&self, svg: &mut String, device: &str) -> Result<(), Box<dyn std::error::Error + '_>> {
        let values: Vec<f64> = STAGES.iter().map(|s| self.ms(*s)).collect();
        let top = values.iter().cloned().fold(1.0, f64::max) * 1.15;
        let root = SVGBackend::with_string(svg, (900, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("cuimg stage times ({device})"), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((0..STAGES.len()).into_segmented(), 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => STAGES.get(*i).map_or("", |s| s.name()).to_string(),
                _ => String::new(),
            })
            .y_desc("ms, summed over threads")
            .draw()?;
        chart.draw_series(
            Histogram::vertical(&chart)
                .style(BLUE.filled())
                .margin(12)
                .data(values.iter().enumerate().map(|(i, v)| (i, *v))),
        )?;
        root.present()?;
        Ok(())
    }
}

/// What the tool shows of a run: a progress bar, with every message printed above it, and
/// the stage sums and timeline of [`Stages`].
pub struct Shown {
    pub stages: Stages,
    pub progress: ProgressBar,
}

impl Observer for Shown {
    fn planned(&self, jobs: usize) {
        self.progress.set_length(jobs as u64);
    }

    fn thread(&self, label: &str) {
        LABEL.with(|l| *l.borrow_mut() = label.to_string());
    }

    fn stage(&self, stage: Stage, start: Option<Instant>, took: Duration) {
        self.stages.add(stage, took);
        if let Some(start) = start {
            self.stages.record(stage.name(), start, took);
        }
    }

    fn span(&self, what: &'static str, start: Instant, took: Duration) {
        self.stages.record(what, start, took);
    }

    fn ended(&self, _: &std::path::Path, _: Result<(), &str>) {
        self.progress.inc(1);
    }

    fn say(&self, line: &str) {
        self.progress.suspend(|| eprintln!("{line}"));
    }
}
