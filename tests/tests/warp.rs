//! `warp`, exact with OpenCV 5.0's `cv2.warpAffine` and `cv2.warpPerspective`: every
//! `cv-warp-*` case of `tests/golden/resize.txt` (made on the lent GPU machine by
//! `tests/golden/make_resize_goldens.py`, with Intel's IPP on and off: the same bytes) on
//! the CPU, on all cores and, where there is one, on the GPU, alone and as ragged batches
//! with a matrix per image. Then `Warp::rotation` against `cv2.getRotationMatrix2D`, and bad
//! requests.

use cuimg::{Border, Error, Gray8, Image, La8, Pixel, Rgb8, Rgba8, Warp, WarpFilter, cpu};
use cuimg_tests::{fnv1a, splitmix_bytes};

struct Case {
    line: String,
    warp: Warp,
    filter: WarpFilter,
    border: Border,
    c: usize,
    src: (u32, u32),
    dst: (u32, u32),
    bytes: Vec<u8>,
    fnv: u64,
}

fn golden_lines() -> String {
    let dir = std::env::var_os("CUIMG_GOLDENS")
        .map_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden"), std::path::PathBuf::from);
    std::fs::read_to_string(dir.join("resize.txt")).expect("tests/golden/resize.txt")
}

fn size(text: &str) -> (u32, u32) {
    let (w, h) = text.split_once('x').unwrap();
    (w.parse().unwrap(), h.parse().unwrap())
}

fn cases() -> Vec<Case> {
    golden_lines()
        .lines()
        .filter(|l| l.starts_with("kind=cv-warp-"))
        .map(|line| {
            let get = |k: &str| line.split(' ').find_map(|f| f.strip_prefix(&format!("{k}="))).unwrap();
            let m: Vec<f64> = get("m").split(',').map(|n| n.parse().unwrap()).collect();
            let warp = match get("kind") {
                "cv-warp-affine" => Warp::affine(m.try_into().unwrap()),
                _ => Warp::perspective(m.try_into().unwrap()),
            };
            let warp = if get("inverse") == "1" { warp.inverse_map() } else { warp };
            let mut value = [0u8; 4];
            for (v, n) in value.iter_mut().zip(get("value").split(',')) {
                *v = n.parse().unwrap();
            }
            let border = if get("border") == "constant" { Border::Constant(value) } else { Border::Replicate };
            let (c, src) = (get("c").parse::<usize>().unwrap(), size(get("src")));
            Case {
                line: line.split(" fnv=").next().unwrap().to_string(),
                warp,
                filter: get("interp").parse().unwrap(),
                border,
                c,
                src,
                dst: size(get("dst")),
                bytes: splitmix_bytes(get("seed").parse().unwrap(), (src.0 * src.1) as usize * c),
                fnv: u64::from_str_radix(get("fnv"), 16).unwrap(),
            }
        })
        .collect()
}

fn check<P: Pixel>(all: &[Case], gpu: Option<&cuimg::Gpu>) -> usize {
    let cases: Vec<&Case> = all.iter().filter(|c| c.c == P::CHANNELS).collect();
    let imgs: Vec<Image<P>> = cases.iter().map(|c| Image::from_bytes(c.src.0, c.src.1, &c.bytes).unwrap()).collect();
    for (case, img) in cases.iter().zip(&imgs) {
        let (w, h) = case.dst;
        let got = cpu::warp(&img.view(), &case.warp, w, h, case.filter, case.border).unwrap();
        assert_eq!(fnv1a(got.as_bytes()), case.fnv, "{} on the CPU", case.line);
        let par = cuimg::par::warp(&img.view(), &case.warp, w, h, case.filter, case.border).unwrap();
        assert_eq!(par, got, "{} on all cores", case.line);
        if let Some(gpu) = gpu {
            let on_gpu = gpu.warp(&img.view(), &case.warp, w, h, case.filter, case.border).unwrap();
            assert_eq!(fnv1a(on_gpu.as_bytes()), case.fnv, "{} on the GPU", case.line);
        }
    }
    if let Some(gpu) = gpu {
        // One ragged batch per filter and border: every size and matrix together, a warp
        // per image, each constant its own (the same for all cases of a channel count).
        let mut groups: Vec<((WarpFilter, Border), Vec<usize>)> = Vec::new();
        for (i, c) in cases.iter().enumerate() {
            let k = (c.filter, c.border);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, v)) => v.push(i),
                None => groups.push((k, vec![i])),
            }
        }
        for ((filter, border), members) in groups {
            let views: Vec<_> = members.iter().map(|&i| imgs[i].view()).collect();
            let warps: Vec<Warp> = members.iter().map(|&i| cases[i].warp).collect();
            let sizes: Vec<(u32, u32)> = members.iter().map(|&i| cases[i].dst).collect();
            let got = gpu.warp_batch(&views, &warps, &sizes, filter, border).unwrap();
            for (&i, img) in members.iter().zip(&got) {
                assert_eq!(fnv1a(img.as_bytes()), cases[i].fnv, "{} in a batch of {}", cases[i].line, members.len());
            }
        }
    }
    cases.len()
}

#[test]
fn warps_match_opencv_on_every_form() {
    let all = cases();
    let gpu = cuimg_tests::gpu();
    let ran =
        check::<Gray8>(&all, gpu.as_ref()) + check::<Rgb8>(&all, gpu.as_ref()) + check::<Rgba8>(&all, gpu.as_ref());
    assert_eq!(ran, all.len(), "every case has a format");
    assert!(ran > 1400, "{ran} cases");
}

/// `Warp::rotation` is `cv2.getRotationMatrix2D` to the last bit: the goldens' rotation
/// matrices are OpenCV's, printed in full.
#[test]
fn rotations_are_opencvs() {
    let named = |name: &str| -> Vec<f64> {
        let text = golden_lines();
        let line = text.lines().find(|l| l.contains(&format!(" matrix={name} "))).unwrap();
        let m = line.split(' ').find_map(|f| f.strip_prefix("m=")).unwrap();
        m.split(',').map(|n| n.parse().unwrap()).collect()
    };
    assert_eq!(Warp::rotation((20.5, 15.0), 30.0, 1.0).matrix(), named("rotate30"));
    assert_eq!(Warp::rotation((12.0, 9.0), -137.5, 0.73).matrix(), named("rotate-137.5-scaled"));
    assert_eq!(Warp::rotation((20.0, 20.0), 90.0, 1.0).matrix(), named("rotate90"));
}

/// Bad requests are typed errors on every form, found before anything runs: the GPU's
/// destination keeps its poison.
#[test]
fn bad_requests_are_refused_before_anything_runs() {
    let img = Image::<Rgb8>::from_fn(40, 30, |x, y| Rgb8([x as u8, y as u8, 9]));
    let ok = Warp::affine([1.0, 0.1, 2.0, -0.1, 1.0, 3.0]);
    let (lin, zero) = (WarpFilter::Linear, Border::Constant([0; 4]));
    let bad_warps = [
        Warp::affine([1.0, 2.0, 0.0, 2.0, 4.0, 0.0]),      // singular
        Warp::affine([0.0; 6]).inverse_map(),              // singular, as the inverse map too
        Warp::affine([1.0, 0.0, f64::NAN, 0.0, 1.0, 0.0]), // NaN
        Warp::perspective([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, f64::INFINITY]), // not finite
        Warp::perspective([1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 0.0, 1.0]), // singular
        Warp::affine([1e-300, 0.0, 0.0, 0.0, 1e-300, 0.0]), // its inverse overflows f32
    ];
    let invalid = |r: cuimg::Result<Image<Rgb8>>, what: &str| {
        assert!(matches!(r, Err(Error::InvalidParameter { .. })), "{what}: {r:?}");
    };
    for w in &bad_warps {
        invalid(cpu::warp(&img.view(), w, 10, 10, lin, zero), &format!("{w:?}"));
        invalid(cuimg::par::warp(&img.view(), w, 10, 10, lin, zero), &format!("{w:?} on all cores"));
    }
    invalid(cpu::warp(&img.view(), &ok, 10, 10, lin, Border::Reflect), "a reflected border");
    assert!(matches!(cpu::warp(&img.view(), &ok, 0, 10, lin, zero), Err(Error::EmptyImage { .. })));
    assert!(matches!(cpu::warp(&Image::<Rgb8>::new(0, 0).view(), &ok, 5, 5, lin, zero), Err(Error::EmptyImage { .. })));
    let la = Image::<La8>::new(4, 4);
    assert!(matches!(cpu::warp(&la.view(), &ok, 4, 4, lin, zero), Err(Error::UnsupportedFormat(_))));
    assert!(matches!("cubic".parse::<WarpFilter>(), Err(Error::InvalidParameter { .. })));

    let Some(gpu) = cuimg_tests::gpu() else { return };
    let views = [img.view(), img.view()];
    let three = [ok, ok, ok];
    let r = gpu.warp_batch(&views, &three, &[(5, 5), (5, 5)], lin, zero);
    assert!(matches!(r, Err(Error::WrongLength { .. })), "three warps for two images: {r:?}");
    let stream = gpu.stream().unwrap();
    let src = stream.upload(&img.view()).unwrap();
    let mut dst = cuimg_tests::poisoned::<Rgb8>(&stream, 10, 10);
    let before = stream.download(&dst).unwrap();
    for w in &bad_warps {
        assert!(matches!(stream.warp(&src, &mut dst, w, lin, zero), Err(Error::InvalidParameter { .. })), "{w:?}");
    }
    assert!(matches!(stream.warp(&src, &mut dst, &ok, lin, Border::Wrap), Err(Error::InvalidParameter { .. })));
    stream.synchronize().unwrap();
    assert_eq!(stream.download(&dst).unwrap(), before, "nothing was written");
}
