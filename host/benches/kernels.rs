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
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::{Value, json};

mod common;
// This file is a crate root, so its modules are named by path (a file in benches/ itself
// would be taken for a benchmark of its own).
#[path = "kernels/modes.rs"]
mod modes;
#[path = "kernels/registry.rs"]
mod registry;
#[path = "kernels/report.rs"]
mod report;
use common::{copy_at, copy_ceiling, rotation, sets_for, time_cpu, time_gpu};
use modes::{profile, sweep, sweep_knobs};
use report::{chart_fraction, chart_time, markdown, print_table, replot};

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
            // Every operation of the registry, through its stream form.
            let cpu_runs = (data == Data::Random).then_some(cpu_runs);
            let case = registry::Case { size, data: dn, rgb: &rgb, gray: &gray, warm, runs, cpu_runs };
            rows.extend(registry::rows(&s, &case));
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
