//! CLAHE against OpenCV's `createCLAHE(clip, grid).apply`, bit for bit: the CPU reference and
//! the GPU kernels on
//! random, skewed (peaky) and constant images of odd sizes down to 1x1, grids that do and do
//! not divide the image (OpenCV extends by reflection), clip limits from 0.01 (every bin
//! clipped to 1) to 1000 (none), and the photos. The digests are OpenCV 5.0's, made on the
//! lent GPU machine by tests/golden/make_clahe_goldens.py. Bad parameters are typed errors.
//! Color images (per channel, on luma) and ragged gray and color batches against the CPU
//! reference.

use cuimg::{Bgr8, Clahe, EqualizeMode, Error, Gray8, GrayWeights, Image, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{
    assert_same, assert_writes_only_region, clahe_golden, color_photos, fnv1a, gray_photo, poisoned, splitmix_bytes,
    stream,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// An image size and the tile grids tried on it.
type Geometry = ((u32, u32), &'static [(u32, u32)]);

const GEOMETRY: &[Geometry] = &[
    ((1, 1), &[(1, 1)]),
    ((7, 3), &[(1, 1), (3, 3), (7, 2)]),
    ((64, 48), &[(8, 8), (2, 3)]),
    ((333, 257), &[(8, 8), (5, 7), (16, 16)]),
    ((1283, 719), &[(8, 8)]),
    ((1920, 1080), &[(8, 8), (3, 5)]),
];
const CLIPS: &[f64] = &[0.01, 1.0, 2.0, 40.0, 1000.0];

fn images(w: u32, h: u32) -> Vec<(&'static str, Image<Gray8>, &'static [f64])> {
    let g = Image::<Gray8>::from_bytes(w, h, &splitmix_bytes(3000 + w as u64 + h as u64, (w * h) as usize)).unwrap();
    let mut skewed = g.clone();
    skewed.as_bytes_mut().iter_mut().for_each(|b| *b = *b % 37 + 100);
    vec![("random", g, CLIPS), ("skewed", skewed, CLIPS), ("constant", Image::filled(w, h, 77), &[2.0])]
}

#[test]
fn cpu_matches_opencv_on_synthetic_images() {
    let mut checked = 0;
    for &((w, h), grids) in GEOMETRY {
        for (kind, img, clips) in images(w, h) {
            for &grid in grids {
                for &clip in clips {
                    let case = format!("clahe-{kind}-{w}x{h}-t{}x{}-c{clip:?}", grid.0, grid.1);
                    let out = cpu::clahe(&img.view(), Clahe::new(clip, grid).unwrap()).unwrap();
                    assert_eq!(fnv1a(out.as_bytes()), clahe_golden(&case), "CPU vs OpenCV: {case}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 12 * 11);
}

fn photos() -> Vec<(&'static str, Image<Gray8>)> {
    let mut photos = vec![("camera", gray_photo())];
    for (name, rgb) in color_photos() {
        photos.push((name, cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap()));
    }
    photos
}

#[test]
fn cpu_matches_opencv_on_photos() {
    for (name, gray) in &photos() {
        for grid in [(8, 8), (3, 5)] {
            for clip in [2.0, 40.0] {
                let case = format!("clahe-photo-{name}-t{}x{}-c{clip:?}", grid.0, grid.1);
                let out = cpu::clahe(&gray.view(), Clahe::new(clip, grid).unwrap()).unwrap();
                assert_eq!(fnv1a(out.as_bytes()), clahe_golden(&case), "CPU vs OpenCV: {case}");
            }
        }
    }
}

/// Every golden case on the GPU, each into a poisoned output.
#[test]
fn gpu_matches_opencv() {
    let Some(s) = stream() else { return };
    let run = |img: &Image<Gray8>, clip: f64, grid: (u32, u32), case: &str| {
        let (w, h) = img.dimensions();
        let dev = s.upload(&img.view()).unwrap();
        let mut out = poisoned::<Gray8>(&s, w, h);
        s.clahe(&dev, &mut out, Clahe::new(clip, grid).unwrap()).unwrap();
        assert_eq!(fnv1a(s.download(&out).unwrap().as_bytes()), clahe_golden(case), "GPU vs OpenCV: {case}");
    };
    for &((w, h), grids) in GEOMETRY {
        for (kind, img, clips) in images(w, h) {
            for &grid in grids {
                for &clip in clips {
                    run(&img, clip, grid, &format!("clahe-{kind}-{w}x{h}-t{}x{}-c{clip:?}", grid.0, grid.1));
                }
            }
        }
    }
    for (name, gray) in &photos() {
        for grid in [(8, 8), (3, 5)] {
            for clip in [2.0, 40.0] {
                run(gray, clip, grid, &format!("clahe-photo-{name}-t{}x{}-c{clip:?}", grid.0, grid.1));
            }
        }
    }
}

/// Random sizes, grids and clip limits, from a region of a larger image into a region of a
/// larger poisoned destination: the GPU equals the CPU reference on the region, and the
/// bytes around the destination region stay as they were.
#[test]
fn gpu_matches_cpu_on_regions_and_random_geometry() {
    let Some(s) = stream() else { return };
    let mut rng = SmallRng::seed_from_u64(14);
    for round in 0..40 {
        let (w, h) = (rng.random_range(1..300u32), rng.random_range(1..200u32));
        let grid = (rng.random_range(1..=w.min(17)), rng.random_range(1..=h.min(17)));
        let clip = [0.5, 1.5, 3.0, 12.0, 100.0][round % 5];
        let big = Image::<Gray8>::from_bytes(w + 5, h + 3, &splitmix_bytes(round as u64, ((w + 5) * (h + 3)) as usize))
            .unwrap();
        let at = Rect::new(2, 1, w, h);
        let params = Clahe::new(clip, grid).unwrap();
        let want = cpu::clahe(&big.roi(at).unwrap(), params).unwrap();
        let dev = s.upload(&big.view()).unwrap();
        let src = dev.roi(at).unwrap();
        let what = format!("{w}x{h} grid {grid:?} clip {clip}");
        let to = Rect::new(4, 2, w, h);
        assert_writes_only_region(&s, (w + 4, h + 2), to, &want, |d| s.clahe(&src, d, params), &what);
    }
    // The blocking call gives the same.
    let img = &photos()[0].1;
    let p = Clahe::new(2.5, (6, 4)).unwrap();
    assert_same(&s.gpu().clahe(&img.view(), p).unwrap(), &cpu::clahe(&img.view(), p).unwrap(), "blocking");
}

#[test]
fn bad_parameters_are_typed_errors() {
    for clip in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = Clahe::new(clip, (8, 8)).unwrap_err();
        assert!(matches!(&e, Error::InvalidParameter { what, .. } if what == "CLAHE clip limit"), "{clip}: {e}");
    }
    for grid in [(0, 8), (8, 0), (0, 0)] {
        assert!(matches!(Clahe::new(2.0, grid).unwrap_err(), Error::InvalidParameter { .. }), "{grid:?}");
    }
    let img = Image::<Gray8>::filled(7, 3, 5);
    for grid in [(8, 1), (1, 4), (8, 8)] {
        let e = cpu::clahe(&img.view(), Clahe::new(2.0, grid).unwrap()).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }), "{grid:?}: {e}");
        assert!(e.to_string().contains("do not fit a 7x3 image"), "{e}");
    }
    let empty = Image::<Gray8>::new(0, 3);
    assert!(matches!(cpu::clahe(&empty.view(), Clahe::default()).unwrap_err(), Error::EmptyImage { .. }));
    if let Some(s) = stream() {
        for grid in [(8, 1), (1, 4)] {
            let e = s.gpu().clahe(&img.view(), Clahe::new(2.0, grid).unwrap()).unwrap_err();
            assert!(matches!(e, Error::InvalidParameter { .. }), "GPU {grid:?}: {e}");
        }
        let dev = s.upload(&img.view()).unwrap();
        let mut small = s.alloc::<Gray8>(6, 3).unwrap();
        let e = s.clahe(&dev, &mut small, Clahe::new(2.0, (1, 1)).unwrap()).unwrap_err();
        assert!(matches!(e, Error::DimensionMismatch { .. }), "{e}");
    }
}

/// Color CLAHE (per channel and on luma; RGB, BGR, RGBA) on the GPU equals the CPU
/// reference, on photos and random images of odd sizes, into poisoned outputs.
#[test]
fn gpu_color_matches_cpu() {
    let Some(s) = stream() else { return };
    fn check<P: cuimg::Color>(s: &cuimg::Stream, img: &Image<P>, what: &str) {
        let (w, h) = img.dimensions();
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            for (clip, grid) in [(2.0, (8, 8)), (40.0, (3, 5)), (0.5, (1, 1))] {
                let grid = (grid.0.min(w), grid.1.min(h));
                let p = Clahe::new(clip, grid).unwrap();
                let dev = s.upload(&img.view()).unwrap();
                let mut out = poisoned::<P>(s, w, h);
                s.clahe_color(&dev, &mut out, p, mode).unwrap();
                let want = cpu::clahe_color(&img.view(), p, mode).unwrap();
                assert_same(&s.download(&out).unwrap(), &want, &format!("{what} {mode:?} {grid:?} clip {clip}"));
            }
        }
    }
    for (name, photo) in color_photos() {
        check(&s, &photo, name);
        let bgr = Image::<Bgr8>::from_fn(photo.width(), photo.height(), |x, y| {
            let [r, g, b] = photo.get(x, y).0;
            Bgr8([b, g, r])
        });
        check(&s, &bgr, &format!("{name} as BGR"));
    }
    for (w, h) in [(1, 1), (7, 3), (333, 257)] {
        check(&s, &cuimg_tests::random::<Rgb8>(w, h, 5), &format!("random RGB {w}x{h}"));
        check(&s, &cuimg_tests::random::<Rgba8>(w, h, 6), &format!("random RGBA {w}x{h}"));
    }
    let p = Clahe::new(2.5, (6, 4)).unwrap();
    let img = &color_photos()[0].1;
    assert_same(
        &s.gpu().clahe_color(&img.view(), p, EqualizeMode::Luma).unwrap(),
        &cpu::clahe_color(&img.view(), p, EqualizeMode::Luma).unwrap(),
        "blocking",
    );
}

/// The CPU color reference reduces to gray CLAHE where it must: per channel, each channel
/// of the result is the gray CLAHE of that channel; on luma, an image whose channels are
/// equal (luma = the channel) maps every channel as gray CLAHE maps the gray image.
#[test]
fn cpu_color_reduces_to_gray() {
    let p = Clahe::new(3.0, (5, 4)).unwrap();
    let photo = &color_photos()[0].1;
    let per = cpu::clahe_color(&photo.view(), p, EqualizeMode::PerChannel).unwrap();
    for c in 0..3 {
        let plane = Image::<Gray8>::from_fn(photo.width(), photo.height(), |x, y| Gray8([photo.get(x, y).0[c]]));
        let want = cpu::clahe(&plane.view(), p).unwrap();
        let got = Image::<Gray8>::from_fn(photo.width(), photo.height(), |x, y| Gray8([per.get(x, y).0[c]]));
        assert_same(&got, &want, &format!("per channel, channel {c}"));
    }
    let gray = gray_photo();
    let rgb = Image::<Rgb8>::from_fn(gray.width(), gray.height(), |x, y| Rgb8([gray.get(x, y).0[0]; 3]));
    let want = cpu::clahe(&gray.view(), p).unwrap();
    let got = cpu::clahe_color(&rgb.view(), p, EqualizeMode::Luma).unwrap();
    let want_rgb = Image::<Rgb8>::from_fn(gray.width(), gray.height(), |x, y| Rgb8([want.get(x, y).0[0]; 3]));
    assert_same(&got, &want_rgb, "luma of a gray RGB image");
}

/// A ragged gray batch (1x1 up to 1080p, sizes not multiples of the grid) in one call equals
/// the CPU reference image by image; outputs start poisoned; an image too small for the
/// grid is a typed error before anything runs.
#[test]
fn gpu_batch_matches_cpu() {
    let Some(s) = stream() else { return };
    let photo = gray_photo();
    let mut images: Vec<Image<Gray8>> = [(1, 1), (8, 8), (9, 17), (333, 257), (640, 480), (1920, 1080)]
        .iter()
        .map(|&(w, h)| cuimg_tests::random::<Gray8>(w, h, (w * h) as u64))
        .collect();
    images.push(cuimg_tests::tiled(&photo, 1283, 719));
    images.push(Image::filled(100, 60, 77));
    for (clip, grid) in [(2.0, (1, 1)), (40.0, (1, 1))] {
        let p = Clahe::new(clip, grid).unwrap();
        let views: Vec<_> = images.iter().map(|i| i.view()).collect();
        let src = s.upload_batch(&views).unwrap();
        let poison: Vec<Image<Gray8>> = images.iter().map(|i| Image::filled(i.width(), i.height(), 0xA5)).collect();
        let mut dst = s.upload_batch(&poison.iter().map(|i| i.view()).collect::<Vec<_>>()).unwrap();
        s.clahe_batch(&src, &mut dst, p).unwrap();
        for (k, (got, img)) in s.download_batch(&dst).unwrap().iter().zip(&images).enumerate() {
            assert_same(got, &cpu::clahe(&img.view(), p).unwrap(), &format!("batch image {k} clip {clip}"));
        }
    }
    // Grids the smallest images cannot take.
    let big: Vec<Image<Gray8>> = images[2..].to_vec();
    let views: Vec<_> = big.iter().map(|i| i.view()).collect();
    for grid in [(8, 8), (3, 5)] {
        let p = Clahe::new(2.0, grid).unwrap();
        let src = s.upload_batch(&views).unwrap();
        let mut dst = s.alloc_batch::<Gray8>(&src.sizes()).unwrap();
        s.clahe_batch(&src, &mut dst, p).unwrap();
        for (k, (got, img)) in s.download_batch(&dst).unwrap().iter().zip(&big).enumerate() {
            assert_same(got, &cpu::clahe(&img.view(), p).unwrap(), &format!("batch image {k} grid {grid:?}"));
        }
    }
    let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    let e = s.gpu().clahe_batch(&views, Clahe::default()).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    assert!(e.to_string().contains("1x1"), "{e}");
    // The blocking call.
    let out = s.gpu().clahe_batch(&views[2..], Clahe::default()).unwrap();
    assert_same(&out[3], &cpu::clahe(&views[5], Clahe::default()).unwrap(), "blocking batch");
}

/// A ragged color batch, per channel and on luma, RGB and BGRA (alpha kept), equals the CPU
/// reference image by image; outputs start poisoned. A batch of more images than one
/// launch's `gridDim.z` takes with three sets each goes in two chunks.
#[test]
fn gpu_color_batch_matches_cpu() {
    fn check<P: cuimg::Color>(s: &cuimg::Stream, images: &[Image<P>], p: Clahe, what: &str) {
        let views: Vec<_> = images.iter().map(|i| i.view()).collect();
        let src = s.upload_batch(&views).unwrap();
        let poison: Vec<Image<P>> = images.iter().map(|i| Image::filled(i.width(), i.height(), 0xA5)).collect();
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            let mut dst = s.upload_batch(&poison.iter().map(|i| i.view()).collect::<Vec<_>>()).unwrap();
            s.clahe_color_batch(&src, &mut dst, p, mode).unwrap();
            for (k, (got, img)) in s.download_batch(&dst).unwrap().iter().zip(images).enumerate() {
                let want = cpu::clahe_color(&img.view(), p, mode).unwrap();
                assert_same(got, &want, &format!("{what} {} {mode:?} image {k}", P::NAME));
            }
        }
    }
    let Some(s) = stream() else { return };
    let sizes = [(1, 1), (8, 8), (9, 17), (333, 257), (640, 480)];
    let rgb: Vec<Image<Rgb8>> =
        sizes.iter().map(|&(w, h)| cuimg_tests::random::<Rgb8>(w, h, (w * h) as u64 + 1)).collect();
    let mut bgra: Vec<Image<cuimg::Bgra8>> =
        sizes.iter().map(|&(w, h)| cuimg_tests::skewed::<cuimg::Bgra8>(w, h, (w * h) as u64 + 2)).collect();
    bgra.push(Image::filled(100, 60, 77));
    for clip in [2.0, 40.0] {
        let p = Clahe::new(clip, (1, 1)).unwrap();
        check(&s, &rgb, p, &format!("clip {clip}"));
        check(&s, &bgra, p, &format!("clip {clip}"));
    }
    let (_, photo) = color_photos().into_iter().next().expect("a color photo");
    let mut big: Vec<Image<Rgb8>> = rgb[2..].to_vec();
    big.push(cuimg_tests::tiled(&photo, 1283, 719));
    for grid in [(8, 8), (3, 5)] {
        check(&s, &big, Clahe::new(2.0, grid).unwrap(), &format!("grid {grid:?}"));
    }
    // Too small for the grid: a typed error naming the size, before anything runs.
    let views: Vec<_> = rgb.iter().map(|i| i.view()).collect();
    let e = s.gpu().clahe_color_batch(&views, Clahe::default(), EqualizeMode::Luma).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    assert!(e.to_string().contains("1x1"), "{e}");
    // The blocking call.
    let out = s.gpu().clahe_color_batch(&views[2..], Clahe::default(), EqualizeMode::PerChannel).unwrap();
    let want = cpu::clahe_color(&views[4], Clahe::default(), EqualizeMode::PerChannel).unwrap();
    assert_same(&out[2], &want, "blocking color batch");
    // 65535 / 3 = 21845 images per tables launch per channel: 21850 tiny images take two
    // chunks, and the second chunk's images must find their own tables.
    let many: Vec<Image<Rgb8>> =
        (0..21_850u64).map(|i| cuimg_tests::random::<Rgb8>(1 + (i % 3) as u32, 1 + (i % 2) as u32, i)).collect();
    check(&s, &many, Clahe::new(2.0, (1, 1)).unwrap(), "two chunks");
}

/// One 8K image: a 1x1 grid puts the whole image in one tile, split over every block the GPU
/// holds (the last block of the tile writes its table); 8x8 and 16x16 as most callers use.
#[test]
fn gpu_matches_cpu_at_8k() {
    let Some(s) = stream() else { return };
    if cuimg_tests::sanitizing() {
        println!("SKIP: 8K CLAHE under the sanitizer (the small cases cover the same kernels)");
        return;
    }
    let img = cuimg_tests::tiled(&gray_photo(), 7680, 4320);
    let dev = s.upload(&img.view()).unwrap();
    for grid in [(1, 1), (8, 8), (16, 16)] {
        let p = Clahe::new(2.0, grid).unwrap();
        let mut out = poisoned::<Gray8>(&s, 7680, 4320);
        s.clahe(&dev, &mut out, p).unwrap();
        assert_same(&s.download(&out).unwrap(), &cpu::clahe(&img.view(), p).unwrap(), &format!("8K {grid:?}"));
    }
}

/// CLAHE's tables never outgrow the image: a grid of one tile per pixel on a megapixel
/// image (1.3 GB of tables) is `TooLarge` before anything is allocated, on the CPU and the
/// GPU; the default grid and small images with one tile per pixel still run.
#[test]
fn tables_never_outgrow_the_image() {
    let img = Image::<Gray8>::filled(1000, 1000, 77);
    let grid = Clahe::new(2.0, (1000, 1000)).unwrap();
    let err = cpu::clahe(&img.view(), grid).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("use fewer tiles"), "{err}");
    assert!(cpu::clahe(&img.view(), Clahe::default()).is_ok());
    let small = Image::<Gray8>::filled(30, 20, 9);
    assert!(cpu::clahe(&small.view(), Clahe::new(2.0, (30, 20)).unwrap()).is_ok());
    if let Some(gpu) = cuimg_tests::gpu() {
        assert!(matches!(gpu.clahe(&img.view(), grid), Err(Error::TooLarge { .. })));
        let color = Image::<Rgb8>::filled(1000, 1000, 3);
        assert!(matches!(gpu.clahe_color(&color.view(), grid, EqualizeMode::PerChannel), Err(Error::TooLarge { .. })));
    }
}
