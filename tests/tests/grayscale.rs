//! Grayscale and black-and-white: GPU against the CPU reference, and both against OpenCV.

use cuimg::{Bgr8, Bgra8, Color, Gray8, GrayWeights, Image, PlanarView, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{
    SIZES, assert_same, assert_writes_only_region, color_photos, fnv1a, golden, poisoned, random, splitmix_bytes,
    stream, tiled,
};

const WEIGHTS: [GrayWeights; 5] = [
    GrayWeights::Bt601,
    GrayWeights::Bt709,
    GrayWeights::Average,
    GrayWeights::Custom { r: 0.5, g: 0.25, b: 0.3 },
    GrayWeights::Custom { r: -0.75, g: 1.5, b: 0.4 },
];

fn gray_matches_cpu<P: Color>(seed: u64) {
    let Some(s) = stream() else { return };
    for &(w, h) in SIZES {
        let img = random::<P>(w, h, seed + w as u64);
        let src = s.upload(&img.view()).unwrap();
        for weights in WEIGHTS {
            let mut dst = poisoned::<Gray8>(&s, w, h);
            s.grayscale(&src, &mut dst, weights).unwrap();
            let want = cpu::grayscale(&img.view(), weights).unwrap();
            assert_same(&s.download(&dst).unwrap(), &want, &format!("{} {w}x{h} {weights:?}", P::NAME));
        }
    }
}

#[test]
fn rgb8_matches_cpu() {
    gray_matches_cpu::<Rgb8>(1);
}

#[test]
fn bgr8_matches_cpu() {
    gray_matches_cpu::<Bgr8>(2);
}

#[test]
fn rgba8_matches_cpu() {
    gray_matches_cpu::<Rgba8>(3);
}

#[test]
fn bgra8_matches_cpu() {
    gray_matches_cpu::<Bgra8>(4);
}

fn bw_matches_cpu<P: Color>(seed: u64) {
    let Some(s) = stream() else { return };
    for &(w, h) in SIZES.iter().filter(|(w, _)| *w < 2000) {
        let img = random::<P>(w, h, seed);
        let src = s.upload(&img.view()).unwrap();
        let mut dst = poisoned::<P>(&s, w, h);
        s.black_and_white(&src, &mut dst, GrayWeights::Bt601).unwrap();
        let want = cpu::black_and_white(&img.view(), GrayWeights::Bt601).unwrap();
        assert_same(&s.download(&dst).unwrap(), &want, &format!("black and white {} {w}x{h}", P::NAME));
    }
}

#[test]
fn black_and_white_matches_cpu() {
    bw_matches_cpu::<Rgb8>(5);
    bw_matches_cpu::<Bgr8>(6);
    bw_matches_cpu::<Rgba8>(7);
    bw_matches_cpu::<Bgra8>(8);
}

#[test]
fn planar_matches_cpu() {
    let Some(s) = stream() else { return };
    for &(w, h) in SIZES {
        let chw = splitmix_bytes(w as u64 * 31 + h as u64, 3 * w as usize * h as usize);
        let view = PlanarView::from_chw(&chw, w, h).unwrap();
        for weights in WEIGHTS {
            let want = cpu::grayscale_planar(&view, weights).unwrap();
            assert_same(
                &s.gpu().grayscale_planar(&view, weights).unwrap(),
                &want,
                &format!("planar {w}x{h} {weights:?}"),
            );
        }
    }
}

#[test]
fn regions_of_interest_match_cpu() {
    let Some(s) = stream() else { return };
    let img = random::<Rgba8>(257, 131, 9);
    let src = s.upload(&img.view()).unwrap();
    let rects = [
        Rect::new(0, 0, 257, 131),
        Rect::new(1, 0, 255, 131),
        Rect::new(3, 5, 1, 1),
        Rect::new(16, 2, 16, 100),
        Rect::new(200, 130, 57, 1),
    ];
    for (i, r) in rects.into_iter().enumerate() {
        // Write into the middle of a bigger, poisoned destination; the rest must stay poison.
        let out_rect = Rect::new(7, 3, r.width, r.height);
        let want = cpu::grayscale(&img.roi(r).unwrap(), GrayWeights::Bt601).unwrap();
        let view = src.roi(r).unwrap();
        let write = |d: &mut cuimg::DeviceViewMut<'_, Gray8>| s.grayscale(&view, d, GrayWeights::Bt601);
        assert_writes_only_region(&s, (300, 140), out_rect, &want, write, &format!("roi {i} {r:?}"));
    }
}

#[test]
fn constant_images_stay_constant() {
    let Some(s) = stream() else { return };
    for v in [0u8, 1, 128, 254, 255] {
        let img = Image::<Rgb8>::filled(97, 33, v);
        for weights in [GrayWeights::Bt601, GrayWeights::Bt709, GrayWeights::Average] {
            let got = s.gpu().grayscale(&img.view(), weights).unwrap();
            assert!(got.pixels().iter().all(|p| p.0 == [v]), "{weights:?} of constant {v}");
        }
    }
}

#[test]
fn photos_match_cpu_and_opencv() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    for (name, photo) in color_photos() {
        let got = gpu.grayscale(&photo.view(), GrayWeights::Bt601).unwrap();
        assert_eq!(fnv1a(got.as_bytes()), golden(&format!("photo-gray-{name}")), "{name}: GPU vs OpenCV cvtColor");
        let big = tiled(&photo, 3840, 2160);
        for weights in WEIGHTS {
            let want = cpu::grayscale(&big.view(), weights).unwrap();
            assert_same(&gpu.grayscale(&big.view(), weights).unwrap(), &want, &format!("tiled {name} {weights:?}"));
        }
    }
}

/// OpenCV's cvtColor on the golden generator's random images, all four layouts.
#[test]
fn random_images_match_opencv() {
    let gpu = cuimg_tests::gpu();
    for (w, h) in [(1u32, 1u32), (7, 3), (64, 48), (333, 257), (1920, 1080)] {
        for c in [3usize, 4] {
            let bytes = splitmix_bytes(1000 + w as u64 * 7 + h as u64 + c as u64, w as usize * h as usize * c);
            let digests: Vec<(&str, Image<Gray8>)> = if c == 3 {
                let rgb = Image::<Rgb8>::from_bytes(w, h, &bytes).unwrap();
                let bgr = Image::<Bgr8>::from_bytes(w, h, &bytes).unwrap();
                let mut out = vec![
                    ("rgb", cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap()),
                    ("bgr", cpu::grayscale(&bgr.view(), GrayWeights::Bt601).unwrap()),
                ];
                if let Some(g) = &gpu {
                    out.push(("rgb", g.grayscale(&rgb.view(), GrayWeights::Bt601).unwrap()));
                    out.push(("bgr", g.grayscale(&bgr.view(), GrayWeights::Bt601).unwrap()));
                }
                out
            } else {
                let rgba = Image::<Rgba8>::from_bytes(w, h, &bytes).unwrap();
                let bgra = Image::<Bgra8>::from_bytes(w, h, &bytes).unwrap();
                let mut out = vec![
                    ("rgba", cpu::grayscale(&rgba.view(), GrayWeights::Bt601).unwrap()),
                    ("bgra", cpu::grayscale(&bgra.view(), GrayWeights::Bt601).unwrap()),
                ];
                if let Some(g) = &gpu {
                    out.push(("rgba", g.grayscale(&rgba.view(), GrayWeights::Bt601).unwrap()));
                    out.push(("bgra", g.grayscale(&bgra.view(), GrayWeights::Bt601).unwrap()));
                }
                out
            };
            for (name, img) in digests {
                assert_eq!(fnv1a(img.as_bytes()), golden(&format!("gray-{name}-{w}x{h}")), "{name} {w}x{h} vs OpenCV");
            }
        }
    }
}
