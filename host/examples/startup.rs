//! Where the time of a process's first GPU work goes: opening the GPU (driver, context,
//! kernels), then the first allocations, copies and launches against the second ones.
//!
//! `cargo run --release --example startup` (set `CUIMG_NO_WARMUP=1` to see the first upload
//! without the warm-up that `Gpu::new` does).

mod common;

use std::time::Instant;

use cuimg::{Gpu, Gray8, GrayWeights, Rgb8};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let photo = cuimg::io::sample_rgb();
    let t = Instant::now();
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => return common::skip_without_gpu(e, "nothing to time"),
    };
    let total = ms(t);
    let s = gpu.startup();
    println!(
        "{} ({}), warm-up {}",
        gpu.name(),
        s.code,
        if std::env::var_os("CUIMG_NO_WARMUP").is_some() { "off" } else { "on" }
    );
    println!("  Gpu::new                      {total:>8.3} ms");
    println!("    open (driver, context)      {:>8.3} ms", s.open.as_secs_f64() * 1e3);
    println!("    kernels ({})      {:>8.3} ms", s.code, s.load.as_secs_f64() * 1e3);
    println!("    stream + warm-up            {:>8.3} ms", s.warm_up.as_secs_f64() * 1e3);
    let stream = gpu.stream()?;
    for round in ["first", "second"] {
        let t = Instant::now();
        let img = stream.alloc::<Rgb8>(photo.width(), photo.height())?;
        stream.synchronize()?;
        let alloc = ms(t);
        drop(img);
        let t = Instant::now();
        let src = stream.upload(&photo.view())?;
        stream.synchronize()?;
        let upload = ms(t);
        let t = Instant::now();
        let mut gray = stream.alloc::<Gray8>(photo.width(), photo.height())?;
        stream.grayscale(&src, &mut gray, GrayWeights::Bt601)?;
        stream.synchronize()?;
        let kernel = ms(t);
        let t = Instant::now();
        let out = stream.download(&gray)?;
        let download = ms(t);
        let t = Instant::now();
        let _ = gpu.grayscale(&photo.view(), GrayWeights::Bt601)?;
        let blocking = ms(t);
        println!(
            "  {round:<6} alloc {alloc:.3} ms, upload 451x300 RGB {upload:.3} ms, alloc + grayscale {kernel:.3} ms, \
             download {download:.3} ms, blocking grayscale {blocking:.3} ms ({} px)",
            out.pixels().len()
        );
    }
    Ok(())
}
