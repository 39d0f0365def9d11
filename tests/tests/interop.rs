//! The `image` crate's buffers in and out without copying, on every format: views borrow,
//! results hand over their allocation, `DynamicImage` variants are taken or refused by name,
//! and a round trip through the GPU writes every pixel of a poisoned output.

use cuimg::{DynamicView, Error, Gray8, Image, ImageView, ImageViewMut, La8, Lut, Pixel, Rgb8, Rgba8};
use cuimg_tests::{assert_same, gpu, poisoned, random};
use image::{DynamicImage, ImageBuffer};

/// Every check for one format: `$theirs` is the image crate's pixel type for `$ours`.
macro_rules! round_trip {
    ($name:ident, $ours:ty, $theirs:ident) => {
        #[test]
        fn $name() {
            for (w, h) in [(1, 1), (7, 3), (333, 257)] {
                let ours: Image<$ours> = random(w, h, u64::from(w * h));
                let bytes = ours.as_bytes().to_vec();
                // Image -> ImageBuffer keeps the allocation.
                let at = ours.as_bytes().as_ptr();
                let theirs: ImageBuffer<image::$theirs<u8>, Vec<u8>> = ours.into();
                assert_eq!(theirs.as_raw().as_ptr(), at, "{w}x{h}: copied on the way out");
                assert_eq!(theirs.as_raw(), &bytes);
                // A view borrows it.
                let view: ImageView<'_, $ours> = (&theirs).into();
                assert_eq!(view.contiguous_bytes().map(<[u8]>::as_ptr), Some(at), "{w}x{h}: the view copied");
                assert_eq!(view.dimensions(), (w, h));
                // The CPU reference through the view, and the GPU (when there is one) into a
                // poisoned output, agree; the result goes back to the image crate.
                let lut = Lut::invert();
                let want = cuimg::cpu::apply_lut(&view, &lut).unwrap();
                if let Some(gpu) = gpu() {
                    let s = gpu.stream().unwrap();
                    let src = s.upload(&view).unwrap();
                    let mut dst = poisoned::<$ours>(&s, w, h);
                    s.apply_lut(&src, &mut dst, &s.upload_lut::<$ours>(&lut).unwrap()).unwrap();
                    let got = s.download(&dst).unwrap();
                    assert_same(&got, &want, concat!(stringify!($ours), " on the GPU through image's buffers"));
                }
                // A mutable view writes into the image crate's buffer in place.
                let mut out: ImageBuffer<image::$theirs<u8>, Vec<u8>> = ImageBuffer::new(w, h);
                let mut dst: ImageViewMut<'_, $ours> = (&mut out).into();
                dst.copy_from(&want.view()).unwrap();
                assert_eq!(out.as_raw(), want.as_bytes());
                // ImageBuffer -> Image keeps the allocation too (its capacity is whole pixels).
                let at = theirs.as_raw().as_ptr();
                let back: Image<$ours> = theirs.into();
                assert_eq!(back.as_bytes().as_ptr(), at, "{w}x{h}: copied on the way in");
                assert_eq!(back.as_bytes(), &bytes[..]);
            }
        }
    };
}

round_trip!(rgb8_round_trips, Rgb8, Rgb);
round_trip!(rgba8_round_trips, Rgba8, Rgba);
round_trip!(gray8_round_trips, Gray8, Luma);
round_trip!(la8_round_trips, La8, LumaA);

#[test]
fn a_buffer_of_odd_capacity_is_copied_once_and_right() {
    // 2x2 RGB is 12 bytes; a capacity of 13 is no whole number of pixels.
    let mut raw = Vec::with_capacity(13);
    raw.extend((0..12).map(|i| i as u8 * 20));
    let theirs = image::RgbImage::from_raw(2, 2, raw).unwrap();
    let ours: Image<Rgb8> = theirs.clone().into();
    assert_eq!(ours.as_bytes(), theirs.as_raw().as_slice());
    // And a container longer than the image: only the image's pixels come in.
    let mut long = theirs.into_raw();
    long.extend([9, 9, 9]);
    let theirs = image::RgbImage::from_raw(2, 2, long).unwrap();
    let ours: Image<Rgb8> = theirs.into();
    assert_eq!(ours.pixels().len(), 4);
}

#[test]
fn views_of_borrowed_containers() {
    // Any container that derefs to bytes: here a borrowed slice.
    let bytes: Vec<u8> = (0..6 * 4).map(|i| i as u8).collect();
    let theirs = ImageBuffer::<image::Luma<u8>, &[u8]>::from_raw(6, 4, &bytes[..]).unwrap();
    let view: ImageView<'_, Gray8> = (&theirs).into();
    assert_eq!(view.get(5, 3), Gray8([23]));
}

#[test]
fn every_dynamic_image_variant_is_taken_or_refused_by_name() {
    let (w, h) = (5, 3);
    let eight = [
        DynamicImage::new_luma8(w, h),
        DynamicImage::new_luma_a8(w, h),
        DynamicImage::new_rgb8(w, h),
        DynamicImage::new_rgba8(w, h),
    ];
    for (img, channels) in eight.iter().zip([1, 2, 3, 4]) {
        let view = DynamicView::try_from(img).unwrap();
        let got = match view {
            DynamicView::Gray8(_) => Gray8::CHANNELS,
            DynamicView::La8(_) => La8::CHANNELS,
            DynamicView::Rgb8(_) => Rgb8::CHANNELS,
            DynamicView::Rgba8(_) => Rgba8::CHANNELS,
            other => panic!("{other:?}"),
        };
        assert_eq!(got, channels);
        assert_eq!(view.dimensions(), (w, h));
    }
    let deep = [
        DynamicImage::new_luma16(w, h),
        DynamicImage::new_luma_a16(w, h),
        DynamicImage::new_rgb16(w, h),
        DynamicImage::new_rgba16(w, h),
        DynamicImage::new_rgb32f(w, h),
        DynamicImage::new_rgba32f(w, h),
    ];
    for img in &deep {
        let err = DynamicView::try_from(img).unwrap_err();
        let named = format!("{:?}", img.color());
        assert!(matches!(err, Error::UnsupportedFormat(_)), "{err}");
        assert!(err.to_string().contains(&named), "{err} should name {named}");
        assert!(err.to_string().contains("convert_to_8bit"), "{err} should say what to do");
        // Converted on purpose, the same kind of image in 8 bits, rounded.
        let eight = cuimg::io::convert_to_8bit(img);
        let view = DynamicView::try_from(&eight).unwrap();
        assert_eq!(view.dimensions(), (w, h));
        assert_eq!(eight.color().has_alpha(), img.color().has_alpha());
        assert_eq!(eight.color().has_color(), img.color().has_color());
    }
    // Rounding: 16-bit 0xFFFF and 0x8080 become 255 and 128.
    let mut sixteen = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::new(2, 1);
    sixteen.put_pixel(0, 0, image::Luma([0xFFFF]));
    sixteen.put_pixel(1, 0, image::Luma([0x8080]));
    let eight = cuimg::io::convert_to_8bit(&DynamicImage::ImageLuma16(sixteen));
    assert_eq!(eight.as_bytes(), &[255, 128]);
}

/// A TIFF-style EXIF block holding only an orientation (1 to 8).
fn exif_orientation(value: u8) -> Vec<u8> {
    let mut exif = b"II\x2a\x00".to_vec(); // little-endian TIFF header
    exif.extend(8u32.to_le_bytes()); // the first IFD right after it
    exif.extend(1u16.to_le_bytes()); // one entry:
    exif.extend(0x0112u16.to_le_bytes()); // Orientation,
    exif.extend(3u16.to_le_bytes()); // a SHORT,
    exif.extend(1u32.to_le_bytes()); // one of them,
    exif.extend([value, 0, 0, 0]); // the value, padded to 4 bytes
    exif.extend(0u32.to_le_bytes()); // no next IFD
    exif
}

#[test]
fn exif_orientation_is_applied() {
    use image::ImageEncoder;
    // 64x32: the left half black, the right half white, stored as the camera saw it.
    let stored =
        image::RgbImage::from_fn(64, 32, |x, _| if x < 32 { image::Rgb([0; 3]) } else { image::Rgb([255; 3]) });
    // (orientation, upright size, where the white half ends up)
    for (value, size, white) in
        [(1, (64, 32), "right"), (3, (64, 32), "left"), (6, (32, 64), "bottom"), (8, (32, 64), "top")]
    {
        let mut jpeg = Vec::new();
        let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95);
        encoder.set_exif_metadata(exif_orientation(value)).unwrap();
        encoder.write_image(stored.as_raw(), 64, 32, image::ExtendedColorType::Rgb8).unwrap();
        let path = std::env::temp_dir().join(format!("cuimg-exif-{value}-{}.jpg", std::process::id()));
        std::fs::write(&path, &jpeg).unwrap();
        let img = cuimg::io::load_gray(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(img.dimensions(), size, "orientation {value}");
        let (w, h) = size;
        let mean = |xs: std::ops::Range<u32>, ys: std::ops::Range<u32>| {
            let n = (xs.len() * ys.len()) as f64;
            ys.flat_map(|y| xs.clone().map(move |x| (x, y))).map(|(x, y)| f64::from(img.get(x, y).0[0])).sum::<f64>()
                / n
        };
        let (a, b) = match white {
            "right" | "left" => (mean(0..w / 2, 0..h), mean(w / 2..w, 0..h)),
            _ => (mean(0..w, 0..h / 2), mean(0..w, h / 2..h)),
        };
        let white_second = matches!(white, "right" | "bottom");
        assert!(
            if white_second { b > 200.0 && a < 55.0 } else { a > 200.0 && b < 55.0 },
            "orientation {value}: {a} {b}"
        );
    }
}

#[test]
fn a_missing_file_is_an_io_error_with_its_path() {
    let path = std::env::temp_dir().join("cuimg-no-such-dir").join("photo.png");
    for err in [
        cuimg::io::load_rgb(&path).unwrap_err(),
        cuimg::io::load_gray(&path).unwrap_err(),
        cuimg::io::load_rgba(&path).unwrap_err(),
        cuimg::io::load_gray_alpha(&path).unwrap_err(),
    ] {
        assert!(
            matches!(&err, Error::Io { path: p, source } if p == &path && source.kind() == std::io::ErrorKind::NotFound),
            "{err}"
        );
        assert!(err.to_string().contains("photo.png"), "{err}");
    }
}

/// A PNG over the `image` crate's default 512 MiB decode limit, cheap to make (one color):
/// it loads under cuimg's default, and is refused (before its pixels are allocated) when
/// the limit is lowered.
#[test]
fn files_over_512_mib_load_and_the_limit_is_configurable() {
    let (w, h) = (23_200u32, 23_200u32); // 538 MB of gray
    let mut png = Vec::new();
    {
        use image::ImageEncoder;
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            &mut png,
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::NoFilter,
        );
        encoder.write_image(&vec![77u8; w as usize * h as usize], w, h, image::ExtendedColorType::L8).unwrap();
    }
    assert!(u64::from(w) * u64::from(h) > 512 << 20);
    let path = std::env::temp_dir().join(format!("cuimg-big-{}.png", std::process::id()));
    std::fs::write(&path, &png).unwrap();
    let img = cuimg::io::load_gray(&path).unwrap();
    assert_eq!(img.dimensions(), (w, h));
    assert_eq!(img.get(w - 1, h - 1), Gray8([77]));
    drop(img);
    // A limit is a value passed to the call: no other call sees it.
    let limits = cuimg::Limits::default().with_max_image_bytes(256 << 20);
    let refused = cuimg::io::read_checked(&path, 1, &limits);
    let decoded = cuimg::io::decode_with::<Gray8>(&png, &path, &limits);
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(refused, Err(Error::Limit { .. })), "{refused:?}");
    assert!(matches!(decoded, Err(Error::Limit { .. })), "{decoded:?}");
}

/// cudarc's buffers and stream through cuimg without copies: their memory as cuimg images
/// (the output poisoned first), their stream as a cuimg stream, and a cuimg image read by
/// cudarc through its raw address. The borrowed images free nothing (cudarc reads its
/// buffers after they drop, and frees them itself; memcheck would see a double free).
#[test]
fn cudarc_buffers_and_streams_in_place() {
    use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut};
    use cuimg::{DeviceImage, GrayWeights};
    let Some(gpu) = gpu() else { return };
    let (w, h) = (333u32, 257u32);
    let img: Image<Rgb8> = random(w, h, 42);
    let want = cuimg::cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap();

    let ctx = CudaContext::new(gpu.ordinal()).unwrap();
    let theirs = ctx.new_stream().unwrap();
    let rgb = theirs.clone_htod(img.as_bytes()).unwrap();
    let poison: Vec<u8> = (0..w * h).map(|i| 0xA5 ^ (i as u8).wrapping_mul(31)).collect();
    let mut gray = theirs.clone_htod(&poison).unwrap();
    // SAFETY: `theirs` is a stream of this device's primary context and outlives `s`.
    let s = unsafe { cuimg::Stream::from_raw(&gpu, theirs.cu_stream().cast()) };
    assert_eq!(s.as_raw(), theirs.cu_stream().cast());
    {
        let (src_ptr, _reading) = rgb.device_ptr(&theirs);
        let (dst_ptr, _writing) = gray.device_ptr_mut(&theirs);
        // SAFETY: `rgb` and `gray` hold h packed rows of w RGB and gray pixels, outlive this
        // block, and only `theirs` (which is `s`) uses them meanwhile.
        let src = unsafe { DeviceImage::<Rgb8>::from_raw_parts(&s, src_ptr, w, h) }.unwrap();
        // SAFETY: as above.
        let mut dst = unsafe { DeviceImage::<Gray8>::from_raw_parts(&s, dst_ptr, w, h) }.unwrap();
        assert_eq!(dst.as_raw_ptr(), dst_ptr);
        s.grayscale(&src, &mut dst, GrayWeights::Bt601).unwrap();
        // cuimg's own download of the borrowed image agrees too.
        assert_same(&s.download(&dst).unwrap(), &want, "download of the borrowed image");
    }
    let got = Image::<Gray8>::from_bytes(w, h, &theirs.clone_dtoh(&gray).unwrap()).unwrap();
    assert_same(&got, &want, "cuimg's kernel on cudarc's buffers");

    // The other way: a cuimg image read by cudarc through its raw address.
    let ours = s.upload(&want.view()).unwrap();
    s.synchronize().unwrap();
    let mut back = vec![0u8; (w * h) as usize];
    // SAFETY: `ours` holds w * h bytes at that address, alive until the end of this test, and
    // the upload has finished (synchronized above).
    unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut back, ours.as_raw_ptr()) }.unwrap();
    assert_eq!(back, want.as_bytes());

    // Bad inputs are typed errors, not launches.
    // SAFETY: never dereferenced: refused before use.
    let null = unsafe { DeviceImage::<Gray8>::from_raw_parts(&s, 0, 4, 4) };
    assert!(null.is_err());
    // SAFETY: as above.
    let empty = unsafe { DeviceImage::<Gray8>::from_raw_parts(&s, ours.as_raw_ptr(), 0, 4) };
    assert!(matches!(empty, Err(Error::EmptyImage { .. })));
}

/// Files of more than 8 bits per channel: refused by name by `load_*` and `decode_rgb`, and
/// rounded to 8 bits only by the functions that say so.
#[test]
fn sixteen_bit_files_are_refused_or_converted_on_purpose() {
    let path = std::env::temp_dir().join(format!("cuimg-deep-{}.png", std::process::id()));
    let mut deep = image::ImageBuffer::<image::LumaA<u16>, Vec<u16>>::new(3, 1);
    for (x, v) in [(0, 0xFFFFu16), (1, 0x8080), (2, 0x0101)] {
        deep.put_pixel(x, 0, image::LumaA([v, 0xFFFF]));
    }
    deep.save(&path).unwrap();
    let errors = [
        cuimg::io::load_rgb(&path).map(|_| ()),
        cuimg::io::load_rgba(&path).map(|_| ()),
        cuimg::io::load_gray(&path).map(|_| ()),
        cuimg::io::load_gray_alpha(&path).map(|_| ()),
        cuimg::io::decode_rgb(&std::fs::read(&path).unwrap(), &path).map(|_| ()),
    ];
    for err in errors {
        let err = err.unwrap_err();
        assert!(matches!(err, Error::UnsupportedFormat(_)), "{err}");
        let text = err.to_string();
        assert!(text.contains("cuimg-deep-") && text.contains("16 bits") && text.contains("load_converted"), "{text}");
    }
    let la = cuimg::io::load_converted::<La8>(&path).unwrap();
    assert_eq!(la.as_bytes(), &[255, 255, 128, 255, 1, 255]);
    let rgb = cuimg::io::load_converted::<Rgb8>(&path).unwrap();
    assert_eq!(rgb.get(1, 0), Rgb8([128; 3]));
    std::fs::remove_file(&path).unwrap();
}
