//! Every kernel, on small and odd sizes, regions and destination regions, several streams:
//! the set aimed at compute-sanitizer (memcheck, racecheck, synccheck, initcheck; the GPU
//! bundle runs every binary under them). Launches here are capped to a few blocks, so every
//! kernel's grid-stride loop goes round many times on images small enough for the
//! instrumented kernels. Each case still checks its result, so a clean sanitizer run is also
//! a correct one.

use cuimg::{Bgra8, EqualizeMode, Gray8, GrayWeights, Lut, PlanarView, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{assert_same, poisoned, random, skewed};

/// Every launch of this binary at most this many blocks: with the small images that the
/// instrumented kernels can afford, every grid-stride loop still goes round many times.
const GRID_CAP: u32 = 3;

fn capped() {
    cuimg::bench::GRID_CAP.store(GRID_CAP, std::sync::atomic::Ordering::Relaxed);
}

fn stream() -> Option<cuimg::Stream> {
    capped();
    cuimg_tests::stream()
}

fn gpu() -> Option<cuimg::Gpu> {
    capped();
    cuimg_tests::gpu()
}

/// The size that takes three capped blocks round their loops several times (61 KB of RGB).
const LOOPING: (u32, u32) = (203, 101);

const SMALL: &[(u32, u32)] = &[(1, 1), (3, 1), (1, 5), (13, 7), (17, 16), (33, 9)];

#[test]
fn grayscale_kernels() {
    let Some(s) = stream() else { return };
    for &(w, h) in SMALL {
        let rgb = random::<Rgb8>(w, h, 1);
        let bgra = random::<Bgra8>(w, h, 2);
        let g = s.gpu();
        assert_same(
            &g.grayscale(&rgb.view(), GrayWeights::Bt601).unwrap(),
            &cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap(),
            "c3",
        );
        assert_same(
            &g.grayscale(&bgra.view(), GrayWeights::Average).unwrap(),
            &cpu::grayscale(&bgra.view(), GrayWeights::Average).unwrap(),
            "c4",
        );
        assert_same(
            &g.black_and_white(&bgra.view(), GrayWeights::Bt709).unwrap(),
            &cpu::black_and_white(&bgra.view(), GrayWeights::Bt709).unwrap(),
            "bw",
        );
        let chw = cuimg_tests::splitmix_bytes(3, 3 * (w * h) as usize);
        let planar = PlanarView::from_chw(&chw, w, h).unwrap();
        assert_same(
            &g.grayscale_planar(&planar, GrayWeights::Bt601).unwrap(),
            &cpu::grayscale_planar(&planar, GrayWeights::Bt601).unwrap(),
            "planar",
        );
        let dev = s.upload(&rgb.view()).unwrap();
        let r = Rect::new(w / 3, h / 3, w - w / 3, h - h / 3);
        let mut out = poisoned::<Gray8>(&s, r.width, r.height);
        s.grayscale(&dev.roi(r).unwrap(), &mut out, GrayWeights::Bt601).unwrap();
        assert_same(
            &s.download(&out).unwrap(),
            &cpu::grayscale(&rgb.roi(r).unwrap(), GrayWeights::Bt601).unwrap(),
            "roi",
        );
    }
}

/// Grayscale with its histogram in one pass (the fused kernels' shared bins, vector stores,
/// scalar tails), and the two-launch path for regions.
#[test]
fn grayscale_histogram_kernels() {
    let Some(s) = stream() else { return };
    let mut hist = s.alloc_histogram(1).unwrap();
    for (w, h) in [(1, 1), (17, 3), (33, 9), LOOPING] {
        let rgb = random::<Rgb8>(w, h, 31);
        let rgba = skewed::<Bgra8>(w, h, 32);
        let (d3, d4) = (s.upload(&rgb.view()).unwrap(), s.upload(&rgba.view()).unwrap());
        let mut out = poisoned::<Gray8>(&s, w, h);
        s.grayscale_histogram(&d3, &mut out, &mut hist, GrayWeights::Bt601).unwrap();
        let (g, c) = cpu::grayscale_histogram(&rgb.view(), GrayWeights::Bt601).unwrap();
        assert_same(&s.download(&out).unwrap(), &g, "fused RGB");
        assert_eq!(s.download_histogram(&hist).unwrap(), c, "fused RGB histogram");
        s.grayscale_histogram(&d4, &mut out, &mut hist, GrayWeights::Bt709).unwrap();
        let (g, c) = cpu::grayscale_histogram(&rgba.view(), GrayWeights::Bt709).unwrap();
        assert_same(&s.download(&out).unwrap(), &g, "fused BGRA");
        assert_eq!(s.download_histogram(&hist).unwrap(), c, "fused BGRA histogram");
        if w > 2 {
            let r = Rect::new(1, 0, w - 2, h);
            let mut part = poisoned::<Gray8>(&s, w - 2, h);
            s.grayscale_histogram(&d3.roi(r).unwrap(), &mut part, &mut hist, GrayWeights::Bt601).unwrap();
            let (g, c) = cpu::grayscale_histogram(&rgb.roi(r).unwrap(), GrayWeights::Bt601).unwrap();
            assert_same(&s.download(&part).unwrap(), &g, "fused region");
            assert_eq!(s.download_histogram(&hist).unwrap(), c, "fused region histogram");
        }
    }
}

#[test]
fn histogram_and_lut_kernels() {
    let Some(s) = stream() else { return };
    for &(w, h) in SMALL {
        let gray = skewed::<Gray8>(w, h, 4);
        let rgba = random::<Rgba8>(w, h, 5);
        let rgb = random::<Rgb8>(w, h, 6);
        let g = s.gpu();
        assert_eq!(g.histogram(&gray.view()).unwrap(), cpu::histogram(&gray.view()).unwrap());
        assert_eq!(g.histogram(&rgb.view()).unwrap(), cpu::histogram(&rgb.view()).unwrap());
        assert_eq!(g.histogram(&rgba.view()).unwrap(), cpu::histogram(&rgba.view()).unwrap());
        for lut in [Lut::invert(), Lut::gamma(2.0)] {
            assert_same(
                &g.apply_lut(&gray.view(), &lut).unwrap(),
                &cpu::apply_lut(&gray.view(), &lut).unwrap(),
                "lut c1",
            );
            assert_same(
                &g.apply_lut(&rgb.view(), &lut).unwrap(),
                &cpu::apply_lut(&rgb.view(), &lut).unwrap(),
                "lut c3",
            );
            assert_same(
                &g.apply_lut(&rgba.view(), &lut).unwrap(),
                &cpu::apply_lut(&rgba.view(), &lut).unwrap(),
                "lut c4",
            );
        }
        let dev = s.upload(&rgba.view()).unwrap();
        let r = Rect::new(w / 2, 0, w - w / 2, h);
        let mut bins = s.alloc_histogram(4).unwrap();
        s.histogram(&dev.roi(r).unwrap(), &mut bins).unwrap();
        assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&rgba.roi(r).unwrap()).unwrap());
        let luts = s.upload_lut::<Rgba8>(&Lut::invert()).unwrap();
        let mut out = poisoned::<Rgba8>(&s, r.width, r.height);
        s.apply_lut(&dev.roi(r).unwrap(), &mut out, &luts).unwrap();
        assert_same(
            &s.download(&out).unwrap(),
            &cpu::apply_lut(&rgba.roi(r).unwrap(), &Lut::invert()).unwrap(),
            "lut roi",
        );
    }
}

#[test]
fn equalize_kernels() {
    let Some(s) = stream() else { return };
    for &(w, h) in SMALL {
        let gray = skewed::<Gray8>(w, h, 7);
        let rgb = skewed::<Rgb8>(w, h, 8);
        let g = s.gpu();
        assert_same(&g.equalize(&gray.view()).unwrap(), &cpu::equalize(&gray.view()).unwrap(), "gray");
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            assert_same(
                &g.equalize_color(&rgb.view(), mode).unwrap(),
                &cpu::equalize_color(&rgb.view(), mode).unwrap(),
                "color",
            );
        }
        let dev = s.upload(&gray.view()).unwrap();
        let r = Rect::new(0, h / 2, w, h - h / 2);
        let mut out = poisoned::<Gray8>(&s, r.width, r.height);
        s.equalize(&dev.roi(r).unwrap(), &mut out).unwrap();
        assert_same(&s.download(&out).unwrap(), &cpu::equalize(&gray.roi(r).unwrap()).unwrap(), "roi");
    }
}

#[test]
fn gather_kernels() {
    let Some(gpu) = gpu() else { return };
    for n in [1usize, 3, 4, 5, 17, 33] {
        let idx: Vec<u32> = (0..n as u32).map(|i| (i * 7) % n as u32).collect();
        let src8: Vec<u8> = (0..n as u8).collect();
        let src64: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let src3: Vec<[u8; 3]> = (0..n as u8).map(|i| [i, i, i]).collect();
        assert_eq!(gpu.gather(&src8, &idx).unwrap(), cpu::gather(&src8, &idx).unwrap());
        assert_eq!(gpu.gather(&src64, &idx).unwrap(), cpu::gather(&src64, &idx).unwrap());
        assert_eq!(gpu.gather(&src3, &idx).unwrap(), cpu::gather(&src3, &idx).unwrap());
        let mut bad = idx.clone();
        bad[n / 2] = n as u32;
        assert!(gpu.gather(&src64, &bad).is_err());
        assert!(gpu.gather(&src3, &bad).is_err());
    }
}

fn formats_histogram_lut<P: cuimg::Pixel>(s: &cuimg::Stream, seed: u64) {
    for &(w, h) in SMALL.iter().chain(&[LOOPING]) {
        let img = random::<P>(w, h, seed);
        let dev = s.upload(&img.view()).unwrap();
        let mut bins = s.alloc_histogram(P::CHANNELS).unwrap();
        s.histogram(&dev, &mut bins).unwrap();
        assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&img.view()).unwrap(), "{}", P::NAME);
        let r = Rect::new(w / 3, h / 3, w - w / 3, h - h / 3);
        s.histogram(&dev.roi(r).unwrap(), &mut bins).unwrap();
        assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&img.roi(r).unwrap()).unwrap());
        let luts = s.upload_lut::<P>(&Lut::gamma(1.7)).unwrap();
        let mut out = poisoned::<P>(s, w, h);
        s.apply_lut(&dev, &mut out, &luts).unwrap();
        assert_same(&s.download(&out).unwrap(), &cpu::apply_lut(&img.view(), &Lut::gamma(1.7)).unwrap(), P::NAME);
        let mut out = poisoned::<P>(s, r.width, r.height);
        s.apply_lut(&dev.roi(r).unwrap(), &mut out, &luts).unwrap();
        assert_same(
            &s.download(&out).unwrap(),
            &cpu::apply_lut(&img.roi(r).unwrap(), &Lut::gamma(1.7)).unwrap(),
            P::NAME,
        );
    }
}

fn formats_equalize_gray<P: cuimg::Gray>(s: &cuimg::Stream, seed: u64) {
    for &(w, h) in SMALL.iter().chain(&[LOOPING]) {
        let img = skewed::<P>(w, h, seed);
        assert_same(&s.gpu().equalize(&img.view()).unwrap(), &cpu::equalize(&img.view()).unwrap(), P::NAME);
    }
}

fn formats_color<P: cuimg::Color>(s: &cuimg::Stream, seed: u64) {
    for &(w, h) in SMALL.iter().chain(&[LOOPING]) {
        let img = skewed::<P>(w, h, seed);
        let g = s.gpu();
        for weights in [GrayWeights::Bt601, GrayWeights::Custom { r: 0.5, g: -0.25, b: 1.0 }] {
            assert_same(
                &g.grayscale(&img.view(), weights).unwrap(),
                &cpu::grayscale(&img.view(), weights).unwrap(),
                P::NAME,
            );
            assert_same(
                &g.black_and_white(&img.view(), weights).unwrap(),
                &cpu::black_and_white(&img.view(), weights).unwrap(),
                P::NAME,
            );
        }
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            assert_same(
                &g.equalize_color(&img.view(), mode).unwrap(),
                &cpu::equalize_color(&img.view(), mode).unwrap(),
                P::NAME,
            );
        }
    }
}

/// Every operation on every format it takes (including gray + alpha), whole and in regions,
/// with one size large enough that the grid-stride loops go round more than once.
#[test]
fn every_format_every_op() {
    let Some(s) = stream() else { return };
    formats_histogram_lut::<Gray8>(&s, 20);
    formats_histogram_lut::<cuimg::La8>(&s, 21);
    formats_histogram_lut::<Rgb8>(&s, 22);
    formats_histogram_lut::<cuimg::Bgr8>(&s, 23);
    formats_histogram_lut::<Rgba8>(&s, 24);
    formats_histogram_lut::<Bgra8>(&s, 25);
    formats_equalize_gray::<Gray8>(&s, 26);
    formats_equalize_gray::<cuimg::La8>(&s, 27);
    formats_color::<Rgb8>(&s, 28);
    formats_color::<cuimg::Bgr8>(&s, 29);
    formats_color::<Rgba8>(&s, 30);
    formats_color::<Bgra8>(&s, 31);
}

/// Every batch kernel once, on a small ragged batch (odd sizes, a 1x1 image, one large
/// enough to loop).
#[test]
fn batch_kernels() {
    let Some(s) = stream() else { return };
    let sizes = [(1u32, 1u32), (17, 3), (33, 9), LOOPING];
    let rgba: Vec<_> = sizes.iter().enumerate().map(|(i, &(w, h))| skewed::<Rgba8>(w, h, 40 + i as u64)).collect();
    let gray: Vec<_> = sizes.iter().enumerate().map(|(i, &(w, h))| skewed::<Gray8>(w, h, 50 + i as u64)).collect();
    let la: Vec<_> = sizes.iter().enumerate().map(|(i, &(w, h))| random::<cuimg::La8>(w, h, 60 + i as u64)).collect();
    let rv: Vec<_> = rgba.iter().map(|i| i.view()).collect();
    let gv: Vec<_> = gray.iter().map(|i| i.view()).collect();
    let lv: Vec<_> = la.iter().map(|i| i.view()).collect();
    let g = s.gpu();
    for (got, want) in g.grayscale_batch(&rv, GrayWeights::Bt601).unwrap().iter().zip(&rv) {
        assert_same(got, &cpu::grayscale(want, GrayWeights::Bt601).unwrap(), "gray batch");
    }
    for (got, want) in g.black_and_white_batch(&rv, GrayWeights::Bt709).unwrap().iter().zip(&rv) {
        assert_same(got, &cpu::black_and_white(want, GrayWeights::Bt709).unwrap(), "bw batch");
    }
    for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
        for (got, want) in g.equalize_color_batch(&rv, mode).unwrap().iter().zip(&rv) {
            assert_same(got, &cpu::equalize_color(want, mode).unwrap(), "color equalize batch");
        }
    }
    for (got, want) in g.equalize_batch(&gv).unwrap().iter().zip(&gv) {
        assert_same(got, &cpu::equalize(want).unwrap(), "gray equalize batch");
    }
    for (got, want) in g.equalize_batch(&lv).unwrap().iter().zip(&lv) {
        assert_same(got, &cpu::equalize(want).unwrap(), "gray + alpha equalize batch");
    }
    for (got, want) in g.histogram_batch(&rv).unwrap().iter().zip(&rv) {
        assert_eq!(*got, cpu::histogram(want).unwrap());
    }
    for (got, want) in g.apply_lut_batch(&lv, &Lut::invert()).unwrap().iter().zip(&lv) {
        assert_same(got, &cpu::apply_lut(want, &Lut::invert()).unwrap(), "LUT batch");
    }
    // In place, and through the pipeline (several streams at once).
    let mut dev = s.upload(&gv[3]).unwrap();
    s.equalize_in_place(&mut dev).unwrap();
    assert_same(&s.download(&dev).unwrap(), &cpu::equalize(&gv[3]).unwrap(), "in place");
    let mut n = 0;
    cuimg::Pipeline::new(g)
        .depth(3)
        .run(
            rgba.clone(),
            |s, a, b| s.grayscale(a, b, GrayWeights::Bt601),
            |i, r| {
                assert_same(&r.unwrap(), &cpu::grayscale(&rv[i], GrayWeights::Bt601).unwrap(), "pipeline");
                n += 1;
            },
        )
        .unwrap();
    assert_eq!(n, sizes.len());
}

/// Runs `op` into a region of a larger poisoned destination and checks the region against
/// `want` and every byte around it against what was there before.
fn into_region<P: cuimg::Pixel, Q: cuimg::Pixel>(
    s: &cuimg::Stream,
    src: &cuimg::Image<P>,
    op: impl Fn(&cuimg::DeviceImage<P>, &mut cuimg::DeviceViewMut<'_, Q>) -> cuimg::Result<()>,
    want: &cuimg::Image<Q>,
    what: &str,
) {
    let (w, h) = src.dimensions();
    let dev = s.upload(&src.view()).unwrap();
    cuimg_tests::assert_writes_only_region(s, (w + 5, h + 3), Rect::new(3, 2, w, h), want, |d| op(&dev, d), what);
}

/// Every operation that writes an image, into a region of a larger destination: the bytes
/// around the region stay as they were (grayscale had the only such check before).
#[test]
fn destination_regions_keep_the_bytes_around_them() {
    let Some(s) = stream() else { return };
    for (w, h) in [(1, 1), (13, 7), LOOPING] {
        let rgba = skewed::<Rgba8>(w, h, 70);
        let gray = skewed::<Gray8>(w, h, 71);
        let wt = GrayWeights::Bt709;
        into_region(&s, &rgba, |a, b| s.grayscale(a, b, wt), &cpu::grayscale(&rgba.view(), wt).unwrap(), "gray");
        into_region(
            &s,
            &rgba,
            |a, b| s.black_and_white(a, b, wt),
            &cpu::black_and_white(&rgba.view(), wt).unwrap(),
            "bw",
        );
        into_region(&s, &gray, |a, b| s.equalize(a, b), &cpu::equalize(&gray.view()).unwrap(), "equalize");
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            into_region(
                &s,
                &rgba,
                |a, b| s.equalize_color(a, b, mode),
                &cpu::equalize_color(&rgba.view(), mode).unwrap(),
                "equalize color",
            );
        }
        let luts = s.upload_lut::<Rgba8>(&Lut::gamma(0.6)).unwrap();
        into_region(
            &s,
            &rgba,
            |a, b| s.apply_lut(a, b, &luts),
            &cpu::apply_lut(&rgba.view(), &Lut::gamma(0.6)).unwrap(),
            "lut",
        );
    }
}

/// The gather kernels of every element size (1, 2, 3, 4, 8 and 16 bytes), at sizes whose
/// grid-stride loops go round several times.
#[test]
fn gather_every_element_size_looping() {
    let Some(gpu) = gpu() else { return };
    let n = 30_001usize;
    let idx: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) % n as u32).collect();
    let bytes = cuimg_tests::splitmix_bytes(80, n * 16);
    fn check<T: bytemuck::Pod>(gpu: &cuimg::Gpu, bytes: &[u8], n: usize, idx: &[u32]) {
        let src: Vec<T> = bytemuck::pod_collect_to_vec(&bytes[..n * size_of::<T>()]);
        // Compared as bytes: random bits make NaNs, which never equal themselves.
        let (got, want) = (gpu.gather(&src, idx).unwrap(), cpu::gather(&src, idx).unwrap());
        assert!(
            bytemuck::cast_slice::<T, u8>(&got) == bytemuck::cast_slice::<T, u8>(&want),
            "{}",
            std::any::type_name::<T>()
        );
    }
    check::<u8>(&gpu, &bytes, n, &idx);
    check::<u16>(&gpu, &bytes, n, &idx);
    check::<[u8; 3]>(&gpu, &bytes, n, &idx);
    check::<u32>(&gpu, &bytes, n, &idx);
    check::<f64>(&gpu, &bytes, n, &idx);
    check::<[u32; 4]>(&gpu, &bytes, n, &idx);
}

/// Several streams at once, each its own chain of kernels over shared read-only inputs, all
/// queued before any result is read. One host thread queues them: racecheck 2025.3 once lost
/// track of a launch ("Internal Sanitizer Error") with four threads launching at once, and
/// tests/tests/concurrent.rs covers many threads.
#[test]
fn several_streams_at_once() {
    let Some(gpu) = gpu() else { return };
    let img = random::<Rgb8>(LOOPING.0, LOOPING.1, 90);
    let want = cpu::equalize(&cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap().view()).unwrap();
    let shared = gpu.stream().unwrap().upload(&img.view()).unwrap();
    let streams: Vec<_> = (0..4).map(|_| gpu.stream().unwrap()).collect();
    for _ in 0..3 {
        let outs: Vec<_> = streams
            .iter()
            .map(|s| {
                let mut g = poisoned::<Gray8>(s, LOOPING.0, LOOPING.1);
                s.grayscale(&shared, &mut g, GrayWeights::Bt601).unwrap();
                s.equalize_in_place(&mut g).unwrap();
                g
            })
            .collect();
        for (s, g) in streams.iter().zip(&outs) {
            assert_same(&s.download(g).unwrap(), &want, "a stream of four");
        }
    }
}

/// CLAHE's kernels (the split tile tables: per-warp shared histograms, the global sums and
/// the last block's scan; the bilinear apply) on sizes that do and do not divide the grid,
/// regions in and out; color per channel and on luma; ragged gray and color batches.
#[test]
fn clahe_kernels() {
    let Some(s) = stream() else { return };
    for (w, h, grid) in [(1, 1, (1, 1)), (7, 3, (3, 3)), (33, 9, (4, 2)), (LOOPING.0, LOOPING.1, (8, 8))] {
        let img = random::<Gray8>(w + 2, h + 1, 95);
        let r = Rect::new(1, 1, w, h);
        let p = cuimg::Clahe::new(2.0, grid).unwrap();
        let dev = s.upload(&img.view()).unwrap();
        let mut out = poisoned::<Gray8>(&s, w, h);
        s.clahe(&dev.roi(r).unwrap(), &mut out, p).unwrap();
        assert_same(&s.download(&out).unwrap(), &cpu::clahe(&img.roi(r).unwrap(), p).unwrap(), "clahe");
        let rgba = random::<cuimg::Rgba8>(w, h, 96);
        let dev = s.upload(&rgba.view()).unwrap();
        for mode in [cuimg::EqualizeMode::PerChannel, cuimg::EqualizeMode::Luma] {
            let mut out = poisoned::<cuimg::Rgba8>(&s, w, h);
            s.clahe_color(&dev, &mut out, p, mode).unwrap();
            let want = cpu::clahe_color(&rgba.view(), p, mode).unwrap();
            assert_same(&s.download(&out).unwrap(), &want, "clahe color");
        }
    }
    let images: Vec<cuimg::Image<Gray8>> =
        [(1, 1), (9, 7), (LOOPING.0, LOOPING.1)].iter().map(|&(w, h)| random(w, h, 97)).collect();
    let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    let src = s.upload_batch(&views).unwrap();
    let mut dst = s.alloc_batch::<Gray8>(&src.sizes()).unwrap();
    let p = cuimg::Clahe::new(2.0, (1, 1)).unwrap();
    s.clahe_batch(&src, &mut dst, p).unwrap();
    for (got, img) in s.download_batch(&dst).unwrap().iter().zip(&images) {
        assert_same(got, &cpu::clahe(&img.view(), p).unwrap(), "clahe batch");
    }
    let images: Vec<cuimg::Image<cuimg::Rgba8>> =
        [(1, 1), (9, 7), (LOOPING.0, LOOPING.1)].iter().map(|&(w, h)| random(w, h, 98)).collect();
    let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    let src = s.upload_batch(&views).unwrap();
    for mode in [cuimg::EqualizeMode::PerChannel, cuimg::EqualizeMode::Luma] {
        let mut dst = s.alloc_batch::<cuimg::Rgba8>(&src.sizes()).unwrap();
        s.clahe_color_batch(&src, &mut dst, p, mode).unwrap();
        for (got, img) in s.download_batch(&dst).unwrap().iter().zip(&images) {
            assert_same(got, &cpu::clahe_color(&img.view(), p, mode).unwrap(), "clahe color batch");
        }
    }
}
