//! CLAHE against OpenCV's `createCLAHE(clip, grid).apply`, bit for bit: the CPU reference and
//! the GPU kernels on
//! random, skewed (peaky) and constant images of odd sizes down to 1x1, grids that do and do
//! not divide the image (OpenCV extends by reflection), clip limits from 0.01 (every bin
//! clipped to 1) to 1000 (none), and the photos. The digests are OpenCV 5.0's, made on the
//! lent GPU machine by tests/golden/make_clahe_goldens.py. Bad parameters are typed errors.

use cuimg::{Clahe, Error, Gray8, GrayWeights, Image, Rect, cpu};
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
