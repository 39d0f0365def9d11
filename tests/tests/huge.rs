//! Images whose byte size passes 2^31 and 2^32: results equal the CPU reference, so no
//! index overflows in the kernels or the host. They need about 12 GiB of host memory and
//! 10 GiB of device memory, so they run only with `CUIMG_HUGE=1` (the GPU bundle sets it)
//! and say so when skipped.

use std::io::Write;

use cuimg::{Gray8, GrayWeights, Image, Lut, Rect, Rgba8, cpu};
use cuimg_tests::assert_same;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn enabled() -> bool {
    let on = std::env::var("CUIMG_HUGE").is_ok_and(|v| v == "1");
    if !on {
        let _ = writeln!(std::io::stderr(), "SKIP: huge-image tests need CUIMG_HUGE=1 (about 12 GiB of host memory)");
    }
    on
}

/// 32768 x 32769 RGBA8: just past 2^32 bytes (32768 x 32768 is exactly 2^32).
#[test]
fn rgba_past_4_gib() {
    if !enabled() {
        return;
    }
    let Some(s) = cuimg_tests::stream() else { return };
    let (w, h) = (32768u32, 32769u32);
    let mut img = Image::<Rgba8>::new(w, h);
    SmallRng::seed_from_u64(71).fill(img.as_bytes_mut());
    assert!(img.as_bytes().len() as u64 > 1 << 32);
    let src = s.upload(&img.view()).unwrap();
    let mut gray = s.alloc::<Gray8>(w, h).unwrap();
    s.grayscale(&src, &mut gray, GrayWeights::Bt601).unwrap();
    let got = s.download(&gray).unwrap();
    assert_same(&got, &cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap(), "grayscale 4 GiB RGBA");
    let mut bins = s.alloc_histogram(4).unwrap();
    s.histogram(&src, &mut bins).unwrap();
    assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&img.view()).unwrap(), "histogram 4 GiB RGBA");
    // A region at the far end: offsets past 2^32 in the pitched kernels.
    let r = Rect::new(w - 1000, h - 7, 999, 7);
    let mut roi_gray = s.alloc::<Gray8>(r.width, r.height).unwrap();
    s.grayscale(&src.roi(r).unwrap(), &mut roi_gray, GrayWeights::Bt709).unwrap();
    assert_same(
        &s.download(&roi_gray).unwrap(),
        &cpu::grayscale(&img.roi(r).unwrap(), GrayWeights::Bt709).unwrap(),
        "far ROI",
    );
}

/// 46341 x 46341 Gray8: just past 2^31 bytes; LUT and equalization.
#[test]
fn gray_past_2_gib() {
    if !enabled() {
        return;
    }
    let Some(s) = cuimg_tests::stream() else { return };
    let (w, h) = (46341u32, 46341u32);
    let mut img = Image::<Gray8>::new(w, h);
    SmallRng::seed_from_u64(72).fill(img.as_bytes_mut());
    img.as_bytes_mut().iter_mut().for_each(|b| *b = *b / 2 + 40);
    assert!(img.as_bytes().len() as u64 > 1 << 31);
    let src = s.upload(&img.view()).unwrap();
    let mut out = s.alloc::<Gray8>(w, h).unwrap();
    let lut = s.upload_lut::<Gray8>(&Lut::gamma(1.8)).unwrap();
    s.apply_lut(&src, &mut out, &lut).unwrap();
    assert_same(&s.download(&out).unwrap(), &cpu::apply_lut(&img.view(), &Lut::gamma(1.8)).unwrap(), "LUT 2 GiB");
    s.equalize(&src, &mut out).unwrap();
    assert_same(&s.download(&out).unwrap(), &cpu::equalize(&img.view()).unwrap(), "equalize 2 GiB");
    // Gather over more than 2^31 bytes of f32 elements (2^29 + 7 of them).
    let n = (1usize << 29) + 7;
    let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let idx: Vec<u32> = (0..4096u32).map(|i| (n - 1 - i as usize * 131_071 % n) as u32).collect();
    assert_eq!(s.gpu().gather(&src, &idx).unwrap(), cpu::gather(&src, &idx).unwrap());
}

/// Every operation of the registry, with its defaults, on a 23170 x 23171 RGBA8 image (just
/// past 2^31 bytes) or its gray luma where the operation takes no RGBA: the stream form
/// against all cores (`par`, which the registry's tests hold equal to the reference).
#[test]
fn every_registry_operation_past_2_gib() {
    use cuimg::registry::{AnyDeviceImage, AnyImage, Args, DeviceOutput, OPERATIONS, PixelFormat};
    if !enabled() {
        return;
    }
    let Some(s) = cuimg_tests::stream() else { return };
    let (w, h) = (23170u32, 23171u32);
    let mut rgba = Image::<Rgba8>::new(w, h);
    SmallRng::seed_from_u64(73).fill(rgba.as_bytes_mut());
    assert!(rgba.as_bytes().len() as u64 > 1 << 31);
    let gray = cpu::grayscale(&rgba.view(), GrayWeights::Bt601).unwrap();
    let (rgba, gray) = (AnyImage::from(rgba), AnyImage::from(gray));
    for op in OPERATIONS {
        let img = if op.formats.contains(&PixelFormat::Rgba8) { &rgba } else { &gray };
        let bound = (op.bind)(&Args::defaults(op)).unwrap();
        let src = AnyDeviceImage::upload(&s, &img.view()).unwrap();
        let mut out = DeviceOutput::alloc(&s, &*bound, img.format(), w, h).unwrap();
        bound.stream(&s, &src.view(), out.target()).unwrap();
        let want = bound.par(&img.view()).unwrap();
        assert!(out.download(&s).unwrap() == want, "{} past 2 GiB", op.name);
    }
}
