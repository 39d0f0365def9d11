//! Where the time of a pipeline run went.

use std::time::Duration;

/// Where the time of a pipeline run went: host copies in and out, and the device time of
/// uploads, kernels and downloads (summed over images; they overlap, so the sums exceed the
/// wall time).
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub images: usize,
    pub failed: usize,
    pub wall: Duration,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub host_in: Duration,
    pub upload: Duration,
    pub kernel: Duration,
    pub download: Duration,
    pub host_out: Duration,
    /// Images per GPU, by pool order.
    pub per_gpu: Vec<usize>,
    /// Why worker threads could not start (their streams or buffers), when others did and
    /// took their share of the images.
    pub worker_errors: Vec<String>,
}

impl Report {
    pub fn images_per_second(&self) -> f64 {
        self.images as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    pub(super) fn add(&mut self, t: &SlotTimes) {
        self.host_in += t.host_in;
        self.upload += t.upload;
        self.kernel += t.kernel;
        self.download += t.download;
        self.host_out += t.host_out;
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        writeln!(
            f,
            "{} images ({} failed) in {:.1} ms: {:.0} images/s, {:.2} GB/s in, {:.2} GB/s out",
            self.images,
            self.failed,
            ms(self.wall),
            self.images_per_second(),
            self.bytes_in as f64 / self.wall.as_secs_f64().max(1e-9) / 1e9,
            self.bytes_out as f64 / self.wall.as_secs_f64().max(1e-9) / 1e9,
        )?;
        let n = self.images.max(1) as f64;
        for (stage, d) in [
            ("host copy in", self.host_in),
            ("upload", self.upload),
            ("kernels", self.kernel),
            ("download", self.download),
            ("host copy out", self.host_out),
        ] {
            writeln!(f, "  {stage:<14} {:>10.1} ms total, {:>8.3} ms per image", ms(d), ms(d) / n)?;
        }
        write!(f, "  images per GPU: {:?}", self.per_gpu)
    }
}

/// Device time of one image's stages, from its slot's events, and host time around them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SlotTimes {
    pub host_in: Duration,
    pub upload: Duration,
    pub kernel: Duration,
    pub download: Duration,
    pub host_out: Duration,
}
