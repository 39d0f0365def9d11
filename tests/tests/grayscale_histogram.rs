//! Grayscale and histogram in one pass against the two CPU references in a row: every color
//! format, the usual sizes (odd widths, 1 pixel, tails of fewer than 16 pixels), random,
//! skewed and constant data (the histogram's run path), regions (the two-launch path), a
//! histogram that held another image's counts before (replaced, not added to), and the
//! errors.

use cuimg::{Bgr8, Bgra8, Color, Error, Gray8, GrayWeights, Image, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{SIZES, assert_same, poisoned, random, skewed, stream};

fn matches_cpu<P: Color>(seed: u64) {
    let Some(s) = stream() else { return };
    let mut hist = s.alloc_histogram(1).unwrap();
    for &(w, h) in SIZES {
        for (kind, img) in [
            ("random", random::<P>(w, h, seed + w as u64)),
            ("skewed", skewed::<P>(w, h, seed + h as u64)),
            ("constant", Image::<P>::filled(w, h, 91)),
        ] {
            let src = s.upload(&img.view()).unwrap();
            for weights in [GrayWeights::Bt601, GrayWeights::Bt709, GrayWeights::Custom { r: -0.75, g: 1.5, b: 0.4 }] {
                let what = format!("{} {w}x{h} {kind} {weights:?}", P::NAME);
                let mut dst = poisoned::<Gray8>(&s, w, h);
                // `hist` still holds the previous case's counts: they must be replaced.
                s.grayscale_histogram(&src, &mut dst, &mut hist, weights).unwrap();
                let (gray, counts) = cpu::grayscale_histogram(&img.view(), weights).unwrap();
                assert_same(&s.download(&dst).unwrap(), &gray, &what);
                assert_eq!(s.download_histogram(&hist).unwrap(), counts, "{what}");
            }
        }
    }
}

#[test]
fn rgb8_matches_cpu() {
    matches_cpu::<Rgb8>(1);
}

#[test]
fn bgr8_matches_cpu() {
    matches_cpu::<Bgr8>(2);
}

#[test]
fn rgba8_matches_cpu() {
    matches_cpu::<Rgba8>(3);
}

#[test]
fn bgra8_matches_cpu() {
    matches_cpu::<Bgra8>(4);
}

/// Regions in and out take the two-launch path: the same results, nothing written outside
/// the destination region.
#[test]
fn regions_match_cpu() {
    let Some(s) = stream() else { return };
    let big = random::<Rgb8>(301, 77, 9);
    let at = Rect::new(3, 5, 250, 60);
    let src = s.upload(&big.view()).unwrap();
    let (gray, counts) = cpu::grayscale_histogram(&big.roi(at).unwrap(), GrayWeights::Bt601).unwrap();
    let mut hist = s.alloc_histogram(1).unwrap();
    let to = Rect::new(1, 2, 250, 60);
    cuimg_tests::assert_writes_only_region(
        &s,
        (260, 70),
        to,
        &gray,
        |d| s.grayscale_histogram(&src.roi(at).unwrap(), d, &mut hist, GrayWeights::Bt601),
        "region",
    );
    assert_eq!(s.download_histogram(&hist).unwrap(), counts, "region histogram");
    let img = random::<Bgra8>(1283, 719, 5);
    let (g, h) = s.gpu().grayscale_histogram(&img.view(), GrayWeights::Bt709).unwrap();
    let (want_g, want_h) = cpu::grayscale_histogram(&img.view(), GrayWeights::Bt709).unwrap();
    assert_same(&g, &want_g, "blocking");
    assert_eq!(h, want_h, "blocking histogram");
}

#[test]
fn bad_inputs_are_typed_errors() {
    let empty = Image::<Rgb8>::new(0, 4);
    assert!(matches!(cpu::grayscale_histogram(&empty.view(), GrayWeights::Bt601), Err(Error::EmptyImage { .. })));
    let bad = GrayWeights::Custom { r: f32::NAN, g: 0.5, b: 0.5 };
    let img = random::<Rgb8>(8, 8, 1);
    assert!(cpu::grayscale_histogram(&img.view(), bad).is_err());
    let Some(s) = stream() else { return };
    let src = s.upload(&img.view()).unwrap();
    let mut dst = s.alloc::<Gray8>(8, 8).unwrap();
    let mut three = s.alloc_histogram(3).unwrap();
    let e = s.grayscale_histogram(&src, &mut dst, &mut three, GrayWeights::Bt601).unwrap_err();
    assert!(matches!(e, Error::WrongLength { expected: 1, actual: 3, .. }), "{e}");
    let mut hist = s.alloc_histogram(1).unwrap();
    let mut small = s.alloc::<Gray8>(8, 7).unwrap();
    let e = s.grayscale_histogram(&src, &mut small, &mut hist, GrayWeights::Bt601).unwrap_err();
    assert!(matches!(e, Error::DimensionMismatch { .. }), "{e}");
    assert!(s.grayscale_histogram(&src, &mut dst, &mut hist, bad).is_err());
}
