//! `border`, exact with OpenCV 5.0's `cv2.copyMakeBorder`: every `cv-border` case of
//! `tests/golden/resize.txt` (made on the lent GPU machine by
//! `tests/golden/make_resize_goldens.py`), on the CPU and, where there is one, on the GPU
//! (single and in a batch).

use cuimg::{Border, Gray8, Image, La8, Padding, Pixel, Rgb8, Rgba8, cpu};
use cuimg_tests::{fnv1a, splitmix_bytes};

struct Case {
    line: String,
    border: Border,
    pad: Padding,
    c: usize,
    size: (u32, u32),
    bytes: Vec<u8>,
    fnv: u64,
}

fn cases() -> Vec<Case> {
    let dir = std::env::var_os("CUIMG_GOLDENS")
        .map_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden"), std::path::PathBuf::from);
    let text = std::fs::read_to_string(dir.join("resize.txt")).expect("tests/golden/resize.txt");
    text.lines()
        .filter(|l| l.starts_with("kind=cv-border "))
        .map(|line| {
            let get = |k: &str| line.split(' ').find_map(|f| f.strip_prefix(&format!("{k}="))).unwrap();
            let nums = |k: &str| get(k).split(',').map(|n| n.parse::<u32>().unwrap()).collect::<Vec<_>>();
            let (w, h) = get("src").split_once('x').map(|(w, h)| (w.parse().unwrap(), h.parse().unwrap())).unwrap();
            let c: usize = get("c").parse().unwrap();
            let p = nums("pad");
            let mut value = [0u8; 4];
            for (v, n) in value.iter_mut().zip(nums("value")) {
                *v = n as u8;
            }
            let border = match get("border") {
                "constant" => Border::Constant(value),
                other => other.parse().unwrap(),
            };
            Case {
                line: line.split(" fnv=").next().unwrap().to_string(),
                border,
                pad: Padding { top: p[0], bottom: p[1], left: p[2], right: p[3] },
                c,
                size: (w, h),
                bytes: splitmix_bytes(get("seed").parse().unwrap(), (w * h) as usize * c),
                fnv: u64::from_str_radix(get("fnv"), 16).unwrap(),
            }
        })
        .collect()
}

fn check<P: Pixel>(cases: &[&Case], gpu: Option<&cuimg::Gpu>) {
    let imgs: Vec<Image<P>> = cases.iter().map(|c| Image::from_bytes(c.size.0, c.size.1, &c.bytes).unwrap()).collect();
    for (case, img) in cases.iter().zip(&imgs) {
        let got = cpu::copy_make_border(&img.view(), case.pad, case.border).unwrap();
        assert_eq!(fnv1a(got.as_bytes()), case.fnv, "{} on the CPU", case.line);
        assert_eq!(
            cuimg::par::copy_make_border(&img.view(), case.pad, case.border).unwrap(),
            got,
            "{} on all cores",
            case.line
        );
        if let Some(gpu) = gpu {
            let on_gpu = gpu.copy_make_border(&img.view(), case.pad, case.border).unwrap();
            assert_eq!(fnv1a(on_gpu.as_bytes()), case.fnv, "{} on the GPU", case.line);
        }
    }
    if let (Some(gpu), Some(first)) = (gpu, cases.first()) {
        // One batch per border and padding: the images of every size together.
        let same: Vec<usize> =
            (0..cases.len()).filter(|&i| (cases[i].border, cases[i].pad) == (first.border, first.pad)).collect();
        let views: Vec<_> = same.iter().map(|&i| imgs[i].view()).collect();
        let got = gpu.copy_make_border_batch(&views, first.pad, first.border).unwrap();
        for (&i, img) in same.iter().zip(&got) {
            assert_eq!(fnv1a(img.as_bytes()), cases[i].fnv, "{} in a batch", cases[i].line);
        }
    }
}

#[test]
fn borders_match_opencv() {
    let all = cases();
    assert_eq!(all.len(), 320);
    let gpu = cuimg_tests::gpu();
    for c in 1..=4 {
        let of: Vec<&Case> = all.iter().filter(|k| k.c == c).collect();
        match c {
            1 => check::<Gray8>(&of, gpu.as_ref()),
            2 => check::<La8>(&of, gpu.as_ref()),
            3 => check::<Rgb8>(&of, gpu.as_ref()),
            _ => check::<Rgba8>(&of, gpu.as_ref()),
        }
    }
}
