//! The CLAHE benchmark: one 8K image (random, photo, constant) and batches of 64 1080p
//! photos, on the GPU (device events, warm-up, median) against the serial CPU reference and
//! the same reference on every core; OpenCV's own CPU CLAHE is timed by
//! `host/benches/clahe_opencv.py` on the same machine.
//!
//! `cargo bench -p cuimg --features bench-knobs --bench clahe -- [--quick] [--out DIR] [--images DIR]`
//! (or `gpu-bundle/bench/clahe` on a GPU machine without Rust).

use std::path::PathBuf;

use cuimg::{Clahe, DeviceImage, EqualizeMode, Gpu, Gray8, GrayWeights, Image, Rgb8, cpu};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::json;

mod common;
use common::{ROTATION_BYTES, copy_ceiling, time_cpu, time_gpu};

const BATCH: usize = 64;

/// The photo's luma tiled to `w` x `h`, starting at `(dx, dy)` in it (so that the images
/// of a batch differ).
fn tiled<P: cuimg::Pixel>(photo: &Image<P>, w: u32, h: u32, dx: u32, dy: u32) -> Image<P> {
    Image::from_fn(w, h, |x, y| photo.get((x + dx) % photo.width(), (y + dy) % photo.height()))
}

fn main() {
    let mut quick = false;
    let mut out = PathBuf::from("bench-out");
    let mut images = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/photos");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--out" => out = args.next().expect("--out DIR").into(),
            "--images" => images = args.next().expect("--images DIR").into(),
            "--bench" => {}
            other => panic!("unknown argument {other}; use [--quick] [--out DIR] [--images DIR]"),
        }
    }
    if let Some(dir) = std::env::var_os("CUIMG_IMAGES") {
        images = dir.into();
    }
    std::fs::create_dir_all(&out).expect("output folder");
    let gpu = Gpu::new().unwrap_or_else(|e| {
        eprintln!("the benchmark needs a GPU: {e}");
        std::process::exit(2)
    });
    let s = gpu.stream().unwrap();
    let (warm, runs) = if quick { (2, 10) } else { (5, 50) };
    println!("device: {} ({} SMs); {} rayon threads", gpu.name(), gpu.multiprocessors(), rayon::current_num_threads());
    let rgb = cuimg::io::load_rgb(images.join("coffee.png")).unwrap_or_else(|e| panic!("{e} (pass --images DIR)"));
    let photo = cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap();

    let copy_gbps = copy_ceiling(&s);

    let mut rows = Vec::new();
    // One 8K image, three kinds of data, two grids.
    let (w, h) = (7680u32, 4320u32);
    let n = w as u64 * h as u64;
    let mut random = Image::<Gray8>::new(w, h);
    SmallRng::seed_from_u64(7).fill(random.as_bytes_mut());
    let inputs = [("random", random), ("photo", tiled(&photo, w, h, 0, 0)), ("constant", Image::filled(w, h, 77))];
    let sets = ROTATION_BYTES.div_ceil(2 * n).max(1) as usize;
    for (data, img) in &inputs {
        let ins: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.upload(&img.view()).unwrap()).collect();
        let poison = Image::<Gray8>::filled(w, h, 0xA5);
        for grid in [(8, 8), (16, 16)] {
            let p = Clahe::new(2.0, grid).unwrap();
            let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.upload(&poison.view()).unwrap()).collect();
            let (med, min) = time_gpu(&s, warm, runs, |i| s.clahe(&ins[i % sets], &mut outs[i % sets], p));
            // The reference the outputs are checked against is also the serial CPU timing (one
            // run of 0.4 s at 8K): not computed twice.
            let mut want = None;
            let serial_ms = time_cpu(1, || want = Some(cpu::clahe(&img.view(), p).unwrap()));
            let want = want.expect("computed above");
            for o in &outs {
                assert_eq!(s.download(o).unwrap(), want, "8K {data} {grid:?}: GPU differs from the CPU reference");
            }
            let serial = (*data != "constant").then_some(serial_ms);
            let gbps = 2.0 * n as f64 / (med * 1e-3) / 1e9;
            println!(
                "8K {data:<8} grid {:>2}x{:<2}  GPU {:>8.1} us (min {:>7.1}; {:>5.0} GB/s read+write once, {:.2} of copy)  CPU serial {}",
                grid.0,
                grid.1,
                med * 1e3,
                min * 1e3,
                gbps,
                gbps / copy_gbps,
                serial.map_or("-".into(), |t| format!("{t:.0} ms"))
            );
            rows.push(json!({"case": "8K", "data": data, "grid": [grid.0, grid.1], "gpu_median_us": med * 1e3,
                "gpu_min_us": min * 1e3, "fraction_of_copy": gbps / copy_gbps, "cpu_serial_ms": serial}));
        }
    }

    // 64 different 1080p photos: one call per image on one stream, and the batch call.
    let (w, h) = (1920u32, 1080u32);
    let imgs: Vec<Image<Gray8>> = (0..BATCH as u32).map(|k| tiled(&photo, w, h, k * 37, k * 23)).collect();
    let p = Clahe::default();
    let want: Vec<Image<Gray8>> = imgs.par_iter().map(|i| cpu::clahe(&i.view(), p).unwrap()).collect();
    let ins: Vec<DeviceImage<Gray8>> = imgs.iter().map(|i| s.upload(&i.view()).unwrap()).collect();
    let mut outs: Vec<DeviceImage<Gray8>> = (0..BATCH).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
    let (loop_ms, _) = time_gpu(&s, warm.min(3), runs.min(20), |_| {
        ins.iter().zip(outs.iter_mut()).try_for_each(|(i, o)| s.clahe(i, o, p))
    });
    for (o, w) in outs.iter().zip(&want) {
        assert_eq!(&s.download(o).unwrap(), w, "1080p one call per image");
    }
    let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
    let src = s.upload_batch(&views).unwrap();
    let mut dst = s.alloc_batch::<Gray8>(&src.sizes()).unwrap();
    let (batch_ms, _) = time_gpu(&s, warm.min(3), runs.min(20), |_| s.clahe_batch(&src, &mut dst, p));
    assert_eq!(s.download_batch(&dst).unwrap(), want, "1080p batch");
    let serial = time_cpu(1, || cpu::clahe(&imgs[0].view(), p));
    let rayon_ms = time_cpu(1, || imgs.par_iter().map(|i| cpu::clahe(&i.view(), p).unwrap()).collect::<Vec<_>>());
    let per = |ms: f64| ms * 1e3 / BATCH as f64;
    println!(
        "64 x 1080p photos, 8x8: GPU one call per image {:.1} us/image, batch {:.1} us/image; CPU serial {:.2} ms/image, \
         rayon ({} threads) {:.1} us/image",
        per(loop_ms),
        per(batch_ms),
        serial,
        rayon::current_num_threads(),
        per(rayon_ms)
    );
    rows.push(json!({"case": "64 x 1080p", "data": "photo", "grid": [8, 8], "gpu_per_call_us_per_image": per(loop_ms),
        "gpu_batch_us_per_image": per(batch_ms), "cpu_serial_ms_per_image": serial, "cpu_rayon_us_per_image": per(rayon_ms)}));

    // The same 64 photos in color, one batch call per mode (the 1080p CPU figures are per
    // call of the serial reference).
    let imgs: Vec<Image<Rgb8>> = (0..BATCH as u32).map(|k| tiled(&rgb, w, h, k * 37, k * 23)).collect();
    let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
    let src = s.upload_batch(&views).unwrap();
    let mut dst = s.alloc_batch::<Rgb8>(&src.sizes()).unwrap();
    for mode in [EqualizeMode::Luma, EqualizeMode::PerChannel] {
        let want: Vec<Image<Rgb8>> = imgs.par_iter().map(|i| cpu::clahe_color(&i.view(), p, mode).unwrap()).collect();
        let (batch_ms, _) = time_gpu(&s, warm.min(3), runs.min(20), |_| s.clahe_color_batch(&src, &mut dst, p, mode));
        assert_eq!(s.download_batch(&dst).unwrap(), want, "1080p color batch {mode:?}");
        let serial = time_cpu(1, || cpu::clahe_color(&imgs[0].view(), p, mode));
        println!(
            "64 x 1080p color photos, 8x8, {mode:?}: GPU batch {:.1} us/image; CPU serial {:.2} ms/image",
            per(batch_ms),
            serial
        );
        rows.push(json!({"case": "64 x 1080p RGB8", "data": "photo", "grid": [8, 8], "mode": format!("{mode:?}"),
            "gpu_batch_us_per_image": per(batch_ms), "cpu_serial_ms_per_image": serial}));
    }

    let doc = json!({"device": gpu.name(), "copy_gbps": copy_gbps, "rayon_threads": rayon::current_num_threads(), "rows": rows});
    std::fs::write(out.join("clahe.json"), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    println!("wrote {}", out.join("clahe.json").display());
}
