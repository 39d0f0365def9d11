//! `cuimg tensor`: each image a NumPy `.npy` file holding the CPU reference's tensor, on the
//! CPU path and the default one (the GPU where there is one), after `--resize` too; what
//! does not fit the command is a usage error that writes nothing; bystanders and planted
//! symlinks in the output folder are kept.

use std::path::Path;
use std::process::{Command, Output};

use common::{bin, photo, s, stderr};
use cuimg::{DType, Gray8, Image, Normalize, TensorLayout, TensorSpec, cpu};

mod common;

fn cuimg(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("the cuimg binary runs")
}

fn npy(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn each_image_becomes_the_references_tensor_as_npy() {
    let dir = common::temp_in("npy", "npy");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    let rgb = photo(67, 41, 3);
    let gray = Image::from_fn(30, 17, |x, y| Gray8([(x * 9 + y * 5) as u8]));
    cuimg::io::save(&rgb, inp.join("rgb.png")).unwrap();
    cuimg::io::save(&gray, inp.join("gray.png")).unwrap();
    let spec = TensorSpec::new(DType::F16).layout(TensorLayout::Nhwc).normalize(Normalize::IMAGENET).flip(true);
    for path in ["--cpu", "--gpu=all"] {
        let o = cuimg(&[
            "tensor",
            s(&inp),
            "-o",
            s(&out.join(path.trim_start_matches('-'))),
            "--dtype",
            "f16",
            "--layout",
            "nhwc",
            "--normalize",
            "imagenet",
            "--flip",
            path,
        ]);
        assert!(o.status.success(), "{path}: {}", stderr(&o));
        let at = out.join(path.trim_start_matches('-'));
        assert_eq!(npy(&at.join("rgb.npy")), cpu::to_tensor(&rgb.view(), &spec).unwrap().to_npy(), "{path}: rgb");
        assert_eq!(npy(&at.join("gray.npy")), cpu::to_tensor(&gray.view(), &spec).unwrap().to_npy(), "{path}: gray");
    }
}

#[test]
fn a_resize_first_then_the_tensor_padded() {
    let dir = common::temp_in("npy", "resize");
    let rgb = photo(90, 70, 8);
    cuimg::io::save(&rgb, dir.join("p.png")).unwrap();
    let out = dir.join("out");
    let o = cuimg(&[
        "tensor",
        s(&dir.join("p.png")),
        "-o",
        s(&out),
        "--resize",
        "45x35",
        "--resize-filter",
        "pil-bilinear",
        "--size",
        "48x40",
        "--fill",
        "-1",
        "--dtype",
        "bf16",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let small = cpu::resize(&rgb.view(), 45, 35, "pil-bilinear".parse().unwrap()).unwrap();
    let spec = TensorSpec::new(DType::Bf16).pad_to(48, 40, -1.0);
    assert_eq!(npy(&out.join("p.npy")), cpu::to_tensor(&small.view(), &spec).unwrap().to_npy());
}

#[test]
fn what_does_not_fit_is_a_usage_error_that_writes_nothing() {
    let dir = common::temp_in("npy", "usage");
    cuimg::io::save(&photo(20, 10, 1), dir.join("p.png")).unwrap();
    let out = dir.join("out");
    for args in [
        &["--format", "png"][..],
        &["--dtype", "f64"],
        &["--normalize", "zscore"],
        &["--size", "0x3"],
        &["--fill", "nan"],
    ] {
        let o = cuimg(&[&["tensor", s(&dir.join("p.png")), "-o", s(&out)], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!out.exists(), "{args:?}: the output folder was made");
    }
    // An image larger than --size: that file fails, named, and nothing is written for it.
    let o = cuimg(&["tensor", s(&dir.join("p.png")), "-o", s(&out), "--size", "8x8"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("p.png"), "{}", stderr(&o));
    assert!(!out.join("p.npy").exists());
}

/// The `.npy` files go through the tool's output policy like images: an existing file in
/// the way is kept unless `--overwrite`, and a symlink in the way, to a bystander, is
/// neither replaced nor written through, even then.
#[test]
fn an_npy_never_replaces_a_bystander_or_writes_through_a_symlink() {
    let dir = common::temp_in("npy", "bystander");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let img = photo(12, 7, 4);
    cuimg::io::save(&img, inp.join("p.png")).unwrap();
    std::fs::write(out.join("p.npy"), b"an unrelated file").unwrap();
    let run = |extra: &[&str]| cuimg(&[&["tensor", s(&inp.join("p.png")), "-o", s(&out), "--cpu"], extra].concat());
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert_eq!(npy(&out.join("p.npy")), b"an unrelated file");
    let o = run(&["--overwrite"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want = cpu::to_tensor(&img.view(), &TensorSpec::new(DType::F32)).unwrap().to_npy();
    assert_eq!(npy(&out.join("p.npy")), want);
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    std::fs::remove_file(out.join("p.npy")).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("p.npy")).unwrap();
    let o = run(&["--overwrite"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(std::fs::symlink_metadata(out.join("p.npy")).unwrap().file_type().is_symlink());
}
