//! Stage times of a run, summed over threads (stages overlap, so the sums exceed the wall
//! time), printed as a table and drawn as a bar chart.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use plotters::prelude::*;

#[derive(Clone, Copy, Debug)]
pub enum Stage {
    Read,
    Decode,
    /// Host copies into and out of pinned memory (GPU path).
    Staging,
    Upload,
    Kernel,
    Download,
    Encode,
    Write,
}

const STAGES: [(Stage, &str); 8] = [
    (Stage::Read, "read"),
    (Stage::Decode, "decode"),
    (Stage::Staging, "pinned copies"),
    (Stage::Upload, "upload"),
    (Stage::Kernel, "kernel"),
    (Stage::Download, "download"),
    (Stage::Encode, "encode"),
    (Stage::Write, "write"),
];

#[derive(Default)]
pub struct Stages {
    nanos: [AtomicU64; 8],
}

impl Stages {
    pub fn add(&self, stage: Stage, d: Duration) {
        self.nanos[stage as usize].fetch_add(d.as_nanos() as u64, Relaxed);
    }

    /// Runs `f`, adding its time to `stage`.
    pub fn time<T>(&self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.add(stage, t.elapsed());
        out
    }

    fn ms(&self, stage: Stage) -> f64 {
        self.nanos[stage as usize].load(Relaxed) as f64 / 1e6
    }

    /// The stage breakdown as a table.
    pub fn table(&self, images: usize, wall: Duration) -> String {
        let mut s = format!("{:<14} {:>12} {:>14}\n", "stage", "total ms", "ms per image");
        for (stage, name) in STAGES {
            let ms = self.ms(stage);
            s.push_str(&format!("{name:<14} {ms:>12.1} {:>14.3}\n", ms / images.max(1) as f64));
        }
        s.push_str(&format!(
            "{:<14} {:>12.1}   (stages overlap: their sums exceed the wall time)",
            "wall",
            wall.as_secs_f64() * 1e3
        ));
        s
    }

    /// The stage breakdown as an SVG bar chart.
    pub fn plot(&self, path: &Path, device: &str) -> Result<(), Box<dyn std::error::Error>> {
        let values: Vec<f64> = STAGES.iter().map(|(s, _)| self.ms(*s)).collect();
        let top = values.iter().cloned().fold(1.0, f64::max) * 1.15;
        let root = SVGBackend::new(path, (900, 420)).into_drawing_area();
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
                SegmentValue::CenterOf(i) => STAGES.get(*i).map_or("", |s| s.1).to_string(),
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
