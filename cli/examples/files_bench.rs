//! Files in, files out: images per second of the `cuimg` tool on 4000x3000 JPEGs (to gray
//! JPEGs) and 1920x1080 PNGs (to gray PNGs), GPU path against the CPU path on all cores of the
//! same machine, with the stage breakdown; and nvJPEG decoding alone.
//!
//! `cargo run --release -p cuimg-cli --example files_bench -- [--jpegs N] [--out DIR]`
//! (`gpu-bundle/run.sh files` on the lent GPU). The test files are made at run time from the
//! shared photos, upscaled, JPEG quality 90.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cuimg::{Image, Rgb8};
use rayon::prelude::*;

fn cuimg_bin() -> PathBuf {
    std::env::var_os("CUIMG_BIN").map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().expect("own path");
        exe.parent().and_then(Path::parent).expect("target/<profile>/examples").join("cuimg")
    })
}

/// Upscaled copies of the shared photos: `n` files of `w` x `h` in `dir`.
fn make(dir: &Path, n: usize, (w, h): (u32, u32), ext: &str) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let photos = std::env::var_os("CUIMG_IMAGES").map_or_else(|| PathBuf::from("../shared/images"), PathBuf::from);
    let sources: Vec<Image<Rgb8>> = ["chelsea.png", "coffee.png", "camera.png"]
        .iter()
        .map(|f| cuimg::io::load_rgb(photos.join(f)).unwrap())
        .collect();
    let big: Vec<Vec<u8>> = sources
        .par_iter()
        .map(|img| {
            let buf = image::RgbImage::from_raw(img.width(), img.height(), img.as_bytes().to_vec()).unwrap();
            let up = image::imageops::resize(&buf, w, h, image::imageops::FilterType::Triangle);
            let img = Image::<Rgb8>::from_bytes(w, h, up.as_raw()).unwrap();
            let format = if ext == "jpg" { cuimg::io::Format::Jpeg { quality: 90 } } else { cuimg::io::Format::Png };
            cuimg::io::encode(&img, format).unwrap()
        })
        .collect();
    (0..n)
        .into_par_iter()
        .map(|i| {
            let p = dir.join(format!("img{i:04}.{ext}"));
            std::fs::write(&p, &big[i % big.len()]).unwrap();
            p
        })
        .collect()
}

/// Runs the tool and returns (images per second, its stderr).
fn tool(args: &[&str]) -> (f64, String) {
    let o = Command::new(cuimg_bin()).args(args).output().expect("the cuimg binary runs");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let ips = err
        .lines()
        .find(|l| l.contains("images written"))
        .and_then(|l| l.split('(').nth(1)?.split(' ').next()?.parse().ok())
        .unwrap_or(0.0);
    assert!(o.status.success(), "cuimg {args:?} failed:\n{err}");
    (ips, err)
}

fn main() {
    let mut jpegs = 240;
    let mut out = PathBuf::from("files-bench-out");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--jpegs" => jpegs = args.next().and_then(|n| n.parse().ok()).expect("--jpegs N"),
            "--out" => out = args.next().expect("--out DIR").into(),
            _ => {}
        }
    }
    let work = std::env::temp_dir().join(format!("cuimg-files-bench-{}", std::process::id()));
    let t = Instant::now();
    let jpg_dir = work.join("jpg");
    let files = make(&jpg_dir, jpegs, (4000, 3000), "jpg");
    let png_dir = work.join("png");
    make(&png_dir, jpegs / 2, (1920, 1080), "png");
    println!(
        "made {} JPEGs (4000x3000, q90) and {} PNGs (1920x1080) in {:.1} s",
        files.len(),
        jpegs / 2,
        t.elapsed().as_secs_f64()
    );

    let s = |p: &Path| p.to_str().unwrap().to_string();
    let mut rows = Vec::new();
    for (name, dir, fmt) in
        [("4000x3000 JPEG -> gray JPEG", &jpg_dir, "jpg"), ("1920x1080 PNG -> gray PNG", &png_dir, "png")]
    {
        for (path, extra) in [("GPU", None), ("CPU, all cores", Some("--cpu"))] {
            // The JPEG job once more with the hardware decoder alone, for comparison.
            if fmt == "jpg" && extra.is_none() {
                let dst = work.join("out-hw-only");
                let a = ["gray", &s(dir), "-o", &s(&dst), "--format", "jpg"];
                // SAFETY: no other thread of this program reads the environment meanwhile.
                unsafe { std::env::set_var("CUIMG_CUDA_DECODERS", "0") };
                tool(&a);
                let (ips, _) = tool(&a);
                // SAFETY: as above.
                unsafe { std::env::remove_var("CUIMG_CUDA_DECODERS") };
                println!("\n== {name}, GPU, hardware decoder only: {ips:.1} images/s");
                rows.push(
                    serde_json::json!({"job": name, "path": "GPU, hardware decoder only", "images_per_second": ips}),
                );
            }
            let dst = work.join(format!("out-{fmt}-{}", extra.is_some()));
            let mut a = vec![
                "gray".to_string(),
                s(dir),
                "-o".into(),
                s(&dst),
                "--format".into(),
                fmt.into(),
                "--report".into(),
            ];
            a.extend(extra.map(String::from));
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            tool(&a); // warm: page cache, clocks
            let (ips, report) = tool(&a);
            println!("\n== {name}, {path}: {ips:.1} images/s\n{report}");
            rows.push(serde_json::json!({"job": name, "path": path, "images_per_second": ips, "report": report}));
        }
    }

    // nvJPEG decode alone, batches of 32, files already in memory: one thread, then two
    // (each with its own codec and stream).
    let decode = match cuimg::Gpu::new().and_then(|g| Ok((cuimg::jpeg::Jpeg::new(&g)?, g))) {
        Ok((jpeg, gpu)) => {
            let bytes: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
            let decode_all = |jpeg: &cuimg::jpeg::Jpeg, stream: &cuimg::Stream, part: &[Vec<u8>]| {
                for chunk in part.chunks(32) {
                    let views: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
                    for r in jpeg.decode_batch_rgb(stream, &views).unwrap() {
                        r.unwrap();
                    }
                }
                stream.synchronize().unwrap();
            };
            let stream = gpu.stream().unwrap();
            decode_all(&jpeg, &stream, &bytes);
            let t = Instant::now();
            decode_all(&jpeg, &stream, &bytes);
            let ips = bytes.len() as f64 / t.elapsed().as_secs_f64();
            println!(
                "\n== nvJPEG decode alone (hardware decoder: {}), batches of 32, 1 thread: {ips:.1} images/s",
                jpeg.hardware()
            );
            let second = cuimg::jpeg::Jpeg::new(&gpu).unwrap();
            let stream2 = gpu.stream().unwrap();
            let half = bytes.len() / 2;
            decode_all(&second, &stream2, &bytes[..half]);
            let t = Instant::now();
            let (first, second, all, decode_all) = (&jpeg, &second, &bytes, &decode_all);
            std::thread::scope(|scope| {
                scope.spawn(move || decode_all(first, &stream, &all[..half]));
                scope.spawn(move || decode_all(second, &stream2, &all[half..]));
            });
            let ips2 = bytes.len() as f64 / t.elapsed().as_secs_f64();
            println!("== the same, 2 threads: {ips2:.1} images/s");
            Some(ips.max(ips2))
        }
        Err(e) => {
            println!("\nno nvJPEG decode measurement: {e}");
            None
        }
    };
    std::fs::create_dir_all(&out).unwrap();
    let doc = serde_json::json!({"jpegs": files.len(), "runs": rows, "nvjpeg_decode_images_per_second": decode});
    std::fs::write(out.join("files.json"), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&work);
    println!("\nwrote {}", out.join("files.json").display());
}
