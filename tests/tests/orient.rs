//! Flips, transposes and quarter turns against OpenCV (`cv2.flip`, `cv2.rotate`,
//! `cv2.transpose`; digests in tests/golden/opencv-orient.txt, made on the lent GPU machine
//! by tests/golden/make_orient_goldens.py), on the CPU (in CI) and on the GPU, single and
//! batch. The registry's tests (tests/tests/registry.rs) cover the other forms, regions and
//! errors.

use cuimg::{Bgr8, Gray8, Image, La8, Orientation, Pixel, Rgba8, cpu};
use cuimg_tests::{assert_same, fnv1a, splitmix_bytes};

const SIZES: &[(u32, u32)] = &[(1, 1), (1, 17), (17, 1), (7, 3), (64, 48), (333, 257)];

/// The digests: the committed file, or the folder `CUIMG_GOLDENS` names (a fresh run of the
/// generator on the lent machine, checked in the same run).
fn golden(case: &str) -> u64 {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let text = TEXT.get_or_init(|| {
        let dir = std::env::var_os("CUIMG_GOLDENS").map_or_else(
            || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden"),
            std::path::PathBuf::from,
        );
        std::fs::read_to_string(dir.join("opencv-orient.txt")).expect("the orientation goldens")
    });
    let line = text.lines().find(|l| l.split(' ').next() == Some(case)).unwrap_or_else(|| panic!("no golden {case}"));
    u64::from_str_radix(line.split(' ').nth(1).expect("digest"), 16).expect("hex")
}

/// The image the golden generator makes for `w` x `h` and `P`'s channels.
fn input<P: Pixel>(w: u32, h: u32) -> Image<P> {
    let c = P::CHANNELS as u64;
    Image::from_bytes(w, h, &splitmix_bytes(3000 + w as u64 * 7 + h as u64 + c, (w * h) as usize * c as usize)).unwrap()
}

fn each_case<P: Pixel>(mut f: impl FnMut(&Image<P>, Orientation, String)) {
    for &(w, h) in SIZES {
        let img = input::<P>(w, h);
        for o in Orientation::ALL {
            f(&img, o, format!("orient-{}-c{}-{w}x{h}", o.exif(), P::CHANNELS));
        }
    }
}

// Bgr8 stands for three channels (the bytes move the same whatever they mean).
fn cpu_matches_opencv<P: Pixel>() {
    each_case::<P>(|img, o, case| {
        assert_eq!(fnv1a(cpu::orient(&img.view(), o).unwrap().as_bytes()), golden(&case), "{case} ({o:?})");
    });
}

#[test]
fn the_cpu_reference_matches_opencv() {
    cpu_matches_opencv::<Gray8>();
    cpu_matches_opencv::<La8>();
    cpu_matches_opencv::<Bgr8>();
    cpu_matches_opencv::<Rgba8>();
}

fn gpu_matches_opencv<P: Pixel>(gpu: &cuimg::Gpu) {
    let mut batch: Vec<(Image<P>, Orientation)> = Vec::new();
    each_case::<P>(|img, o, case| {
        let got = gpu.orient(&img.view(), o).unwrap();
        assert_eq!(fnv1a(got.as_bytes()), golden(&case), "{case} on the GPU ({o:?})");
        batch.push((img.clone(), o));
    });
    for o in Orientation::ALL {
        let imgs: Vec<_> = batch.iter().filter(|(_, b)| *b == o).map(|(i, _)| i.view()).collect();
        for (img, got) in imgs.iter().zip(gpu.orient_batch(&imgs, o).unwrap()) {
            assert_same(&got, &cpu::orient(img, o).unwrap(), &format!("{o:?} batch {:?}", img.dimensions()));
        }
    }
}

#[test]
fn the_gpu_matches_opencv_single_and_batch() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    gpu_matches_opencv::<Gray8>(&gpu);
    gpu_matches_opencv::<La8>(&gpu);
    gpu_matches_opencv::<Bgr8>(&gpu);
    gpu_matches_opencv::<Rgba8>(&gpu);
}

/// The eight orientations are what their names say on a 3x2 image, and each one's inverse
/// brings the image back.
#[test]
fn orientations_do_what_they_say() {
    let img = Image::from_fn(3, 2, |x, y| Gray8([(10 * y + x) as u8]));
    let bytes = |o| cpu::orient(&img.view(), o).unwrap().as_bytes().to_vec();
    assert_eq!(bytes(Orientation::Identity), [0, 1, 2, 10, 11, 12]);
    assert_eq!(bytes(Orientation::FlipHorizontal), [2, 1, 0, 12, 11, 10]);
    assert_eq!(bytes(Orientation::Rotate180), [12, 11, 10, 2, 1, 0]);
    assert_eq!(bytes(Orientation::FlipVertical), [10, 11, 12, 0, 1, 2]);
    assert_eq!(bytes(Orientation::Transpose), [0, 10, 1, 11, 2, 12]);
    assert_eq!(bytes(Orientation::Rotate90), [10, 0, 11, 1, 12, 2]);
    assert_eq!(bytes(Orientation::Transverse), [12, 2, 11, 1, 10, 0]);
    assert_eq!(bytes(Orientation::Rotate270), [2, 12, 1, 11, 0, 10]);
    let inverse = |o| match o {
        Orientation::Rotate90 => Orientation::Rotate270,
        Orientation::Rotate270 => Orientation::Rotate90,
        o => o,
    };
    for o in Orientation::ALL {
        let turned = cpu::orient(&img.view(), o).unwrap();
        assert_eq!(cpu::orient(&turned.view(), inverse(o)).unwrap(), img, "{o:?}");
        assert_eq!(Orientation::from_exif(o.exif()), Some(o));
        assert_eq!(o.name().parse::<Orientation>().unwrap(), o);
    }
    assert!(Orientation::from_exif(0).is_none() && Orientation::from_exif(9).is_none());
    assert!("sideways".parse::<Orientation>().is_err());
}
