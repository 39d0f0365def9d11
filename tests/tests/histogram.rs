//! Histograms: GPU against the CPU reference on random, skewed, constant and real images.

use cuimg::{Bgr8, Gray8, Image, Pixel, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{SIZES, color_photos, gray_photo, random, skewed, stream, tiled};

fn check<P: Pixel>(s: &cuimg::Stream, img: &Image<P>, what: &str) {
    let src = s.upload(&img.view()).unwrap();
    let mut bins = s.alloc_histogram(P::CHANNELS).unwrap();
    // Bins left from an earlier image must not leak into this one.
    s.histogram(&s.upload(&random::<P>(3, 3, 77).view()).unwrap(), &mut bins).unwrap();
    s.histogram(&src, &mut bins).unwrap();
    let got = s.download_histogram(&bins).unwrap();
    let want = cpu::histogram(&img.view()).unwrap();
    for c in 0..P::CHANNELS {
        assert_eq!(got.total(c), img.width() as u64 * img.height() as u64, "{what}: channel {c} total");
        if got.channel(c) != want.channel(c) {
            let bin = (0..256).find(|&b| got.channel(c)[b] != want.channel(c)[b]).unwrap();
            panic!("{what}: channel {c} bin {bin}: got {}, want {}", got.channel(c)[bin], want.channel(c)[bin]);
        }
    }
}

fn all_sizes<P: Pixel>(seed: u64) {
    let Some(s) = stream() else { return };
    for &(w, h) in SIZES {
        check(&s, &random::<P>(w, h, seed), &format!("{} random {w}x{h}", P::NAME));
        check(&s, &skewed::<P>(w, h, seed), &format!("{} skewed {w}x{h}", P::NAME));
    }
}

#[test]
fn gray_matches_cpu() {
    all_sizes::<Gray8>(11);
}

#[test]
fn rgb_matches_cpu() {
    all_sizes::<Rgb8>(12);
    all_sizes::<Bgr8>(13);
}

#[test]
fn rgba_matches_cpu() {
    all_sizes::<Rgba8>(14);
}

/// Every pixel the same: all atomics hit one bin, the kernels' worst case.
#[test]
fn constant_images_count_every_pixel() {
    let Some(s) = stream() else { return };
    for v in [0u8, 1, 200, 255] {
        for &(w, h) in &[(1u32, 1u32), (17, 1), (1000, 999), (4096, 4096)] {
            check(&s, &Image::<Gray8>::filled(w, h, v), &format!("gray constant {v} {w}x{h}"));
            check(&s, &Image::<Rgba8>::filled(w, h, v), &format!("rgba constant {v} {w}x{h}"));
        }
    }
}

#[test]
fn photos_match_cpu() {
    let Some(s) = stream() else { return };
    for (name, photo) in color_photos() {
        check(&s, &photo, name);
        check(&s, &tiled(&photo, 3840, 2160), &format!("{name} tiled to 4K"));
    }
    check(&s, &gray_photo(), "camera");
}

#[test]
fn regions_of_interest_match_cpu() {
    let Some(s) = stream() else { return };
    let img = random::<Rgb8>(301, 203, 15);
    let src = s.upload(&img.view()).unwrap();
    for r in [Rect::new(1, 1, 299, 201), Rect::new(0, 100, 301, 3), Rect::new(300, 0, 1, 203), Rect::new(5, 7, 16, 16)]
    {
        let mut bins = s.alloc_histogram(3).unwrap();
        s.histogram(&src.roi(r).unwrap(), &mut bins).unwrap();
        assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&img.roi(r).unwrap()).unwrap(), "roi {r:?}");
    }
}
