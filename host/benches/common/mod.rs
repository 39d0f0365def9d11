//! Timing shared by the benchmarks: device events around each run, warm-up first, medians.

#![allow(dead_code)] // each benchmark uses what it needs

use std::time::Instant;

use cuimg::{DeviceImage, Image, Pixel, Stream};

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median milliseconds of `runs` event-timed calls of `f(i)` after at least `warm` untimed
/// ones and at least 20 ms of them (so clocks have ramped up whatever the size).
pub fn time_gpu(s: &Stream, warm: usize, runs: usize, mut f: impl FnMut(usize) -> cuimg::Result<()>) -> (f64, f64) {
    let start = Instant::now();
    let mut i = 0;
    while i < warm || start.elapsed().as_secs_f64() < 0.02 {
        f(i).expect("warm-up");
        i += 1;
        if i % 16 == 0 {
            s.synchronize().unwrap();
        }
    }
    s.synchronize().unwrap();
    let mut t: Vec<f64> = (0..runs)
        .map(|i| {
            let a = s.mark().unwrap();
            f(i).expect("timed run");
            a.elapsed_ms(&s.mark().unwrap()).unwrap() as f64
        })
        .collect();
    let min = t.iter().cloned().fold(f64::MAX, f64::min);
    (median(&mut t), min)
}

/// Bytes of input + output across the rotation sets of a GPU case: twice the largest L2 of
/// current GPUs, so timed runs measure memory, not cache.
pub const ROTATION_BYTES: u64 = 256 << 20;

/// Median milliseconds of `runs` host-timed calls.
pub fn time_cpu<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let a = Instant::now();
            std::hint::black_box(f());
            a.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&mut t)
}

/// The ceiling every benchmark compares against: GB/s (read + written) of a 1 GiB
/// device-to-device copy, median of 20 after warm-up; printed too.
pub fn copy_ceiling(s: &Stream) -> f64 {
    let bytes: usize = 1 << 30;
    let a = s.alloc_slice::<u8>(bytes).unwrap();
    let mut b = s.alloc_slice::<u8>(bytes).unwrap();
    let (ms, _) = time_gpu(s, 3, 20, |_| s.copy_slice(&a, &mut b));
    let gbps = 2.0 * bytes as f64 / (ms * 1e-3) / 1e9;
    println!("copy bandwidth: {gbps:.0} GB/s (1 GiB device-to-device, read + write, median of 20)");
    gbps
}

/// One case timed two ways, for telling the GPU's time from the host's.
pub struct Modes {
    /// Median ms of isolated calls between two events, the GPU idle before each (what
    /// [`time_gpu`] reports): the host's submission is inside the window.
    pub isolated_ms: f64,
    /// Median host microseconds of one call in those runs (validation, tracking, launch).
    pub host_us: f64,
    /// Median ms per call over rounds of back-to-back calls between two events: once the
    /// host is ahead of the GPU, only the GPU's own time per call (kernels, memsets, the
    /// launch gaps between them) is inside the window.
    pub queued_ms: f64,
}

/// [`Modes`] of `f(i)` (`i` rotating the caller's buffer sets), after the warm-up of
/// [`time_gpu`]: `runs` isolated calls, then 7 rounds of `per_round` queued ones.
pub fn time_modes(s: &Stream, runs: usize, per_round: usize, mut f: impl FnMut(usize) -> cuimg::Result<()>) -> Modes {
    let _ = time_gpu(s, 3, 1, &mut f);
    let mut iso = Vec::with_capacity(runs);
    let mut host = Vec::with_capacity(runs);
    for i in 0..runs {
        let a = s.mark().unwrap();
        let t = Instant::now();
        f(i).expect("timed run");
        host.push(t.elapsed().as_secs_f64() * 1e6);
        iso.push(a.elapsed_ms(&s.mark().unwrap()).unwrap() as f64);
    }
    let mut queued: Vec<f64> = (0..7)
        .map(|round| {
            s.synchronize().unwrap();
            let a = s.mark().unwrap();
            for k in 0..per_round {
                f(runs + round * per_round + k).expect("queued run");
            }
            a.elapsed_ms(&s.mark().unwrap()).unwrap() as f64 / per_round as f64
        })
        .collect();
    Modes { isolated_ms: median(&mut iso), host_us: median(&mut host), queued_ms: median(&mut queued) }
}

/// `sets` device copies of `img`, so timed runs rotate through more memory than L2 holds.
pub fn rotation<P: Pixel>(s: &Stream, img: &Image<P>, sets: usize) -> Vec<DeviceImage<P>> {
    (0..sets).map(|_| s.upload(&img.view()).unwrap()).collect()
}

pub fn sets_for(bytes_per_run: u64) -> usize {
    ROTATION_BYTES.div_ceil(bytes_per_run).clamp(1, 64) as usize
}

/// GB/s of the driver's device-to-device copy moving `bytes` (read + write) per call,
/// rotating through enough buffers to defeat L2, median of event-timed calls.
pub fn copy_at(s: &Stream, bytes: u64) -> f64 {
    let half = (bytes / 2).max(16) as usize;
    let sets = sets_for(bytes);
    let srcs: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
    let mut dsts: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
    let (ms, _) = time_gpu(s, 5, 30, |i| s.copy_slice(&srcs[i % sets], &mut dsts[i % sets]));
    2.0 * half as f64 / (ms * 1e-3) / 1e9
}
