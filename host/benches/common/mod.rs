//! Timing shared by the benchmarks: device events around each run, warm-up first, medians.

#![allow(dead_code)] // each benchmark uses what it needs

use std::time::Instant;

use cuimg::Stream;

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
