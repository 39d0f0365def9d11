//! Resize and `to_tensor` in one pass (issue 29, parts 2, 3 and 5): `Stream::resize_to_tensor`
//! and `Gpu::resize_to_tensor` against `cpu::resize_to_tensor` (the resize's reference then
//! the tensor's) and `par::resize_to_tensor`, bit for bit, for every filter (the tiled
//! kernels' one launch and the others' two), every channel count, element type and layout,
//! flipped, reversed and padded; into an index of a poisoned tensor, whose other images
//! keep their poison; YUV frames of every layout decoded in the same pass
//! (`yuv_resize_to_tensor`); bad input refused before anything is written.

use cuimg::{
    Bgra8, DType, Filter, Gray8, Image, La8, Normalize, Pixel, Rgb8, TensorLayout, TensorSpec, YuvFrame, YuvLayout,
    YuvMatrix, YuvRange, YuvSpec, cpu, par,
};

/// The specs each filter is checked with: each element type and layout, flipped and
/// reversed, padded around the resized images.
use cuimg_tests::{assert_refused, poisoned_tensor};

fn specs(size: (u32, u32)) -> Vec<TensorSpec> {
    let (w, h) = size;
    vec![
        TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET),
        TensorSpec::new(DType::F32).layout(TensorLayout::Nhwc).reverse_channels(true).flip(true),
        TensorSpec::new(DType::Bf16)
            .normalize(Normalize::ScaleOffset { scale: [2.0, -0.5, 0.25, 1.0], offset: [-1.0, 3.0, 0.0, 7.5] })
            .flip(true)
            .pad_to(w + 5, h + 3, -0.75),
        TensorSpec::new(DType::F32).normalize(Normalize::IMAGENET).layout(TensorLayout::Nhwc).pad_to(w + 1, h, 9.0),
    ]
}

/// A ragged batch: random, flat and a photo (three channels), one of them already
/// `same` (a plan that copies).
fn images<P: Pixel>(same: (u32, u32)) -> Vec<Image<P>> {
    let mut v = vec![
        cuimg_tests::random::<P>(64, 48, 1),
        cuimg_tests::random::<P>(17, 33, 2),
        Image::<P>::filled(9, 5, 200),
        cuimg_tests::random::<P>(1, 1, 3),
        cuimg_tests::random::<P>(same.0, same.1, 4),
    ];
    if P::CHANNELS == 3 {
        let (_, photo) = cuimg_tests::color_photos().into_iter().next().unwrap();
        let photo = cuimg_tests::tiled(&photo, 300, 200);
        v.push(Image::from_bytes(photo.width(), photo.height(), photo.as_bytes()).unwrap());
    }
    v
}

fn every_filter<P: Pixel>() {
    let gpu = cuimg_tests::gpu();
    for size in [(16, 12), (70, 61), (1, 1)] {
        let imgs = images::<P>(size);
        let views: Vec<_> = imgs.iter().map(Image::view).collect();
        for (name, filter) in Filter::ALL {
            for spec in specs(size) {
                let what = format!("{} to {}x{} by {name}, {spec:?}", P::NAME, size.0, size.1);
                let want = cpu::resize_to_tensor(&views, size.0, size.1, filter, &spec).unwrap();
                assert_eq!(
                    par::resize_to_tensor(&views, size.0, size.1, filter, &spec).unwrap(),
                    want,
                    "all cores, {what}"
                );
                let Some(gpu) = &gpu else { continue };
                assert_eq!(gpu.resize_to_tensor(&views, size.0, size.1, filter, &spec).unwrap(), want, "GPU, {what}");
                // Into images 1.. of a poisoned tensor of two more: the first and last keep
                // their poison.
                let s = gpu.stream().unwrap();
                let src: Vec<_> = views.iter().map(|v| s.upload(v).unwrap()).collect();
                let dviews: Vec<_> = src.iter().map(|d| d.view()).collect();
                let shape = spec.shape_of::<P>(views.len() + 2, size.0, size.1);
                let mut t = poisoned_tensor(&s, shape);
                s.resize_to_tensor(&dviews, size.0, size.1, filter, &spec, &mut t, 1).unwrap();
                let got = s.download_tensor(&t).unwrap();
                let (per, n) = (shape.image_bytes(), views.len());
                assert_eq!(&got.as_bytes()[per..(n + 1) * per], want.as_bytes(), "GPU into image 1, {what}");
                let outside = got.as_bytes()[..per].iter().chain(&got.as_bytes()[(n + 1) * per..]);
                assert!(outside.into_iter().all(|&b| b == 0xA5), "written outside images 1..{n}: {what}");
            }
        }
    }
}

#[test]
fn gray_matches_the_reference_with_every_filter() {
    every_filter::<Gray8>();
}

#[test]
fn gray_and_alpha_matches_the_reference_with_every_filter() {
    every_filter::<La8>();
}

#[test]
fn rgb_matches_the_reference_with_every_filter() {
    every_filter::<Rgb8>();
}

#[test]
fn bgra_matches_the_reference_with_every_filter() {
    every_filter::<Bgra8>();
}

/// Pillow's kernels by the tensor cores (`_mma`, Gray8 and RGB8) into tensors, wherever they
/// fit (by default only images take them: into tensors they were measured no faster).
#[test]
fn pillow_by_tensor_cores_writes_the_same_tensor() {
    if cuimg_tests::gpu().is_none() {
        return;
    }
    cuimg::ops::resize::pillow_mma(Some(true));
    let before = cuimg::ops::resize::pillow_mma_launches();
    every_filter::<Gray8>();
    every_filter::<Rgb8>();
    let ran = cuimg::ops::resize::pillow_mma_launches() - before;
    cuimg::ops::resize::pillow_mma(None);
    assert!(ran > 0, "the mma kernels ran {ran} times");
}

/// Tiles of every height through the tensor kernels too (their frame and stores differ
/// from the images' kernels; the tile loops are the same).
#[test]
fn tiles_of_any_height_write_the_same_tensor() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let img: Image<Rgb8> = cuimg_tests::random(203, 171, 8);
    let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET).pad_to(70, 64, 0.0);
    // (cv-area at 203/67 and 171/59: lists of up to 5, the area's tiled kernel of 8 taps.)
    for name in ["cv-linear", "cv-cubic", "cv-lanczos4", "pil-bilinear", "pil-lanczos", "cv-area"] {
        let filter: Filter = name.parse().unwrap();
        let want = cpu::resize_to_tensor(&[img.view()], 67, 59, filter, &spec).unwrap();
        for rows in [1, 2, 7, 16, 31, 32] {
            cuimg::ops::resize::force_tile_rows(rows);
            let got = gpu.resize_to_tensor(&[img.view()], 67, 59, filter, &spec).unwrap();
            assert_eq!(got, want, "{name}, tiles of {rows} rows");
        }
    }
    cuimg::ops::resize::force_tile_rows(0);
}

/// Frames of `layout`: random bytes (every sample value decodes), a photo's encoding, and
/// one already `same` (a plan that copies).
fn frames(layout: YuvLayout, same: (u32, u32)) -> Vec<YuvFrame> {
    let random = |w: u32, h: u32, seed: u64| {
        let n = layout.frame_bytes(w, h).unwrap();
        YuvFrame::from_bytes(layout, w, h, cuimg_tests::splitmix_bytes(seed, n)).unwrap()
    };
    let (_, photo) = cuimg_tests::color_photos().into_iter().next().unwrap();
    let photo = cuimg_tests::tiled(&photo, 300, 200);
    let encoded = cpu::image_to_yuv(&photo.view(), layout, YuvSpec::default()).unwrap();
    vec![random(64, 48, 1), random(18, 10, 2), random(2, 2, 3), encoded, random(same.0, same.1, 4)]
}

#[test]
fn yuv_frames_match_the_reference_with_every_filter() {
    let gpu = cuimg_tests::gpu();
    let full709 = YuvSpec { matrix: YuvMatrix::Bt709, range: YuvRange::Full };
    for layout in YuvLayout::ALL {
        for (size, yuv) in [((16, 12), YuvSpec::default()), ((70, 62), full709)] {
            let frames = frames(layout, size);
            let refs: Vec<&YuvFrame> = frames.iter().collect();
            for (name, filter) in Filter::ALL {
                for spec in &specs(size)[1..3] {
                    let what = format!("{layout:?} to {}x{} by {name}, {yuv:?}, {spec:?}", size.0, size.1);
                    let want = cpu::yuv_resize_to_tensor(&refs, yuv, size.0, size.1, filter, spec).unwrap();
                    let all = par::yuv_resize_to_tensor(&refs, yuv, size.0, size.1, filter, spec).unwrap();
                    assert_eq!(all, want, "all cores, {what}");
                    let Some(gpu) = &gpu else { continue };
                    let got = gpu.yuv_resize_to_tensor(&refs, yuv, size.0, size.1, filter, spec).unwrap();
                    assert_eq!(got, want, "GPU, {what}");
                }
            }
        }
    }
}

/// Frames of several layouts in one call (a launch for each layout), into images 1.. of a
/// poisoned tensor: the others keep their poison.
#[test]
fn frames_of_several_layouts_go_into_one_tensor() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let s = gpu.stream().unwrap();
    let frames: Vec<YuvFrame> =
        [(YuvLayout::Nv12, 64, 48), (YuvLayout::Yuyv, 30, 7), (YuvLayout::I420, 2, 2), (YuvLayout::Nv12, 8, 6)]
            .iter()
            .enumerate()
            .map(|(i, &(l, w, h))| {
                let n = l.frame_bytes(w, h).unwrap();
                YuvFrame::from_bytes(l, w, h, cuimg_tests::splitmix_bytes(70 + i as u64, n)).unwrap()
            })
            .collect();
    let refs: Vec<&YuvFrame> = frames.iter().collect();
    let device: Vec<_> = frames.iter().map(|f| s.upload_yuv(f).unwrap()).collect();
    let drefs: Vec<_> = device.iter().collect();
    for name in ["cv-linear", "pil-bicubic", "cv-area"] {
        let filter: Filter = name.parse().unwrap();
        let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET).pad_to(24, 20, 0.0);
        let want = cpu::yuv_resize_to_tensor(&refs, YuvSpec::default(), 21, 17, filter, &spec).unwrap();
        let shape = spec.shape_of::<Rgb8>(6, 21, 17);
        let mut t = poisoned_tensor(&s, shape);
        s.yuv_resize_to_tensor(&drefs, YuvSpec::default(), 21, 17, filter, &spec, &mut t, 1).unwrap();
        let got = s.download_tensor(&t).unwrap();
        let per = shape.image_bytes();
        assert_eq!(&got.as_bytes()[per..5 * per], want.as_bytes(), "{name}");
        assert!(got.as_bytes()[..per].iter().chain(&got.as_bytes()[5 * per..]).all(|&b| b == 0xA5), "{name}");
    }
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let img: Image<Rgb8> = cuimg_tests::random(40, 30, 5);
    let v = img.view();
    let linear: Filter = "cv-linear".parse().unwrap();
    let base = TensorSpec::new(DType::F32);
    let nan_mean = base.normalize(Normalize::MeanStd { mean: [f32::NAN, 0.0, 0.0, 0.0], std: [1.0; 4] });
    let zero_std = base.normalize(Normalize::MeanStd { mean: [0.0; 4], std: [1.0, 0.0, 1.0, 1.0] });
    let small = base.pad_to(15, 16, 0.0);
    let empty = Image::<Rgb8>::filled(0, 0, 0);
    for (r, what) in [
        (cpu::resize_to_tensor(&[v], 16, 16, linear, &nan_mean), "a NaN mean"),
        (cpu::resize_to_tensor(&[v], 16, 16, linear, &zero_std), "a zero std"),
        (cpu::resize_to_tensor(&[v], 16, 16, linear, &small), "a tensor smaller than the output"),
        (cpu::resize_to_tensor(&[v], 0, 16, linear, &base), "a zero width"),
        (cpu::resize_to_tensor::<Rgb8>(&[], 16, 16, linear, &base), "no images"),
        (cpu::resize_to_tensor(&[empty.view()], 16, 16, linear, &base), "an empty image"),
    ] {
        assert_refused(r, what);
    }
    let frame = YuvFrame::from_bytes(YuvLayout::Nv12, 4, 2, vec![128; 12]).unwrap();
    let yuv = YuvSpec::default();
    assert_refused(cpu::yuv_resize_to_tensor(&[], yuv, 16, 16, linear, &base), "no frames");
    assert_refused(cpu::yuv_resize_to_tensor(&[&frame], yuv, 16, 0, linear, &base), "a zero height");
    assert_refused(cpu::yuv_resize_to_tensor(&[&frame], yuv, 16, 16, linear, &zero_std), "a zero std");
    let Some(gpu) = cuimg_tests::gpu() else { return };
    assert_refused(gpu.yuv_resize_to_tensor(&[], yuv, 16, 16, linear, &base), "no frames");
    assert_refused(
        gpu.yuv_resize_to_tensor(&[&frame], yuv, 16, 16, linear, &small),
        "a tensor smaller than the output",
    );
    assert_refused(gpu.resize_to_tensor(&[v], 16, 16, linear, &nan_mean), "a NaN mean");
    assert_refused(gpu.resize_to_tensor(&[v], 0, 16, linear, &base), "a zero width");
    assert_refused(gpu.resize_to_tensor::<Rgb8>(&[], 16, 16, linear, &base), "no images");
    let s = gpu.stream().unwrap();
    let src = s.upload(&v).unwrap();
    let good = base.shape_of::<Rgb8>(1, 16, 16);
    for (shape, first, what) in [
        (cuimg::TensorShape { width: 17, ..good }, 0, "a wider tensor"),
        (cuimg::TensorShape { dtype: DType::F16, ..good }, 0, "an f16 tensor"),
        (cuimg::TensorShape { channels: 1, ..good }, 0, "a tensor of one channel"),
        (good, 1, "image 1 of one"),
    ] {
        let mut t = poisoned_tensor(&s, shape);
        assert_refused(s.resize_to_tensor(&[src.view()], 16, 16, linear, &base, &mut t, first), what);
        assert_refused(s.resize_to_tensor(&[src.view()], 16, 16, linear, &zero_std, &mut t, 0), "a zero std");
        let f = s.upload_yuv(&frame).unwrap();
        assert_refused(s.yuv_resize_to_tensor(&[&f], yuv, 16, 16, linear, &base, &mut t, first), what);
        assert!(s.download_tensor(&t).unwrap().as_bytes().iter().all(|&b| b == 0xA5), "{what}: written");
    }
}
