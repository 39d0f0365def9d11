//! Throughput on many images: batches (one launch per operation for all of them), the
//! overlapped pipeline from host images to host images, one GPU against every GPU of the
//! machine, and what opening a GPU costs.
//!
//! `cargo bench -p cuimg --features bench-knobs --bench throughput -- [--quick] [--pipeline-only]
//! [--waves N] [--threads N] [--depth N] [--out DIR]`, or `-- --replot docs/bench/throughput.json`
//! (or `gpu-bundle/bench/throughput` on a GPU machine without Rust).
//!
//! Ceilings measured in the same run: a 1 GiB device-to-device copy (bytes read + written),
//! and 256 MiB pinned host-to-device and device-to-host copies. Batch times are event-timed
//! medians after warm-up; each batch is larger than the L2 cache. Per-image time is the
//! batch time over its images; the fraction of copy bandwidth counts the fewest bytes each
//! operation must move.

use std::path::PathBuf;
use std::time::Instant;

use cuimg::{DeviceBatch, EqualizeMode, GpuPool, Gray8, GrayWeights, Image, Lut, Pipeline, Rgb8, Stream};
use plotters::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

mod common;
use common::time_gpu;

/// The batch shapes CV-CUDA was measured on (same H100), and its per-image microseconds for
/// RGB to gray, histogram and equalize (issue "Throughput on many images").
const SHAPES: [(usize, u32, u32, &str, [f64; 3]); 3] = [
    (256, 640, 480, "256 x 640x480", [0.6, 0.5, 0.6]),
    (64, 1920, 1080, "64 x 1920x1080", [3.9, 2.7, 3.4]),
    (16, 3840, 2160, "16 x 3840x2160", [15.7, 17.9, 13.3]),
];

fn random_images<P: cuimg::Pixel>(n: usize, w: u32, h: u32, seed: u64) -> Vec<Image<P>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut img = Image::<P>::new(w, h);
            rng.fill(img.as_bytes_mut());
            img
        })
        .collect()
}

fn upload<P: cuimg::Pixel>(s: &Stream, images: &[Image<P>]) -> DeviceBatch<P> {
    let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    s.upload_batch(&views).unwrap()
}

struct Row {
    shape: &'static str,
    op: &'static str,
    us_per_image: f64,
    fraction: f64,
    cvcuda: Option<f64>,
}

fn main() {
    let mut out = PathBuf::from("bench-out");
    let (mut quick, mut pipeline_only) = (false, false);
    let (mut threads, mut depth) = (None::<usize>, None::<usize>);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = args.next().expect("--out DIR").into(),
            "--quick" => quick = true,
            "--pipeline-only" => pipeline_only = true,
            // Redraw the chart from a recorded run, without a GPU.
            "--replot" => {
                let file = PathBuf::from(args.next().expect("--replot throughput.json"));
                let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
                let rows: Vec<Row> = doc["batches"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|r| {
                        let (shape, op) = (r["shape"].as_str()?, r["op"].as_str()?);
                        let shape = SHAPES.iter().find(|s| s.3 == shape)?.3;
                        let op = ["RGB8 -> gray", "histogram", "equalize"].into_iter().find(|o| *o == op)?;
                        Some(Row { shape, op, us_per_image: r["us_per_image"].as_f64()?, fraction: 0.0, cvcuda: None })
                    })
                    .collect();
                let dir = file.parent().unwrap_or(std::path::Path::new("."));
                chart(&rows, &dir.join("batches.svg"));
                println!("wrote {}", dir.join("batches.svg").display());
                return;
            }
            "--threads" => threads = args.next().and_then(|n| n.parse().ok()),
            "--depth" => depth = args.next().and_then(|n| n.parse().ok()),
            // Grid size of the batch kernels, in waves of resident blocks (a tuning sweep).
            "--waves" => cuimg::bench::GRID_WAVES.store(
                args.next().and_then(|n| n.parse().ok()).expect("--waves N"),
                std::sync::atomic::Ordering::Relaxed,
            ),
            "--bench" => {}
            other => {
                panic!(
                    "unknown argument {other}; use [--quick] [--pipeline-only] [--waves N] [--threads N] [--depth N] [--out DIR] | --replot FILE"
                )
            }
        }
    }
    let t = Instant::now();
    let pool = match GpuPool::all() {
        Ok(p) => p,
        Err(e) => {
            println!("SKIP: {e}");
            return;
        }
    };
    let pool_ms = t.elapsed().as_secs_f64() * 1e3;
    let gpu = &pool.gpus()[0];
    let st = gpu.startup();
    println!(
        "{} x {} ({}); pool of {} opened in {pool_ms:.1} ms; GPU 0: open {:.1} ms, kernels {:.1} ms, warm-up {:.1} ms",
        pool.len(),
        gpu.name(),
        st.code,
        pool.len(),
        st.open.as_secs_f64() * 1e3,
        st.load.as_secs_f64() * 1e3,
        st.warm_up.as_secs_f64() * 1e3
    );
    let s = gpu.stream().unwrap();

    // Ceilings.
    let a = s.alloc_slice::<u8>(1 << 30).unwrap();
    let mut b = s.alloc_slice::<u8>(1 << 30).unwrap();
    let (copy_ms, _) = time_gpu(&s, 3, 20, |_| s.copy_slice(&a, &mut b));
    let copy_gbps = 2.0 * (1u64 << 30) as f64 / (copy_ms * 1e-3) / 1e9;
    drop((a, b));
    let (pw, ph) = (16384u32, 16384u32); // 256 MiB of gray
    let mut pinned = gpu.alloc_pinned::<Gray8>(pw, ph).unwrap();
    let mut dev = s.alloc::<Gray8>(pw, ph).unwrap();
    let (h2d_ms, _) = time_gpu(&s, 2, 10, |_| s.upload_pinned_into(&pinned, &mut dev));
    let (d2h_ms, _) = time_gpu(&s, 2, 10, |_| s.download_pinned(&dev, &mut pinned));
    let pin_bytes = pw as f64 * ph as f64;
    let (h2d_gbps, d2h_gbps) = (pin_bytes / (h2d_ms * 1e-3) / 1e9, pin_bytes / (d2h_ms * 1e-3) / 1e9);
    drop((pinned, dev));
    println!("copy {copy_gbps:.0} GB/s (device), pinned H2D {h2d_gbps:.1} GB/s, D2H {d2h_gbps:.1} GB/s\n");

    // Batches.
    let mut rows = Vec::new();
    let runs = if quick { 5 } else { 20 };
    for (n, w, h, shape, cv) in SHAPES.into_iter().filter(|_| !pipeline_only) {
        let px = (n as u64 * w as u64 * h as u64) as f64;
        let frac = |bytes: f64, ms: f64| bytes / (ms * 1e-3) / 1e9 / copy_gbps;
        let rgb = upload(&s, &random_images::<Rgb8>(n, w, h, 1));
        let gray_in = upload(&s, &random_images::<Gray8>(n, w, h, 2));
        let mut gray = s.alloc_batch::<Gray8>(&rgb.sizes()).unwrap();
        let mut rgb_out = s.alloc_batch::<Rgb8>(&rgb.sizes()).unwrap();
        let mut bins = s.alloc_batch_histograms(1, n).unwrap();
        let luts = s.upload_lut::<Gray8>(&Lut::gamma(2.2)).unwrap();
        let (ms, _) = time_gpu(&s, 3, runs, |_| s.grayscale_batch(&rgb, &mut gray, GrayWeights::Bt601));
        rows.push(Row {
            shape,
            op: "RGB8 -> gray",
            us_per_image: ms * 1e3 / n as f64,
            fraction: frac(4.0 * px, ms),
            cvcuda: Some(cv[0]),
        });
        let (ms, _) = time_gpu(&s, 3, runs, |_| s.histogram_batch(&gray_in, &mut bins));
        rows.push(Row {
            shape,
            op: "histogram",
            us_per_image: ms * 1e3 / n as f64,
            fraction: frac(px, ms),
            cvcuda: Some(cv[1]),
        });
        let (ms, _) = time_gpu(&s, 3, runs, |_| s.equalize_batch(&gray_in, &mut gray));
        rows.push(Row {
            shape,
            op: "equalize",
            us_per_image: ms * 1e3 / n as f64,
            fraction: frac(2.0 * px, ms),
            cvcuda: Some(cv[2]),
        });
        let (ms, _) = time_gpu(&s, 3, runs, |_| s.apply_lut_batch(&gray_in, &mut gray, &luts));
        rows.push(Row {
            shape,
            op: "LUT",
            us_per_image: ms * 1e3 / n as f64,
            fraction: frac(2.0 * px, ms),
            cvcuda: None,
        });
        let (ms, _) = time_gpu(&s, 3, runs, |_| s.equalize_color_batch(&rgb, &mut rgb_out, EqualizeMode::Luma));
        rows.push(Row {
            shape,
            op: "equalize RGB8 (luma)",
            us_per_image: ms * 1e3 / n as f64,
            fraction: frac(6.0 * px, ms),
            cvcuda: None,
        });
        // The same work as one launch per image, for the batching gain.
        let singles: Vec<_> = (0..n)
            .map(|i| {
                let mut d = s.alloc::<Rgb8>(w, h).unwrap();
                s.copy_from_batch(&rgb, i, &mut d).unwrap();
                d
            })
            .collect();
        let mut outs: Vec<_> = (0..n).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
        let (ms, _) = time_gpu(&s, 2, runs.min(10), |_| {
            singles.iter().zip(outs.iter_mut()).try_for_each(|(src, dst)| s.grayscale(src, dst, GrayWeights::Bt601))
        });
        rows.push(Row {
            shape,
            op: "RGB8 -> gray, a launch per image",
            us_per_image: ms * 1e3 / n as f64,
            fraction: frac(4.0 * px, ms),
            cvcuda: None,
        });
    }
    println!("| batch | op | us per image | fraction of copy | CV-CUDA us | verdict |");
    println!("|---|---|---:|---:|---:|---|");
    for r in &rows {
        let verdict = match r.cvcuda {
            Some(c) if r.us_per_image < c => "faster than CV-CUDA",
            Some(_) => "SLOWER than CV-CUDA",
            None => "",
        };
        println!(
            "| {} | {} | {:.2} | {:.2} | {} | {verdict} |",
            r.shape,
            r.op,
            r.us_per_image,
            r.fraction,
            r.cvcuda.map_or("-".into(), |c| format!("{c:.1}"))
        );
    }

    // The pipeline, host images in, host images out: 1080p RGB to gray.
    let n = if quick { 120 } else { 480 };
    let inputs = random_images::<Rgb8>(64, 1920, 1080, 3);
    let run = |p: &Pipeline| {
        let images = (0..n).map(|i| &inputs[i % inputs.len()]);
        let mut count = 0usize;
        let report = p.run(
            images,
            |s, src, dst| s.grayscale(src, dst, GrayWeights::Bt601),
            |_, r| {
                r.unwrap();
                count += 1;
            },
        );
        let report = report.unwrap();
        assert_eq!(count, n);
        report
    };
    let tune = |p: Pipeline| {
        let p = if let Some(t) = threads { p.threads(t) } else { p };
        if let Some(d) = depth { p.depth(d) } else { p }
    };
    let one = tune(Pipeline::new(gpu));
    run(&one); // warm: buffers, clocks
    let r1 = run(&one);
    let in_bytes = 1920.0 * 1080.0 * 3.0;
    let pcie = |r: &cuimg::pipeline::Report| {
        let ips = r.images_per_second();
        (ips * in_bytes / 1e9 / h2d_gbps).max(ips * in_bytes / 3.0 / 1e9 / d2h_gbps)
    };
    println!("\npipeline, 1080p RGB -> gray, host to host, 1 GPU:\n{r1}");
    println!("  fraction of pinned PCIe (H2D {h2d_gbps:.1}, D2H {d2h_gbps:.1} GB/s): {:.2}", pcie(&r1));
    // The same with the inputs page-locked (`Gpu::register`): uploads straight from them.
    let locked = gpu.register(&inputs).unwrap();
    run(&one);
    let r1_locked = run(&one);
    println!("\npipeline, 1 GPU, inputs page-locked:\n{r1_locked}");
    println!("  fraction of pinned PCIe: {:.2}", pcie(&r1_locked));
    let mut pool_json = serde_json::Value::Null;
    // Device-resident work on every GPU at once against one GPU alone: 64 x 1080p RGB to
    // gray, each GPU with its own batch; each GPU warms up (clocks), then all start together
    // and run 200 launches.
    let resident = |gpus: &[cuimg::Gpu]| -> f64 {
        const LAUNCHES: usize = 200;
        let prepared: Vec<_> = gpus
            .iter()
            .map(|g| {
                let s = g.stream().unwrap();
                let src = upload(&s, &random_images::<Rgb8>(64, 1920, 1080, 7));
                let dst = s.alloc_batch::<Gray8>(&src.sizes()).unwrap();
                s.synchronize().unwrap();
                (s, src, dst)
            })
            .collect();
        let start = std::sync::Barrier::new(gpus.len());
        let secs: Vec<f64> = std::thread::scope(|scope| {
            let handles: Vec<_> = prepared
                .into_iter()
                .map(|(s, src, mut dst)| {
                    let start = &start;
                    scope.spawn(move || {
                        let warm = Instant::now();
                        while warm.elapsed().as_secs_f64() < 0.05 {
                            s.grayscale_batch(&src, &mut dst, GrayWeights::Bt601).unwrap();
                            s.synchronize().unwrap();
                        }
                        start.wait();
                        let t = Instant::now();
                        for _ in 0..LAUNCHES {
                            s.grayscale_batch(&src, &mut dst, GrayWeights::Bt601).unwrap();
                        }
                        s.synchronize().unwrap();
                        t.elapsed().as_secs_f64()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        (gpus.len() * LAUNCHES * 64) as f64 / secs.iter().cloned().fold(0.0, f64::max)
    };
    let resident_one = resident(&pool.gpus()[..1]);
    println!("\ndevice-resident batches, 64 x 1080p RGB -> gray: 1 GPU {resident_one:.0} images/s");
    let mut resident_json = json!({"one": resident_one});
    if pool.len() > 1 {
        let resident_all = resident(pool.gpus());
        println!("  all {} GPUs {resident_all:.0} images/s: {:.2}x one", pool.len(), resident_all / resident_one);
        resident_json = json!({"one": resident_one, "all": resident_all, "scaling": resident_all / resident_one});
    }
    if pool.len() > 1 {
        let all = tune(Pipeline::on(&pool));
        run(&all);
        let rn = run(&all);
        let rn_staged = {
            drop(locked);
            run(&all)
        };
        println!("\npipeline on all {} GPUs, inputs staged:\n{rn_staged}", pool.len());
        println!("  scaling: {:.2}x one GPU", rn_staged.images_per_second() / r1.images_per_second());
        println!("\npipeline on all {} GPUs, inputs page-locked:\n{rn}", pool.len());
        println!("  scaling: {:.2}x one GPU", rn.images_per_second() / r1_locked.images_per_second());
        pool_json = json!({"gpus": pool.len(), "images_per_second": rn.images_per_second(), "per_gpu": rn.per_gpu,
            "scaling": rn.images_per_second() / r1_locked.images_per_second(),
            "staged_images_per_second": rn_staged.images_per_second(),
            "staged_scaling": rn_staged.images_per_second() / r1.images_per_second()});
    }

    std::fs::create_dir_all(&out).unwrap();
    let doc = json!({
        "device": gpu.name(), "gpus": pool.len(), "code": st.code.to_string(),
        "startup_ms": {"open": st.open.as_secs_f64() * 1e3, "kernels": st.load.as_secs_f64() * 1e3,
                        "warm_up": st.warm_up.as_secs_f64() * 1e3},
        "copy_gbps": copy_gbps, "pinned_h2d_gbps": h2d_gbps, "pinned_d2h_gbps": d2h_gbps,
        "batches": rows.iter().map(|r| json!({"shape": r.shape, "op": r.op, "us_per_image": r.us_per_image,
            "fraction_of_copy": r.fraction, "cvcuda_us": r.cvcuda})).collect::<Vec<_>>(),
        "pipeline_1gpu": {"images_per_second": r1.images_per_second(), "fraction_of_pcie": pcie(&r1),
            "host_in_ms": r1.host_in.as_secs_f64() * 1e3, "upload_ms": r1.upload.as_secs_f64() * 1e3,
            "kernel_ms": r1.kernel.as_secs_f64() * 1e3, "download_ms": r1.download.as_secs_f64() * 1e3,
            "host_out_ms": r1.host_out.as_secs_f64() * 1e3, "images": r1.images},
        "pipeline_1gpu_locked": {"images_per_second": r1_locked.images_per_second(), "fraction_of_pcie": pcie(&r1_locked),
            "host_in_ms": r1_locked.host_in.as_secs_f64() * 1e3, "upload_ms": r1_locked.upload.as_secs_f64() * 1e3,
            "kernel_ms": r1_locked.kernel.as_secs_f64() * 1e3, "download_ms": r1_locked.download.as_secs_f64() * 1e3,
            "host_out_ms": r1_locked.host_out.as_secs_f64() * 1e3},
        "pipeline_pool": pool_json,
        "resident_batches": resident_json,
    });
    std::fs::write(out.join("throughput.json"), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    chart(&rows, &out.join("batches.svg"));
    println!("\nwrote {}/throughput.json, batches.svg", out.display());
}

/// Per-image time of each batched operation against CV-CUDA's, one group per batch shape.
fn chart(rows: &[Row], path: &std::path::Path) {
    let ops = ["RGB8 -> gray", "histogram", "equalize"];
    let root = SVGBackend::new(path, (900, 420)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let cols = root.split_evenly((1, SHAPES.len()));
    for (area, (_, _, _, shape, cv)) in cols.iter().zip(SHAPES) {
        let ours: Vec<f64> = ops
            .iter()
            .map(|op| rows.iter().find(|r| r.shape == shape && r.op == *op).map_or(0.0, |r| r.us_per_image))
            .collect();
        let top = ours.iter().chain(cv.iter()).cloned().fold(0.0, f64::max) * 1.2;
        let mut c = ChartBuilder::on(area)
            .caption(shape, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(45)
            .build_cartesian_2d(0.0..6.0, 0.0..top)
            .unwrap();
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(7)
            .x_label_formatter(&|x: &f64| match x.round() as i32 {
                1 => "gray".into(),
                3 => "histogram".into(),
                5 => "equalize".into(),
                _ => String::new(),
            })
            .y_desc("us per image")
            .draw()
            .unwrap();
        for (i, (o, v)) in ours.iter().zip(cv).enumerate() {
            let x = i as f64 * 2.0;
            c.draw_series([Rectangle::new([(x + 0.2, 0.0), (x + 0.95, *o)], BLUE.filled())]).unwrap();
            c.draw_series([Rectangle::new([(x + 1.05, 0.0), (x + 1.8, v)], RGBColor(200, 120, 0).filled())]).unwrap();
        }
    }
    root.draw(&Text::new("blue: cuimg batch; orange: CV-CUDA (same H100)", (10, 400), ("sans-serif", 13))).unwrap();
    root.present().unwrap();
}
