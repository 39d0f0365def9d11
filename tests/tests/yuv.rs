//! YUV frames (issue 29, part 3): OpenCV's `cvtColor` for every code it has (digests in
//! tests/golden/opencv-yuv.txt, made on the lent GPU machine by
//! tests/golden/make_yuv_goldens.py), every layout, format, matrix and range on the GPU and
//! all cores against the serial reference, constant colors through and back, and the bad
//! frames refused.

use cuimg::{
    Bgr8, Bgra8, Error, Gray8, Image, Pixel, Rect, Rgb8, Rgba8, YuvFrame, YuvLayout, YuvMatrix, YuvPixel, YuvRange,
    YuvSpec, cpu, par,
};
use cuimg_tests::{fnv1a, splitmix_bytes};

const SIZES: &[(u32, u32)] = &[(2, 2), (6, 4), (64, 48), (334, 258)];

/// The goldens: the committed file, or the folder `CUIMG_GOLDENS` names (a fresh run of the
/// generator on the lent machine, checked in the same run). `None`: OpenCV has no such code.
fn golden(case: &str) -> Option<u64> {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let text = TEXT.get_or_init(|| {
        let dir = std::env::var_os("CUIMG_GOLDENS").map_or_else(
            || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden"),
            std::path::PathBuf::from,
        );
        std::fs::read_to_string(dir.join("opencv-yuv.txt")).expect("the YUV goldens")
    });
    if text.lines().any(|l| l.starts_with(&format!("# {case}:"))) {
        return None;
    }
    let line = text.lines().find(|l| l.split(' ').next() == Some(case)).unwrap_or_else(|| panic!("no golden {case}"));
    Some(u64::from_str_radix(line.split(' ').nth(1).expect("digest"), 16).expect("hex"))
}

fn name(l: YuvLayout) -> &'static str {
    match l {
        YuvLayout::Nv12 => "NV12",
        YuvLayout::Nv21 => "NV21",
        YuvLayout::I420 => "I420",
        YuvLayout::Yv12 => "YV12",
        YuvLayout::Yuyv => "YUYV",
        YuvLayout::Uyvy => "UYVY",
    }
}

/// The frame the generator makes for `layout` at `w` x `h`.
fn frame(layout: YuvLayout, (w, h): (u32, u32)) -> YuvFrame {
    let li = YuvLayout::ALL.iter().position(|&l| l == layout).unwrap() as u64;
    let n = layout.frame_bytes(w, h).unwrap();
    YuvFrame::from_bytes(layout, w, h, splitmix_bytes(5000 + w as u64 * 7 + h as u64 + li, n)).unwrap()
}

/// The image the generator makes for `P`'s channels at `w` x `h`.
fn image<P: Pixel>((w, h): (u32, u32)) -> Image<P> {
    let c = P::CHANNELS as u64;
    Image::from_bytes(w, h, &splitmix_bytes(6000 + w as u64 * 7 + h as u64 + c, (w * h) as usize * c as usize)).unwrap()
}

fn decode_matches_opencv<P: YuvPixel>(fmt: &str, gpu: &Option<cuimg::Gpu>) -> usize {
    let mut checked = 0;
    for &size in SIZES {
        for layout in YuvLayout::ALL {
            let Some(want) = golden(&format!("yuv-dec-{}-{fmt}-{}x{}", name(layout), size.0, size.1)) else { continue };
            let f = frame(layout, size);
            let got = cpu::yuv_to_image::<P>(&f, YuvSpec::default()).unwrap();
            assert_eq!(fnv1a(got.as_bytes()), want, "{layout:?} to {fmt} {size:?}: the reference differs from OpenCV");
            if let Some(gpu) = gpu {
                let got = gpu.yuv_to_image::<P>(&f, YuvSpec::default()).unwrap();
                assert_eq!(fnv1a(got.as_bytes()), want, "{layout:?} to {fmt} {size:?}: the GPU differs from OpenCV");
            }
            checked += 1;
        }
    }
    checked
}

fn encode_matches_opencv<P: YuvPixel>(fmt: &str, gpu: &Option<cuimg::Gpu>) -> usize {
    let mut checked = 0;
    for &size in SIZES {
        let img = image::<P>(size);
        for layout in YuvLayout::ALL {
            let Some(want) = golden(&format!("yuv-enc-{fmt}-{}-{}x{}", name(layout), size.0, size.1)) else { continue };
            let got = cpu::image_to_yuv(&img.view(), layout, YuvSpec::default()).unwrap();
            assert_eq!(fnv1a(got.as_bytes()), want, "{fmt} to {layout:?} {size:?}: the reference differs from OpenCV");
            if let Some(gpu) = gpu {
                let got = gpu.image_to_yuv(&img.view(), layout, YuvSpec::default()).unwrap();
                assert_eq!(fnv1a(got.as_bytes()), want, "{fmt} to {layout:?} {size:?}: the GPU differs from OpenCV");
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn bt601_limited_is_opencvs_cvtcolor_to_the_bit() {
    let gpu = cuimg_tests::gpu();
    let decoded = decode_matches_opencv::<Gray8>("gray", &gpu)
        + decode_matches_opencv::<Rgb8>("rgb", &gpu)
        + decode_matches_opencv::<Bgr8>("bgr", &gpu)
        + decode_matches_opencv::<Rgba8>("rgba", &gpu)
        + decode_matches_opencv::<Bgra8>("bgra", &gpu);
    let encoded = encode_matches_opencv::<Rgb8>("rgb", &gpu)
        + encode_matches_opencv::<Bgr8>("bgr", &gpu)
        + encode_matches_opencv::<Rgba8>("rgba", &gpu)
        + encode_matches_opencv::<Bgra8>("bgra", &gpu);
    // Every decoding code exists (6 layouts, 5 formats, 4 sizes); the encoders at least
    // for I420 and YV12.
    assert_eq!(decoded, 6 * 5 * SIZES.len());
    assert!(encoded >= 2 * 4 * SIZES.len(), "{encoded} encoding cases");
}

fn specs() -> Vec<YuvSpec> {
    let mut v = Vec::new();
    for matrix in [YuvMatrix::Bt601, YuvMatrix::Bt709, YuvMatrix::Bt2020] {
        for range in [YuvRange::Limited, YuvRange::Full] {
            v.push(YuvSpec { matrix, range });
        }
    }
    v
}

fn every_form<P: YuvPixel>() {
    let gpu = cuimg_tests::gpu();
    for &size in &[(2, 2), (6, 4), (38, 26)] {
        for layout in YuvLayout::ALL {
            for spec in specs() {
                let what = format!("{} {layout:?} {size:?} {spec:?}", P::NAME);
                let f = frame(layout, size);
                let want = cpu::yuv_to_image::<P>(&f, spec).unwrap();
                assert_eq!(par::yuv_to_image::<P>(&f, spec).unwrap(), want, "all cores, decoding {what}");
                let img = image::<P>(size);
                let enc = cpu::image_to_yuv(&img.view(), layout, spec).unwrap();
                assert_eq!(par::image_to_yuv(&img.view(), layout, spec).unwrap(), enc, "all cores, encoding {what}");
                let Some(gpu) = &gpu else { continue };
                // Into a region of a poisoned image, and from a region of a larger one.
                let s = gpu.stream().unwrap();
                let d = s.upload_yuv(&f).unwrap();
                let mut big = cuimg_tests::poisoned::<P>(&s, size.0 + 5, size.1 + 3);
                let r = Rect::new(3, 1, size.0, size.1);
                s.yuv_to_image(&d, spec, &mut big.roi_mut(r).unwrap()).unwrap();
                let got = s.download(&big).unwrap();
                assert_eq!(got.view().roi(r).unwrap().to_image(), want, "GPU decoding {what}");
                let around = Image::<P>::from_fn(size.0 + 4, size.1 + 2, |x, y| {
                    if x >= 4 && y >= 2 { img.get(x - 4, y - 2) } else { P::splat(77) }
                });
                let src = s.upload(&around.view()).unwrap();
                let mut out = s.alloc_yuv(layout, size.0, size.1).unwrap();
                s.image_to_yuv(&src.roi(Rect::new(4, 2, size.0, size.1)).unwrap(), spec, &mut out).unwrap();
                assert_eq!(s.download_yuv(&out).unwrap(), enc, "GPU encoding {what}");
            }
        }
    }
}

#[test]
fn every_layout_format_matrix_and_range_matches_the_reference_on_every_form() {
    every_form::<Gray8>();
    every_form::<Rgb8>();
    every_form::<Bgr8>();
    every_form::<Rgba8>();
    every_form::<Bgra8>();
}

#[test]
fn constant_colors_come_back_through_every_matrix() {
    // A flat color has no detail for chroma subsampling to lose: each matrix and range,
    // encoded and decoded, gives it back within its quantization (limited range's steps
    // are 255/219 of a byte for luma and 255/224 for chroma).
    for spec in specs() {
        for layout in YuvLayout::ALL {
            for color in [[0u8, 0, 0], [255, 255, 255], [200, 30, 90], [12, 240, 128], [128, 128, 128]] {
                let img = Image::from_fn(4, 2, |_, _| Rgb8(color));
                let back =
                    cpu::yuv_to_image::<Rgb8>(&cpu::image_to_yuv(&img.view(), layout, spec).unwrap(), spec).unwrap();
                for p in back.pixels() {
                    for c in 0..3 {
                        let d = (p.0[c] as i32 - color[c] as i32).abs();
                        assert!(d <= 3, "{spec:?} {layout:?} {color:?}: came back as {:?}", p.0);
                    }
                }
            }
        }
    }
}

#[test]
fn bad_frames_are_refused() {
    let bad = |r: cuimg::Result<YuvFrame>, what: &str| match r {
        Err(Error::InvalidParameter { .. } | Error::WrongLength { .. } | Error::EmptyImage { .. }) => {}
        other => panic!("{what}: expected a typed refusal, got {other:?}"),
    };
    bad(YuvFrame::from_bytes(YuvLayout::Nv12, 5, 4, vec![0; 30]), "an NV12 frame of odd width");
    bad(YuvFrame::from_bytes(YuvLayout::I420, 4, 3, vec![0; 18]), "an I420 frame of odd height");
    bad(YuvFrame::from_bytes(YuvLayout::Yuyv, 3, 2, vec![0; 12]), "a YUYV frame of odd width");
    bad(YuvFrame::from_bytes(YuvLayout::Nv12, 4, 4, vec![0; 23]), "too few bytes");
    bad(YuvFrame::from_bytes(YuvLayout::Uyvy, 0, 4, vec![]), "an empty frame");
    // A 4:2:2 frame may have an odd height.
    assert!(YuvFrame::from_bytes(YuvLayout::Uyvy, 4, 3, vec![0; 24]).is_ok());
    let odd = Image::<Rgb8>::filled(5, 4, 9);
    bad(cpu::image_to_yuv(&odd.view(), YuvLayout::Nv21, YuvSpec::default()), "an image of odd width to NV21");
    bad(par::image_to_yuv(&odd.view(), YuvLayout::Yv12, YuvSpec::default()), "all cores, odd width");
    let Some(gpu) = cuimg_tests::gpu() else { return };
    bad(gpu.image_to_yuv(&odd.view(), YuvLayout::Nv12, YuvSpec::default()), "GPU, odd width");
    let s = gpu.stream().unwrap();
    let d = s.upload_yuv(&frame(YuvLayout::Nv12, (6, 4))).unwrap();
    let mut wrong = cuimg_tests::poisoned::<Rgb8>(&s, 8, 4);
    let before = s.download(&wrong).unwrap();
    match s.yuv_to_image(&d, YuvSpec::default(), &mut wrong) {
        Err(Error::DimensionMismatch { .. }) => {}
        other => panic!("a destination of another size: {other:?}"),
    }
    assert_eq!(s.download(&wrong).unwrap(), before, "written");
}
