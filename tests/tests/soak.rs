//! The soak: 10,000 mixed operations (every op, every format, every operation of the registry
//! with its sample settings, random sizes from 1x1 to 4K,
//! regions, written destination regions, batches, pinned copies, gathers of every element
//! size) on several threads, each with its own stream, every result checked against the CPU
//! reference, and device memory (`cuMemGetInfo`) and host RSS reported along the way: after
//! the warm-up they may not grow by more than [`DEVICE_BOUND`] and [`HOST_BOUND`].
//!
//! Runs on the lent GPU (`gpu-bundle/run.sh soak`, `CUIMG_SOAK=1`), not in CI: it prints a
//! `SKIP` line without that variable. `CUIMG_SOAK_OPS` changes the count.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cuimg::registry::{AnyDeviceImage, AnyImage, Args, DeviceOutput, OPERATIONS, Target};
use cuimg::{
    Bgr8, Bgra8, Color, EqualizeMode, Gray, Gray8, GrayWeights, Image, La8, Lut, Pixel, Rect, Rgb8, Rgba8, Stream, cpu,
};
use cuimg_tests::{Watchdog, assert_same, assert_writes_only_region, gpu, poisoned};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const THREADS: usize = 4;
/// Growth of device memory in use allowed from the end of the warm-up to the end: the
/// stream-ordered pool keeps what it has held, so only a leak grows it past its peak.
const DEVICE_BOUND: usize = 256 << 20;
/// Growth of the resident set allowed over the same span.
const HOST_BOUND: usize = 256 << 20;
/// Operations before the first measurement (every thread's pool, staging and events warm).
const WARM_UP: usize = 1000;

fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// A side from 1 to 4096, log-uniform (most images small, some 4K), so 10,000 operations
/// with their CPU references fit a few minutes.
fn side(rng: &mut SmallRng) -> u32 {
    let bits = rng.random_range(0.0f64..12.0);
    (2f64.powf(bits) as u32).clamp(1, 4096)
}

fn image<P: Pixel>(rng: &mut SmallRng) -> Image<P> {
    let (w, h) = (side(rng), side(rng));
    let mut img = Image::<P>::new(w, h);
    rng.fill(img.as_bytes_mut());
    if rng.random_bool(0.3) {
        // Peaky values, as photos have (and equalization's edge cases).
        let base: u8 = rng.random();
        for b in img.as_bytes_mut() {
            *b = base.wrapping_add(*b % 7);
        }
    }
    img
}

fn region(rng: &mut SmallRng, w: u32, h: u32) -> Rect {
    let (x, y) = (rng.random_range(0..w), rng.random_range(0..h));
    Rect::new(x, y, rng.random_range(1..=w - x), rng.random_range(1..=h - y))
}

/// Source, destination region: the op's result lands in a region of a poisoned destination
/// larger than it, and the bytes around the region must stay as they were.
fn into_region<P: Pixel, Q: Pixel>(
    s: &Stream,
    rng: &mut SmallRng,
    src: &Image<P>,
    op: impl Fn(&Stream, &cuimg::DeviceImage<P>, &mut cuimg::DeviceViewMut<'_, Q>) -> cuimg::Result<()>,
    want: &Image<Q>,
    what: &str,
) {
    let (w, h) = src.dimensions();
    let (dw, dh) = (w + rng.random_range(0..3), h + rng.random_range(0..3));
    let at = Rect::new(dw - w, dh - h, w, h);
    let dev = s.upload(&src.view()).unwrap();
    assert_writes_only_region(s, (dw, dh), at, want, |d| op(s, &dev, d), what);
}

fn color_op<P: Color>(s: &Stream, rng: &mut SmallRng) {
    let img = image::<P>(rng);
    let weights = [GrayWeights::Bt601, GrayWeights::Bt709, GrayWeights::Average][rng.random_range(0..3)];
    match rng.random_range(0..4) {
        0 => into_region::<P, Gray8>(
            s,
            rng,
            &img,
            |s, a, b| s.grayscale(a, b, weights),
            &cpu::grayscale(&img.view(), weights).unwrap(),
            "grayscale",
        ),
        1 => {
            let r = region(rng, img.width(), img.height());
            let dev = s.upload(&img.view()).unwrap();
            let mut out = poisoned::<P>(s, r.width, r.height);
            s.black_and_white(&dev.roi(r).unwrap(), &mut out, weights).unwrap();
            let want = cpu::black_and_white(&img.roi(r).unwrap(), weights).unwrap();
            assert_same(&s.download(&out).unwrap(), &want, "black and white, region");
        }
        _ => {
            let mode = if rng.random_bool(0.5) { EqualizeMode::Luma } else { EqualizeMode::PerChannel };
            into_region::<P, P>(
                s,
                rng,
                &img,
                |s, a, b| s.equalize_color(a, b, mode),
                &cpu::equalize_color(&img.view(), mode).unwrap(),
                "equalize color",
            );
        }
    }
}

fn gray_op<P: Gray>(s: &Stream, rng: &mut SmallRng) {
    let img = image::<P>(rng);
    into_region::<P, P>(s, rng, &img, |s, a, b| s.equalize(a, b), &cpu::equalize(&img.view()).unwrap(), "equalize");
}

fn any_op<P: Pixel>(s: &Stream, rng: &mut SmallRng) {
    let img = image::<P>(rng);
    let dev = s.upload(&img.view()).unwrap();
    if rng.random_bool(0.5) {
        let r = region(rng, img.width(), img.height());
        let mut bins = s.alloc_histogram(P::CHANNELS).unwrap();
        s.histogram(&dev.roi(r).unwrap(), &mut bins).unwrap();
        assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&img.roi(r).unwrap()).unwrap(), "histogram");
    } else {
        let lut = if rng.random_bool(0.5) { Lut::invert() } else { Lut::gamma(rng.random_range(0.3..3.0)) };
        let luts = s.upload_lut::<P>(&lut).unwrap();
        into_region::<P, P>(
            s,
            rng,
            &img,
            |s, a, b| s.apply_lut(a, b, &luts),
            &cpu::apply_lut(&img.view(), &lut).unwrap(),
            "LUT",
        );
    }
}

fn batch_op(s: &Stream, rng: &mut SmallRng) {
    let n = rng.random_range(1..=6);
    let imgs: Vec<Image<Rgba8>> = (0..n).map(|_| image::<Rgba8>(rng)).collect();
    let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
    let src = s.upload_batch(&views).unwrap();
    let mut gray = s.alloc_batch::<Gray8>(&src.sizes()).unwrap();
    s.grayscale_batch(&src, &mut gray, GrayWeights::Bt601).unwrap();
    for (got, v) in s.download_batch(&gray).unwrap().iter().zip(&views) {
        assert_same(got, &cpu::grayscale(v, GrayWeights::Bt601).unwrap(), "grayscale batch");
    }
    let mut eq = s.alloc_batch::<Rgba8>(&src.sizes()).unwrap();
    s.equalize_color_batch(&src, &mut eq, EqualizeMode::Luma).unwrap();
    for (got, v) in s.download_batch(&eq).unwrap().iter().zip(&views) {
        assert_same(got, &cpu::equalize_color(v, EqualizeMode::Luma).unwrap(), "equalize batch");
    }
}

fn gather_op<T: bytemuck::Pod>(s: &Stream, rng: &mut SmallRng) {
    let n = rng.random_range(1..200_000usize);
    let mut bytes = vec![0u8; n * size_of::<T>()];
    rng.fill(&mut bytes[..]);
    let src: Vec<T> = bytemuck::pod_collect_to_vec(&bytes);
    let m = rng.random_range(1..200_000usize);
    let idx: Vec<u32> = (0..m).map(|_| rng.random_range(0..n as u32)).collect();
    let (dsrc, didx) = (s.upload_slice(&src).unwrap(), s.upload_slice(&idx).unwrap());
    let mut out = s.alloc_slice::<T>(m).unwrap();
    s.gather(&dsrc, &didx, &mut out).unwrap().check().unwrap();
    let (got, want) = (s.download_slice(&out).unwrap(), cpu::gather(&src, &idx).unwrap());
    // Compared as bytes: random bits make NaNs, which never equal themselves.
    assert!(bytemuck::cast_slice::<T, u8>(&got) == bytemuck::cast_slice::<T, u8>(&want), "gather");
}

fn pinned_op(s: &Stream, rng: &mut SmallRng) {
    let img = image::<Rgb8>(rng);
    let mut pinned = s.gpu().alloc_pinned::<Rgb8>(img.width(), img.height()).unwrap();
    pinned.copy_from(&img.view()).unwrap();
    let dev = s.upload_pinned(&pinned).unwrap();
    let mut out = s.alloc::<Rgb8>(img.width(), img.height()).unwrap();
    let luts = s.upload_lut::<Rgb8>(&Lut::invert()).unwrap();
    s.apply_lut(&dev, &mut out, &luts).unwrap();
    s.download_pinned(&out, &mut pinned).unwrap();
    assert_same(&pinned.view().unwrap().to_image(), &cpu::apply_lut(&img.view(), &Lut::invert()).unwrap(), "pinned");
}

/// Any operation of the registry (`cuimg::registry::OPERATIONS`), with a random choice of
/// its sample settings, on a random format it takes: its stream form into a region of a
/// larger poisoned destination (and bins), or a batch of two, against the reference.
fn registry_op(s: &Stream, rng: &mut SmallRng) {
    let op = OPERATIONS[rng.random_range(0..OPERATIONS.len())];
    let mut given: Vec<(&str, &str)> = Vec::new();
    for p in op.params.iter().filter(|p| !p.samples.is_empty()) {
        if rng.random_bool(0.4) {
            given.push((p.name, p.samples[rng.random_range(0..p.samples.len())]));
        }
    }
    let bound = (op.bind)(&Args::parse(op, &given).unwrap()).unwrap();
    let format = op.formats[rng.random_range(0..op.formats.len())];
    let random = |rng: &mut SmallRng| {
        let (w, h) = (side(rng), side(rng));
        let mut bytes = vec![0u8; (w * h) as usize * format.channels()];
        rng.fill(&mut bytes[..]);
        AnyImage::from_bytes(format, w, h, &bytes).unwrap()
    };
    let img = random(rng);
    let (w, h) = img.dimensions();
    let what = format!("{} {given:?} {format} {w}x{h}", op.name);
    let want = bound.cpu(&img.view());
    if rng.random_bool(0.2) {
        let other = random(rng);
        let got = bound.gpu_batch(s.gpu(), &[img.view(), other.view()]);
        match (got, &want, bound.cpu(&other.view())) {
            (Ok(got), Ok(a), Ok(b)) => assert!(got == [a.clone(), b], "{what}: in a batch"),
            (Err(_), a, b) => assert!(a.is_err() || b.is_err(), "{what}: a batch failed where each image works"),
            (Ok(_), ..) => panic!("{what}: a batch taken where the reference refuses an image"),
        }
        return;
    }
    let Ok(want) = want else {
        assert!(bound.gpu(s.gpu(), &img.view()).is_err(), "{what}: taken on the GPU, refused by the reference");
        return;
    };
    let p = bound.produces(format).unwrap();
    let dev = AnyDeviceImage::upload(s, &img.view()).unwrap();
    if p.image.is_none() {
        // Bins or a tensor, whole.
        let mut out = DeviceOutput::alloc(s, &*bound, format, w, h).unwrap();
        bound.stream(s, &dev.view(), out.target()).unwrap();
        assert!(out.download(s).unwrap() == want, "{what}: what the stream form wrote");
        return;
    }
    let mut bins = p.histogram.map(|c| s.alloc_histogram(c).unwrap());
    match (p.image, want.image()) {
        (Some(f), Some(want_img)) => {
            let (ow, oh) = bound.size(w, h);
            let (dw, dh) = (ow + rng.random_range(0..3), oh + rng.random_range(0..3));
            let at = Rect::new(dw - ow, dh - oh, ow, oh);
            let c = f.channels();
            let mut expect: Vec<u8> = (0..(dw * dh) as usize * c).map(|i| 0xA5 ^ (i as u8).wrapping_mul(31)).collect();
            let mut dst = AnyDeviceImage::upload(s, &AnyImage::from_bytes(f, dw, dh, &expect).unwrap().view()).unwrap();
            let target = Target::new(Some(dst.roi_mut(at).unwrap()), bins.as_mut()).unwrap();
            bound.stream(s, &dev.view(), target).unwrap();
            let row = ow as usize * c;
            for y in 0..oh as usize {
                let to = ((y + at.y as usize) * dw as usize + at.x as usize) * c;
                expect[to..to + row].copy_from_slice(&want_img.as_bytes()[y * row..(y + 1) * row]);
            }
            assert!(dst.download(s).unwrap().as_bytes() == &expect[..], "{what}: the region or the bytes around it");
        }
        _ => unreachable!("{what}: an image, by `produces`"),
    }
    if let (Some(b), Some(h)) = (&bins, want.histogram()) {
        assert_eq!(&s.download_histogram(b).unwrap(), h, "{what}: the bins");
    }
}

fn one(s: &Stream, rng: &mut SmallRng) {
    match rng.random_range(0..19) {
        17 | 18 => registry_op(s, rng),
        0 => color_op::<Rgb8>(s, rng),
        1 => color_op::<Bgr8>(s, rng),
        2 => color_op::<Rgba8>(s, rng),
        3 => color_op::<Bgra8>(s, rng),
        4 => gray_op::<Gray8>(s, rng),
        5 => gray_op::<La8>(s, rng),
        6 => any_op::<Gray8>(s, rng),
        7 => any_op::<La8>(s, rng),
        8 => any_op::<Rgb8>(s, rng),
        9 => any_op::<Rgba8>(s, rng),
        10 => batch_op(s, rng),
        11 => gather_op::<u8>(s, rng),
        12 => gather_op::<u16>(s, rng),
        13 => gather_op::<f32>(s, rng),
        14 => gather_op::<[u32; 4]>(s, rng),
        15 => gather_op::<[u8; 3]>(s, rng),
        _ => pinned_op(s, rng),
    }
}

#[test]
fn soak() {
    if std::env::var("CUIMG_SOAK").map_or(true, |v| v != "1") {
        let _ = writeln!(std::io::stderr(), "SKIP: the soak runs with CUIMG_SOAK=1 (gpu-bundle/run.sh soak)");
        return;
    }
    let Some(gpu) = gpu() else { return };
    let total: usize = std::env::var("CUIMG_SOAK_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let _watchdog = Watchdog::new(Duration::from_secs(1500), "the soak");
    let done = AtomicUsize::new(0);
    let in_use = || {
        let (free, all) = gpu.memory().unwrap();
        all - free
    };
    let start = (in_use(), rss());
    let samples = Mutex::new(Vec::<(usize, usize, usize)>::new());
    let t0 = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (gpu, done, samples) = (&gpu, &done, &samples);
            let in_use = &in_use;
            scope.spawn(move || {
                let s = gpu.stream().unwrap();
                let mut rng = SmallRng::seed_from_u64(0x50A4 + t as u64);
                loop {
                    let k = done.fetch_add(1, Ordering::Relaxed);
                    if k >= total {
                        break;
                    }
                    one(&s, &mut rng);
                    if k + 1 == WARM_UP.min(total) || (k + 1) % (total / 10).max(1) == 0 {
                        samples.lock().unwrap().push((k + 1, in_use(), rss()));
                    }
                }
            });
        }
    });
    let end = (in_use(), rss());
    let mut samples = samples.into_inner().unwrap();
    samples.sort();
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    let mut out = std::io::stderr();
    let _ = writeln!(out, "soak: {total} operations on {THREADS} threads in {:.1} s", t0.elapsed().as_secs_f64());
    let _ =
        writeln!(out, "  start:           device {:8.1} MiB in use, host RSS {:8.1} MiB", mib(start.0), mib(start.1));
    for (k, d, h) in &samples {
        let _ = writeln!(out, "  after {k:6} ops:  device {:8.1} MiB in use, host RSS {:8.1} MiB", mib(*d), mib(*h));
    }
    let _ = writeln!(out, "  end:             device {:8.1} MiB in use, host RSS {:8.1} MiB", mib(end.0), mib(end.1));
    let warm = samples.iter().find(|s| s.0 >= WARM_UP.min(total)).copied().unwrap_or((0, start.0, start.1));
    let (dd, dh) = (end.0 as i64 - warm.1 as i64, end.1 as i64 - warm.2 as i64);
    let _ = writeln!(
        out,
        "  growth since op {}: device {:+.1} MiB (bound {} MiB), host {:+.1} MiB (bound {} MiB)",
        warm.0,
        dd as f64 / (1 << 20) as f64,
        DEVICE_BOUND >> 20,
        dh as f64 / (1 << 20) as f64,
        HOST_BOUND >> 20
    );
    assert!(dd <= DEVICE_BOUND as i64, "device memory grew by {dd} bytes");
    assert!(dh <= HOST_BOUND as i64, "host memory grew by {dh} bytes");
}
