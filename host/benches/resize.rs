//! The resize benchmark (issue 28, part 5): every filter on RGB8 and Gray8 at 8K->4K,
//! 4K->1080p, 1080p->224x224 and 1080p x2, and a ragged batch of 256 photos (640x480, each
//! side within 20%) to 224x224, each row against the copy bandwidth for its own bytes.
//!
//! `cargo bench -p cuimg --features bench-knobs --bench resize -- [--quick] [--out DIR]
//! [--images DIR] [--dump DIR]` (or `gpu-bundle/bench/resize` on a GPU machine).
//! `--dump DIR` writes every input as raw bytes with `inputs.json`, for
//! `host/benches/resize_peers.py`, which times NPP and torchvision on the same bytes in the
//! same call.
//!
//! Method, as `benches/kernels.rs`: warm-up, then event-timed calls, the median reported;
//! inputs and outputs rotate among enough copies to exceed L2 twice; a call includes what
//! the stream form does per call (its jobs uploaded on the stream; the tables of sizes seen
//! before are kept on the stream, as a program calling again finds them). Every row's last
//! output is checked against all cores' reference (`cuimg::par`), so a fast wrong kernel
//! fails here.

use std::path::PathBuf;

use cuimg::{DeviceImage, Filter, Gray8, GrayWeights, Image, Pixel, Rgb8, Stream, cpu, par};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

mod common;
use common::{copy_at, copy_ceiling, rotation, sets_for, time_gpu, time_modes};

/// A width and a height.
type Size = (u32, u32);

/// (source, destination, label).
const CASES: [(Size, Size, &str); 4] = [
    ((7680, 4320), (3840, 2160), "8K->4K"),
    ((3840, 2160), (1920, 1080), "4K->1080p"),
    ((1920, 1080), (224, 224), "1080p->224x224"),
    ((1920, 1080), (3840, 2160), "1080p x2"),
];

/// The batch's filters (every filter runs on the single images).
const BATCH_FILTERS: [&str; 7] =
    ["cv-nearest", "cv-linear", "cv-area", "cv-cubic", "pil-bilinear", "pil-bicubic", "pil-lanczos"];

/// The filters of the batch into an f16 ImageNet tensor ([`tensor_spec`]).
const TENSOR_FILTERS: [&str; 4] = ["cv-linear", "cv-cubic", "pil-bilinear", "pil-bicubic"];

/// The ML case's tensor: f16, ImageNet's normalization.
fn tensor_spec() -> cuimg::TensorSpec {
    cuimg::TensorSpec::new(cuimg::DType::F16).normalize(cuimg::Normalize::IMAGENET)
}

struct Opts {
    quick: bool,
    /// One call of each batch filter (images, then the f16 tensor), nothing timed: for a
    /// profiler (`ncu`) to see one launch of each.
    profile: bool,
    out: PathBuf,
    images: PathBuf,
    dump: Option<PathBuf>,
    /// `--only PREFIX`: the filters whose names start with it (every row else).
    only: Option<String>,
    batch_only: bool,
    aligned_batch: bool,
}

impl Opts {
    fn runs(&self, filter: &str) -> bool {
        self.only.as_ref().is_none_or(|p| filter.starts_with(p.as_str()))
    }
}

fn opts() -> Opts {
    let mut o = Opts {
        quick: false,
        profile: false,
        out: PathBuf::from("bench-out"),
        images: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/photos"),
        dump: None,
        only: None,
        batch_only: false,
        aligned_batch: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--profile" => o.profile = true,
            "--out" => o.out = args.next().expect("--out DIR").into(),
            "--images" => o.images = args.next().expect("--images DIR").into(),
            "--dump" => o.dump = Some(args.next().expect("--dump DIR").into()),
            "--only" => o.only = Some(args.next().expect("--only PREFIX")),
            // The batch's rows alone (for sweeps of a knob on the batch).
            "--batch-only" => o.batch_only = true,
            // The batch's widths rounded down to multiples of 4: every RGB8 row at a 4-byte
            // boundary, what a batch layout of aligned rows would give the kernels.
            "--aligned-batch" => o.aligned_batch = true,
            // Pillow's plans without the kernels that sum four taps by dot products, to time
            // the kernels they replace in the same session.
            "--no-planes" => cuimg::ops::resize::pillow_planes(false),
            "--no-mma" => cuimg::ops::resize::pillow_mma(Some(false)),
            "--all-mma" => cuimg::ops::resize::pillow_mma(Some(true)),
            // The area's lists of 5 across in the kernels of 8 across (before session 14).
            "--no-area5" => cuimg::ops::resize::area_five(false),
            // Tiles of this many output rows wherever they fit (0: the model's choice), to
            // hold the tile model's choice against every height.
            "--tile-rows" => {
                cuimg::ops::resize::force_tile_rows(args.next().expect("--tile-rows N").parse().expect("a number"))
            }
            // Launch tables each in a buffer of its own, a batch's groups in the order first
            // seen (before session 15).
            "--no-kept-tables" => cuimg::bench::KEPT_TABLES.store(0, std::sync::atomic::Ordering::Relaxed),
            // Every batch call planned, none replayed (before session 24).
            "--no-replay" => cuimg::ops::resize::resize_replay(false),
            "--bench" => {}
            other => {
                panic!(
                    "unknown argument {other}; use [--quick] [--profile] [--out DIR] [--images DIR] [--dump DIR] [--only PREFIX] [--batch-only] [--aligned-batch] [--no-planes] [--no-mma] [--all-mma] [--no-area5] [--no-kept-tables] [--no-replay] [--tile-rows N]"
                )
            }
        }
    }
    if let Some(dir) = std::env::var_os("CUIMG_IMAGES") {
        o.images = dir.into();
    }
    o
}

/// The photo tiled to `w` x `h` (gray: its BT.601 luma).
fn tiled<P: Pixel>(photo: &Image<Rgb8>, w: u32, h: u32) -> Image<P> {
    let gray = cpu::grayscale(&photo.view(), GrayWeights::Bt601).unwrap();
    Image::from_fn(w, h, |x, y| {
        let (px, py) = (x % photo.width(), y % photo.height());
        let mut p = P::zeroed();
        let b = bytemuck::bytes_of_mut(&mut p);
        match P::CHANNELS {
            1 => b[0] = gray.get(px, py).0[0],
            _ => b.copy_from_slice(&photo.get(px, py).0),
        }
        p
    })
}

/// The batch: 256 crops of the tiled photo, 640x480 with each side within 20% (with
/// `aligned`, each width rounded down to a multiple of 4), drawn from `seed` (the batch's
/// 28).
fn batch_sizes(seed: u64, aligned: bool) -> Vec<Size> {
    let mut r = SmallRng::seed_from_u64(seed);
    let w = |w: u32| if aligned { w & !3 } else { w };
    (0..256).map(|_| (w(r.random_range(512..=768)), r.random_range(384..=576))).collect()
}

/// Batches of sizes never seen together, as a stream of new photos brings them: each call
/// resizes the next of [`FRESH`] batches of 256 sizes drawn as [`batch_sizes`]' (other
/// seeds), more sizes than the process keeps plans of (512), so that every call plans its
/// sizes again. What a call costs once the sizes' widths and heights have been seen (one
/// round of the batches first).
const FRESH: usize = 8;

fn fresh_batches(
    s: &Stream,
    o: &Opts,
    big: &Image<Rgb8>,
    dst: &mut cuimg::DeviceBatch<Rgb8>,
    warm: usize,
    rows: &mut Vec<Value>,
) {
    let batches: Vec<(Vec<Size>, cuimg::DeviceBatch<Rgb8>)> = (0..FRESH as u64)
        .map(|k| {
            let sizes = batch_sizes(1000 + k, false);
            let views: Vec<_> =
                sizes.iter().map(|&(w, h)| big.view().roi(cuimg::Rect::new(0, 0, w, h)).unwrap()).collect();
            let batch = s.upload_batch(&views).unwrap();
            (sizes, batch)
        })
        .collect();
    for name in BATCH_FILTERS.into_iter().filter(|n| o.runs(n)) {
        let filter: Filter = name.parse().unwrap();
        // The first round: sizes, widths and heights never seen (the first call's cost, a
        // batch at a time).
        let mut first = Vec::new();
        for (_, b) in &batches {
            let a = s.mark().unwrap();
            s.resize_batch(b, dst, filter).unwrap();
            first.push(a.elapsed_ms(&s.mark().unwrap()).unwrap() as f64);
        }
        let runs = 2 * FRESH;
        let (med, min) = time_gpu(s, warm.max(FRESH), runs, |i| s.resize_batch(&batches[i % FRESH].1, dst, filter));
        let host = {
            let t = std::time::Instant::now();
            for (_, b) in &batches {
                s.resize_batch(b, dst, filter).unwrap();
            }
            t.elapsed().as_secs_f64() * 1e6 / FRESH as f64
        };
        // Queued back to back, as a data loader's calls are (the host planning the next
        // batch while the GPU resizes this one).
        let queued = time_modes(s, 1, FRESH, |i| s.resize_batch(&batches[i % FRESH].1, dst, filter)).queued_ms;
        let mut k = 0;
        host_spans(s, || {
            k += 1;
            s.resize_batch(&batches[k % FRESH].1, dst, filter)
        });
        let last = k % FRESH;
        let got = s.download_batch(dst).unwrap();
        let (w, h) = batches[last].0[255];
        let want = par::resize(&big.view().roi(cuimg::Rect::new(0, 0, w, h)).unwrap(), 224, 224, filter).unwrap();
        assert!(got[255] == want, "{name} fresh batch: the GPU differs");
        first.sort_by(f64::total_cmp);
        println!(
            "{:>15} RGB8 {name:>17}: {:>9.1} us  {:.2} us per image, a batch of sizes never seen together each call; their first round {:.1} to {:.1} us a call; host {:.1} us a call, queued {:.1} us ({:.2} us per image)",
            "fresh 256->224",
            med * 1e3,
            med * 1e3 / 256.0,
            first[0] * 1e3,
            first[FRESH - 1] * 1e3,
            host,
            queued * 1e3,
            queued * 1e3 / 256.0
        );
        rows.push(json!({"case": "fresh batches of 256 ragged ~640x480 -> 224x224", "format": "RGB8", "filter": name,
            "median_ms": med, "min_ms": min, "us_per_image": med * 1e3 / 256.0, "first_round_ms": first, "host_us": host,
            "queued_ms": queued}));
    }
}

fn dump<P: Pixel>(dir: &std::path::Path, name: &str, img: &Image<P>) -> Value {
    let file = format!("{name}.raw");
    std::fs::write(dir.join(&file), img.as_bytes()).expect("dump");
    json!({"name": name, "file": file, "width": img.width(), "height": img.height(), "channels": P::CHANNELS})
}

/// One row: the median and fastest ms of a resize on `s` (each call alone between two
/// events, the host's work for it inside), and the median ms per call queued back to back
/// (the GPU's own time, once the host is ahead).
fn single<P: Pixel>(
    s: &Stream,
    img: &Image<P>,
    (dw, dh): (u32, u32),
    filter: Filter,
    warm: usize,
    runs: usize,
) -> (f64, f64, f64, f64) {
    let bytes = img.as_bytes().len() as u64 + (dw as u64 * dh as u64 * P::CHANNELS as u64);
    let sets = sets_for(bytes);
    let ins = rotation(s, img, sets);
    let mut outs: Vec<DeviceImage<P>> = (0..sets).map(|_| s.alloc::<P>(dw, dh).unwrap()).collect();
    let (med, min) = time_gpu(s, warm, runs, |i| s.resize(&ins[i % sets], &mut outs[i % sets], filter));
    let modes = time_modes(s, 3, 10, |i| s.resize(&ins[i % sets], &mut outs[i % sets], filter));
    let want = par::resize(&img.view(), dw, dh, filter).unwrap();
    assert!(
        s.download(&outs[0]).unwrap() == want,
        "{filter} {}x{} -> {dw}x{dh}: the GPU differs",
        img.width(),
        img.height()
    );
    (med, min, modes.queued_ms, modes.host_us)
}

fn main() {
    let o = opts();
    std::fs::create_dir_all(&o.out).expect("output folder");
    let gpu = cuimg::Gpu::new().unwrap_or_else(|e| {
        eprintln!("the benchmark needs a GPU: {e}");
        std::process::exit(2)
    });
    let s = gpu.stream().unwrap();
    let (warm, runs) = if o.quick { (2, 10) } else { (5, 30) };
    println!("device: {} ({} SMs)", gpu.name(), gpu.multiprocessors());
    let photo = cuimg::io::load_rgb(o.images.join("coffee.png")).unwrap_or_else(|e| panic!("{e} (pass --images DIR)"));
    let copy = copy_ceiling(&s);
    let mut inputs = Vec::new();
    if let Some(d) = &o.dump {
        std::fs::create_dir_all(d).expect("dump folder");
    }

    let mut rows = Vec::new();
    let mut copies = std::collections::BTreeMap::new();
    for &((sw, sh), (dw, dh), label) in CASES.iter().filter(|_| !o.profile && !o.batch_only) {
        let rgb = tiled::<Rgb8>(&photo, sw, sh);
        let gray = tiled::<Gray8>(&photo, sw, sh);
        if let Some(d) = &o.dump {
            inputs.push(dump(d, &format!("{sw}x{sh}-rgb8"), &rgb));
            inputs.push(dump(d, &format!("{sw}x{sh}-gray8"), &gray));
        }
        for (name, filter) in Filter::ALL.into_iter().filter(|(name, _)| o.runs(name)) {
            for (format, c) in [("RGB8", 3u64), ("Gray8", 1)] {
                let (med, min, queued, host) = match c {
                    3 => single(&s, &rgb, (dw, dh), filter, warm, runs),
                    _ => single(&s, &gray, (dw, dh), filter, warm, runs),
                };
                let bytes = (sw as u64 * sh as u64 + dw as u64 * dh as u64) * c;
                let same = *copies.entry(bytes).or_insert_with(|| copy_at(&s, bytes));
                let gbps = bytes as f64 / (med * 1e-3) / 1e9;
                println!(
                    "{label:>15} {format:>5} {name:>17}: {:>9.1} us  {gbps:>6.0} GB/s  {:.2} of a copy of its bytes; queued {:>9.1} us; host {host:.1} us",
                    med * 1e3,
                    gbps / same,
                    queued * 1e3
                );
                rows.push(json!({"case": label, "src": [sw, sh], "dst": [dw, dh], "format": format, "filter": name,
                    "median_ms": med, "min_ms": min, "queued_ms": queued, "host_us": host, "bytes": bytes, "gbps": gbps,
                    "same_size_copy_gbps": same}));
            }
        }
    }

    // The batch: 256 ragged photos to 224x224, RGB8, one launch per kind of plan.
    let sizes = batch_sizes(28, o.aligned_batch);
    let big = tiled::<Rgb8>(&photo, 768, 576);
    let photos: Vec<Image<Rgb8>> = sizes.iter().map(|&(w, h)| Image::from_fn(w, h, |x, y| big.get(x, y))).collect();
    if let Some(d) = &o.dump {
        let files: Vec<Value> = photos.iter().enumerate().map(|(i, p)| dump(d, &format!("batch-{i:03}"), p)).collect();
        inputs.push(json!({"name": "batch", "images": files}));
        std::fs::write(d.join("inputs.json"), serde_json::to_string_pretty(&inputs).unwrap()).unwrap();
    }
    let views: Vec<_> = photos.iter().map(|p| p.view()).collect();
    let src = s.upload_batch(&views).unwrap();
    let mut dst = s.alloc_batch::<Rgb8>(&vec![(224, 224); 256]).unwrap();
    let in_bytes: u64 = sizes.iter().map(|&(w, h)| w as u64 * h as u64 * 3).sum();
    let bytes = in_bytes + 256 * 224 * 224 * 3;
    let same = copy_at(&s, bytes);
    if o.profile {
        profile_batch(&s, &src, &mut dst, &views);
        return;
    }
    for name in BATCH_FILTERS.into_iter().filter(|n| o.runs(n)) {
        let filter: Filter = name.parse().unwrap();
        // The first call plans every size (plans are kept for the process after it): as a
        // batch of sizes never seen costs.
        let a = s.mark().unwrap();
        s.resize_batch(&src, &mut dst, filter).unwrap();
        let first = a.elapsed_ms(&s.mark().unwrap()).unwrap() as f64;
        let (med, min) = time_gpu(&s, warm, runs, |_| s.resize_batch(&src, &mut dst, filter));
        // The host's time to queue a call, and the GPU's per call queued back to back.
        let modes = time_modes(&s, 5, 4, |_| s.resize_batch(&src, &mut dst, filter));
        host_spans(&s, || s.resize_batch(&src, &mut dst, filter));
        // The same calls each planned, not replayed (as before session 24), in the same run.
        cuimg::ops::resize::resize_replay(false);
        let (planned, _) = time_gpu(&s, warm, runs, |_| s.resize_batch(&src, &mut dst, filter));
        let planned_modes = time_modes(&s, 5, 4, |_| s.resize_batch(&src, &mut dst, filter));
        host_spans(&s, || s.resize_batch(&src, &mut dst, filter));
        cuimg::ops::resize::resize_replay(true);
        let got = s.download_batch(&dst).unwrap();
        let want = par::resize(&views[255], 224, 224, filter).unwrap();
        assert!(got[255] == want, "{name} batch: the GPU differs");
        let gbps = bytes as f64 / (med * 1e-3) / 1e9;
        println!(
            "{:>15} RGB8 {name:>17}: {:>9.1} us  {:.2} us per image  {:.2} of a copy of its bytes; first call {:.1} us; host {:.1} us, queued {:.1} us; planned each call {:.1} us ({:.2} us per image), host {:.1} us, queued {:.1} us",
            "batch 256->224",
            med * 1e3,
            med * 1e3 / 256.0,
            gbps / same,
            first * 1e3,
            modes.host_us,
            modes.queued_ms * 1e3,
            planned * 1e3,
            planned * 1e3 / 256.0,
            planned_modes.host_us,
            planned_modes.queued_ms * 1e3
        );
        rows.push(json!({"case": "batch 256 ragged ~640x480 -> 224x224", "format": "RGB8", "filter": name,
            "median_ms": med, "min_ms": min, "first_call_ms": first, "us_per_image": med * 1e3 / 256.0,
            "host_us": modes.host_us, "queued_ms": modes.queued_ms,
            "planned_ms": planned, "planned_host_us": planned_modes.host_us, "planned_queued_ms": planned_modes.queued_ms,
            "bytes": bytes, "gbps": gbps, "same_size_copy_gbps": same}));
    }
    fresh_batches(&s, &o, &big, &mut dst, warm, &mut rows);
    // Letterboxes, the ML case: each photo fitted into 224x224 and padded (gray 114), the
    // padding written by the resize launch itself.
    let mut boxed = s.alloc_batch::<Rgb8>(&vec![(224, 224); 256]).unwrap();
    for name in ["cv-linear", "pil-bilinear"].into_iter().filter(|n| o.runs(n)) {
        let filter: Filter = name.parse().unwrap();
        let layouts: Vec<cuimg::ResizeLayout> = sizes
            .iter()
            .map(|&(w, h)| cuimg::Sizing::Fit(224, 224, Some([114, 114, 114, 0])).layout(w, h, filter).unwrap())
            .collect();
        let (med, min) = time_gpu(&s, warm, runs, |_| s.resize_batch_layouts(&src, &mut boxed, filter, &layouts));
        let got = s.download_batch(&boxed).unwrap();
        assert!(
            got[7] == par::resize_layout(&views[7], filter, &layouts[7]).unwrap(),
            "{name} letterbox: the GPU differs"
        );
        println!(
            "{:>15} RGB8 {name:>17}: {:>9.1} us  {:.2} us per image (letterboxed)",
            "batch 256->224",
            med * 1e3,
            med * 1e3 / 256.0
        );
        rows.push(json!({"case": "batch 256 ragged ~640x480 -> 224x224 letterboxed", "format": "RGB8", "filter": name,
            "median_ms": med, "min_ms": min, "us_per_image": med * 1e3 / 256.0}));
    }
    // The ML case into a tensor (issue 29): the batch as separate device images (as nvJPEG
    // decodes them) to an NCHW f16 ImageNet tensor, resized and normalized in one launch,
    // against the two launches it replaces (resize into a batch, then `to_tensor_batch`).
    let singles: Vec<DeviceImage<Rgb8>> = views.iter().map(|v| s.upload(v).unwrap()).collect();
    let dviews: Vec<_> = singles.iter().map(|d| d.view()).collect();
    let spec = tensor_spec();
    let mut tensor = s.alloc_tensor(spec.shape_of::<Rgb8>(256, 224, 224)).unwrap();
    for name in TENSOR_FILTERS.into_iter().filter(|n| o.runs(n)) {
        let filter: Filter = name.parse().unwrap();
        let one = |_| s.resize_to_tensor(&dviews, 224, 224, filter, &spec, &mut tensor, 0);
        let (med, min) = time_gpu(&s, warm, runs, one);
        let queued = time_modes(&s, 5, 4, |_| s.resize_to_tensor(&dviews, 224, 224, filter, &spec, &mut tensor, 0));
        host_spans(&s, || s.resize_to_tensor(&dviews, 224, 224, filter, &spec, &mut tensor, 0));
        let want = par::resize_to_tensor(&views[250..], 224, 224, filter, &spec).unwrap();
        let got = s.download_tensor(&tensor).unwrap();
        let per = want.as_bytes().len() / 6;
        assert!(got.as_bytes()[250 * per..] == *want.as_bytes(), "{name} to a tensor: the GPU differs");
        let two = |_: usize| {
            s.resize_images(&dviews, &mut dst, filter)?;
            s.to_tensor_batch(&dst, &spec, &mut tensor)
        };
        let (med2, _) = time_gpu(&s, warm, runs, two);
        println!(
            "{:>15} RGB8 {name:>17}: {:>9.1} us  {:.2} us per image into an f16 tensor in one launch (queued {:.1} us); two launches {:.1} us",
            "batch 256->224",
            med * 1e3,
            med * 1e3 / 256.0,
            queued.queued_ms * 1e3,
            med2 * 1e3
        );
        rows.push(json!({"case": "batch 256 ragged ~640x480 -> 224x224 f16 tensor", "format": "RGB8", "filter": name,
            "median_ms": med, "min_ms": min, "us_per_image": med * 1e3 / 256.0, "queued_ms": queued.queued_ms,
            "host_us": queued.host_us, "two_launches_ms": med2}));
    }
    // Video frames to a tensor (issue 29, part 3): 64 NV12 frames of 1080p to 224x224 f16,
    // decoded, resized and normalized in one launch, against the three launches it replaces
    // (decode each frame, resize the images into a batch, normalize the batch).
    let frame_img = tiled::<Rgb8>(&photo, 1920, 1080);
    let nv12 = par::image_to_yuv(&frame_img.view(), cuimg::YuvLayout::Nv12, cuimg::YuvSpec::default()).unwrap();
    let frames: Vec<_> = (0..64).map(|_| s.upload_yuv(&nv12).unwrap()).collect();
    let frame_refs: Vec<_> = frames.iter().collect();
    let mut video = s.alloc_tensor(spec.shape_of::<Rgb8>(64, 224, 224)).unwrap();
    let mut decoded: Vec<DeviceImage<Rgb8>> = (0..64).map(|_| s.alloc::<Rgb8>(1920, 1080).unwrap()).collect();
    let mut small = s.alloc_batch::<Rgb8>(&vec![(224, 224); 64]).unwrap();
    let yuv = cuimg::YuvSpec::default();
    for name in ["cv-linear", "pil-bilinear"].into_iter().filter(|n| o.runs(n)) {
        let filter: Filter = name.parse().unwrap();
        let one = |_| s.yuv_resize_to_tensor(&frame_refs, yuv, 224, 224, filter, &spec, &mut video, 0);
        let (med, min) = time_gpu(&s, warm, runs, one);
        let want = par::yuv_resize_to_tensor(&[&nv12], yuv, 224, 224, filter, &spec).unwrap();
        let got = s.download_tensor(&video).unwrap();
        assert!(
            got.as_bytes()[..want.as_bytes().len()] == *want.as_bytes(),
            "{name} NV12 to a tensor: the GPU differs"
        );
        let three = |_: usize| {
            for (f, d) in frames.iter().zip(decoded.iter_mut()) {
                s.yuv_to_image(f, yuv, d)?;
            }
            s.resize_images(&decoded.iter().map(DeviceImage::view).collect::<Vec<_>>(), &mut small, filter)?;
            s.to_tensor_batch(&small, &spec, &mut video)
        };
        let (med3, _) = time_gpu(&s, warm, runs, three);
        let bytes = 64 * (1920 * 1080 * 3 / 2 + 224 * 224 * 3 * 2) as u64;
        println!(
            "{:>15} NV12 {name:>17}: {:>9.1} us  {:.2} us per frame into an f16 tensor in one launch; three launches {:.1} us",
            "64 x 1080p->224",
            med * 1e3,
            med * 1e3 / 64.0,
            med3 * 1e3
        );
        rows.push(json!({"case": "64 NV12 1080p frames -> 224x224 f16 tensor", "format": "NV12", "filter": name,
            "median_ms": med, "min_ms": min, "us_per_image": med * 1e3 / 64.0, "three_launches_ms": med3,
            "bytes": bytes, "gbps": bytes as f64 / (med * 1e-3) / 1e9}));
    }
    let out = json!({"device": gpu.name(), "copy_gbps": copy, "rows": rows});
    std::fs::write(o.out.join("resize.json"), serde_json::to_string_pretty(&out).unwrap()).unwrap();
    println!("wrote {}", o.out.join("resize.json").display());
}

/// Where the host's part of a call goes: the library's spans over 20 calls, printed a call.
fn host_spans(s: &cuimg::Stream, mut call: impl FnMut() -> cuimg::Result<()>) {
    s.synchronize().unwrap();
    cuimg::bench::take_host_spans();
    let start = std::time::Instant::now();
    for _ in 0..20 {
        call().unwrap();
    }
    let per_call = start.elapsed().as_secs_f64() * 1e6 / 20.0;
    let spans: Vec<String> = cuimg::bench::take_host_spans()
        .iter()
        .map(|(name, ns, n)| format!("{name} {:.1} us ({} a call)", *ns as f64 / 20e3, n / 20))
        .collect();
    println!("    host spans of a call ({per_call:.1} us in all): {}", spans.join("; "));
    s.synchronize().unwrap();
}

/// `--profile`: each batch filter once into images, then the tensor filters once into an
/// f16 tensor from separate images, as the timed rows run them.
fn profile_batch(
    s: &cuimg::Stream,
    src: &cuimg::DeviceBatch<Rgb8>,
    dst: &mut cuimg::DeviceBatch<Rgb8>,
    views: &[cuimg::ImageView<'_, Rgb8>],
) {
    for name in BATCH_FILTERS {
        s.resize_batch(src, dst, name.parse().unwrap()).unwrap();
    }
    let singles: Vec<DeviceImage<Rgb8>> = views.iter().map(|v| s.upload(v).unwrap()).collect();
    let dviews: Vec<_> = singles.iter().map(|d| d.view()).collect();
    let spec = tensor_spec();
    let mut tensor = s.alloc_tensor(spec.shape_of::<Rgb8>(256, 224, 224)).unwrap();
    for name in TENSOR_FILTERS {
        s.resize_to_tensor(&dviews, 224, 224, name.parse().unwrap(), &spec, &mut tensor, 0).unwrap();
    }
    s.synchronize().unwrap();
    println!("profiled: {} batch filters, {} into a tensor", BATCH_FILTERS.len(), TENSOR_FILTERS.len());
}
