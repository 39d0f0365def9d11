//! Every format through every operation that takes it, GPU against the CPU reference, with
//! poisoned outputs, on whole images and on regions. `La8` (gray + alpha) is the format
//! added when the pixel traits were sealed: before, a two-channel type of the user's own
//! reached the four-channel kernels.

use cuimg::{Bgr8, Bgra8, EqualizeMode, Gray, Gray8, La8, Lut, Pixel, Rect, Rgb8, Rgba8, Stream, cpu};
use cuimg_tests::{SIZES, assert_same, gray_photo, poisoned, random, skewed, stream};

/// A region that starts off the 16-byte grid and leaves a margin on every side.
fn inner(w: u32, h: u32) -> Rect {
    Rect::new(w / 3, h / 4, w - w / 3 - w / 5, h - h / 4 - h / 6)
}

fn histogram_and_lut<P: Pixel>(s: &Stream, seed: u64) {
    for &(w, h) in SIZES {
        for (kind, img) in [("random", random::<P>(w, h, seed)), ("skewed", skewed::<P>(w, h, seed))] {
            let what = format!("{} {kind} {w}x{h}", P::NAME);
            let dev = s.upload(&img.view()).unwrap();
            let mut bins = s.alloc_histogram(P::CHANNELS).unwrap();
            s.histogram(&dev, &mut bins).unwrap();
            assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&img.view()).unwrap(), "{what}");

            let luts: Vec<Lut> =
                (0..P::CHANNELS).map(|c| Lut::from_fn(|v| v.wrapping_mul(7).wrapping_add(c as u8 * 40))).collect();
            let d_luts = s.upload_luts(&luts).unwrap();
            let mut out = poisoned::<P>(s, w, h);
            s.apply_lut(&dev, &mut out, &d_luts).unwrap();
            assert_same(&s.download(&out).unwrap(), &cpu::apply_luts(&img.view(), &luts).unwrap(), &what);

            let r = inner(w, h);
            if r.width == 0 || r.height == 0 {
                continue;
            }
            let roi = dev.roi(r).unwrap();
            s.histogram(&roi, &mut bins).unwrap();
            let want = cpu::histogram(&img.roi(r).unwrap()).unwrap();
            assert_eq!(s.download_histogram(&bins).unwrap(), want, "{what} region");
            // Into a region of a larger poisoned image: the bytes around it stay as they were.
            let mut big = poisoned::<P>(s, w, h);
            let before = s.download(&big).unwrap();
            s.apply_lut(&roi, &mut big.roi_mut(r).unwrap(), &d_luts).unwrap();
            let mut want = before.clone();
            want.view_mut()
                .roi(r)
                .unwrap()
                .copy_from(&cpu::apply_luts(&img.roi(r).unwrap(), &luts).unwrap().view())
                .unwrap();
            assert_same(&s.download(&big).unwrap(), &want, &format!("{what} region, margins kept"));
        }
    }
}

fn equalize_gray<P: Gray>(s: &Stream, seed: u64) {
    for &(w, h) in SIZES {
        let img = skewed::<P>(w, h, seed);
        let what = format!("{} {w}x{h}", P::NAME);
        let dev = s.upload(&img.view()).unwrap();
        let mut out = poisoned::<P>(s, w, h);
        s.equalize(&dev, &mut out).unwrap();
        assert_same(&s.download(&out).unwrap(), &cpu::equalize(&img.view()).unwrap(), &what);
        assert_same(&s.gpu().equalize(&img.view()).unwrap(), &cpu::equalize(&img.view()).unwrap(), &what);
        let r = inner(w, h);
        if r.width > 0 && r.height > 0 {
            let mut out = poisoned::<P>(s, r.width, r.height);
            s.equalize(&dev.roi(r).unwrap(), &mut out).unwrap();
            assert_same(&s.download(&out).unwrap(), &cpu::equalize(&img.roi(r).unwrap()).unwrap(), &what);
        }
    }
}

fn equalize_color<P: cuimg::Color>(s: &Stream, seed: u64) {
    for &(w, h) in SIZES {
        let img = skewed::<P>(w, h, seed);
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            let what = format!("{} {mode:?} {w}x{h}", P::NAME);
            let dev = s.upload(&img.view()).unwrap();
            let mut out = poisoned::<P>(s, w, h);
            s.equalize_color(&dev, &mut out, mode).unwrap();
            assert_same(&s.download(&out).unwrap(), &cpu::equalize_color(&img.view(), mode).unwrap(), &what);
        }
    }
}

#[test]
fn every_format_histogram_and_lut() {
    let Some(s) = stream() else { return };
    histogram_and_lut::<Gray8>(&s, 1);
    histogram_and_lut::<La8>(&s, 2);
    histogram_and_lut::<Rgb8>(&s, 3);
    histogram_and_lut::<Bgr8>(&s, 4);
    histogram_and_lut::<Rgba8>(&s, 5);
    histogram_and_lut::<Bgra8>(&s, 6);
}

#[test]
fn gray_formats_equalize_and_keep_alpha() {
    let Some(s) = stream() else { return };
    equalize_gray::<Gray8>(&s, 7);
    equalize_gray::<La8>(&s, 8);
    // Alpha is not data: it passes through unchanged.
    let img = random::<La8>(333, 257, 9);
    let out = s.gpu().equalize(&img.view()).unwrap();
    assert!(out.pixels().iter().zip(img.pixels()).all(|(o, i)| o.0[1] == i.0[1]), "alpha changed");
}

#[test]
fn gray_alpha_photo_matches_cpu() {
    let Some(s) = stream() else { return };
    let gray = gray_photo();
    let la = cuimg::Image::from_fn(gray.width(), gray.height(), |x, y| La8([gray.get(x, y).0[0], (x ^ y) as u8]));
    let g = s.gpu();
    assert_eq!(g.histogram(&la.view()).unwrap(), cpu::histogram(&la.view()).unwrap());
    assert_same(&g.equalize(&la.view()).unwrap(), &cpu::equalize(&la.view()).unwrap(), "La8 photo");
    assert_same(
        &g.apply_lut(&la.view(), &Lut::gamma(2.2)).unwrap(),
        &cpu::apply_lut(&la.view(), &Lut::gamma(2.2)).unwrap(),
        "La8 photo LUT",
    );
    // The gray channel equalizes exactly as a Gray8 image does.
    let eq = cpu::equalize(&gray.view()).unwrap();
    let la_eq = g.equalize(&la.view()).unwrap();
    assert!(la_eq.pixels().iter().zip(eq.pixels()).all(|(a, b)| a.0[0] == b.0[0]));
}

#[test]
fn every_color_format_equalizes() {
    let Some(s) = stream() else { return };
    equalize_color::<Rgb8>(&s, 10);
    equalize_color::<Bgr8>(&s, 11);
    equalize_color::<Rgba8>(&s, 12);
    equalize_color::<Bgra8>(&s, 13);
}

/// CPU only (runs in CI): gray + alpha through the references, and a file round trip.
#[test]
fn gray_alpha_on_the_cpu() {
    let img = cuimg::Image::<La8>::from_bytes(3, 1, &[10, 1, 20, 2, 30, 3]).unwrap();
    assert_eq!(cpu::equalize(&img.view()).unwrap().as_bytes(), &[0, 1, 128, 2, 255, 3]);
    let h = cpu::histogram(&img.view()).unwrap();
    assert_eq!((h.channels(), h.channel(0)[20], h.channel(1)[3]), (2, 1, 1));
    let path = std::env::temp_dir().join(format!("cuimg-la8-{}.png", std::process::id()));
    cuimg::io::save(&img, &path).unwrap();
    assert_eq!(cuimg::io::load_gray_alpha(&path).unwrap(), img);
    let _ = std::fs::remove_file(path);
}
