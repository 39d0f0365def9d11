//! The benchmark: every kernel against the device's copy bandwidth, and against CPU baselines.
//!
//! `cargo bench -p cuimg --features bench-knobs --bench kernels -- [--quick] [--out DIR] [--images DIR]`
//! (or `gpu-bundle/run.sh bench` on a GPU machine without Rust). `--sweep`: the 8K cases
//! isolated and back to back, with the host's time per call and plain copies of the same
//! bytes (`sweep.json`; with `CUIMG_MODULE=FILE`, for a kernel variant built on a branch);
//! `--knobs`: the tuning knobs; `--profile`: one launch of each kernel, for `ncu`.
//!
//! Method: the ceiling is a large device-to-device copy (bytes read + written) measured in
//! the same run. Each GPU case is warmed up, then timed launch by launch with device events;
//! the median is reported. Inputs and outputs rotate among enough copies to exceed the L2
//! cache twice over, so small sizes measure memory, not cache. Effective GB/s counts the
//! fewest bytes the operation must move (each input read once, each output written once).
//! CPU baselines run on the same inputs: the serial loop of `cuimg::cpu` (how tutorials
//! time "the CPU"), a rayon version using every core, and the `image` crate's grayscale.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use cuimg::{DeviceImage, Gpu, Gray8, GrayWeights, Image, Lut, Pixel, Rgb8, Rgba8, Stream, cpu};
use plotters::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::{Value, json};

mod common;
use common::{ROTATION_BYTES, copy_ceiling, time_cpu, time_gpu};

const SIZES: [(u32, u32, &str); 3] = [(1920, 1080, "1080p"), (3840, 2160, "4K"), (7680, 4320, "8K")];

struct Opts {
    quick: bool,
    sweep: bool,
    knobs: bool,
    profile: bool,
    replot: Option<PathBuf>,
    out: PathBuf,
    images: PathBuf,
}

fn opts() -> Opts {
    let mut o = Opts {
        quick: false,
        sweep: false,
        knobs: false,
        profile: false,
        replot: None,
        out: PathBuf::from("bench-out"),
        images: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/photos"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--sweep" => o.sweep = true,
            "--knobs" => o.knobs = true,
            "--profile" => o.profile = true,
            "--replot" => o.replot = Some(args.next().expect("--replot bench.json").into()),
            "--out" => o.out = args.next().expect("--out DIR").into(),
            "--images" => o.images = args.next().expect("--images DIR").into(),
            "--bench" => {}
            other => panic!(
                "unknown argument {other}; use [--quick | --sweep | --knobs | --profile | --replot FILE] [--out DIR] [--images DIR]"
            ),
        }
    }
    if let Some(dir) = std::env::var_os("CUIMG_IMAGES") {
        o.images = dir.into();
    }
    o
}

// ---------- rayon baselines (same results as cuimg::cpu, every core) ----------

fn par_gray<P: cuimg::Color>(img: &Image<P>) -> Vec<u8> {
    let [r, g, b] = P::RGB;
    img.pixels()
        .par_iter()
        .map(|p| {
            let c = p.channels();
            GrayWeights::Bt601.luma(c[r], c[g], c[b]).expect("BT.601 is valid")
        })
        .collect()
}

fn par_hist(bytes: &[u8]) -> [u32; 256] {
    bytes
        .par_chunks(1 << 16)
        .fold(
            || [0u32; 256],
            |mut h, c| {
                c.iter().for_each(|&v| h[v as usize] += 1);
                h
            },
        )
        .reduce(
            || [0u32; 256],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

fn par_lut(bytes: &[u8], lut: &Lut) -> Vec<u8> {
    bytes.par_iter().map(|&v| lut.0[v as usize]).collect()
}

fn par_equalize(bytes: &[u8]) -> Vec<u8> {
    let h = par_hist(bytes);
    par_lut(bytes, &cuimg::ops::histogram::equalization_lut(&h))
}

fn par_gather(src: &[f32], idx: &[u32]) -> Vec<f32> {
    idx.par_iter().map(|&j| src[j as usize]).collect()
}

// ---------- inputs ----------

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Data {
    Random,
    Photo,
    Constant,
}

impl Data {
    fn name(self) -> &'static str {
        match self {
            Data::Random => "random",
            Data::Photo => "photo",
            Data::Constant => "constant",
        }
    }
}

fn make<P: Pixel>(data: Data, w: u32, h: u32, photo: &Image<Rgb8>, seed: u64) -> Image<P> {
    match data {
        Data::Random => {
            let mut img = Image::<P>::new(w, h);
            SmallRng::seed_from_u64(seed).fill(img.as_bytes_mut());
            img
        }
        Data::Constant => Image::filled(w, h, 77),
        Data::Photo => {
            // Tile the photo's bytes (gray: its luma; RGBA: alpha 255).
            let gray = cpu::grayscale(&photo.view(), GrayWeights::Bt601).unwrap();
            Image::from_fn(w, h, |x, y| {
                let (px, py) = (x % photo.width(), y % photo.height());
                let rgb = photo.get(px, py).0;
                let mut p = P::zeroed();
                let b = bytemuck::bytes_of_mut(&mut p);
                match P::CHANNELS {
                    1 => b[0] = gray.get(px, py).0[0],
                    3 => b.copy_from_slice(&rgb),
                    _ => b.copy_from_slice(&[rgb[0], rgb[1], rgb[2], 255]),
                }
                p
            })
        }
    }
}

/// The gather benchmark's indices into `n` elements: the identity, or uniformly random ones
/// (the same seed everywhere, so every program gathers the same elements).
fn gather_indices(n: u64, random: bool) -> Vec<u32> {
    if random {
        let mut r = SmallRng::seed_from_u64(4);
        (0..n).map(|_| r.random_range(0..n as u32)).collect()
    } else {
        (0..n as u32).collect()
    }
}

/// `sets` device copies of `img`, so timed runs rotate through more memory than L2 holds.
fn rotation<P: Pixel>(s: &Stream, img: &Image<P>, sets: usize) -> Vec<DeviceImage<P>> {
    (0..sets).map(|_| s.upload(&img.view()).unwrap()).collect()
}

fn sets_for(bytes_per_run: u64) -> usize {
    ROTATION_BYTES.div_ceil(bytes_per_run).clamp(1, 64) as usize
}

/// GB/s of the driver's device-to-device copy moving `bytes` (read + write) per call,
/// rotating through enough buffers to defeat L2, median of event-timed calls.
fn copy_at(s: &Stream, bytes: u64) -> f64 {
    let half = (bytes / 2).max(16) as usize;
    let sets = sets_for(bytes);
    let srcs: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
    let mut dsts: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
    let (ms, _) = time_gpu(s, 5, 30, |i| s.copy_slice(&srcs[i % sets], &mut dsts[i % sets]));
    2.0 * half as f64 / (ms * 1e-3) / 1e9
}

// ---------- results ----------

#[derive(Clone)]
struct Row {
    op: &'static str,
    size: &'static str,
    megapixels: f64,
    data: &'static str,
    gpu_ms: f64,
    gpu_min_ms: f64,
    bytes: u64,
    cpu_serial_ms: Option<f64>,
    cpu_rayon_ms: Option<f64>,
    image_crate_ms: Option<f64>,
    /// The driver's copy moving the same bytes (read + write) per launch, in GB/s: what the
    /// launch and ramp costs of a kernel this short leave of the 1 GiB ceiling.
    same_size_copy_gbps: f64,
}

impl Row {
    /// A row without CPU baselines or a same-size copy: `t` is (median, min) ms.
    fn gpu_only(
        op: &'static str,
        size: &'static str,
        megapixels: f64,
        data: &'static str,
        t: (f64, f64),
        bytes: u64,
    ) -> Row {
        Row {
            op,
            size,
            megapixels,
            data,
            gpu_ms: t.0,
            gpu_min_ms: t.1,
            bytes,
            cpu_serial_ms: None,
            cpu_rayon_ms: None,
            image_crate_ms: None,
            same_size_copy_gbps: 0.0,
        }
    }

    fn gbps(&self) -> f64 {
        self.bytes as f64 / (self.gpu_ms * 1e-3) / 1e9
    }
}

fn main() {
    let o = opts();
    std::fs::create_dir_all(&o.out).expect("output folder");
    if let Some(json) = &o.replot {
        replot(json, &o.out);
        return;
    }
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("the benchmark needs a GPU: {e}");
            std::process::exit(2);
        }
    };
    let s = gpu.stream().unwrap();
    let (warm, runs, cpu_runs) = if o.quick { (2, 10, 1) } else { (5, 50, 3) };
    println!(
        "device: {} (sm_{}{}, {} SMs); {} rayon threads",
        gpu.name(),
        gpu.compute_capability().0,
        gpu.compute_capability().1,
        gpu.multiprocessors(),
        rayon::current_num_threads()
    );
    if o.profile {
        profile(&s);
        return;
    }
    let photo = cuimg::io::load_rgb(o.images.join("coffee.png")).unwrap_or_else(|e| panic!("{e} (pass --images DIR)"));
    if o.knobs {
        sweep_knobs(&s, &photo);
        return;
    }
    if o.sweep {
        sweep(&s, &photo, &o.out);
        return;
    }

    // 1. The ceiling: a large device-to-device copy.
    let copy_gbps = copy_ceiling(&s);

    let mut rows: Vec<Row> = Vec::new();
    let sizes: Vec<_> = if o.quick { SIZES[2..].to_vec() } else { SIZES.to_vec() };
    let total = sizes.len() * 3;
    let mut done = 0;
    for &(w, h, size) in &sizes {
        let n = w as u64 * h as u64;
        let mp = n as f64 / 1e6;
        for data in [Data::Random, Data::Photo, Data::Constant] {
            done += 1;
            let t0 = Instant::now();
            let dn = data.name();
            let rgb = make::<Rgb8>(data, w, h, &photo, 1);
            let rgba = make::<Rgba8>(data, w, h, &photo, 2);
            let gray = make::<Gray8>(data, w, h, &photo, 3);
            let lut = Lut::gamma(2.2);
            let cpu_if =
                |f: &mut dyn FnMut() -> f64| if data == Data::Random || data == Data::Photo { Some(f()) } else { None };

            // Grayscale RGB8 and RGBA8.
            for (op, bpp) in [("grayscale RGB8", 3u64), ("grayscale RGBA8", 4)] {
                let sets = sets_for(n * (bpp + 1));
                let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
                let (med, min) = if bpp == 3 {
                    let ins = rotation(&s, &rgb, sets);
                    time_gpu(&s, warm, runs, |i| s.grayscale(&ins[i % sets], &mut outs[i % sets], GrayWeights::Bt601))
                } else {
                    let ins = rotation(&s, &rgba, sets);
                    time_gpu(&s, warm, runs, |i| s.grayscale(&ins[i % sets], &mut outs[i % sets], GrayWeights::Bt601))
                };
                let (serial, rayon_t, image_t) = if bpp == 3 {
                    let img = image::RgbImage::from_raw(w, h, rgb.as_bytes().to_vec()).unwrap();
                    (
                        cpu_if(&mut || time_cpu(cpu_runs, || cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap())),
                        cpu_if(&mut || {
                            let want = cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap();
                            assert_eq!(par_gray(&rgb), want.as_bytes(), "rayon baseline {size} {dn}");
                            time_cpu(cpu_runs, || par_gray(&rgb))
                        }),
                        cpu_if(&mut || time_cpu(cpu_runs, || image::imageops::grayscale(&img))),
                    )
                } else {
                    (
                        cpu_if(&mut || {
                            time_cpu(cpu_runs, || cpu::grayscale(&rgba.view(), GrayWeights::Bt601).unwrap())
                        }),
                        cpu_if(&mut || time_cpu(cpu_runs, || par_gray(&rgba))),
                        None,
                    )
                };
                rows.push(Row {
                    op,
                    size,
                    megapixels: mp,
                    data: dn,
                    gpu_ms: med,
                    gpu_min_ms: min,
                    bytes: n * (bpp + 1),
                    cpu_serial_ms: serial,
                    cpu_rayon_ms: rayon_t,
                    image_crate_ms: image_t,
                    same_size_copy_gbps: 0.0,
                });
            }

            // Grayscale and its histogram: one fused pass (3n read, n written) against the
            // two launches in a row (3n read, n written, n read again).
            {
                let sets = sets_for(4 * n);
                let ins = rotation(&s, &rgb, sets);
                let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
                let mut bins = s.alloc_histogram(1).unwrap();
                let fused = time_gpu(&s, warm, runs, |i| {
                    s.grayscale_histogram(&ins[i % sets], &mut outs[i % sets], &mut bins, GrayWeights::Bt601)
                });
                let (want_gray, want_hist) = cpu::grayscale_histogram(&rgb.view(), GrayWeights::Bt601).unwrap();
                assert_eq!(s.download_histogram(&bins).unwrap(), want_hist, "fused histogram {size} {dn}");
                let last = (runs + warm - 1) % sets;
                assert_eq!(s.download(&outs[last]).unwrap(), want_gray, "fused gray {size} {dn}");
                let unfused = time_gpu(&s, warm, runs, |i| {
                    s.grayscale(&ins[i % sets], &mut outs[i % sets], GrayWeights::Bt601)?;
                    s.histogram(&outs[i % sets], &mut bins)
                });
                // Color equalization on luma: the luma histogram (the fused kernel without the
                // gray writes), the table, the apply; the source read twice, written once.
                let mut eq: Vec<DeviceImage<Rgb8>> = (0..sets).map(|_| s.alloc::<Rgb8>(w, h).unwrap()).collect();
                let luma = time_gpu(&s, warm, runs, |i| {
                    s.equalize_color(&ins[i % sets], &mut eq[i % sets], cuimg::EqualizeMode::Luma)
                });
                let want = cpu::equalize_color(&rgb.view(), cuimg::EqualizeMode::Luma).unwrap();
                assert_eq!(s.download(&eq[last]).unwrap(), want, "equalize RGB8 luma {size} {dn}");
                rows.push(Row::gpu_only("equalize RGB8 luma", size, mp, dn, luma, 9 * n));
                for (op, t) in [("grayscale+histogram fused", fused), ("grayscale then histogram", unfused)] {
                    rows.push(Row::gpu_only(op, size, mp, dn, t, 4 * n));
                }
            }

            // Histogram (gray), LUT apply (gray), equalize (gray, end to end on the device).
            let sets = sets_for(2 * n);
            let ins = rotation(&s, &gray, sets);
            let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
            let mut bins = s.alloc_histogram(1).unwrap();
            let (med, min) = time_gpu(&s, warm, runs, |i| s.histogram(&ins[i % sets], &mut bins));
            let serial = cpu_if(&mut || time_cpu(cpu_runs, || cpu::histogram(&gray.view()).unwrap()));
            let par = cpu_if(&mut || time_cpu(cpu_runs, || par_hist(gray.as_bytes())));
            rows.push(Row {
                op: "histogram",
                size,
                megapixels: mp,
                data: dn,
                gpu_ms: med,
                gpu_min_ms: min,
                bytes: n,
                cpu_serial_ms: serial,
                cpu_rayon_ms: par,
                image_crate_ms: None,
                same_size_copy_gbps: 0.0,
            });
            // Correctness on this very input, so a fast wrong kernel cannot pass silently.
            assert_eq!(
                s.download_histogram(&bins).unwrap(),
                cpu::histogram(&gray.view()).unwrap(),
                "histogram {size} {dn}"
            );

            let d_lut = s.upload_lut::<Gray8>(&lut).unwrap();
            let (med, min) = time_gpu(&s, warm, runs, |i| s.apply_lut(&ins[i % sets], &mut outs[i % sets], &d_lut));
            let serial = cpu_if(&mut || time_cpu(cpu_runs, || cpu::apply_lut(&gray.view(), &lut).unwrap()));
            let par = cpu_if(&mut || time_cpu(cpu_runs, || par_lut(gray.as_bytes(), &lut)));
            rows.push(Row {
                op: "LUT apply",
                size,
                megapixels: mp,
                data: dn,
                gpu_ms: med,
                gpu_min_ms: min,
                bytes: 2 * n,
                cpu_serial_ms: serial,
                cpu_rayon_ms: par,
                image_crate_ms: None,
                same_size_copy_gbps: 0.0,
            });

            let (med, min) = time_gpu(&s, warm, runs, |i| s.equalize(&ins[i % sets], &mut outs[i % sets]));
            let serial = cpu_if(&mut || time_cpu(cpu_runs, || cpu::equalize(&gray.view()).unwrap()));
            let par = cpu_if(&mut || time_cpu(cpu_runs, || par_equalize(gray.as_bytes())));
            rows.push(Row {
                op: "equalize",
                size,
                megapixels: mp,
                data: dn,
                gpu_ms: med,
                gpu_min_ms: min,
                bytes: 3 * n,
                cpu_serial_ms: serial,
                cpu_rayon_ms: par,
                image_crate_ms: None,
                same_size_copy_gbps: 0.0,
            });
            let last = (runs + warm - 1) % sets;
            assert_eq!(s.download(&outs[last]).unwrap(), cpu::equalize(&gray.view()).unwrap(), "equalize {size} {dn}");
            drop((ins, outs));

            // Gather f32, identity and random indices (values from this data kind).
            let src: Vec<f32> = gray.as_bytes().iter().map(|&b| b as f32).collect();
            let d_src = s.upload_slice(&src).unwrap();
            for (op, random) in [("gather f32 identity", false), ("gather f32 random", true)] {
                let idx = gather_indices(n, random);
                let d_idx = s.upload_slice(&idx).unwrap();
                let mut d_out = s.alloc_slice::<f32>(n as usize).unwrap();
                let (med, min) = time_gpu(&s, warm, runs, |_| s.gather(&d_src, &d_idx, &mut d_out)?.check());
                let serial = cpu_if(&mut || time_cpu(cpu_runs, || cpu::gather(&src, &idx).unwrap()));
                let par = cpu_if(&mut || time_cpu(cpu_runs, || par_gather(&src, &idx)));
                rows.push(Row {
                    op,
                    size,
                    megapixels: mp,
                    data: dn,
                    gpu_ms: med,
                    gpu_min_ms: min,
                    bytes: 12 * n,
                    cpu_serial_ms: serial,
                    cpu_rayon_ms: par,
                    image_crate_ms: None,
                    same_size_copy_gbps: 0.0,
                });
            }
            println!("[{done}/{total}] {size} {dn}: {:.1} s", t0.elapsed().as_secs_f64());
        }
    }

    // The same-size copy reference for every row (one measurement per byte count).
    let mut copies: BTreeMap<u64, f64> = BTreeMap::new();
    for r in rows.iter_mut() {
        r.same_size_copy_gbps = *copies.entry(r.bytes).or_insert_with(|| copy_at(&s, r.bytes));
    }

    // End-to-end for a file: a 4K PNG made from the photo.
    let e2e = end_to_end(&gpu, &s, &photo);

    // Reports.
    print_table(&rows, copy_gbps);
    let md = markdown(&gpu, &rows, copy_gbps, &e2e);
    std::fs::write(o.out.join("bench.md"), &md).unwrap();
    let json = json!({
        "device": gpu.name(),
        "compute_capability": format!("{}.{}", gpu.compute_capability().0, gpu.compute_capability().1),
        "multiprocessors": gpu.multiprocessors(),
        "copy_gbps": copy_gbps,
        "rayon_threads": rayon::current_num_threads(),
        "runs": runs,
        "rows": rows.iter().map(|r| json!({
            "op": r.op, "size": r.size, "megapixels": r.megapixels, "data": r.data,
            "gpu_median_ms": r.gpu_ms, "gpu_min_ms": r.gpu_min_ms, "bytes": r.bytes,
            "gbps": r.gbps(), "fraction_of_copy": r.gbps() / copy_gbps,
            "cpu_serial_ms": r.cpu_serial_ms, "cpu_rayon_ms": r.cpu_rayon_ms, "image_crate_ms": r.image_crate_ms,
            "same_size_copy_gbps": r.same_size_copy_gbps, "fraction_of_same_size_copy": r.gbps() / r.same_size_copy_gbps,
        })).collect::<Vec<Value>>(),
        "end_to_end_4k": e2e.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<String, Value>>(),
    });
    std::fs::write(o.out.join("bench.json"), serde_json::to_string_pretty(&json).unwrap()).unwrap();
    chart_time(&rows, &o.out.join("time_vs_size.svg"));
    chart_fraction(&rows, copy_gbps, &o.out.join("fraction_of_copy.svg"));
    println!("\nwrote {}/bench.md, bench.json, time_vs_size.svg, fraction_of_copy.svg", o.out.display());
}

/// The fixed 8K inputs of `--profile` and `--knobs`: random RGB and gray images, a constant
/// gray one, an output, bins, a gamma table, a gather's identity indices over 1.5s, and two
/// 1 GiB buffers for the copies.
struct Fixed8k {
    n: u64,
    rgb: DeviceImage<Rgb8>,
    gray: DeviceImage<Gray8>,
    constant: DeviceImage<Gray8>,
    out: DeviceImage<Gray8>,
    bins: cuimg::DeviceHistogram,
    lut: cuimg::DeviceLuts,
    src: cuimg::DeviceBuffer<f32>,
    idx: cuimg::DeviceBuffer<u32>,
    gathered: cuimg::DeviceBuffer<f32>,
    a: cuimg::DeviceBuffer<u8>,
    b: cuimg::DeviceBuffer<u8>,
}

fn fixed_8k(s: &Stream) -> Fixed8k {
    let (w, h) = (7680, 4320);
    let n = w as u64 * h as u64;
    let idx: Vec<u32> = (0..n as u32).collect();
    Fixed8k {
        n,
        rgb: s.upload(&make::<Rgb8>(Data::Random, w, h, &Image::new(1, 1), 1).view()).unwrap(),
        gray: s.upload(&make::<Gray8>(Data::Random, w, h, &Image::new(1, 1), 3).view()).unwrap(),
        constant: s.upload(&Image::<Gray8>::filled(w, h, 77).view()).unwrap(),
        out: s.alloc::<Gray8>(w, h).unwrap(),
        bins: s.alloc_histogram(1).unwrap(),
        lut: s.upload_lut::<Gray8>(&Lut::gamma(2.2)).unwrap(),
        src: s.upload_slice(&vec![1.5f32; n as usize]).unwrap(),
        idx: s.upload_slice(&idx).unwrap(),
        gathered: s.alloc_slice::<f32>(n as usize).unwrap(),
        a: s.alloc_slice::<u8>(1 << 30).unwrap(),
        b: s.alloc_slice::<u8>(1 << 30).unwrap(),
    }
}

/// `--profile`: one launch of each 8K kernel, for `ncu`.
fn profile(s: &Stream) {
    use cuimg::bench::GRAY_HISTOGRAM;
    use std::sync::atomic::Ordering::Relaxed;
    let Fixed8k { n, rgb, gray, mut out, mut bins, lut, src, idx, mut gathered, a, mut b, .. } = fixed_8k(s);
    s.grayscale(&rgb, &mut out, GrayWeights::Bt601).unwrap();
    s.apply_lut(&gray, &mut out, &lut).unwrap();
    s.histogram(&gray, &mut bins).unwrap();
    GRAY_HISTOGRAM.store(1, Relaxed);
    s.histogram(&gray, &mut bins).unwrap();
    GRAY_HISTOGRAM.store(0, Relaxed);
    s.gather(&src, &idx, &mut gathered).unwrap().check().unwrap();
    let random = s.upload_slice(&gather_indices(n, true)).unwrap();
    s.gather(&src, &random, &mut gathered).unwrap().check().unwrap();
    cuimg::bench::copy_kernel(s, &a, &mut b).unwrap();
    s.synchronize().unwrap();
    println!(
        "profile: one launch each of gray_c3_flat, lut_c1_flat, histogram_c1_flat, histogram_c1_runs, gather_b4 (identity, then random) at 8K, copy_flat on 1 GiB"
    );
}

/// `--sweep`: every 8K case isolated and back to back, with the host's time per call, beside
/// plain copies of the same bytes (`common::time_modes`); with `CUIMG_MODULE`, for a kernel
/// variant.
fn sweep(s: &Stream, photo: &Image<Rgb8>, out: &std::path::Path) {
    let (w, h) = (7680, 4320);
    let n = w as u64 * h as u64;
    let mut bins = s.alloc_histogram(1).unwrap();
    let lut = s.upload_lut::<Gray8>(&Lut::gamma(2.2)).unwrap();
    let mut d_out = s.alloc_slice::<f32>(n as usize).unwrap();
    let a = s.alloc_slice::<u8>(1 << 30).unwrap();
    let mut b = s.alloc_slice::<u8>(1 << 30).unwrap();
    let copy = copy_ceiling(s);
    println!(
        "sweep at 8K ({}): each case as isolated calls (the GPU idle before each, the host's\n\
         submission inside the event window), the host's time per call, and back-to-back calls\n\
         (the GPU's own time once the host is ahead); us",
        s.gpu().startup().code
    );
    println!("{:<22} {:>9} {:>10} {:>8} {:>12} {:>9}", "op", "data", "isolated", "host", "back-to-back", "of copy");
    let mut rows = Vec::new();
    let mut row = |op: &str, data: &str, bytes: u64, m: common::Modes| {
        let frac = bytes as f64 / (m.queued_ms * 1e-3) / 1e9 / copy;
        println!(
            "{op:<22} {data:>9} {:>10.1} {:>8.1} {:>12.1} {:>9.2}",
            m.isolated_ms * 1e3,
            m.host_us,
            m.queued_ms * 1e3,
            frac
        );
        rows.push(json!({"op": op, "data": data, "bytes": bytes, "isolated_us": m.isolated_ms * 1e3,
            "host_us": m.host_us, "back_to_back_us": m.queued_ms * 1e3}));
    };
    let (runs, per_round) = (30, 20);
    for data in [Data::Random, Data::Photo, Data::Constant] {
        let dn = data.name();
        let rgb = make::<Rgb8>(data, w, h, photo, 1);
        let gray = make::<Gray8>(data, w, h, photo, 3);
        {
            let sets = sets_for(4 * n);
            let ins = rotation(s, &rgb, sets);
            let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
            let m = common::time_modes(s, runs, per_round, |i| {
                s.grayscale(&ins[i % sets], &mut outs[i % sets], GrayWeights::Bt601)
            });
            row("grayscale RGB8", dn, 4 * n, m);
            let m = common::time_modes(s, runs, per_round, |i| {
                s.grayscale_histogram(&ins[i % sets], &mut outs[i % sets], &mut bins, GrayWeights::Bt601)
            });
            row("grayscale+histogram", dn, 4 * n, m);
            let want = cpu::grayscale_histogram(&rgb.view(), GrayWeights::Bt601).unwrap();
            assert_eq!(s.download_histogram(&bins).unwrap(), want.1, "fused histogram {dn}");
        }
        let sets = sets_for(2 * n);
        let ins = rotation(s, &gray, sets);
        let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
        let m = common::time_modes(s, runs, per_round, |i| s.histogram(&ins[i % sets], &mut bins));
        row("histogram", dn, n, m);
        assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&gray.view()).unwrap(), "histogram {dn}");
        let m = common::time_modes(s, runs, per_round, |i| s.apply_lut(&ins[i % sets], &mut outs[i % sets], &lut));
        row("LUT", dn, 2 * n, m);
        let m = common::time_modes(s, runs, per_round, |i| s.equalize(&ins[i % sets], &mut outs[i % sets]));
        row("equalize", dn, 3 * n, m);
        assert_eq!(s.download(&outs[0]).unwrap(), cpu::equalize(&gray.view()).unwrap(), "equalize {dn}");
    }
    // Gather f32 (data-independent): the call as the full bench times it (its index check, a
    // copy back and a wait, inside the window), and the gather alone, checked after the window.
    let src: Vec<f32> = (0..n).map(|i| (i % 251) as f32).collect();
    let d_src = s.upload_slice(&src).unwrap();
    for (op, random) in [("gather f32 identity", false), ("gather f32 random", true)] {
        let idx = gather_indices(n, random);
        let d_idx = s.upload_slice(&idx).unwrap();
        let m = common::time_modes(s, 10, 5, |_| s.gather(&d_src, &d_idx, &mut d_out)?.check());
        row(op, "checked", 12 * n, m);
        let mut checks = Vec::new();
        let m = common::time_modes(s, 10, 5, |_| {
            // A pending check borrows the stream and the indices, not the output, so the next
            // gather can be queued; the checks run after the window.
            checks.push(s.gather(&d_src, &d_idx, &mut d_out)?);
            Ok(())
        });
        for c in checks {
            c.check().expect("every index in range");
        }
        row(op, "alone", 12 * n, m);
        let got = s.download_slice(&d_out).unwrap();
        assert!(got.iter().zip(&idx).all(|(&g, &j)| g == src[j as usize]), "{op}");
    }
    let m = common::time_modes(s, 10, 5, |_| cuimg::bench::copy_kernel(s, &a, &mut b));
    row("SM copy kernel 1 GiB", "-", 2 << 30, m);
    drop((a, b, d_src, d_out));
    // What a plain copy achieves moving each op's bytes (read + written) per call, by the SM
    // copy kernel and by the driver, with the same rotation: the floor a kernel of that size
    // can reach. "launch": 16 bytes each way, the cost of a launch alone.
    for (label, bytes) in [("gray", 4 * n), ("LUT", 2 * n), ("histogram", n), ("launch", 32)] {
        let half = (bytes / 2) as usize;
        let sets = sets_for(bytes);
        let srcs: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
        let mut dsts: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
        let m = common::time_modes(s, runs, per_round, |i| {
            cuimg::bench::copy_kernel(s, &srcs[i % sets], &mut dsts[i % sets])
        });
        row(&format!("SM copy, {label}'s bytes"), "-", bytes, m);
        let m = common::time_modes(s, runs, per_round, |i| s.copy_slice(&srcs[i % sets], &mut dsts[i % sets]));
        row(&format!("driver copy, {label}'s"), "-", bytes, m);
    }
    let out = out.join("sweep.json");
    let code = s.gpu().startup().code.to_string();
    let module = std::env::var("CUIMG_MODULE").unwrap_or_default();
    let json = json!({"device": s.gpu().name(), "code": code, "module": module, "copy_gbps": copy, "rows": rows});
    std::fs::write(&out, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    println!("wrote {}", out.display());
}

/// `--knobs`: the 8K kernels under each tuning knob (grid waves, the gray histogram's two
/// kernels, equalization's forms), for choosing the defaults.
fn sweep_knobs(s: &Stream, photo: &Image<Rgb8>) {
    use cuimg::bench::{GRAY_HISTOGRAM, GRID_WAVES};
    use std::sync::atomic::Ordering::Relaxed;
    let (w, h) = (7680, 4320);
    let Fixed8k {
        n,
        rgb: d_rgb,
        gray: d_gray,
        constant: d_const,
        mut out,
        mut bins,
        lut,
        src: d_src,
        idx: d_idx,
        gathered: mut d_out,
        a,
        mut b,
    } = fixed_8k(s);
    let (gray, constant) = (s.download(&d_gray).unwrap(), s.download(&d_const).unwrap());
    let (copy_ms, _) = time_gpu(s, 3, 20, |_| s.copy_slice(&a, &mut b));
    let copy = 2.0 * (1u64 << 30) as f64 / (copy_ms * 1e-3) / 1e9;
    println!("sweep at 8K, random data (constant where said); copy {copy:.0} GB/s; fraction of copy:");
    println!(
        "{:<8} {:>8} {:>8} {:>14} {:>14} {:>14} {:>14} {:>8} {:>8}",
        "waves", "gray", "LUT", "hist", "hist (runs)", "hist const", "runs const", "gather", "SM copy"
    );
    for waves in [1u32, 2, 4, 8] {
        GRID_WAVES.store(waves, Relaxed);
        let frac = |bytes: u64, ms: f64| bytes as f64 / (ms * 1e-3) / 1e9 / copy;
        let g = time_gpu(s, 3, 30, |_| s.grayscale(&d_rgb, &mut out, GrayWeights::Bt601)).0;
        let l = time_gpu(s, 3, 30, |_| s.apply_lut(&d_gray, &mut out, &lut)).0;

        let mut hist = |v: u32, src: &DeviceImage<Gray8>| {
            GRAY_HISTOGRAM.store(v, Relaxed);
            let t = time_gpu(s, 3, 30, |_| s.histogram(src, &mut bins)).0;
            GRAY_HISTOGRAM.store(0, Relaxed);
            t
        };
        let (hl, ha, hlc, hac) = (hist(0, &d_gray), hist(1, &d_gray), hist(0, &d_const), hist(1, &d_const));
        let ga = time_gpu(s, 3, 30, |_| s.gather(&d_src, &d_idx, &mut d_out)?.check()).0;
        let sm_copy = time_gpu(s, 3, 20, |_| cuimg::bench::copy_kernel(s, &a, &mut b)).0;
        println!(
            "{waves:<8} {:>8.3} {:>8.3} {:>14.3} {:>14.3} {:>14.3} {:>14.3} {:>8.3} {:>8.3}",
            frac(4 * n, g),
            frac(2 * n, l),
            frac(n, hl),
            frac(n, ha),
            frac(n, hlc),
            frac(n, hac),
            frac(12 * n, ga),
            frac(2 << 30, sm_copy)
        );
    }
    GRID_WAVES.store(1, Relaxed);

    // Gray equalization's forms, alternated three times on the bench's rotation of inputs
    // (so that L2 does not hold them from one call to the next), in microseconds: the table
    // in the histogram's last block or in a kernel of its own; the apply from the last
    // vector or from the first.
    use cuimg::bench::{EQUALIZE_ONE_LAUNCH, EQUALIZE_REVERSE_APPLY};
    let forms = [(1, 1, "one launch, reversed"), (1, 0, "one launch, forward"), (0, 1, "two launches, reversed")];
    println!("equalize 8K, us, three rounds of: {}", forms.iter().map(|f| f.2).collect::<Vec<_>>().join(" / "));
    let cases = [("random", gray), ("photo", make::<Gray8>(Data::Photo, w, h, photo, 5)), ("constant", constant)];
    for (name, img) in &cases {
        let srcs = rotation(s, img, sets_for(2 * n));
        let mut outs = rotation(s, img, srcs.len());
        let mut line = format!("{name:<10}");
        for round in 0..3 {
            line += if round == 0 { " " } else { " | " };
            for (k, &(one, reverse, _)) in forms.iter().enumerate() {
                EQUALIZE_ONE_LAUNCH.store(one, Relaxed);
                EQUALIZE_REVERSE_APPLY.store(reverse, Relaxed);
                let m = srcs.len();
                let t = time_gpu(s, 3, 30, |i| s.equalize(&srcs[i % m], &mut outs[i % m])).0;
                line += &format!("{}{:.1}", if k == 0 { "" } else { " / " }, t * 1e3);
            }
        }
        println!("{line}");
    }
    EQUALIZE_ONE_LAUNCH.store(1, Relaxed);
    EQUALIZE_REVERSE_APPLY.store(1, Relaxed);
}

fn end_to_end(gpu: &Gpu, s: &Stream, photo: &Image<Rgb8>) -> BTreeMap<&'static str, f64> {
    let (w, h) = (3840, 2160);
    let big = Image::from_fn(w, h, |x, y| photo.get(x % photo.width(), y % photo.height()));
    let png = cuimg::io::encode_png(&big).unwrap();
    let mut t = BTreeMap::new();
    let img = {
        let a = Instant::now();
        let img = cuimg::io::decode_rgb(&png, std::path::Path::new("4k.png")).unwrap();
        t.insert("1 decode PNG (host)", a.elapsed().as_secs_f64() * 1e3);
        img
    };
    let mut dev = s.alloc::<Rgb8>(w, h).unwrap();
    let (up, _) = time_gpu(s, 1, 5, |_| s.upload_into(&img.view(), &mut dev));
    t.insert("2a upload, pageable", up);
    let mut pinned = gpu.alloc_pinned::<Rgb8>(w, h).unwrap();
    pinned.copy_from(&img.view()).unwrap();
    let (up, _) = time_gpu(s, 1, 5, |_| s.upload_pinned_into(&pinned, &mut dev));
    t.insert("2b upload, pinned", up);
    let mut gray = s.alloc::<Gray8>(w, h).unwrap();
    let (k, _) = time_gpu(s, 2, 10, |_| s.grayscale(&dev, &mut gray, GrayWeights::Bt601));
    t.insert("3 kernel (grayscale)", k);
    let mut out = gpu.alloc_pinned::<Gray8>(w, h).unwrap();
    let (down_pinned, _) = time_gpu(s, 1, 5, |_| s.download_pinned(&gray, &mut out));
    t.insert("4b download, pinned", down_pinned);
    let a = Instant::now();
    let host = s.download(&gray).unwrap();
    t.insert("4a download, pageable (host clock)", a.elapsed().as_secs_f64() * 1e3);
    let a = Instant::now();
    let encoded = cuimg::io::encode_png(&host).unwrap();
    t.insert("5 encode PNG (host)", a.elapsed().as_secs_f64() * 1e3);
    std::hint::black_box(encoded);
    t
}

fn print_table(rows: &[Row], copy: f64) {
    println!(
        "\n{:<20} {:>6} {:>9} {:>10} {:>8} {:>7} {:>9} {:>11} {:>11}",
        "op", "size", "data", "GPU ms", "GB/s", "of copy", "of same", "CPU serial", "CPU rayon"
    );
    for r in rows {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        println!(
            "{:<20} {:>6} {:>9} {:>10.4} {:>8.0} {:>7.2} {:>9.2} {:>11} {:>11}",
            r.op,
            r.size,
            r.data,
            r.gpu_ms,
            r.gbps(),
            r.gbps() / copy,
            r.gbps() / r.same_size_copy_gbps,
            f(r.cpu_serial_ms),
            f(r.cpu_rayon_ms)
        );
    }
}

fn markdown(gpu: &Gpu, rows: &[Row], copy: f64, e2e: &BTreeMap<&str, f64>) -> String {
    let mut m = format!(
        "Device: {} (compute capability {}.{}, {} SMs). Copy bandwidth (1 GiB device-to-device, read + write): **{copy:.0} GB/s**. CPU baselines: {} rayon threads.\n\n",
        gpu.name(),
        gpu.compute_capability().0,
        gpu.compute_capability().1,
        gpu.multiprocessors(),
        rayon::current_num_threads()
    );
    m += "| op | size | data | GPU median ms | GPU min ms | bytes moved | GB/s | fraction of copy | same-size copy GB/s | fraction of same-size copy | CPU serial ms | CPU rayon ms | image crate ms | speed-up vs serial |\n";
    m += "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        m += &format!(
            "| {} | {} | {} | {:.4} | {:.4} | {} | {:.0} | {:.2} | {:.0} | {:.2} | {} | {} | {} | {} |\n",
            r.op,
            r.size,
            r.data,
            r.gpu_ms,
            r.gpu_min_ms,
            r.bytes,
            r.gbps(),
            r.gbps() / copy,
            r.same_size_copy_gbps,
            r.gbps() / r.same_size_copy_gbps,
            f(r.cpu_serial_ms),
            f(r.cpu_rayon_ms),
            f(r.image_crate_ms),
            r.cpu_serial_ms.map_or("-".into(), |c| format!("{:.0}x", c / r.gpu_ms))
        );
    }
    m += "\nEnd to end, one 3840x2160 RGB PNG to a gray PNG (ms):\n\n| stage | ms |\n|---|---:|\n";
    for (k, v) in e2e {
        m += &format!("| {k} | {v:.3} |\n");
    }
    m
}

fn color(op: &str) -> RGBColor {
    match op {
        "grayscale RGB8" => RGBColor(31, 119, 180),
        "grayscale RGBA8" => RGBColor(174, 199, 232),
        "histogram" => RGBColor(255, 127, 14),
        "equalize" => RGBColor(44, 160, 44),
        "LUT apply" => RGBColor(214, 39, 40),
        "gather f32 identity" => RGBColor(148, 103, 189),
        "grayscale+histogram fused" => RGBColor(23, 190, 207),
        "grayscale then histogram" => RGBColor(158, 218, 229),
        _ => RGBColor(140, 86, 75),
    }
}

fn ops(rows: &[Row]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    for r in rows {
        if !v.contains(&r.op) {
            v.push(r.op);
        }
    }
    v
}

/// Time against image size, log-log: GPU (solid) and CPU serial / rayon (dashed), random data.
fn chart_time(rows: &[Row], path: &std::path::Path) {
    let root = SVGBackend::new(path, (1100, 700)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let random: Vec<&Row> = rows.iter().filter(|r| r.data == "random").collect();
    let ymin = random.iter().map(|r| r.gpu_ms).fold(f64::MAX, f64::min) * 0.5;
    let ymax = random.iter().filter_map(|r| r.cpu_serial_ms).fold(1.0, f64::max) * 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Time against image size (random data): GPU solid, CPU serial dashed, CPU rayon dotted",
            ("sans-serif", 20),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((1.5f64..40.0).log_scale(), (ymin..ymax).log_scale())
        .unwrap();
    chart.configure_mesh().x_desc("megapixels").y_desc("milliseconds (log)").draw().unwrap();
    for op in ops(rows) {
        let c = color(op);
        let pts = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
            random.iter().filter(|r| r.op == op).filter_map(|r| f(r).map(|v| (r.megapixels, v))).collect()
        };
        let gpu = pts(&|r| Some(r.gpu_ms));
        chart
            .draw_series(LineSeries::new(gpu.clone(), c.stroke_width(3)))
            .unwrap()
            .label(op)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(gpu.iter().map(|&p| Circle::new(p, 4, c.filled()))).unwrap();
        chart.draw_series(DashedLineSeries::new(pts(&|r| r.cpu_serial_ms), 8, 5, c.stroke_width(2))).unwrap();
        chart.draw_series(DashedLineSeries::new(pts(&|r| r.cpu_rayon_ms), 2, 4, c.stroke_width(2))).unwrap();
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .unwrap();
    root.present().unwrap();
}

/// The targets at 8K, as fractions of the copy bandwidth: (op, data kind or any).
const TARGETS: [(&str, &str, f64); 5] = [
    ("grayscale RGB8", "", 0.90),
    ("histogram", "random", 0.55),
    ("histogram", "constant", 0.50),
    ("LUT apply", "", 0.85),
    ("gather f32 identity", "", 0.80),
];

/// Fraction of the copy bandwidth per op at the largest size, one bar per data kind, with
/// the targets as black marks.
fn chart_fraction(rows: &[Row], copy: f64, path: &std::path::Path) {
    let root = SVGBackend::new(path, (1200, 620)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let largest = rows.iter().map(|r| r.megapixels).fold(0.0, f64::max);
    let big: Vec<&Row> = rows.iter().filter(|r| r.megapixels == largest).collect();
    let names = ops(rows);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Fraction of copy bandwidth ({copy:.0} GB/s) at {} ({largest:.0} MP); bars: random, photo, constant; black: target", big[0].size),
            ("sans-serif", 20),
        )
        .margin(20)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..names.len() as f64, -0.12f64..1.1)
        .unwrap();
    chart.configure_mesh().disable_x_mesh().disable_x_axis().y_desc("effective GB/s / copy GB/s").draw().unwrap();
    for (i, op) in names.iter().enumerate() {
        let label = Text::new(op.to_string(), (i as f64 + 0.08, -0.05), ("sans-serif", 15).into_font());
        chart.draw_series(std::iter::once(label)).unwrap();
        for (j, data) in ["random", "photo", "constant"].iter().enumerate() {
            let x0 = i as f64 + 0.1 + j as f64 * 0.27;
            if let Some(r) = big.iter().find(|r| r.op == *op && r.data == *data) {
                let c = color(op).mix([1.0, 0.7, 0.45][j]);
                chart
                    .draw_series(std::iter::once(Rectangle::new([(x0, 0.0), (x0 + 0.25, r.gbps() / copy)], c.filled())))
                    .unwrap();
            }
            for (_, _, t) in TARGETS.iter().filter(|(o, d, _)| o == op && (d.is_empty() || d == data)) {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x0 - 0.01, *t), (x0 + 0.26, *t)],
                        BLACK.stroke_width(3),
                    )))
                    .unwrap();
            }
        }
    }
    root.present().unwrap();
}

/// `--replot FILE`: redraws the charts from a `bench.json` (no GPU needed).
fn replot(json_path: &std::path::Path, out: &std::path::Path) {
    let text = std::fs::read_to_string(json_path).unwrap_or_else(|e| panic!("{}: {e}", json_path.display()));
    let v: Value = serde_json::from_str(&text).expect("bench.json");
    let leak = |s: &Value| -> &'static str { Box::leak(s.as_str().unwrap_or("").to_string().into_boxed_str()) };
    let rows: Vec<Row> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| Row {
            op: leak(&r["op"]),
            size: leak(&r["size"]),
            megapixels: r["megapixels"].as_f64().unwrap_or(0.0),
            data: leak(&r["data"]),
            gpu_ms: r["gpu_median_ms"].as_f64().unwrap_or(0.0),
            gpu_min_ms: r["gpu_min_ms"].as_f64().unwrap_or(0.0),
            bytes: r["bytes"].as_u64().unwrap_or(0),
            cpu_serial_ms: r["cpu_serial_ms"].as_f64(),
            cpu_rayon_ms: r["cpu_rayon_ms"].as_f64(),
            image_crate_ms: r["image_crate_ms"].as_f64(),
            same_size_copy_gbps: r["same_size_copy_gbps"].as_f64().unwrap_or(0.0),
        })
        .collect();
    let copy = v["copy_gbps"].as_f64().expect("copy_gbps");
    chart_time(&rows, &out.join("time_vs_size.svg"));
    chart_fraction(&rows, copy, &out.join("fraction_of_copy.svg"));
    println!("redrew {}/time_vs_size.svg and fraction_of_copy.svg from {}", out.display(), json_path.display());
}
