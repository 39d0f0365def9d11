//! `resize`, exact with OpenCV 5.0's `cv2.resize` and Pillow 12's `Image.resize`: every case
//! of `tests/golden/resize.txt` (made on the lent GPU machine by
//! `tests/golden/make_resize_goldens.py`) on the CPU reference.

use cuimg::{CvInterpolation, Filter, Gray8, Image, La8, PilFilter, Rgb8, Rgba8, cpu};
use cuimg_tests::{fnv1a, splitmix_bytes};

/// One golden line: `key=value` fields.
struct Case<'a> {
    fields: Vec<(&'a str, &'a str)>,
    line: &'a str,
}

impl<'a> Case<'a> {
    fn get(&self, k: &str) -> Option<&'a str> {
        self.fields.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
    }
    fn size(&self, k: &str) -> (u32, u32) {
        let v = self.get(k).unwrap();
        let (w, h) = v.split_once('x').unwrap();
        (w.parse().unwrap(), h.parse().unwrap())
    }
}

fn goldens() -> String {
    let dir = std::env::var_os("CUIMG_GOLDENS")
        .map_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden"), std::path::PathBuf::from);
    std::fs::read_to_string(dir.join("resize.txt")).expect("tests/golden/resize.txt")
}

fn cases(text: &str) -> Vec<Case<'_>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| Case { fields: line.split(' ').filter_map(|f| f.split_once('=')).collect(), line })
        .collect()
}

/// The source bytes of a case: splitmix bytes, or a repository photo (RGB, or gray).
fn source(case: &Case) -> Option<(u32, u32, Vec<u8>)> {
    let c: usize = case.get("c")?.parse().ok()?;
    let src = case.get("src")?;
    if let Some(name) = src.strip_prefix("photo:") {
        let path = cuimg_tests::images_dir().join(format!("{name}.png"));
        let bytes = std::fs::read(path).ok()?;
        let p = std::path::Path::new(name);
        return Some(if c == 1 {
            let img = cuimg::io::decode_luma(&bytes, p).ok()?;
            (img.width(), img.height(), img.as_bytes().to_vec())
        } else {
            let img = cuimg::io::decode_rgb(&bytes, p).ok()?;
            (img.width(), img.height(), img.as_bytes().to_vec())
        });
    }
    let (w, h) = case.size("src");
    let seed: u64 = case.get("seed")?.parse().ok()?;
    Some((w, h, splitmix_bytes(seed, (w * h) as usize * c)))
}

fn filter(case: &Case) -> Option<Filter> {
    let mode = case.get("mode")?;
    Some(match case.get("kind")? {
        "cv-resize" => Filter::OpenCv(match mode {
            "nearest" => CvInterpolation::Nearest,
            "nearest-exact" => CvInterpolation::NearestExact,
            "linear" => CvInterpolation::Linear,
            "linear-exact" => CvInterpolation::LinearExact,
            "area" => CvInterpolation::Area,
            "cubic" => CvInterpolation::Cubic,
            "lanczos4" => CvInterpolation::Lanczos4,
            _ => return None,
        }),
        "pil-resize" => Filter::Pillow(match mode {
            "nearest" => PilFilter::Nearest,
            "box" => PilFilter::Box,
            "bilinear" => PilFilter::Bilinear,
            "hamming" => PilFilter::Hamming,
            "bicubic" => PilFilter::Bicubic,
            "lanczos" => PilFilter::Lanczos,
            _ => return None,
        }),
        _ => return None,
    })
}

fn run<P: cuimg::Pixel>(w: u32, h: u32, bytes: &[u8], d: (u32, u32), f: Filter) -> Vec<u8> {
    let img = Image::<P>::from_bytes(w, h, bytes).unwrap();
    cpu::resize(&img.view(), d.0, d.1, f).unwrap().as_bytes().to_vec()
}

/// OpenCV's INTER_CUBIC with IPP on (the default of the x86 wheels), for 1, 3 or 4 channels:
/// IPP's code, not OpenCV's, makes these.
fn ipp_cubic(case: &Case) -> bool {
    case.get("kind") == Some("cv-resize")
        && case.get("mode") == Some("cubic")
        && case.get("ipp").is_none()
        && case.get("c") != Some("2")
}

/// Runs every resize case without a box on the CPU; returns the failures by mode.
fn check_cpu(text: &str) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in cases(text) {
        let (Some(f), Some((w, h, bytes))) = (filter(&case), source(&case)) else { continue };
        if case.get("box").is_some() {
            continue;
        }
        let d = case.size("dst");
        let got = match case.get("c").unwrap() {
            "1" => run::<Gray8>(w, h, &bytes, d, f),
            "2" => run::<La8>(w, h, &bytes, d, f),
            "3" => run::<Rgb8>(w, h, &bytes, d, f),
            _ => run::<Rgba8>(w, h, &bytes, d, f),
        };
        ran += 1;
        let want = u64::from_str_radix(case.get("fnv").unwrap(), 16).unwrap();
        if ipp_cubic(&case) {
            // Intel's IPP takes INTER_CUBIC for 1, 3 and 4 channels in the x86 wheels and
            // rounds otherwise: within 1 of OpenCV's own code (the `ipp=0` lines, exact).
            if let Some(hex) = case.get("bytes") {
                let want: Vec<u8> =
                    (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
                let apart = got.iter().zip(&want).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
                assert!(apart <= 1, "{}: {apart} apart from IPP's cubic", case.line);
            }
            continue;
        }
        if fnv1a(&got) != want {
            let detail = case.get("bytes").map_or(String::new(), |hex| {
                let want: Vec<u8> =
                    (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
                let diffs: Vec<String> = got
                    .iter()
                    .zip(&want)
                    .enumerate()
                    .filter(|(_, (a, b))| a != b)
                    .take(6)
                    .map(|(i, (a, b))| format!("[{i}] {a} vs {b}"))
                    .collect();
                format!(" (got vs OpenCV/Pillow: {})", diffs.join(", "))
            });
            failures.push(format!("{}{detail}", case.line.split(" fnv=").next().unwrap()));
        }
    }
    (ran, failures)
}

#[test]
fn the_cpu_reference_matches_opencv_and_pillow() {
    let text = goldens();
    let (ran, failures) = check_cpu(&text);
    assert!(ran > 1000, "{ran} cases ran");
    let mut by_mode = std::collections::BTreeMap::<String, usize>::new();
    for f in &failures {
        let key: Vec<&str> = f.split(' ').take(2).collect();
        *by_mode.entry(key.join(" ")).or_default() += 1;
    }
    for f in failures.iter().take(40) {
        eprintln!("{f}");
    }
    assert!(failures.is_empty(), "{} of {ran} cases differ: {by_mode:?}", failures.len());
}
