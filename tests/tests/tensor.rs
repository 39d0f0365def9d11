//! Images to tensors and back (issue 29, part 2): torchvision v2's tensors of the photos
//! (digests in tests/golden/torchvision-tensor.txt, made on the lent GPU machine by
//! tests/golden/make_tensor_goldens.py), the half-precision conversions against the `half`
//! crate, the reference's arithmetic, the GPU (single, into an index, cropped, in
//! batches) and all cores against the serial reference bit for bit, with poisoned outputs;
//! the bad inputs each refused with a typed error before anything is written.

use cuimg::{
    Bgra8, DType, Gray8, Image, La8, Normalize, Pixel, Rect, Rgb8, Tensor, TensorLayout, TensorShape, TensorSpec, cpu,
    par,
};
use cuimg_abi::tensor::{INV_255, bf16_bits, bf16_value, f16_bits, f16_value, round_u8};
use cuimg_tests::{assert_refused, color_photos, fnv1a, poisoned_tensor, splitmix_bytes};

/// f32 bit patterns: every special, and a stride through the whole space.
fn patterns() -> impl Iterator<Item = f32> {
    let specials =
        [0u32, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x7F80_0001, 0x3380_0000, 0x3380_0001, 0x3300_0000];
    specials.into_iter().chain((0..(1u64 << 32)).step_by(4099).map(|b| b as u32)).map(f32::from_bits)
}

#[test]
fn half_conversions_round_as_the_half_crate_does() {
    for x in patterns() {
        let (h, b) = (half::f16::from_f32(x), half::bf16::from_f32(x));
        if x.is_nan() {
            assert!(f16_value(f16_bits(x)).is_nan() && bf16_value(bf16_bits(x)).is_nan(), "{x:e}");
            continue;
        }
        assert_eq!(f16_bits(x), h.to_bits(), "f16 of {x:e} ({:#010x})", x.to_bits());
        assert_eq!(bf16_bits(x), b.to_bits(), "bf16 of {x:e} ({:#010x})", x.to_bits());
    }
    // Every half around each boundary between halves: the ties round to even.
    for h in 0..=u16::MAX {
        let v = half::f16::from_bits(h);
        if v.is_nan() {
            assert!(f16_value(h).is_nan());
            continue;
        }
        assert_eq!(f16_value(h).to_bits(), v.to_f32().to_bits(), "f16 {h:#06x}");
        assert_eq!(bf16_value(h).to_bits(), half::bf16::from_bits(h).to_f32().to_bits(), "bf16 {h:#06x}");
        let next = f32::from_bits(v.to_f32().to_bits() + 1);
        assert_eq!(f16_bits(next), half::f16::from_f32(next).to_bits(), "f16 just above {h:#06x}");
    }
}

#[test]
fn bytes_round_to_nearest_even_and_clamp() {
    for x in patterns().chain((-1000..300_000).map(|i| i as f32 / 1000.0)) {
        let want = if x.is_nan() { 0 } else { x.round_ties_even().clamp(0.0, 255.0) as u8 };
        assert_eq!(round_u8(x), want, "{x:e}");
    }
}

#[test]
fn the_reference_computes_torchvisions_steps() {
    // `ToDtype(float32, scale=True)` multiplies by 1/255 as an f32; `Normalize` subtracts
    // and divides: written out here, each step one rounding.
    let img = Image::from_fn(256, 1, |x, _| Rgb8([x as u8, 255 - x as u8, (x * 7) as u8]));
    let t = cpu::to_tensor(&img.view(), &TensorSpec::new(DType::F32).normalize(Normalize::IMAGENET)).unwrap();
    let Normalize::MeanStd { mean, std } = Normalize::IMAGENET else { unreachable!() };
    for x in 0..256 {
        for c in 0..3 {
            let b = img.get(x, 0).0[c] as f32;
            let want = (b * INV_255 - mean[c]) / std[c];
            assert_eq!(t.get(c * 256 + x as usize).to_bits(), want.to_bits(), "x {x} channel {c}");
        }
    }
    // Scale and offset: one product, one sum, not fused.
    let spec = TensorSpec::new(DType::F32)
        .normalize(Normalize::ScaleOffset { scale: [0.1, -3.7, 1e-3, 1.0], offset: [0.3, 1e7, -0.5, 0.0] })
        .layout(TensorLayout::Nhwc);
    let t = cpu::to_tensor(&img.view(), &spec).unwrap();
    for x in 0..256usize {
        let b = img.get(x as u32, 0).0[1] as f32;
        let want = b * -3.7f32 + 1e7f32;
        assert_eq!(t.get(x * 3 + 1).to_bits(), want.to_bits());
    }
}

/// torchvision v2's tensors of the photos (`to_image`, `to_dtype(float32, scale=True)`,
/// `normalize`; `.half()`, `.bfloat16()`, NHWC, flipped, channels reversed), bit for bit:
/// the reference here (in CI), the GPU where there is one.
#[test]
fn tensors_are_torchvisions_to_the_bit() {
    let text = include_str!("../golden/torchvision-tensor.txt");
    let golden = |case: &str| {
        let line =
            text.lines().find(|l| l.split(' ').next() == Some(case)).unwrap_or_else(|| panic!("no golden {case}"));
        u64::from_str_radix(line.split(' ').nth(1).unwrap(), 16).unwrap()
    };
    let base = TensorSpec::new(DType::F32).normalize(Normalize::IMAGENET);
    let cases = [
        ("unit-f32-nchw", TensorSpec::new(DType::F32)),
        ("imagenet-f32-nchw", base),
        ("imagenet-f16-nchw", TensorSpec { dtype: DType::F16, ..base }),
        ("imagenet-bf16-nchw", TensorSpec { dtype: DType::Bf16, ..base }),
        ("imagenet-f32-nhwc", base.layout(TensorLayout::Nhwc)),
        ("imagenet-f16-nhwc", TensorSpec { dtype: DType::F16, ..base }.layout(TensorLayout::Nhwc)),
        ("imagenet-f32-flip", base.flip(true)),
        ("imagenet-bgr-f16-nchw", TensorSpec { dtype: DType::F16, ..base }.reverse_channels(true)),
    ];
    let gpu = cuimg_tests::gpu();
    for (name, photo) in color_photos() {
        for (case, spec) in cases {
            let want = golden(&format!("tv-{name}-{case}"));
            let t = cpu::to_tensor(&photo.view(), &spec).unwrap();
            assert_eq!(fnv1a(t.as_bytes()), want, "{name} {case}: the reference differs from torchvision");
            if let Some(gpu) = &gpu {
                let t = gpu.to_tensor(&photo.view(), &spec).unwrap();
                assert_eq!(fnv1a(t.as_bytes()), want, "{name} {case}: the GPU differs from torchvision");
            }
        }
    }
}

/// The specs every form is checked with.
fn specs() -> Vec<TensorSpec> {
    let mut v = Vec::new();
    for dtype in [DType::F32, DType::F16, DType::Bf16] {
        for layout in [TensorLayout::Nchw, TensorLayout::Nhwc] {
            v.push(TensorSpec::new(dtype).layout(layout).normalize(Normalize::IMAGENET));
        }
        v.push(TensorSpec::new(dtype).reverse_channels(true).flip(true));
        v.push(
            TensorSpec::new(dtype)
                .layout(TensorLayout::Nhwc)
                .normalize(Normalize::ScaleOffset { scale: [2.0, -0.5, 0.25, 1.0], offset: [-1.0, 3.0, 0.0, 7.5] })
                .flip(true),
        );
    }
    v
}

fn images<P: Pixel>() -> Vec<Image<P>> {
    let mut v = vec![
        cuimg_tests::random::<P>(1, 1, 1),
        cuimg_tests::random::<P>(37, 23, 2),
        Image::<P>::filled(9, 5, 200),
        cuimg_tests::random::<P>(1, 31, 3),
    ];
    if P::CHANNELS == 3 {
        let (_, photo) = color_photos().into_iter().next().unwrap();
        v.push(Image::from_bytes(photo.width(), photo.height(), photo.as_bytes()).unwrap());
    }
    v
}

fn every_form<P: Pixel>() {
    let gpu = cuimg_tests::gpu();
    for img in images::<P>() {
        let (w, h) = (img.width(), img.height());
        for spec in specs().into_iter().chain([TensorSpec::new(DType::Bf16).pad_to(w + 3, h + 2, -0.75)]) {
            let what = format!("{} {w}x{h} {spec:?}", P::NAME);
            let want = cpu::to_tensor(&img.view(), &spec).unwrap();
            assert_eq!(par::to_tensor(&img.view(), &spec).unwrap(), want, "all cores, {what}");
            let Some(gpu) = &gpu else { continue };
            assert_eq!(gpu.to_tensor(&img.view(), &spec).unwrap(), want, "GPU, {what}");
            // Into image 1 of a poisoned tensor of 3: images 0 and 2 keep their poison.
            let s = gpu.stream().unwrap();
            let shape = spec.shape_of::<P>(3, w, h);
            let mut t = poisoned_tensor(&s, shape);
            s.to_tensor(&s.upload(&img.view()).unwrap(), &spec, &mut t, 1).unwrap();
            let got = s.download_tensor(&t).unwrap();
            let per = shape.image_bytes();
            assert_eq!(&got.as_bytes()[per..2 * per], want.as_bytes(), "GPU into image 1, {what}");
            assert!(got.as_bytes()[..per].iter().chain(&got.as_bytes()[2 * per..]).all(|&b| b == 0xA5), "{what}");
            // Back to the image, from the GPU's tensor.
            let back = cpu::from_tensor::<P>(&want, 0, &spec, w, h).unwrap();
            let mut d = cuimg_tests::poisoned::<P>(&s, w, h);
            s.from_tensor(&t, 1, &spec, &mut d).unwrap();
            assert_eq!(s.download(&d).unwrap(), back, "GPU back, {what}");
        }
    }
}

#[test]
fn every_format_and_spec_matches_the_reference_on_every_form() {
    every_form::<Gray8>();
    every_form::<La8>();
    every_form::<Rgb8>();
    every_form::<Bgra8>();
}

#[test]
fn crops_and_ragged_batches_match_the_reference() {
    let imgs: Vec<Image<Rgb8>> = [(64, 48), (17, 33), (1, 1), (60, 40)]
        .iter()
        .enumerate()
        .map(|(i, &(w, h))| cuimg_tests::random(w, h, 40 + i as u64))
        .collect();
    let views: Vec<_> = imgs.iter().map(Image::view).collect();
    for spec in specs() {
        let spec = spec.pad_to(64, 48, 0.5);
        let want = cpu::to_tensor_batch(&views, &spec).unwrap();
        assert_eq!(par::to_tensor_batch(&views, &spec).unwrap(), want, "all cores, {spec:?}");
        for (i, v) in views.iter().enumerate() {
            let one = cpu::to_tensor(v, &spec).unwrap();
            let per = one.as_bytes().len();
            assert_eq!(&want.as_bytes()[i * per..(i + 1) * per], one.as_bytes(), "image {i} of the batch, {spec:?}");
        }
        let Some(gpu) = cuimg_tests::gpu() else { continue };
        assert_eq!(gpu.to_tensor_batch(&views, &spec).unwrap(), want, "GPU batch, {spec:?}");
        // A crop: a region of the device image, read in the same pass.
        let s = gpu.stream().unwrap();
        let src = s.upload(&views[0]).unwrap();
        let r = Rect::new(5, 7, 31, 29);
        let mut t = poisoned_tensor(&s, spec.shape_of::<Rgb8>(1, 64, 48));
        s.to_tensor(&src.roi(r).unwrap(), &spec, &mut t, 0).unwrap();
        let want = cpu::to_tensor(&views[0].roi(r).unwrap(), &spec).unwrap();
        assert_eq!(s.download_tensor(&t).unwrap(), want, "GPU crop, {spec:?}");
    }
}

#[test]
fn bytes_come_back_from_f32_tensors() {
    for spec in [TensorSpec::new(DType::F32).normalize(Normalize::IMAGENET), TensorSpec::new(DType::F32).flip(true)] {
        let img: Image<Rgb8> = cuimg_tests::random(300, 200, 9);
        let t = cpu::to_tensor(&img.view(), &spec).unwrap();
        assert_eq!(cpu::from_tensor::<Rgb8>(&t, 0, &spec, 300, 200).unwrap(), img, "{spec:?}");
        if let Some(gpu) = cuimg_tests::gpu() {
            assert_eq!(gpu.from_tensor::<Rgb8>(&t, 0, &spec, 300, 200).unwrap(), img, "{spec:?}");
        }
    }
    // A model's output: values anywhere, NaN among them; a smaller image from the top left.
    let shape =
        TensorShape { images: 2, channels: 4, height: 20, width: 30, dtype: DType::F32, layout: TensorLayout::Nhwc };
    let values: Vec<u8> = splitmix_bytes(11, shape.bytes().unwrap() / 4)
        .iter()
        .flat_map(|&b| {
            match b {
                0 => f32::NAN,
                1 => f32::INFINITY,
                _ => (b as f32 - 60.0) * 0.0173,
            }
            .to_le_bytes()
        })
        .collect();
    let t = Tensor::from_bytes(shape, values).unwrap();
    let spec = TensorSpec::new(DType::F32).layout(TensorLayout::Nhwc).normalize(Normalize::IMAGENET);
    let want = cpu::from_tensor::<Bgra8>(&t, 1, &spec, 27, 19).unwrap();
    if let Some(gpu) = cuimg_tests::gpu() {
        assert_eq!(gpu.from_tensor::<Bgra8>(&t, 1, &spec, 27, 19).unwrap(), want);
    }
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let img: Image<Rgb8> = cuimg_tests::random(8, 6, 5);
    let v = img.view();
    let base = TensorSpec::new(DType::F32);
    let nan_mean = base.normalize(Normalize::MeanStd { mean: [f32::NAN, 0.0, 0.0, 0.0], std: [1.0; 4] });
    let zero_std = base.normalize(Normalize::MeanStd { mean: [0.0; 4], std: [1.0, 0.0, 1.0, 1.0] });
    let zero_scale = base.normalize(Normalize::ScaleOffset { scale: [0.0; 4], offset: [0.0; 4] });
    let inf_offset = base.normalize(Normalize::ScaleOffset { scale: [1.0; 4], offset: [0.0, f32::INFINITY, 0.0, 0.0] });
    let nan_fill = base.pad_to(10, 10, f32::NAN);
    let small = base.pad_to(7, 6, 0.0);
    for (spec, what) in [
        (nan_mean, "a NaN mean"),
        (zero_std, "a zero std"),
        (zero_scale, "a zero scale"),
        (inf_offset, "an infinite offset"),
        (nan_fill, "a NaN fill"),
        (small, "a tensor smaller than the image"),
    ] {
        assert_refused(cpu::to_tensor(&v, &spec), what);
        assert_refused(par::to_tensor(&v, &spec), what);
        if let Some(gpu) = cuimg_tests::gpu() {
            assert_refused(gpu.to_tensor(&v, &spec), what);
        }
    }
    let other: Image<Rgb8> = cuimg_tests::random(9, 6, 6);
    assert_refused(cpu::to_tensor_batch(&[v, other.view()], &base), "a ragged batch without a size");
    assert_refused(cpu::to_tensor_batch::<Rgb8>(&[], &base), "an empty batch");
    let empty = Image::<Rgb8>::filled(0, 0, 0);
    assert_refused(cpu::to_tensor(&empty.view(), &base), "an empty image");

    let t = cpu::to_tensor(&v, &base).unwrap();
    assert_refused(cpu::from_tensor::<Gray8>(&t, 0, &base, 8, 6), "three channels into gray");
    assert_refused(cpu::from_tensor::<Rgb8>(&t, 1, &base, 8, 6), "image 1 of one");
    assert_refused(cpu::from_tensor::<Rgb8>(&t, 0, &base, 9, 6), "an image wider than the tensor");
    assert_refused(cpu::from_tensor::<Rgb8>(&t, 0, &TensorSpec::new(DType::F16), 8, 6), "f32 read as f16");
    assert_refused(cpu::from_tensor::<Rgb8>(&t, 0, &base.layout(TensorLayout::Nhwc), 8, 6), "NCHW read as NHWC");
    assert_refused(cpu::from_tensor::<Rgb8>(&t, 0, &zero_std, 8, 6), "a zero std");
    assert_refused(Tensor::from_bytes(t.shape(), vec![0; 5]), "bytes of another length");

    let Some(gpu) = cuimg_tests::gpu() else { return };
    let s = gpu.stream().unwrap();
    let src = s.upload(&v).unwrap();
    // Wrong tensors: another size, type, layout or channel count, an index past the end.
    let good = base.shape_of::<Rgb8>(1, 8, 6);
    for (shape, index, what) in [
        (TensorShape { width: 9, ..good }, 0, "a wider tensor"),
        (TensorShape { dtype: DType::F16, ..good }, 0, "an f16 tensor"),
        (TensorShape { layout: TensorLayout::Nhwc, ..good }, 0, "an NHWC tensor"),
        (TensorShape { channels: 4, ..good }, 0, "a tensor of four channels"),
        (good, 1, "image 1 of one"),
    ] {
        let mut t = poisoned_tensor(&s, shape);
        assert_refused(s.to_tensor(&src, &base, &mut t, index), what);
        assert_refused(s.to_tensor(&src, &nan_mean, &mut t, 0), "a NaN mean");
        assert!(s.download_tensor(&t).unwrap().as_bytes().iter().all(|&b| b == 0xA5), "{what}: written");
    }
    let t = poisoned_tensor(&s, good);
    let mut d = cuimg_tests::poisoned::<Rgb8>(&s, 8, 6);
    let before = s.download(&d).unwrap();
    assert_refused(s.from_tensor(&t, 1, &base, &mut d), "image 1 of one");
    assert_refused(s.from_tensor(&t, 0, &zero_std, &mut d), "a zero std");
    let mut wide = cuimg_tests::poisoned::<Rgb8>(&s, 9, 6);
    assert_refused(s.from_tensor(&t, 0, &base, &mut wide), "an image wider than the tensor");
    assert_eq!(s.download(&d).unwrap(), before, "the image was written");
    let batch = s.upload_batch(&[v, other.view()]).unwrap();
    let mut t = poisoned_tensor(&s, TensorShape { images: 2, ..good });
    assert_refused(s.to_tensor_batch(&batch, &base, &mut t), "a ragged batch without a size");
    let mut t3 = poisoned_tensor(&s, TensorShape { images: 3, width: 9, ..good });
    assert_refused(s.to_tensor_batch(&batch, &base.pad_to(9, 6, 0.0), &mut t3), "a tensor of three for two images");
}
