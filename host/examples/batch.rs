//! A folder of photos through the GPU pipeline: gray, then equalized, on every GPU, with
//! uploads, kernels and downloads of different images overlapped; images per second and the
//! time of each stage, beside the CPU reference doing the same on all cores.
//!
//! `cargo run --release --example batch -- [DIR] [--repeat N] [--out DIR]`
//! (DIR defaults to the repository's photos, tests/data/photos; `--repeat` feeds each photo N
//! times, default 64).

mod common;

use std::path::PathBuf;
use std::time::Instant;

use cuimg::{GpuPool, Gray8, GrayWeights, Image, Pipeline, Rgb8, cpu};
use rayon::prelude::*;

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let mut dir = std::env::var_os("CUIMG_IMAGES").map_or_else(common::photos_dir, PathBuf::from);
    let (mut repeat, mut out) = (64usize, None::<PathBuf>);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).expect("--repeat N"),
            "--out" => out = Some(args.next().expect("--out DIR").into()),
            _ if a.ends_with(".png") => {} // the example runner's output name: not used here
            path => dir = path.into(),
        }
    }
    let t = Instant::now();
    let mut photos: Vec<(PathBuf, Image<Rgb8>)> = std::fs::read_dir(&dir)
        .map_err(|source| cuimg::Error::Io { path: dir.clone(), source })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "png" || x == "jpg" || x == "jpeg"))
        .collect::<Vec<_>>()
        .par_iter()
        .filter_map(|p| cuimg::io::load_rgb(p).ok().map(|img| (p.clone(), img)))
        .collect();
    photos.sort_by(|a, b| a.0.cmp(&b.0));
    if photos.is_empty() {
        println!("no PNG or JPEG photos in {}: nothing to do", dir.display());
        return Ok(());
    }
    let decode_ms = t.elapsed().as_secs_f64() * 1e3;
    let inputs: Vec<Image<Rgb8>> = (0..repeat).flat_map(|_| photos.iter().map(|(_, img)| img.clone())).collect();
    let pixels: u64 = inputs.iter().map(|i| i.width() as u64 * i.height() as u64).sum();
    println!(
        "{} photos from {} decoded on all cores in {decode_ms:.1} ms; {} images ({:.1} Mpixel) to process",
        photos.len(),
        dir.display(),
        inputs.len(),
        pixels as f64 / 1e6
    );

    // The CPU reference on all cores.
    let t = Instant::now();
    let want: Vec<Image<Gray8>> = inputs
        .par_iter()
        .map(|img| cpu::equalize(&cpu::grayscale(&img.view(), GrayWeights::Bt601)?.view()))
        .collect::<cuimg::Result<_>>()?;
    let cpu_s = t.elapsed().as_secs_f64();
    println!("CPU, {} threads: {:.0} images/s", rayon::current_num_threads(), inputs.len() as f64 / cpu_s);

    let pool = match GpuPool::all() {
        Ok(pool) => pool,
        Err(e) => return common::skip_without_gpu(e, "the CPU result above is the result"),
    };
    let names: Vec<&str> = pool.gpus().iter().map(|g| g.name()).collect();
    println!("GPUs: {}", names.join(", "));
    let pipeline = Pipeline::on(&pool);
    let gray_then_equalize =
        |s: &cuimg::Stream, src: &cuimg::DeviceImage<Rgb8>, dst: &mut cuimg::DeviceImage<Gray8>| {
            s.grayscale(src, dst, GrayWeights::Bt601)?;
            s.equalize_in_place(dst)
        };
    // Once to warm up (slot buffers, clocks), once timed.
    pipeline.run(inputs.iter().take(pool.len() * 16), gray_then_equalize, |_, _| {})?;
    let mut results: Vec<Option<Image<Gray8>>> = vec![None; inputs.len()];
    let report = pipeline.run(&inputs, gray_then_equalize, |i, r| results[i] = r.ok())?;
    println!("GPU pipeline: {report}");
    println!("  {:.1}x the CPU on all cores", report.images_per_second() * cpu_s / inputs.len() as f64);
    let same = results.iter().zip(&want).filter(|(g, w)| g.as_ref() == Some(*w)).count();
    println!("  {same} of {} results identical to the CPU reference", want.len());
    if let Some(out) = out {
        std::fs::create_dir_all(&out).map_err(|source| cuimg::Error::Io { path: out.clone(), source })?;
        for ((path, _), img) in photos.iter().zip(results.iter().flatten()) {
            let name = path.file_stem().map_or("image".into(), |s| s.to_string_lossy().into_owned());
            cuimg::io::save(img, out.join(format!("{name}-gray-equalized.png")))?;
        }
        println!("wrote {} images to {}", photos.len(), out.display());
    }
    if same != want.len() {
        std::process::exit(1);
    }
    Ok(())
}
