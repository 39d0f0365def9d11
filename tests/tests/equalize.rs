//! Equalization on the device: GPU against the CPU reference, and both against OpenCV.

use cuimg::{Bgr8, Bgra8, Color, EqualizeMode, Gray8, Image, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{
    SIZES, assert_same, color_photos, fnv1a, golden, gray_photo, poisoned, random, skewed, splitmix_bytes, stream,
    tiled,
};

#[test]
fn gray_matches_cpu() {
    let Some(s) = stream() else { return };
    for &(w, h) in SIZES {
        for (kind, img) in [("random", random::<Gray8>(w, h, 21)), ("skewed", skewed::<Gray8>(w, h, 22))] {
            let src = s.upload(&img.view()).unwrap();
            let mut dst = poisoned::<Gray8>(&s, w, h);
            s.equalize(&src, &mut dst).unwrap();
            assert_same(&s.download(&dst).unwrap(), &cpu::equalize(&img.view()).unwrap(), &format!("{kind} {w}x{h}"));
        }
    }
}

/// The CPU reference (and, with a GPU, the kernels) against OpenCV's equalizeHist.
#[test]
fn matches_opencv() {
    let gpu = cuimg_tests::gpu();
    let mut cases: Vec<(String, Image<Gray8>)> = Vec::new();
    for (w, h) in [(1u32, 1u32), (7, 3), (64, 48), (333, 257), (1920, 1080)] {
        let g = Image::<Gray8>::from_bytes(w, h, &splitmix_bytes(2000 + w as u64 + h as u64, w as usize * h as usize))
            .unwrap();
        let mut skew = g.clone();
        skew.as_bytes_mut().iter_mut().for_each(|b| *b = *b % 37 + 100);
        cases.push((format!("equalize-uniform-{w}x{h}"), g));
        cases.push((format!("equalize-skewed-{w}x{h}"), skew));
    }
    for v in [0u8, 77, 255] {
        cases.push((format!("equalize-constant{v}-33x17"), Image::filled(33, 17, v)));
    }
    for (name, photo) in color_photos() {
        let gray = cpu::grayscale(&photo.view(), cuimg::GrayWeights::Bt601).unwrap();
        cases.push((format!("photo-equalize-{name}"), gray));
    }
    cases.push(("photo-equalize-camera".into(), gray_photo()));
    for (case, img) in &cases {
        assert_eq!(
            fnv1a(cpu::equalize(&img.view()).unwrap().as_bytes()),
            golden(case),
            "CPU reference vs OpenCV: {case}"
        );
        if let Some(g) = &gpu {
            assert_eq!(fnv1a(g.equalize(&img.view()).unwrap().as_bytes()), golden(case), "GPU vs OpenCV: {case}");
        }
    }
}

#[test]
fn constant_and_two_valued_images() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    for v in [0u8, 9, 255] {
        let img = Image::<Gray8>::filled(1000, 1000, v);
        assert_same(&gpu.equalize(&img.view()).unwrap(), &img, &format!("constant {v}"));
    }
    let two = Image::from_fn(64, 64, |x, _| Gray8([if x < 10 { 40 } else { 41 }]));
    assert_same(&gpu.equalize(&two.view()).unwrap(), &cpu::equalize(&two.view()).unwrap(), "two values");
}

fn color_matches_cpu<P: Color>(seed: u64) {
    let Some(s) = stream() else { return };
    for &(w, h) in SIZES {
        let img = skewed::<P>(w, h, seed);
        let src = s.upload(&img.view()).unwrap();
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            let mut dst = poisoned::<P>(&s, w, h);
            s.equalize_color(&src, &mut dst, mode).unwrap();
            let want = cpu::equalize_color(&img.view(), mode).unwrap();
            assert_same(&s.download(&dst).unwrap(), &want, &format!("{} {mode:?} {w}x{h}", P::NAME));
        }
    }
}

#[test]
fn color_matches_cpu_rgb() {
    color_matches_cpu::<Rgb8>(23);
    // The contiguous kernels take the weights in byte order: BGR must not read as RGB.
    color_matches_cpu::<Bgr8>(27);
}

#[test]
fn color_matches_cpu_rgba() {
    color_matches_cpu::<Rgba8>(24);
    color_matches_cpu::<Bgra8>(25);
}

#[test]
fn alpha_is_kept() {
    let img = random::<Rgba8>(50, 40, 26);
    for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
        let mut outs = vec![cpu::equalize_color(&img.view(), mode).unwrap()];
        if let Some(gpu) = cuimg_tests::gpu() {
            outs.push(gpu.equalize_color(&img.view(), mode).unwrap());
        }
        for out in outs {
            assert!(out.pixels().iter().zip(img.pixels()).all(|(a, b)| a.0[3] == b.0[3]), "{mode:?} changed alpha");
            assert!(
                out.pixels().iter().zip(img.pixels()).any(|(a, b)| a.0[..3] != b.0[..3]),
                "{mode:?} changed no color"
            );
        }
    }
}

#[test]
fn photos_and_regions_match_cpu() {
    let Some(s) = stream() else { return };
    for (name, photo) in color_photos() {
        let big = tiled(&photo, 1920, 1080);
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            assert_same(
                &s.gpu().equalize_color(&big.view(), mode).unwrap(),
                &cpu::equalize_color(&big.view(), mode).unwrap(),
                &format!("{name} {mode:?}"),
            );
        }
        let src = s.upload(&photo.view()).unwrap();
        let r = Rect::new(13, 17, 201, 99);
        let mut dst = poisoned::<Rgb8>(&s, r.width, r.height);
        s.equalize_color(&src.roi(r).unwrap(), &mut dst, EqualizeMode::Luma).unwrap();
        assert_same(
            &s.download(&dst).unwrap(),
            &cpu::equalize_color(&photo.roi(r).unwrap(), EqualizeMode::Luma).unwrap(),
            &format!("{name} roi"),
        );
    }
    let camera = gray_photo();
    let src = s.upload(&camera.view()).unwrap();
    let r = Rect::new(100, 50, 301, 207);
    let mut dst = poisoned::<Gray8>(&s, r.width, r.height);
    s.equalize(&src.roi(r).unwrap(), &mut dst).unwrap();
    assert_same(&s.download(&dst).unwrap(), &cpu::equalize(&camera.roi(r).unwrap()).unwrap(), "camera roi");
}
