//! The tool's commands that change an image's size (`resize`, `warp --size`, `--resize`
//! before any command): the output at the command's size on both paths (the GPU when there
//! is one: its pipeline and nvJPEG's path allocate each output at that size), equal to the
//! library's CPU forms.

use std::process::{Command, Output};

use common::{bin, photo, s, stderr};
use cuimg::cpu;

mod common;

fn cuimg(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("the cuimg binary runs")
}

fn temp(name: &str) -> common::Temp {
    common::temp_in("sizes", name)
}

/// `--resize` before any command: the resize, then the command, on both paths (the GPU when
/// there is one) and equal to the library's CPU forms in a row; a bad size stops the run
/// before any file.
#[test]
fn resize_before_a_command_matches_the_library() {
    let dir = temp("then-resize");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    let img = photo(96, 64, 5);
    cuimg::io::save(&img, inp.join("p.png")).unwrap();
    let filter: cuimg::Filter = "pil-bilinear".parse().unwrap();
    let small = cpu::resize(&img.view(), 40, 30, filter).unwrap();
    for extra in [vec!["--cpu"], vec![]] {
        let _ = std::fs::remove_dir_all(&out);
        let mut all = vec!["warp", s(&inp), "-o", s(&out), "--rotate", "30", "--resize", "40x30"];
        all.extend(["--resize-filter", "pil-bilinear"]);
        all.extend(&extra);
        let o = cuimg(&all);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let got = cuimg::io::load_rgb(out.join("p.png")).unwrap();
        let turn = cuimg::Warp::rotation((19.5, 14.5), 30.0, 1.0);
        let want = cpu::warp(&small.view(), &turn, 40, 30, cuimg::WarpFilter::Linear, cuimg::Border::Constant([0; 4]))
            .unwrap();
        assert_eq!(got, want, "{extra:?}");
    }
    // A JPEG takes nvJPEG's path on a GPU: the resize's output size there too.
    cuimg::io::save_with(&img, inp.join("q.jpg"), cuimg::io::Format::Jpeg { quality: 95 }).unwrap();
    for extra in [vec!["--cpu"], vec![]] {
        let out = dir.join(format!("jpeg{}", extra.len()));
        let mut all = vec!["gray", s(&inp), "-o", s(&out), "--resize", "37x21"];
        all.extend(&extra);
        let o = cuimg(&all);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        for name in ["p.png", "q.jpg"] {
            assert_eq!(cuimg::io::load_gray(out.join(name)).unwrap().dimensions(), (37, 21), "{extra:?} {name}");
        }
    }
    let o = cuimg(&["gray", s(&inp), "-o", s(&dir.join("bad")), "--resize", "0x3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!dir.join("bad").join("p.png").exists());
}

/// `cuimg resize` itself, on both paths: PNG outputs equal to the library's CPU resize, a
/// JPEG's at the size asked.
#[test]
fn resize_writes_the_size_asked_on_both_paths() {
    let dir = temp("resize");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let img = photo(90, 70, 3);
    cuimg::io::save(&img, inp.join("p.png")).unwrap();
    cuimg::io::save_with(&img, inp.join("q.jpg"), cuimg::io::Format::Jpeg { quality: 95 }).unwrap();
    let want = cpu::resize(&img.view(), 33, 17, "cv-area".parse().unwrap()).unwrap();
    for extra in [vec!["--cpu"], vec![]] {
        let out = dir.join(format!("out{}", extra.len()));
        let mut all = vec!["resize", s(&inp), "-o", s(&out), "--size", "33x17", "--filter", "cv-area"];
        all.extend(&extra);
        let o = cuimg(&all);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        assert_eq!(cuimg::io::load_rgb(out.join("p.png")).unwrap(), want, "{extra:?}");
        assert_eq!(cuimg::io::load_rgb(out.join("q.jpg")).unwrap().dimensions(), (33, 17), "{extra:?}");
    }
}
