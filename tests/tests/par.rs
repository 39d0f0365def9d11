//! `cuimg::par` (all cores) against `cuimg::cpu` (the serial oracle): the same bytes and the
//! same errors, on every format, the usual sizes (odd widths, 1 pixel, more rows than bands),
//! random and skewed data, and regions.

use cuimg::{Bgra8, EqualizeMode, Error, Gray8, GrayWeights, Image, La8, Lut, Rect, Rgb8, cpu, par};
use cuimg_tests::{SIZES, assert_same, random, skewed};

#[test]
fn pointwise_ops_match_the_oracle() {
    for &(w, h) in SIZES {
        let rgb: Image<Rgb8> = random(w, h, u64::from(w) ^ 7);
        let bgra: Image<Bgra8> = skewed(w, h, u64::from(h));
        for weights in [GrayWeights::Bt601, GrayWeights::Bt709, GrayWeights::Average] {
            let what = format!("grayscale {w}x{h} {weights:?}");
            assert_same(
                &par::grayscale(&rgb.view(), weights).unwrap(),
                &cpu::grayscale(&rgb.view(), weights).unwrap(),
                &what,
            );
            assert_same(
                &par::black_and_white(&bgra.view(), weights).unwrap(),
                &cpu::black_and_white(&bgra.view(), weights).unwrap(),
                &format!("black and white {w}x{h}"),
            );
        }
        let luts = [Lut::gamma(0.7), Lut::invert(), Lut::threshold(99), Lut::identity()];
        assert_same(
            &par::apply_luts(&bgra.view(), &luts).unwrap(),
            &cpu::apply_luts(&bgra.view(), &luts).unwrap(),
            "luts",
        );
        assert_same(
            &par::apply_lut(&rgb.view(), &luts[0]).unwrap(),
            &cpu::apply_lut(&rgb.view(), &luts[0]).unwrap(),
            "lut",
        );
    }
}

#[test]
fn histograms_and_equalization_match_the_oracle() {
    for &(w, h) in SIZES {
        let gray: Image<Gray8> = skewed(w, h, 3);
        let la: Image<La8> = random(w, h, 4);
        let rgb: Image<Rgb8> = skewed(w, h, 5);
        assert_eq!(par::histogram(&rgb.view()).unwrap(), cpu::histogram(&rgb.view()).unwrap(), "{w}x{h}");
        assert_eq!(par::histogram(&la.view()).unwrap(), cpu::histogram(&la.view()).unwrap(), "{w}x{h}");
        assert_same(&par::equalize(&gray.view()).unwrap(), &cpu::equalize(&gray.view()).unwrap(), "equalize");
        assert_same(&par::equalize(&la.view()).unwrap(), &cpu::equalize(&la.view()).unwrap(), "equalize la");
        for mode in [EqualizeMode::Luma, EqualizeMode::PerChannel] {
            assert_same(
                &par::equalize_color(&rgb.view(), mode).unwrap(),
                &cpu::equalize_color(&rgb.view(), mode).unwrap(),
                &format!("equalize_color {w}x{h} {mode:?}"),
            );
        }
    }
}

#[test]
fn regions_match_the_oracle() {
    let rgb: Image<Rgb8> = random(301, 203, 11);
    let roi = rgb.roi(Rect::new(17, 9, 255, 150)).unwrap();
    assert_same(
        &par::grayscale(&roi, GrayWeights::Bt601).unwrap(),
        &cpu::grayscale(&roi, GrayWeights::Bt601).unwrap(),
        "roi",
    );
    assert_same(
        &par::equalize_color(&roi, EqualizeMode::Luma).unwrap(),
        &cpu::equalize_color(&roi, EqualizeMode::Luma).unwrap(),
        "roi luma",
    );
}

#[test]
fn gather_matches_the_oracle_and_names_the_same_first_bad_index() {
    let src: Vec<f32> = (0..10_000).map(|i| i as f32 * 0.5).collect();
    let idx: Vec<u32> = (0..1_000_003u32).map(|i| i.wrapping_mul(2_654_435_761) % 10_000).collect();
    assert_eq!(par::gather(&src, &idx).unwrap(), cpu::gather(&src, &idx).unwrap());
    let mut bad = idx.clone();
    bad[700_001] = 10_000;
    bad[900_000] = 99_999;
    let (a, b) = (par::gather(&src, &bad).unwrap_err(), cpu::gather(&src, &bad).unwrap_err());
    assert!(matches!(a, Error::IndexOutOfRange { position: 700_001, index: 10_000, len: 10_000 }), "{a}");
    assert_eq!(a.to_string(), b.to_string());
}

#[test]
fn errors_are_the_oracles() {
    let empty = Image::<Rgb8>::new(0, 7);
    let e = |r: cuimg::Result<Image<Gray8>>| r.unwrap_err().to_string();
    assert_eq!(
        e(par::grayscale(&empty.view(), GrayWeights::Bt601)),
        e(cpu::grayscale(&empty.view(), GrayWeights::Bt601))
    );
    let img: Image<Rgb8> = random(64, 200, 1);
    let bad = GrayWeights::Custom { r: f32::NAN, g: 0.5, b: 0.5 };
    assert_eq!(e(par::grayscale(&img.view(), bad)), e(cpu::grayscale(&img.view(), bad)));
    assert!(par::histogram(&empty.view()).is_err());
    assert!(matches!(par::equalize(&Image::<Gray8>::new(3, 0).view()), Err(Error::EmptyImage { .. })));
}

/// CLAHE on all cores (tables per tile at once, bands of rows at once) equals the serial
/// reference, gray and color, on the usual sizes, grids that do and do not divide them, and
/// regions; its errors are the reference's.
#[test]
fn clahe_matches_the_oracle() {
    for &(w, h) in SIZES {
        let gray: Image<Gray8> = random(w, h, u64::from(w) * 3 + 1);
        let rgb: Image<Rgb8> = skewed(w, h, u64::from(h) + 5);
        for (clip, grid) in [(2.0, (8, 8)), (0.5, (3, 5)), (40.0, (1, 1))] {
            let grid = (grid.0.min(w.max(1)), grid.1.min(h.max(1)));
            let p = cuimg::Clahe::new(clip, grid).unwrap();
            let what = format!("clahe {w}x{h} {grid:?} clip {clip}");
            let (a, b) = (par::clahe(&gray.view(), p), cpu::clahe(&gray.view(), p));
            match (a, b) {
                (Ok(a), Ok(b)) => assert_same(&a, &b, &what),
                (a, b) => assert_eq!(a.unwrap_err().to_string(), b.unwrap_err().to_string(), "{what}"),
            }
            for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
                let (a, b) = (par::clahe_color(&rgb.view(), p, mode), cpu::clahe_color(&rgb.view(), p, mode));
                match (a, b) {
                    (Ok(a), Ok(b)) => assert_same(&a, &b, &format!("{what} {mode:?}")),
                    (a, b) => assert_eq!(a.unwrap_err().to_string(), b.unwrap_err().to_string(), "{what}"),
                }
            }
        }
    }
    let big: Image<Gray8> = random(301, 203, 9);
    let at = Rect::new(7, 3, 250, 190);
    let p = cuimg::Clahe::new(3.0, (7, 6)).unwrap();
    assert_same(
        &par::clahe(&big.roi(at).unwrap(), p).unwrap(),
        &cpu::clahe(&big.roi(at).unwrap(), p).unwrap(),
        "clahe region",
    );
    let tiny: Image<Gray8> = random(3, 3, 2);
    assert_eq!(
        par::clahe(&tiny.view(), cuimg::Clahe::default()).unwrap_err().to_string(),
        cpu::clahe(&tiny.view(), cuimg::Clahe::default()).unwrap_err().to_string()
    );
}
