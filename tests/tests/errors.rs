//! Every error path: each bad input gets its typed error, nothing panics, and the GPU
//! context stays usable for the next call.

use cuimg::{EqualizeMode, Error, Gray8, GrayWeights, Image, ImageView, Lut, PlanarView, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::stream;

/// After an error, the same stream still computes correctly.
fn still_works(s: &cuimg::Stream) {
    let img = Image::<Rgb8>::filled(31, 7, 100);
    assert!(s.gpu().grayscale(&img.view(), GrayWeights::Bt601).unwrap().pixels().iter().all(|p| p.0 == [100]));
    let src = s.upload(&img.view()).unwrap();
    let mut dst = s.alloc::<Gray8>(31, 7).unwrap();
    s.grayscale(&src, &mut dst, GrayWeights::Bt601).unwrap();
    s.synchronize().unwrap();
}

#[test]
fn empty_images_are_rejected_by_cpu_and_gpu() {
    for (w, h) in [(0u32, 0u32), (0, 5), (5, 0)] {
        let rgb = Image::<Rgb8>::new(w, h);
        let gray = Image::<Gray8>::new(w, h);
        let empty =
            |e: Error| assert!(matches!(e, Error::EmptyImage { width, height } if (width, height) == (w, h)), "{e}");
        empty(cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap_err());
        empty(cpu::histogram(&rgb.view()).unwrap_err());
        empty(cpu::equalize(&gray.view()).unwrap_err());
        empty(cpu::equalize_color(&rgb.view(), EqualizeMode::Luma).unwrap_err());
        empty(cpu::apply_lut(&rgb.view(), &Lut::invert()).unwrap_err());
        let Some(s) = stream() else { continue };
        let g = s.gpu();
        empty(g.grayscale(&rgb.view(), GrayWeights::Bt601).unwrap_err());
        empty(g.black_and_white(&rgb.view(), GrayWeights::Bt601).unwrap_err());
        empty(g.histogram(&rgb.view()).unwrap_err());
        empty(g.equalize(&gray.view()).unwrap_err());
        empty(g.equalize_color(&rgb.view(), EqualizeMode::PerChannel).unwrap_err());
        empty(g.apply_lut(&gray.view(), &Lut::invert()).unwrap_err());
        empty(s.alloc::<Gray8>(w, h).unwrap_err());
        empty(s.upload(&gray.view()).unwrap_err());
        // An empty region of a real device image.
        let dev = s.upload(&Image::<Gray8>::filled(4, 4, 1).view()).unwrap();
        let mut out = s.alloc::<Gray8>(4, 4).unwrap();
        let roi = dev.roi(Rect::new(1, 1, w.min(3), h.min(3))).unwrap();
        let any_empty = |e: Error| assert!(matches!(e, Error::EmptyImage { .. }), "{e}");
        any_empty(s.equalize(&roi, &mut out.roi_mut(Rect::new(0, 0, w.min(3), h.min(3))).unwrap()).unwrap_err());
        any_empty(s.download(&roi).unwrap_err());
        still_works(&s);
    }
}

#[test]
fn bad_layouts_are_rejected() {
    let bytes = [0u8; 10];
    assert!(matches!(
        ImageView::<Gray8>::new(&bytes, 4, 2, 3).unwrap_err(),
        Error::PitchTooSmall { pitch: 3, row_bytes: 4 }
    ));
    assert!(matches!(
        ImageView::<Rgb8>::new(&bytes, 2, 2, 6).unwrap_err(),
        Error::BufferTooSmall { needed: 12, actual: 10, .. }
    ));
    assert!(matches!(
        Image::<Rgb8>::from_bytes(2, 2, &bytes).unwrap_err(),
        Error::WrongLength { expected: 12, actual: 10, .. }
    ));
    assert!(matches!(
        PlanarView::from_chw(&bytes, 2, 2).unwrap_err(),
        Error::WrongLength { expected: 12, actual: 10, .. }
    ));
    assert!(matches!(
        PlanarView::new([&bytes, &bytes, &bytes[..3]], 2, 2, 2).unwrap_err(),
        Error::BufferTooSmall { .. }
    ));
    // A view may end right after its last pixel: no padding after the last row is needed.
    assert!(ImageView::<Gray8>::new(&bytes, 4, 2, 6).is_ok());
}

/// Found by the `views` fuzz target: a zero-width region of a tall view kept its parent's
/// pitch over no bytes, and reading its second row panicked.
#[test]
fn empty_regions_have_empty_rows() {
    let img = Image::<Rgb8>::filled(5, 4, 9);
    let roi = img.roi(Rect::new(2, 1, 0, 3)).unwrap();
    assert_eq!(roi.rows().count(), 3);
    assert!(roi.rows().all(|r| r.is_empty()));
    assert_eq!(roi.to_image().dimensions(), (0, 3));
    assert!(matches!(cpu::histogram(&roi).unwrap_err(), Error::EmptyImage { width: 0, height: 3 }));
    let mut img = img;
    let mut roi_mut = img.view_mut().roi(Rect::new(5, 0, 0, 4)).unwrap();
    assert!(roi_mut.row_mut(3).is_empty());
}

#[test]
fn regions_outside_the_image_are_rejected() {
    let img = Image::<Rgba8>::new(10, 8);
    for r in [Rect::new(8, 0, 3, 1), Rect::new(0, 8, 1, 1), Rect::new(u32::MAX, 0, 2, 1), Rect::new(0, 1, 10, u32::MAX)]
    {
        assert!(matches!(img.roi(r).unwrap_err(), Error::RoiOutOfBounds { .. }), "{r:?}");
        let Some(s) = stream() else { continue };
        let dev = s.upload(&img.view()).unwrap();
        assert!(matches!(dev.roi(r).unwrap_err(), Error::RoiOutOfBounds { .. }));
        assert!(matches!(dev.view().roi(Rect::new(1, 1, 10, 1)).unwrap_err(), Error::RoiOutOfBounds { .. }));
    }
}

#[test]
fn mismatched_sizes_and_counts_are_rejected() {
    let img = Image::<Rgb8>::filled(16, 16, 3);
    let luts = [Lut::invert(); 2];
    assert!(matches!(
        cpu::apply_luts(&img.view(), &luts).unwrap_err(),
        Error::WrongLength { expected: 3, actual: 2, .. }
    ));
    let Some(s) = stream() else { return };
    assert!(matches!(
        s.gpu().apply_luts(&img.view(), &luts).unwrap_err(),
        Error::WrongLength { expected: 3, actual: 2, .. }
    ));
    let src = s.upload(&img.view()).unwrap();
    let mut small = s.alloc::<Gray8>(15, 16).unwrap();
    let e = s.grayscale(&src, &mut small, GrayWeights::Bt601).unwrap_err();
    assert!(matches!(e, Error::DimensionMismatch { expected_width: 16, actual_width: 15, .. }), "{e}");
    let mut rgb_small = s.alloc::<Rgb8>(16, 15).unwrap();
    assert!(matches!(s.upload_into(&img.view(), &mut rgb_small).unwrap_err(), Error::DimensionMismatch { .. }));
    let d_luts = s.upload_lut::<Gray8>(&Lut::invert()).unwrap();
    let mut out = s.alloc::<Rgb8>(16, 16).unwrap();
    assert!(matches!(
        s.apply_lut(&src, &mut out, &d_luts).unwrap_err(),
        Error::WrongLength { expected: 3, actual: 1, .. }
    ));
    assert!(matches!(s.upload_luts(&[]).unwrap_err(), Error::WrongLength { .. }));
    assert!(matches!(s.upload_luts(&[Lut::invert(); 5]).unwrap_err(), Error::WrongLength { .. }));
    let mut bins = s.alloc_histogram(1).unwrap();
    assert!(matches!(s.histogram(&src, &mut bins).unwrap_err(), Error::WrongLength { expected: 3, actual: 1, .. }));
    assert!(matches!(s.alloc_histogram(0).unwrap_err(), Error::WrongLength { .. }));
    let planes = s.alloc::<Gray8>(4, 7).unwrap();
    let mut gray = s.alloc::<Gray8>(4, 2).unwrap();
    assert!(matches!(
        s.grayscale_planar(&planes, &mut gray, GrayWeights::Bt601).unwrap_err(),
        Error::WrongLength { .. }
    ));
    let d_src = s.upload_slice(&[1u32, 2, 3]).unwrap();
    let d_idx = s.upload_slice(&[0u32, 1]).unwrap();
    let mut d_out = s.alloc_slice::<u32>(3).unwrap();
    assert!(matches!(
        s.gather(&d_src, &d_idx, &mut d_out).err().unwrap(),
        Error::WrongLength { expected: 2, actual: 3, .. }
    ));
    still_works(&s);
}

#[test]
fn invalid_weights_are_rejected() {
    let img = Image::<Rgb8>::filled(3, 3, 3);
    for (r, g, b) in [(f32::NAN, 0.0, 0.0), (0.0, f32::INFINITY, 0.0), (0.0, 0.0, 16.5), (-17.0, 0.0, 0.0)] {
        let w = GrayWeights::Custom { r, g, b };
        assert!(matches!(cpu::grayscale(&img.view(), w).unwrap_err(), Error::InvalidWeights { .. }));
        let Some(gpu) = cuimg_tests::gpu() else { continue };
        assert!(matches!(gpu.grayscale(&img.view(), w).unwrap_err(), Error::InvalidWeights { .. }));
    }
}

/// Too large for u32 histogram bins or u32 gather indices: rejected before any work. The
/// buffers are zeroed allocations the checks never touch, so this costs no real memory.
#[test]
fn oversized_inputs_are_rejected_before_any_work() {
    let huge = vec![0u8; 65536 * 65537];
    let view = ImageView::<Gray8>::new(&huge, 65536, 65537, 65536).unwrap();
    assert!(matches!(cpu::histogram(&view).unwrap_err(), Error::TooLarge { .. }));
    assert!(matches!(cpu::equalize(&view).unwrap_err(), Error::TooLarge { .. }));
    let src = vec![0u8; (1 << 32) + 1];
    assert!(matches!(cpu::gather(&src, &[0]).unwrap_err(), Error::TooLarge { .. }));
    if let Some(gpu) = cuimg_tests::gpu() {
        assert!(matches!(gpu.histogram(&view).unwrap_err(), Error::TooLarge { .. }));
        assert!(matches!(gpu.equalize(&view).unwrap_err(), Error::TooLarge { .. }));
        assert!(matches!(gpu.gather(&src, &[0]).unwrap_err(), Error::TooLarge { .. }));
    }
}

#[test]
fn corrupt_files_are_decode_errors_and_missing_ones_io_errors() {
    let dir = std::env::temp_dir().join(format!("cuimg-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = cuimg::io::SAMPLE_PNG;
    let cases: [(&str, Vec<u8>); 4] = [
        ("truncated.png", png[..png.len() / 2].to_vec()),
        ("header-only.png", png[..8].to_vec()),
        ("garbage.png", (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect()),
        ("empty.png", Vec::new()),
    ];
    for (name, bytes) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        for err in [
            cuimg::io::load_rgb(&path).unwrap_err(),
            cuimg::io::load_gray(&path).unwrap_err(),
            cuimg::io::load_rgba(&path).unwrap_err(),
        ] {
            assert!(matches!(&err, Error::Decode { path: p, .. } if p == &path), "{name}: {err}");
        }
    }
    // A missing file is an I/O error, not a decode error (tests/tests/interop.rs has the rest).
    assert!(matches!(cuimg::io::load_rgb(dir.join("missing.png")).unwrap_err(), Error::Io { .. }));
    let img = Image::<Gray8>::filled(2, 2, 1);
    assert!(matches!(cuimg::io::save(&img, dir.join("x.nope")).unwrap_err(), Error::Encode { .. }));
    assert!(matches!(cuimg::io::save(&img, dir.join("no/such/dir/x.png")).unwrap_err(), Error::Encode { .. }));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Asking for more memory than the GPU has (here: a 1 TiB allocation) is
/// `Error::OutOfDeviceMemory`, and the context survives it.
#[test]
fn out_of_device_memory_is_a_typed_error() {
    let Some(s) = stream() else { return };
    let e = s.alloc::<Rgba8>(1 << 20, 1 << 18).unwrap_err();
    assert!(matches!(e, Error::OutOfDeviceMemory(_)), "{e}");
    assert!(e.to_string().starts_with("out of GPU memory"), "{e}");
    assert!(!e.is_context_lost());
    still_works(&s);
}

#[test]
fn no_driver_is_a_typed_error() {
    if cuimg::driver_available() {
        assert!(cuimg::Gpu::new().is_ok() || cuimg::Gpu::new().unwrap_err().is_no_gpu());
        let e = cuimg::Gpu::with_device(1000).unwrap_err();
        assert!(matches!(e, Error::NoDevice(_)), "{e}");
    } else {
        let e = cuimg::Gpu::new().unwrap_err();
        assert!(matches!(e, Error::NoDriver(_)), "{e}");
        assert!(e.is_no_gpu());
        assert!(e.to_string().starts_with("no CUDA driver"));
    }
}

/// Sizes whose byte counts overflow are typed errors in every constructor, never a wrapped
/// length (which once made `from_bytes` return an image of zero pixels in release builds),
/// a panic or an abort.
#[test]
fn constructors_check_their_sizes() {
    for (w, h) in [(1u32 << 31, 1u32 << 31), (u32::MAX, u32::MAX)] {
        assert!(matches!(Image::<Rgba8>::from_bytes(w, h, &[]).unwrap_err(), Error::TooLarge { .. }), "{w}x{h}");
    }
    for (w, h) in [(1u32 << 31, 1u32 << 31), (u32::MAX, u32::MAX), (u32::MAX, 2)] {
        assert!(Image::<Rgba8>::from_bytes(w, h, &[]).is_err(), "{w}x{h}");
        assert!(Image::<Gray8>::from_bytes(w, h, &[]).is_err(), "{w}x{h}");
        assert!(matches!(
            PlanarView::from_chw(&[], w, h).unwrap_err(),
            Error::TooLarge { .. } | Error::WrongLength { .. }
        ));
    }
    assert!(matches!(PlanarView::from_chw(&[], u32::MAX, u32::MAX).unwrap_err(), Error::TooLarge { .. }));
    let err = Image::<Rgba8>::try_new(u32::MAX, u32::MAX).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    // Within the address space but far beyond any machine's memory: an error, not an abort.
    let err = Image::<Rgba8>::try_new(1 << 30, 1 << 28).unwrap_err();
    assert!(matches!(err, Error::OutOfHostMemory { .. } | Error::TooLarge { .. }), "{err}");
    assert_eq!(Image::<Rgb8>::try_new(5, 3).unwrap().as_bytes().len(), 45);
    let panic = std::panic::catch_unwind(|| Image::<Rgba8>::new(u32::MAX, u32::MAX)).unwrap_err();
    let msg = panic.downcast_ref::<String>().expect("a message");
    assert!(msg.contains("too large"), "{msg}");
    // Histogram bins whose sum passes u32::MAX: the table still comes out, monotone.
    let lut = cuimg::ops::histogram::equalization_lut(&[u32::MAX; 256]);
    assert!(lut.0.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!((lut[0u8], lut[255u8]), (0, 255));
    if let Some(s) = stream() {
        assert!(matches!(s.alloc::<Rgba8>(u32::MAX, u32::MAX).unwrap_err(), Error::TooLarge { .. }));
        assert!(matches!(s.gpu().alloc_pinned::<Rgba8>(u32::MAX, u32::MAX).unwrap_err(), Error::TooLarge { .. }));
        still_works(&s);
    }
}

/// The `image` crate decodes a truncated JPEG into an image with zeros where the data ends;
/// cuimg's loaders refuse it, by the JPEG's own marker structure.
#[test]
fn truncated_jpegs_are_refused() {
    let img = Image::<Rgb8>::from_fn(120, 80, |x, y| Rgb8([x as u8, y as u8, (x ^ y) as u8]));
    let jpg = cuimg::io::encode(&img, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
    assert!(cuimg::io::jpeg_is_complete(&jpg));
    assert!(cuimg::io::decode_rgb(&jpg, std::path::Path::new("ok.jpg")).is_ok());
    for cut in [jpg.len() - 2, jpg.len() * 3 / 4, jpg.len() / 2, 200, 3] {
        assert!(!cuimg::io::jpeg_is_complete(&jpg[..cut]), "cut at {cut}");
        let err = cuimg::io::decode_rgb(&jpg[..cut], std::path::Path::new("cut.jpg")).unwrap_err();
        assert!(err.to_string().contains("truncated JPEG"), "{err}");
    }
    // Trailing bytes after the end-of-image marker are fine.
    let mut padded = jpg.clone();
    padded.extend_from_slice(&[0, 0, 0]);
    assert!(cuimg::io::jpeg_is_complete(&padded));
}
