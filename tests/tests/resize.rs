//! `resize`, exact with OpenCV 5.0's `cv2.resize` and Pillow 12's `Image.resize`: every case
//! of `tests/golden/resize.txt` (made on the lent GPU machine by
//! `tests/golden/make_resize_goldens.py`) on the CPU reference.

use cuimg::{CvInterpolation, Filter, Gray8, Image, La8, PilFilter, Rgb8, Rgba8, SourceBox, cpu};
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

/// A case's source box (Pillow's `box=`), if it has one.
fn source_box(case: &Case) -> Option<SourceBox> {
    let v: Vec<f32> = case.get("box")?.split(',').map(|n| n.parse().unwrap()).collect();
    Some(SourceBox { x0: v[0], y0: v[1], x1: v[2], y1: v[3] })
}

fn run<P: cuimg::Pixel>(w: u32, h: u32, bytes: &[u8], d: (u32, u32), f: Filter, bx: Option<SourceBox>) -> Vec<u8> {
    let img = Image::<P>::from_bytes(w, h, bytes).unwrap();
    match bx {
        Some(bx) => cpu::resize_box(&img.view(), d.0, d.1, f, bx),
        None => cpu::resize(&img.view(), d.0, d.1, f),
    }
    .unwrap()
    .as_bytes()
    .to_vec()
}

/// OpenCV's INTER_CUBIC with IPP on (the default of the x86 wheels), for 1, 3 or 4 channels:
/// IPP's code, not OpenCV's, makes these.
fn ipp_cubic(case: &Case) -> bool {
    case.get("kind") == Some("cv-resize")
        && case.get("mode") == Some("cubic")
        && case.get("ipp").is_none()
        && case.get("c") != Some("2")
}

/// Runs every resize case on the CPU; returns the failures by mode.
fn check_cpu(text: &str) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in cases(text) {
        let (Some(f), Some((w, h, bytes))) = (filter(&case), source(&case)) else { continue };
        let (d, bx) = (case.size("dst"), source_box(&case));
        let got = match case.get("c").unwrap() {
            "1" => run::<Gray8>(w, h, &bytes, d, f, bx),
            "2" => run::<La8>(w, h, &bytes, d, f, bx),
            "3" => run::<Rgb8>(w, h, &bytes, d, f, bx),
            _ => run::<Rgba8>(w, h, &bytes, d, f, bx),
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

/// A case's expected bytes where the golden holds them, else its digest.
fn matches(case: &Case, got: &[u8]) -> bool {
    fnv1a(got) == u64::from_str_radix(case.get("fnv").unwrap(), 16).unwrap()
}

/// The golden cases of one channel count, as a GPU input: (case, source image).
fn gpu_cases<'t, P: cuimg::Pixel>(text: &'t str, c: &str) -> Vec<(Case<'t>, Filter, Image<P>)> {
    cases(text)
        .into_iter()
        .filter(|case| case.get("c") == Some(c) && !ipp_cubic(case))
        .filter_map(|case| {
            let f = filter(&case)?;
            let (w, h, bytes) = source(&case)?;
            Some((case, f, Image::<P>::from_bytes(w, h, &bytes).unwrap()))
        })
        .collect()
}

/// A filter and an output size: the cases of one batch.
type Group = (Filter, (u32, u32));

fn gpu_matches<P: cuimg::Pixel>(gpu: &cuimg::Gpu, text: &str, c: &str) -> usize {
    let all = gpu_cases::<P>(text, c);
    // Each case alone, then every case of a filter and an output size as one ragged batch.
    for (case, f, img) in &all {
        let d = case.size("dst");
        let got = match source_box(case) {
            Some(bx) => gpu.resize_box(&img.view(), d.0, d.1, *f, bx),
            None => gpu.resize(&img.view(), d.0, d.1, *f),
        }
        .unwrap();
        assert!(matches(case, got.as_bytes()), "{} on the GPU", case.line.split(" fnv=").next().unwrap());
    }
    let mut groups: Vec<(Group, Vec<usize>)> = Vec::new();
    for (i, (case, f, _)) in all.iter().enumerate().filter(|(_, (case, ..))| source_box(case).is_none()) {
        let k = (*f, case.size("dst"));
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(i),
            None => groups.push((k, vec![i])),
        }
    }
    for ((f, d), members) in groups {
        let views: Vec<_> = members.iter().map(|&i| all[i].2.view()).collect();
        let got = gpu.resize_batch(&views, d.0, d.1, f).unwrap();
        for (&i, img) in members.iter().zip(&got) {
            assert!(matches(&all[i].0, img.as_bytes()), "{} in a batch of {}", all[i].0.line, members.len());
        }
    }
    all.len()
}

#[test]
fn the_gpu_matches_opencv_and_pillow_single_and_batch() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let text = goldens();
    let ran = gpu_matches::<Gray8>(&gpu, &text, "1")
        + gpu_matches::<La8>(&gpu, &text, "2")
        + gpu_matches::<Rgb8>(&gpu, &text, "3")
        + gpu_matches::<Rgba8>(&gpu, &text, "4");
    assert!(ran > 1000, "{ran} cases ran");
}

/// Bad requests are typed errors, found before anything runs: the GPU's destination keeps
/// its poison.
#[test]
fn bad_requests_are_refused_before_anything_runs() {
    let img = Image::<Rgb8>::from_fn(40, 30, |x, y| Rgb8([x as u8, y as u8, 9]));
    let (cv, pil): (Filter, Filter) = ("cv-linear".parse().unwrap(), "pil-bicubic".parse().unwrap());
    let whole = SourceBox::whole(40, 30);
    let bad_boxes = [
        SourceBox { x1: 41.0, ..whole },           // outside
        SourceBox { x0: -0.5, ..whole },           // outside
        SourceBox { x0: 20.0, x1: 20.0, ..whole }, // empty
        SourceBox { y1: f32::NAN, ..whole },       // not finite
        SourceBox { x1: f32::INFINITY, ..whole },  // not finite
    ];
    let invalid = |r: cuimg::Result<Image<Rgb8>>, what: &str| {
        assert!(matches!(r, Err(cuimg::Error::InvalidParameter { .. })), "{what}: {r:?}");
    };
    for f in [cv, pil] {
        invalid(cpu::resize(&img.view(), 0, 10, f), "a zero width");
        invalid(cpu::resize(&img.view(), 10, 0, f), "a zero height");
        for bx in bad_boxes {
            invalid(cpu::resize_box(&img.view(), 10, 10, f, bx), &format!("{bx:?} with {f}"));
            invalid(cuimg::par::resize_box(&img.view(), 10, 10, f, bx), &format!("{bx:?} with {f} on all cores"));
        }
    }
    // A fractional box is Pillow's: OpenCV's filters read whole pixels.
    let frac = SourceBox { x0: 0.5, ..whole };
    invalid(cpu::resize_box(&img.view(), 10, 10, cv, frac), "a fractional box with OpenCV");
    assert!(cpu::resize_box(&img.view(), 10, 10, pil, frac).is_ok());
    assert!(matches!("bicubic".parse::<Filter>(), Err(cuimg::Error::InvalidParameter { .. })));
    let empty = Image::<Rgb8>::new(0, 0);
    assert!(matches!(cpu::resize(&empty.view(), 5, 5, cv), Err(cuimg::Error::EmptyImage { .. })));

    let Some(stream) = cuimg_tests::stream() else { return };
    let src = stream.upload(&img.view()).unwrap();
    let mut dst = cuimg_tests::poisoned::<Rgb8>(&stream, 10, 10);
    let before = stream.download(&dst).unwrap();
    for f in [cv, pil] {
        for bx in bad_boxes {
            assert!(matches!(stream.resize_box(&src, &mut dst, f, bx), Err(cuimg::Error::InvalidParameter { .. })));
        }
    }
    assert!(matches!(stream.resize_box(&src, &mut dst, cv, frac), Err(cuimg::Error::InvalidParameter { .. })));
    stream.synchronize().unwrap();
    assert_eq!(stream.download(&dst).unwrap(), before, "nothing was written");
}

/// Letterboxes (and fills) laid out by one launch per kind of plan: each image of a ragged
/// batch padded by its own padding and color, against the serial reference (resize, then
/// `copy_make_border`), alone and in the batch, for a filter of each kernel family.
#[test]
fn letterboxes_in_the_resize_launch_match_the_reference() {
    let sizes = [(64, 48), (37, 91), (200, 120), (5, 3), (120, 120)];
    let imgs: Vec<Image<Rgb8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &(w, h))| Image::from_bytes(w, h, &splitmix_bytes(900 + i as u64, (w * h * 3) as usize)).unwrap())
        .collect();
    let gpu = cuimg_tests::gpu();
    for name in ["cv-nearest", "cv-linear", "cv-area", "cv-cubic", "pil-bilinear", "pil-lanczos"] {
        let f: Filter = name.parse().unwrap();
        let layouts: Vec<cuimg::ResizeLayout> = imgs
            .iter()
            .enumerate()
            .map(|(i, img)| {
                let sizing = match i % 3 {
                    0 => cuimg::Sizing::Fit(40, 40, Some([i as u8 * 40, 7, 200, 0])),
                    1 => cuimg::Sizing::Fill(33, 20),
                    _ => cuimg::Sizing::Fit(64, 30, Some([114, 114, 114, 0])),
                };
                sizing.layout(img.width(), img.height(), f).unwrap()
            })
            .collect();
        let want: Vec<Image<Rgb8>> =
            imgs.iter().zip(&layouts).map(|(img, l)| cpu::resize_layout(&img.view(), f, l).unwrap()).collect();
        for ((img, l), w) in imgs.iter().zip(&layouts).zip(&want) {
            assert_eq!(&cuimg::par::resize_layout(&img.view(), f, l).unwrap(), w, "{name} {l:?} on all cores");
            assert_eq!(w.dimensions(), l.size());
        }
        let Some(gpu) = &gpu else { continue };
        for ((img, l), w) in imgs.iter().zip(&layouts).zip(&want) {
            assert_eq!(&gpu.resize_layout(&img.view(), f, l).unwrap(), w, "{name} {l:?} on the GPU");
        }
        let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
        assert_eq!(gpu.resize_batch_layouts(&views, f, &layouts).unwrap(), want, "{name} in a batch");
    }
    // A padding that leaves nothing to resize into is refused before anything runs.
    let Some(gpu) = &gpu else { return };
    let stream = gpu.stream().unwrap();
    let src = stream.upload(&imgs[0].view()).unwrap();
    let mut dst = cuimg_tests::poisoned::<Rgb8>(&stream, 10, 10);
    let before = stream.download(&dst).unwrap();
    let bad = cuimg::ResizeLayout {
        source: None,
        inner: (0, 10),
        pad: Some((cuimg::Padding { top: 0, bottom: 0, left: 5, right: 5 }, [0; 4])),
    };
    assert!(stream.resize_layout(&src, &mut dst, "cv-linear".parse().unwrap(), &bad).is_err());
    stream.synchronize().unwrap();
    assert_eq!(stream.download(&dst).unwrap(), before, "nothing was written");
}

/// Planar images (CHW): each plane resized as a gray image, so every 1-channel golden case
/// holds for each plane of a stack of three, on the CPU, on all cores and on the GPU (one
/// launch for the three planes).
#[test]
fn planar_images_resize_each_plane_as_the_references_do() {
    let text = goldens();
    let gpu = cuimg_tests::gpu();
    let mut ran = 0;
    for case in cases(&text) {
        if case.get("c") != Some("1") || source_box(&case).is_some() || ipp_cubic(&case) {
            continue;
        }
        let (Some(f), Some((w, h, bytes))) = (filter(&case), source(&case)) else { continue };
        let d = case.size("dst");
        // Plane 1 is the case's bytes reversed: a different image between two copies.
        let mut chw = bytes.clone();
        chw.extend(bytes.iter().rev());
        chw.extend(&bytes);
        let img = Image::<Gray8>::from_bytes(w, 3 * h, &chw).unwrap();
        let got = cpu::resize_planar(&img.view(), 3, d.0, d.1, f).unwrap();
        let plane = |out: &Image<Gray8>, k: usize| {
            let n = (d.0 * d.1) as usize;
            out.as_bytes()[k * n..(k + 1) * n].to_vec()
        };
        for k in [0, 2] {
            assert!(matches(&case, &plane(&got, k)), "{} plane {k}", case.line);
        }
        assert_eq!(cuimg::par::resize_planar(&img.view(), 3, d.0, d.1, f).unwrap(), got, "{} on all cores", case.line);
        if let Some(gpu) = &gpu {
            assert_eq!(gpu.resize_planar(&img.view(), 3, d.0, d.1, f).unwrap(), got, "{} on the GPU", case.line);
        }
        ran += 1;
    }
    assert!(ran > 200, "{ran} cases");
    let img = Image::<Gray8>::new(8, 7);
    assert!(cpu::resize_planar(&img.view(), 3, 4, 4, "cv-area".parse().unwrap()).is_err(), "7 rows are not 3 planes");
}

/// Images that are not one batch (separate allocations, and a region of one) resized into
/// a batch of ragged sizes (`Stream::resize_images`): each the reference's bytes, for every
/// kind of plan; a batch of another length refused.
#[test]
fn images_of_their_own_resize_into_a_batch_as_the_reference() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let s = gpu.stream().unwrap();
    let imgs: Vec<Image<Rgb8>> = [(640, 480), (33, 17), (224, 224), (1, 1), (700, 500)]
        .iter()
        .enumerate()
        .map(|(i, &(w, h))| cuimg_tests::random(w, h, 90 + i as u64))
        .collect();
    let dev: Vec<_> = imgs.iter().map(|i| s.upload(&i.view()).unwrap()).collect();
    let r = cuimg::Rect::new(10, 20, 301, 199);
    let mut views: Vec<_> = dev.iter().map(|d| d.view()).collect();
    views[4] = dev[4].roi(r).unwrap();
    let sources: Vec<_> =
        imgs.iter().enumerate().map(|(i, img)| if i == 4 { img.view().roi(r).unwrap() } else { img.view() }).collect();
    let sizes = [(224, 224), (50, 31), (224, 224), (7, 3), (224, 224)];
    for name in ["cv-nearest", "cv-linear", "cv-area", "cv-cubic", "cv-lanczos4", "pil-bilinear", "pil-lanczos"] {
        let f: Filter = name.parse().unwrap();
        let mut out = s.alloc_batch::<Rgb8>(&sizes).unwrap();
        s.resize_images(&views, &mut out, f).unwrap();
        let got = s.download_batch(&out).unwrap();
        for (i, (src, &(w, h))) in sources.iter().zip(&sizes).enumerate() {
            assert_eq!(got[i], cpu::resize(src, w, h, f).unwrap(), "{name}, image {i}");
        }
    }
    let mut one = s.alloc_batch::<Rgb8>(&[(8, 8)]).unwrap();
    assert!(matches!(
        s.resize_images(&views, &mut one, "cv-linear".parse().unwrap()),
        Err(cuimg::Error::WrongLength { .. })
    ));
}
