//! CLAHE against OpenCV's `createCLAHE(clip, grid).apply`, bit for bit: the CPU reference on
//! random, skewed (peaky) and constant images of odd sizes down to 1x1, grids that do and do
//! not divide the image (OpenCV extends by reflection), clip limits from 0.01 (every bin
//! clipped to 1) to 1000 (none), and the photos. The digests are OpenCV 5.0's, made on the
//! lent GPU machine by tests/golden/make_clahe_goldens.py. Bad parameters are typed errors.

use cuimg::{Clahe, Error, Gray8, GrayWeights, Image, cpu};
use cuimg_tests::{clahe_golden, color_photos, fnv1a, gray_photo, splitmix_bytes};

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

#[test]
fn cpu_matches_opencv_on_photos() {
    let mut photos = vec![("camera", gray_photo())];
    for (name, rgb) in color_photos() {
        photos.push((name, cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap()));
    }
    for (name, gray) in &photos {
        for grid in [(8, 8), (3, 5)] {
            for clip in [2.0, 40.0] {
                let case = format!("clahe-photo-{name}-t{}x{}-c{clip:?}", grid.0, grid.1);
                let out = cpu::clahe(&gray.view(), Clahe::new(clip, grid).unwrap()).unwrap();
                assert_eq!(fnv1a(out.as_bytes()), clahe_golden(&case), "CPU vs OpenCV: {case}");
            }
        }
    }
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
}
