//! Files in, files out: images per second of the file engine (`cuimg::files`, what the
//! `cuimg` tool runs) on 4000x3000 JPEGs (to gray JPEGs) and 1920x1080 PNGs (to gray PNGs),
//! GPU path against the CPU path on all cores of the same machine, with the stage breakdown
//! (the tool's own report, `cli/src/report.rs`); and nvJPEG decoding alone. Every run is in
//! this process: only the first opens the driver and loads nvJPEG (each run still opens its
//! GPUs and codecs, counted apart as "once open").
//!
//! `cargo run --release -p cuimg-cli --example files_bench -- [--jpegs N] [--out DIR] [--dir DIR] [--decode-only | --gpu-only]`
//! (`--decode-only`: only nvJPEG's decoding, swept over batch sizes and threads; `--gpu-only`:
//! only the JPEG job's default GPU path, for large folders; `--dir`: the test files made there
//! once and kept)
//! (`gpu-bundle/run.sh files` on the lent GPU). The test files are made at run time from the
//! shared photos, upscaled, JPEG quality 90.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cuimg::files::{self, Hardware, Options};
use cuimg::{Image, Rgb8};
use rayon::prelude::*;

// The tool's report (stage sums, the threads' table, the trace), which implements the
// engine's observer; the plot is not drawn here.
#[allow(dead_code)]
#[path = "../src/report.rs"]
mod report;

/// The tuning of one run (the tool's `--tune`).
type Env = Vec<(&'static str, &'static str)>;

/// Upscaled copies of the shared photos: `n` files of `w` x `h` in `dir`.
fn make(dir: &Path, n: usize, (w, h): (u32, u32), ext: &str) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let paths: Vec<PathBuf> = (0..n).map(|i| dir.join(format!("img{i:04}.{ext}"))).collect();
    if std::fs::read_dir(dir).unwrap().count() == n && paths.iter().all(|p| p.exists()) {
        return paths; // made by an earlier run with `--dir`
    }
    let photos = std::env::var_os("CUIMG_IMAGES")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/photos"), PathBuf::from);
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

/// One run of the engine (gray, with `tuning`), into `dst` (replaced): (images per second,
/// images per second once the GPUs and codecs are open, the report).
fn engine(
    dir: &Path,
    dst: &Path,
    fmt: &str,
    cpu: bool,
    tuning: &[(&str, &str)],
    trace: Option<PathBuf>,
) -> (f64, f64, String) {
    // Every run starts with no dirty pages: gigabytes of earlier runs' outputs (and of the
    // test files) left to write back throttled later runs' writes, 0.7 against 7 to 13 ms
    // a file in one session (docs/BENCHMARKS.md).
    let _ = Command::new("sync").status();
    let op = cuimg::registry::find("grayscale").expect("registered");
    let cmd = files::Command::new(op, &cuimg::registry::Args::defaults(op)).unwrap();
    let mut o = Options::new(dst);
    o.format = Some(fmt.into());
    o.overwrite = true;
    o.hardware = if cpu { Hardware::Cpu } else { Hardware::AllGpus };
    o.tuning = tuning.iter().map(|(k, v)| (k.to_string(), v.parse().expect("a number"))).collect();
    let shown =
        report::Shown { stages: report::Stages::new(trace.is_some()), progress: indicatif::ProgressBar::hidden() };
    let write_trace = |_: &str| Ok(shown.stages.trace());
    let extras: Vec<files::Extra<'_>> = trace.into_iter().map(|p| (p, &write_trace as &dyn Fn(&str) -> _)).collect();
    let s = files::run(&[dir.to_string_lossy().into_owned()], &cmd, &o, &shown, &extras).expect("the run starts");
    assert!(s.failures.is_empty(), "{:?}", &s.failures[..s.failures.len().min(5)]);
    let secs = s.wall.as_secs_f64();
    let open = s.opening.map_or(0.0, |(a, b)| (a + b).as_secs_f64());
    let (ips, steady) = (s.written as f64 / secs, s.written as f64 / (secs - open).max(1e-9));
    let mut report = format!(
        "{} images written in {secs:.2} s ({ips:.1} images/s) on {}; {:.0} ms of it opening\n{}\n",
        s.written,
        s.device,
        open * 1e3,
        shown.stages.table(s.written, s.wall)
    );
    report.push_str(&shown.stages.threads_table(s.wall).unwrap_or_default());
    (ips, steady, report)
}

fn main() {
    // As the tool does: 16 hardware queues for its 30 or so streams (docs/BENCHMARKS.md).
    if std::env::var_os("CUDA_DEVICE_MAX_CONNECTIONS").is_none() {
        // SAFETY: first thing in main: no other thread (rayon's pool included) exists yet,
        // so none reads the environment meanwhile.
        unsafe { std::env::set_var("CUDA_DEVICE_MAX_CONNECTIONS", "16") };
    }
    let mut jpegs = 960;
    let mut out = PathBuf::from("files-bench-out");
    let mut decode_only = false;
    let mut gpu_only = false;
    let mut keep = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--jpegs" => jpegs = args.next().and_then(|n| n.parse().ok()).expect("--jpegs N"),
            "--out" => out = args.next().expect("--out DIR").into(),
            "--decode-only" => decode_only = true,
            "--gpu-only" => gpu_only = true,
            "--dir" => keep = Some(PathBuf::from(args.next().expect("--dir DIR"))),
            _ => {}
        }
    }
    // `--dir DIR`: the test files are made there once and kept, for runs one after another.
    let work =
        keep.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("cuimg-files-bench-{}", std::process::id())));
    let t = Instant::now();
    let jpg_dir = work.join("jpg");
    let files = make(&jpg_dir, jpegs, (4000, 3000), "jpg");
    let png_dir = work.join("png");
    make(&png_dir, if gpu_only { 0 } else { jpegs / 2 }, (1920, 1080), "png");
    println!(
        "made {} JPEGs (4000x3000, q90) and {} PNGs (1920x1080) in {:.1} s",
        files.len(),
        jpegs / 2,
        t.elapsed().as_secs_f64()
    );

    let mut rows = Vec::new();
    let jobs = [("4000x3000 JPEG -> gray JPEG", &jpg_dir, "jpg"), ("1920x1080 PNG -> gray PNG", &png_dir, "png")];
    let jobs = match (decode_only, gpu_only) {
        (true, _) => &jobs[..0],
        (_, true) => &jobs[..1],
        _ => &jobs[..],
    };
    for &(name, dir, fmt) in jobs {
        // The JPEG job's GPU path in several shapes (decoders per GPU), then the default;
        // the CPU path on all cores.
        let mut paths: Vec<(String, Env, Option<&str>)> = Vec::new();
        if fmt == "jpg" && !gpu_only {
            for (label, env) in [
                ("GPU, decoded to RGB and converted", vec![("gray-via-rgb", "1")]),
                ("GPU, 2 hardware decoders", vec![("hw-decoders", "2")]),
                ("GPU, no SM decoders", vec![("sm-decoders", "0")]),
                ("GPU, no CPU decoders", vec![("cpu-decoders", "0"), ("ramp-decoders", "0")]),
                ("GPU, no ramp decoders", vec![("ramp-decoders", "0")]),
            ] {
                paths.push((label.into(), env, None));
            }
        }
        paths.push(("GPU".into(), vec![], None));
        if !gpu_only {
            paths.push(("CPU, all cores".into(), vec![], Some("--cpu")));
        }
        for (path, env, extra) in paths {
            let cpu = extra.is_some();
            let dst = work.join(format!("out-{fmt}-{cpu}"));
            // The default shape's timeline: which queue runs dry.
            let trace = (path == "GPU").then(|| out.join(format!("trace-{fmt}.json")));
            if let Some(t) = &trace {
                std::fs::create_dir_all(&out).unwrap();
                let _ = std::fs::remove_file(t);
            }
            engine(dir, &dst, fmt, cpu, &env, None); // warm: page cache, clocks, the driver
            let (ips, steady, report) = engine(dir, &dst, fmt, cpu, &env, trace);
            println!("\n== {name}, {path}: {ips:.1} images/s ({steady:.1} once open)\n{report}");
            rows.push(serde_json::json!({"job": name, "path": path, "images_per_second": ips,
                "images_per_second_once_open": steady, "env": format!("{env:?}"), "report": report}));
        }
    }

    let decode = if gpu_only { None } else { decode_alone(&files, decode_only, &mut rows) };
    std::fs::create_dir_all(&out).unwrap();
    let doc = serde_json::json!({"jpegs": files.len(), "runs": rows, "nvjpeg_decode_images_per_second": decode});
    std::fs::write(out.join("files.json"), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    println!("\nwrote {}", out.join("files.json").display());
}

/// nvJPEG decoding alone, files already in memory (up to 480 of them): hardware codecs at
/// each batch size on 1, 2 and 4 threads; codecs on the SMs (one file per call) on 1 to 8
/// threads; and both together. Every thread has its own codec and stream and takes the next
/// files from a shared counter, so mixed decoders split the work by their speeds. Returns
/// the best images per second.
fn decode_alone(files: &[PathBuf], full: bool, rows: &mut Vec<serde_json::Value>) -> Option<f64> {
    use cuimg::jpeg::Jpeg;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let gpu = match cuimg::Gpu::new().and_then(|g| Jpeg::new(&g).map(|_| g)) {
        Ok(gpu) => gpu,
        Err(e) => {
            println!("\nno nvJPEG decode measurement: {e}");
            return None;
        }
    };
    let bytes: Vec<Vec<u8>> = files.iter().take(480).map(|f| std::fs::read(f).unwrap()).collect();
    // All codecs made up front (see STATES in host/src/jpeg.rs), timed: the first of each
    // backend makes a library handle, `another` only states.
    let timed = |what: &str, make: &dyn Fn() -> std::sync::Arc<Jpeg>| {
        let t = Instant::now();
        let jpeg = make();
        println!("== made {what} in {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        jpeg
    };
    let first_hw = timed("a hardware codec (Jpeg::new)", &|| Jpeg::new(&gpu).unwrap());
    timed("another hardware codec (Jpeg::another)", &|| first_hw.another().unwrap());
    let first_sm = timed("a codec on the SMs (Jpeg::without_hardware)", &|| Jpeg::without_hardware(&gpu).unwrap());
    // Each codec with a prioritized stream (hardware: high, SMs: low) and an ordinary one.
    // (A stream is not `Sync`: each set sits in a mutex that only its thread takes.)
    let codec = |first: &std::sync::Arc<Jpeg>, priority| {
        std::sync::Mutex::new((
            first.another().unwrap(),
            gpu.stream_with_priority(priority).unwrap(),
            gpu.stream().unwrap(),
        ))
    };
    let hardware: Vec<_> = (0..4).map(|_| codec(&first_hw, cuimg::StreamPriority::High)).collect();
    let on_sms: Vec<_> = (0..8).map(|_| codec(&first_sm, cuimg::StreamPriority::Low)).collect();
    // CPU seconds this process has used (user + system), from /proc.
    let cpu_seconds = || {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
        (ticks(11) + ticks(12)) / 100.0 // utime, stime (fields 14 and 15), at 100 ticks/s
    };
    // `CUIMG_DECODE_GRAY=1`: decoded to gray (the luma plane) instead of RGB.
    let gray = std::env::var_os("CUIMG_DECODE_GRAY").is_some_and(|v| v == "1");
    let decode = |hw: usize, batch: usize, sms: usize, prioritized: bool, files: &[Vec<u8>]| {
        let next = AtomicUsize::new(0);
        let (t, cpu) = (Instant::now(), cpu_seconds());
        std::thread::scope(|scope| {
            let workers = hardware[..hw].iter().map(|c| (c, batch)).chain(on_sms[..sms].iter().map(|c| (c, 1)));
            for (codec, take) in workers {
                let next = &next;
                scope.spawn(move || {
                    let (jpeg, high, normal) = &*codec.lock().unwrap();
                    let stream = if prioritized { high } else { normal };
                    loop {
                        let start = next.fetch_add(take, Relaxed);
                        if start >= files.len() {
                            break;
                        }
                        let views: Vec<&[u8]> =
                            files[start..(start + take).min(files.len())].iter().map(Vec::as_slice).collect();
                        if gray {
                            jpeg.decode_batch::<cuimg::Gray8>(stream, &views)
                                .unwrap()
                                .into_iter()
                                .for_each(|r| drop(r.unwrap()));
                        } else {
                            jpeg.decode_batch::<cuimg::Rgb8>(stream, &views)
                                .unwrap()
                                .into_iter()
                                .for_each(|r| drop(r.unwrap()));
                        }
                    }
                    stream.synchronize().unwrap();
                });
            }
        });
        let n = files.len() as f64;
        (n / t.elapsed().as_secs_f64(), (cpu_seconds() - cpu) * 1e3 / n)
    };
    // (hardware, batch, on the SMs, prioritized streams)
    let mut configs: Vec<(usize, usize, usize, bool)> = Vec::new();
    // Batches of a multiple of the decoder's cores keep each core busy.
    let cores = first_hw.hardware_decoder().map_or(1, |(engines, cores)| (engines * cores) as usize);
    println!("== hardware decoder (engines, cores per engine): {:?}", first_hw.hardware_decoder());
    let aligned = 32usize.div_ceil(cores) * cores;
    let mut batches = if full { vec![8, 32, 64, aligned, 2 * aligned] } else { vec![32, aligned] };
    batches.dedup();
    for batch in batches {
        for hw in [1, 2, 4] {
            configs.push((hw, batch, 0, true));
        }
    }
    for sms in if full { &[1, 2, 4, 8][..] } else { &[2, 4, 8][..] } {
        configs.push((0, 0, *sms, true));
    }
    for sms in [2, 4, 8] {
        configs.push((2, aligned, sms, true));
    }
    configs.push((2, aligned, 4, false));
    let mut best = 0.0f64;
    for (hw, batch, sms, prioritized) in configs {
        let warm = &bytes[..bytes.len().min(64 * (hw + sms))];
        decode(hw, batch.max(1), sms, prioritized, warm); // warm: states sized, memory pooled
        let (ips, cpu_ms) = decode(hw, batch.max(1), sms, prioritized, &bytes);
        let label = match (hw, sms) {
            (0, _) => format!("{sms} on the SMs"),
            (_, 0) => format!("{hw} hardware, batches of {batch}"),
            _ => format!("{hw} hardware (batches of {batch}) + {sms} on the SMs"),
        };
        let streams = if prioritized { "" } else { ", streams all of one priority" };
        println!(
            "== nvJPEG decode alone, {} files, {label}{streams}: {ips:.1} images/s, {cpu_ms:.1} CPU ms per image",
            bytes.len()
        );
        rows.push(serde_json::json!({"job": "nvJPEG decode alone", "hardware": hw, "batch": batch, "on_sms": sms,
            "prioritized": prioritized, "images_per_second": ips, "cpu_ms_per_image": cpu_ms}));
        best = best.max(ips);
    }
    Some(best)
}
