//! `resize`, exact with OpenCV 5.0's `cv2.resize` and Pillow 12's `Image.resize`: every case
//! of `tests/golden/resize.txt` (made on the lent GPU machine by
//! `tests/golden/make_resize_goldens.py`) on the CPU reference.

use cuimg::{CvInterpolation, Filter, Gray8, Image, La8, PilFilter, Rgb8, Rgba8, SourceBox, cpu};
use cuimg_tests::{fnv1a, splitmix_bytes};

/// `Gpu::resize` and `Gpu::resize_batch` on a stream of their own, each output poisoned
/// first (random bytes uploaded where the resize writes), so that a pixel no kernel writes
/// fails the comparison: a fresh allocation may hold an earlier call's same bytes (initcheck
/// flagged such a download once, session 12).
struct Poisoned(cuimg::Stream, std::cell::Cell<u64>);

impl Poisoned {
    fn new(gpu: &cuimg::Gpu) -> Poisoned {
        Poisoned(gpu.stream().unwrap(), std::cell::Cell::new(1000))
    }

    fn poison<P: cuimg::Pixel>(&self, w: u32, h: u32) -> Image<P> {
        self.1.set(self.1.get() + 1);
        Image::from_bytes(w, h, &splitmix_bytes(self.1.get(), (w * h) as usize * P::CHANNELS)).unwrap()
    }

    fn resize<P: cuimg::Pixel>(&self, img: &cuimg::ImageView<'_, P>, w: u32, h: u32, f: Filter) -> Image<P> {
        let s = &self.0;
        let src = s.upload(img).unwrap();
        let mut dst = s.upload(&self.poison::<P>(w, h).view()).unwrap();
        s.resize(&src, &mut dst, f).unwrap();
        s.download(&dst).unwrap()
    }

    fn batch<P: cuimg::Pixel>(&self, imgs: &[cuimg::ImageView<'_, P>], w: u32, h: u32, f: Filter) -> Vec<Image<P>> {
        let s = &self.0;
        let src = s.upload_batch(imgs).unwrap();
        let poison: Vec<Image<P>> = imgs.iter().map(|_| self.poison(w, h)).collect();
        let views: Vec<_> = poison.iter().map(|p| p.view()).collect();
        let mut dst = s.upload_batch(&views).unwrap();
        s.resize_batch(&src, &mut dst, f).unwrap();
        s.download_batch(&dst).unwrap()
    }
}

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

/// The tiled launches' choices, each against the CPU reference on the GPU, alone and in a
/// batch: OpenCV's separable filters at factors whose tiles take 16, fewer and one row
/// (Lanczos-4 on RGBA at /4 needs 68 source rows for 16 output rows, more than shared
/// memory holds), and Pillow's two passes where they fit one tiled launch and where a
/// plan's taps do not (hundreds of rows for one output row: the two-pass launches).
#[test]
fn assorted_tiles_and_pillow_plans_too_tall_for_one_match_the_reference() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let img = Image::<Rgba8>::from_bytes(901, 677, &splitmix_bytes(77, 901 * 677 * 4)).unwrap();
    let gray = Image::<Gray8>::from_bytes(901, 677, &splitmix_bytes(78, 901 * 677)).unwrap();
    let cases = [
        ("cv-lanczos4", (225, 169)),
        ("cv-lanczos4", (56, 42)),
        ("cv-cubic", (56, 42)),
        ("cv-linear", (1802, 1354)),
        ("cv-cubic", (17, 1300)),
        ("pil-bilinear", (450, 338)),
        ("pil-lanczos", (3, 2)),
        ("pil-bicubic", (2, 400)),
        // The area in tiles of 4 taps (about 2 across), of 8 (about 4: lists of up to
        // 5 sources), and a pixel a thread (16: lists of 18).
        ("cv-area", (450, 338)),
        ("cv-area", (225, 169)),
        ("cv-area", (56, 42)),
    ];
    for (name, (w, h)) in cases {
        let f: Filter = name.parse().unwrap();
        let want = cpu::resize(&img.view(), w, h, f).unwrap();
        assert_eq!(p.resize(&img.view(), w, h, f), want, "{name} RGBA to {w}x{h}");
        let want_gray = cpu::resize(&gray.view(), w, h, f).unwrap();
        assert_eq!(p.resize(&gray.view(), w, h, f), want_gray, "{name} gray to {w}x{h}");
        let views = [img.view(), img.view()];
        let got = p.batch(&views, w, h, f);
        assert_eq!(got, vec![want.clone(), want], "{name} RGBA to {w}x{h} in a batch");
    }
}

/// Tiles of every height from 1 to 32 output rows, forced (the model picks a few of them
/// for any one size): the separable kernels and Pillow's tiled passes, single and batched,
/// against the reference, on sizes whose last tile is short; Pillow's `_mma` kernels to 64
/// rows (theirs go that tall).
#[test]
fn tiles_of_any_height_match_the_reference() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let img = Image::<Rgb8>::from_bytes(301, 233, &splitmix_bytes(80, 301 * 233 * 3)).unwrap();
    let gray = Image::<Gray8>::from_bytes(301, 233, &splitmix_bytes(81, 301 * 233)).unwrap();
    let cases = [
        ("cv-cubic", (150, 116)),
        ("cv-linear", (603, 467)),
        ("cv-lanczos4", (97, 301)),
        ("pil-bicubic", (149, 117)),
        // Pillow's kernels by the tensor cores (`_mma`): RGB8 above, Gray8 here (21 taps).
        ("pil-lanczos", (97, 71)),
        // The area's tiled kernels: 4 taps each way (301/137, 233/101), 5 across and 4
        // down (301/87), 8 across and 4 down (301/71, 233/101), 8 each way (301/71,
        // 233/57).
        ("cv-area", (137, 101)),
        ("cv-area", (87, 101)),
        ("cv-area", (71, 101)),
        ("cv-area", (71, 57)),
    ];
    let wants: Vec<_> = cases
        .iter()
        .map(|&(name, (w, h))| {
            let f: Filter = name.parse().unwrap();
            let pillow = name.starts_with("pil-");
            (f, w, h, cpu::resize(&img.view(), w, h, f).unwrap(), cpu::resize(&gray.view(), w, h, f).unwrap(), pillow)
        })
        .collect();
    for rows in 1..=64 {
        cuimg::ops::resize::force_tile_rows(rows);
        for (f, w, h, want, want_gray, pillow) in &wants {
            if rows > 32 && !pillow {
                continue;
            }
            let (f, w, h) = (*f, *w, *h);
            assert_eq!(&p.resize(&img.view(), w, h, f), want, "{f} RGB to {w}x{h} in tiles of {rows} rows");
            assert_eq!(&p.resize(&gray.view(), w, h, f), want_gray, "{f} gray to {w}x{h} in tiles of {rows}");
            let got = p.batch(&[img.view(), img.view()], w, h, f);
            assert!(got.iter().all(|g| g == want), "{f} RGB to {w}x{h} in a batch, tiles of {rows} rows");
        }
    }
    cuimg::ops::resize::force_tile_rows(0);
}

/// Tables kept on a stream between calls: many sizes on two streams, interleaved, so each
/// stream's arena fills and is replaced several times (Pillow's Lanczos tables of a few
/// hundred sizes: several MB, the first arena 1 MB), sizes repeated after their tables
/// moved, and a batch holding one size many times; every output against the CPU reference.
#[test]
fn tables_kept_on_streams_stay_right_as_their_arenas_grow() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let img = Image::<Rgb8>::from_bytes(640, 480, &splitmix_bytes(79, 640 * 480 * 3)).unwrap();
    let streams = [gpu.stream().unwrap(), gpu.stream().unwrap()];
    let src: Vec<_> = streams.iter().map(|s| s.upload(&img.view()).unwrap()).collect();
    for name in ["pil-lanczos", "cv-cubic", "cv-nearest", "cv-area"] {
        let f: Filter = name.parse().unwrap();
        let sizes: Vec<(u32, u32)> =
            (0..120).map(|i| (200 + 3 * i, 150 + 2 * i)).chain((0..40).map(|i| (200 + 9 * i, 150 + 6 * i))).collect();
        for (i, &(w, h)) in sizes.iter().enumerate() {
            let k = i % 2;
            let mut out = cuimg_tests::poisoned::<Rgb8>(&streams[k], w, h);
            streams[k].resize(&src[k], &mut out, f).unwrap();
            if i % 7 == 0 || i >= 120 {
                let want = cpu::resize(&img.view(), w, h, f).unwrap();
                assert_eq!(streams[k].download(&out).unwrap(), want, "{name} to {w}x{h} on stream {k}");
            }
        }
    }
    let f: Filter = "cv-linear".parse().unwrap();
    let views = vec![img.view(); 9];
    let batch = streams[0].upload_batch(&views).unwrap();
    let mut out = streams[0].alloc_batch::<Rgb8>(&[(224, 224); 9]).unwrap();
    streams[0].resize_batch(&batch, &mut out, f).unwrap();
    let want = cpu::resize(&img.view(), 224, 224, f).unwrap();
    assert_eq!(streams[0].download_batch(&out).unwrap(), vec![want; 9], "one size nine times in a batch");
}

/// Launch tables (each launch's job list) share one buffer a stream (`Stream::with_table`):
/// batches of 2 to 300 ragged jobs queued back to back on one stream behind slow work,
/// nothing waited for between them, so each table is copied while the launches before it
/// are still queued, and the buffer grows twice (at 70 jobs and at 300); every output
/// poisoned first and against the reference. Were a table copied before the launches
/// queued ahead of it had run, those launches would read the later jobs and write the
/// wrong images (or none).
#[test]
fn launch_tables_queued_back_to_back_are_each_launchs_own() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let s = &p.0;
    let big = s.upload(&cuimg_tests::random::<Rgb8>(3000, 2000, 500).view()).unwrap();
    let slow: Filter = "pil-lanczos".parse().unwrap();
    for _ in 0..3 {
        let mut out = s.alloc::<Rgb8>(2999, 1999).unwrap();
        s.resize(&big, &mut out, slow).unwrap();
    }
    let mut queued = Vec::new();
    for (b, (n, name)) in
        [(2, "cv-linear"), (3, "cv-cubic"), (70, "cv-linear"), (5, "pil-bicubic"), (300, "cv-area"), (40, "cv-linear")]
            .into_iter()
            .enumerate()
    {
        let f: Filter = name.parse().unwrap();
        let imgs: Vec<Image<Rgb8>> = (0..n)
            .map(|i| {
                cuimg_tests::random(20 + (7 * i + b) as u32 % 53, 15 + (5 * i) as u32 % 41, 600 + (b * 1000 + i) as u64)
            })
            .collect();
        let sizes: Vec<(u32, u32)> = (0..n).map(|i| (3 + (i as u32 * 11) % 29, 2 + (i as u32 * 13) % 23)).collect();
        let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
        let src = s.upload_batch(&views).unwrap();
        let poison: Vec<Image<Rgb8>> = sizes.iter().map(|&(w, h)| p.poison(w, h)).collect();
        let mut dst = s.upload_batch(&poison.iter().map(|i| i.view()).collect::<Vec<_>>()).unwrap();
        s.resize_batch(&src, &mut dst, f).unwrap();
        queued.push((name, f, imgs, sizes, src, dst));
    }
    for (b, (name, f, imgs, sizes, _, dst)) in queued.iter().enumerate() {
        let got = s.download_batch(dst).unwrap();
        for (i, (img, &(w, h))) in imgs.iter().zip(sizes).enumerate() {
            assert_eq!(got[i], cpu::resize(&img.view(), w, h, *f).unwrap(), "batch {b} ({name}), image {i} to {w}x{h}");
        }
    }
}

/// A launch whose tables fail to upload leaves none of them recorded as on the device: the
/// next call with the same plan uploads them again. Before, the failed plan stayed recorded
/// over bytes that never arrived, and the next new plan's tables went to the same place, so
/// the first plan's next call read the second's tables.
#[cfg(feature = "hooks")]
#[test]
fn tables_that_fail_to_upload_are_not_kept() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let img = Image::<Rgb8>::from_bytes(301, 233, &splitmix_bytes(82, 301 * 233 * 3)).unwrap();
    let f: Filter = "cv-cubic".parse().unwrap();
    let src = p.0.upload(&img.view()).unwrap();
    let mut out = cuimg_tests::poisoned::<Rgb8>(&p.0, 150, 116);
    p.0.fail_next_resize_tables_for_tests();
    let err = p.0.resize(&src, &mut out, f).unwrap_err();
    assert!(err.to_string().contains("made to fail"), "{err}");
    // Another plan of the same kind (its tables as long), placed next; then the first again.
    for (w, h) in [(151, 116), (150, 116)] {
        assert_eq!(p.resize(&img.view(), w, h, f), cpu::resize(&img.view(), w, h, f).unwrap(), "cv-cubic to {w}x{h}");
    }
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

/// Pillow's two passes by the tensor cores' integer products (the `_mma` kernels, Gray8 and
/// RGB8), its horizontal pass four taps at a time by dot products (the `_planes` kernels),
/// and neither, against the reference: rows whose bytes end at each
/// alignment (widths 4k to 4k + 3, so the last group's words may or may not run past the
/// row), inputs barely as wide as a column's groups, crops (views, read a byte a load),
/// single and in ragged batches, every resampling filter down and up.
#[test]
fn pillow_by_dot_products_matches_the_reference_on_and_off() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let s = gpu.stream().unwrap();
    let sizes = [(100, 37), (101, 40), (102, 41), (103, 9), (8, 8), (9, 5), (20, 11), (641, 479)];
    let outs = [(33, 13), (50, 20), (3, 2), (7, 30), (224, 224), (2, 1)];
    let filters = ["pil-box", "pil-bilinear", "pil-hamming", "pil-bicubic", "pil-lanczos"];
    // Under the sanitizers, two filters (the fewest and the most taps) and three sizes.
    let (outs, filters) =
        if cuimg_tests::sanitizing() { (&outs[..3], &filters[3..]) } else { (&outs[..], &filters[..]) };
    let rgb: Vec<Image<Rgb8>> =
        sizes.iter().enumerate().map(|(i, &(w, h))| cuimg_tests::random(w, h, 300 + i as u64)).collect();
    let gray: Vec<Image<Gray8>> =
        sizes.iter().enumerate().map(|(i, &(w, h))| cuimg_tests::random(w, h, 400 + i as u64)).collect();
    let crop = cuimg::Rect::new(3, 2, 90, 30);
    let dev_rgb = s.upload(&rgb[1].view()).unwrap();
    let dev_gray = s.upload(&gray[1].view()).unwrap();
    // The tensor cores' kernels (`_mma`), then the dot products' (`_planes`), then neither.
    for (mma, on) in [(true, true), (false, true), (false, false)] {
        cuimg::ops::resize::pillow_mma(Some(mma));
        cuimg::ops::resize::pillow_planes(on);
        let before = (cuimg::ops::resize::pillow_mma_launches(), cuimg::ops::resize::pillow_planes_launches());
        for &name in filters {
            let f: Filter = name.parse().unwrap();
            for &(w, h) in outs {
                let want: Vec<_> = rgb.iter().map(|i| cpu::resize(&i.view(), w, h, f).unwrap()).collect();
                let want_gray: Vec<_> = gray.iter().map(|i| cpu::resize(&i.view(), w, h, f).unwrap()).collect();
                for (i, img) in rgb.iter().enumerate() {
                    assert_eq!(
                        p.resize(&img.view(), w, h, f),
                        want[i],
                        "{name} RGB {i} to {w}x{h}, mma {mma}, planes {on}"
                    );
                    let g = p.resize(&gray[i].view(), w, h, f);
                    assert_eq!(g, want_gray[i], "{name} gray {i} to {w}x{h}, mma {mma}, planes {on}");
                }
                let views: Vec<_> = rgb.iter().map(|i| i.view()).collect();
                assert_eq!(p.batch(&views, w, h, f), want, "{name} RGB batch to {w}x{h}, mma {mma}, planes {on}");
                let views: Vec<_> = gray.iter().map(|i| i.view()).collect();
                assert_eq!(p.batch(&views, w, h, f), want_gray, "{name} gray batch to {w}x{h}, mma {mma}, planes {on}");
                // Crops of a device image: rows apart by more than their pixels.
                let mut out = s.upload(&p.poison::<Rgb8>(w, h).view()).unwrap();
                s.resize(&dev_rgb.roi(crop).unwrap(), &mut out, f).unwrap();
                let want_crop = cpu::resize(&rgb[1].view().roi(crop).unwrap(), w, h, f).unwrap();
                assert_eq!(s.download(&out).unwrap(), want_crop, "{name} RGB crop to {w}x{h}, mma {mma}, planes {on}");
                let mut out = s.upload(&p.poison::<Gray8>(w, h).view()).unwrap();
                s.resize(&dev_gray.roi(crop).unwrap(), &mut out, f).unwrap();
                let want_crop = cpu::resize(&gray[1].view().roi(crop).unwrap(), w, h, f).unwrap();
                assert_eq!(s.download(&out).unwrap(), want_crop, "{name} gray crop to {w}x{h}, mma {mma}, planes {on}");
            }
        }
        let ran = cuimg::ops::resize::pillow_mma_launches() - before.0;
        let planes = cuimg::ops::resize::pillow_planes_launches() - before.1;
        // (Only that the kernels asked for ran: the knobs are the process's, and the tests
        // beside this one launch too.)
        match (mma, on) {
            (true, _) => assert!(ran > 20, "the mma kernels ran {ran} times"),
            (false, true) => assert!(planes > 20, "the planes kernels ran {planes} times"),
            (false, false) => {}
        }
    }
    cuimg::ops::resize::pillow_mma(None);
    cuimg::ops::resize::pillow_planes(true);
}
