//! Lookup tables: GPU against the CPU reference.

use cuimg::{Gray8, Lut, Pixel, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{SIZES, assert_same, color_photos, poisoned, random, stream};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn random_lut(seed: u64) -> Lut {
    let mut rng = SmallRng::seed_from_u64(seed);
    Lut::from_fn(|_| rng.random())
}

fn check<P: Pixel>(seed: u64) {
    let Some(s) = stream() else { return };
    for &(w, h) in SIZES {
        let img = random::<P>(w, h, seed);
        let src = s.upload(&img.view()).unwrap();
        let luts: Vec<Lut> = (0..P::CHANNELS as u64).map(|c| random_lut(seed * 10 + c)).collect();
        let d_luts = s.upload_luts(&luts).unwrap();
        let mut dst = poisoned::<P>(&s, w, h);
        s.apply_lut(&src, &mut dst, &d_luts).unwrap();
        assert_same(
            &s.download(&dst).unwrap(),
            &cpu::apply_luts(&img.view(), &luts).unwrap(),
            &format!("{} {w}x{h}", P::NAME),
        );
    }
}

#[test]
fn gray_matches_cpu() {
    check::<Gray8>(31);
}

#[test]
fn rgb_matches_cpu() {
    check::<Rgb8>(32);
}

#[test]
fn rgba_matches_cpu() {
    check::<Rgba8>(33);
}

#[test]
fn named_tables_on_photos() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    for (name, photo) in color_photos() {
        for lut in [Lut::identity(), Lut::invert(), Lut::gamma(2.2), Lut::threshold(128)] {
            assert_same(
                &gpu.apply_lut(&photo.view(), &lut).unwrap(),
                &cpu::apply_lut(&photo.view(), &lut).unwrap(),
                name,
            );
        }
    }
}

#[test]
fn regions_of_interest_match_cpu() {
    let Some(s) = stream() else { return };
    let img = random::<Rgb8>(199, 101, 34);
    let src = s.upload(&img.view()).unwrap();
    let luts = [random_lut(1), random_lut(2), random_lut(3)];
    let d_luts = s.upload_luts(&luts).unwrap();
    for r in [Rect::new(1, 0, 198, 101), Rect::new(0, 1, 199, 1), Rect::new(50, 50, 1, 51), Rect::new(17, 3, 33, 77)] {
        let mut dst = poisoned::<Rgb8>(&s, 210, 120);
        let out = Rect::new(5, 9, r.width, r.height);
        s.apply_lut(&src.roi(r).unwrap(), &mut dst.roi_mut(out).unwrap(), &d_luts).unwrap();
        let got = s.download(&dst.roi(out).unwrap()).unwrap();
        assert_same(&got, &cpu::apply_luts(&img.roi(r).unwrap(), &luts).unwrap(), &format!("roi {r:?}"));
    }
}
