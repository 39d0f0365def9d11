//! The `cuimg` binary against hostile and unlucky inputs (issue "Files are never lost"):
//! symlinks planted where it writes, outputs aimed at inputs and bystanders, decompression
//! bombs, huge and endless files, symlink loops, signals. Each test failed on the tool as it
//! was before; each runs the binary with a time limit, so a hang fails instead of stalling.
//!
//! The binary is `CUIMG_BIN` when set (the GPU bundle runs these on the lent GPU, where the
//! JPEG bombs go through the nvJPEG path), else the one cargo built.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, photo, s, stderr};
use cuimg::{Image, Rgb8};

mod common;

/// True under compute-sanitizer (`CUIMG_SANITIZE=1`): the binary's GPU work runs 10 to 100
/// times slower there, so time limits stretch and timings are not checked.
fn sanitizing() -> bool {
    std::env::var("CUIMG_SANITIZE").as_deref() == Ok("1")
}

/// Runs the binary; kills it and fails after `limit` (ten times that under the sanitizers).
fn cuimg_within(limit: Duration, args: &[&str]) -> Output {
    let limit = if sanitizing() { limit * 10 } else { limit };
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cuimg binary runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("cuimg {args:?} hung ({limit:?}): {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn cuimg(args: &[&str]) -> Output {
    cuimg_within(Duration::from_secs(120), args)
}

fn temp(name: &str) -> common::Temp {
    common::temp_in("hostile", name)
}

/// The names in a folder, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Symlinks at every name the tool once wrote through (`.<name>.<pid>.cuimg-tmp` for each
/// output, `.cuimg-probe-<pid>`), for the next few thousand process ids, pointing at an
/// input and at a bystander: the run writes through none of them.
#[test]
fn symlinks_planted_at_temporary_and_probe_names_are_not_followed() {
    let dir = temp("planted");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    cuimg::io::save(&photo(30, 20, 1), inp.join("a.png")).unwrap();
    let input = std::fs::read(inp.join("a.png")).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let last = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid").map_or(1000, |p| p.trim().parse().unwrap());
    for pid in last..last + 3000 {
        let _ = std::os::unix::fs::symlink(inp.join("a.png"), out.join(format!(".a.png.{pid}.cuimg-tmp")));
        let _ = std::os::unix::fs::symlink(&victim, out.join(format!(".cuimg-probe-{pid}")));
    }
    let o = cuimg(&["gray", s(&inp), "-o", s(&out), "--cpu"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(inp.join("a.png")).unwrap(), input, "the input is untouched");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "the bystander is untouched");
    assert_eq!(cuimg::io::load_gray(out.join("a.png")).unwrap().dimensions(), (30, 20));
    assert!(!names(&out).iter().any(|n| n.starts_with(".cuimg-") && n.ends_with(".tmp")), "no temporary file left");
}

/// `--plot` and `--trace` at an input, or at an output of the same run, are refused before
/// any work (exit 2), and the input stays as it was.
#[test]
fn plot_and_trace_never_overwrite_an_input_or_an_output() {
    let dir = temp("extras");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    cuimg::io::save(&photo(16, 8, 2), inp.join("a.png")).unwrap();
    cuimg::io::save(&photo(16, 8, 3), inp.join("b.png")).unwrap();
    let before = [std::fs::read(inp.join("a.png")).unwrap(), std::fs::read(inp.join("b.png")).unwrap()];
    let plot = inp.join("a.png");
    let trace = inp.join("b.png");
    let o = cuimg(&["gray", s(&inp), "-o", s(&out), "--cpu", "--plot", s(&plot), "--trace", s(&trace)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("would overwrite an input"), "{}", stderr(&o));
    assert_eq!([std::fs::read(&plot).unwrap(), std::fs::read(&trace).unwrap()], before);
    // At an output this run writes: refused too, and the output is the image.
    let o = cuimg(&["gray", s(&inp), "-o", s(&out), "--cpu", "--trace", s(&out.join("a.png"))]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("already written by this run"), "{}", stderr(&o));
    // Elsewhere, both are written.
    let o = cuimg(&["gray", s(&inp), "-o", s(&out), "--cpu", "--overwrite", "--plot", s(&dir.join("p.svg"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(dir.join("p.svg")).unwrap().contains("<svg"));
}

/// In a working folder whose absolute path is longer than PATH_MAX (where canonical paths
/// cannot be had), `cuimg gray sub -o sub` still sees that each output would be its input.
#[test]
fn an_input_under_a_path_longer_than_path_max_is_never_overwritten() {
    let dir = temp("pathmax");
    let src = dir.join("x.png");
    cuimg::io::save(&photo(12, 9, 4), &src).unwrap();
    // 20 levels of 250 characters: about 5,000 bytes below the temporary folder, made and
    // entered one level at a time by the shell (each step is short).
    let level = "d".repeat(250);
    let script = format!(
        r#"set -e
cd "{dir}"
for i in $(seq 20); do mkdir {level}; cd -P {level}; done
test ${{#PWD}} -gt 4096
mkdir sub
cp "{src}" sub/x.png
set +e
"{bin}" gray sub -o sub --cpu
echo "exit $?"
cmp -s "{src}" sub/x.png && echo same || echo changed
ls -a sub | tr '\n' ' '
"#,
        dir = dir.display(),
        src = src.display(),
        bin = bin().display()
    );
    // bash: dash's `cd` gives up once the working folder's path is longer than PATH_MAX.
    let o = Command::new("bash").args(["-c", &script]).output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(out.contains("exit 1"), "{out}\n{err}");
    assert!(out.contains("same"), "the input was replaced: {out}\n{err}");
    assert!(err.contains("would overwrite an input"), "{err}");
    let _ = Command::new("rm").args(["-rf", s(&dir)]).status();
}

/// An existing file in `-o` that is not an input is left alone (exit 1, said why) unless
/// `--overwrite`; even then a symlink or a folder in the way is not replaced.
#[test]
fn a_bystander_in_the_output_folder_is_kept_unless_overwrite() {
    let dir = temp("bystander");
    let photos = dir.join("photos");
    std::fs::create_dir_all(&photos).unwrap();
    let img = photo(20, 10, 5);
    cuimg::io::save(&img, photos.join("y.jpg")).unwrap();
    std::fs::write(photos.join("y.png"), b"an unrelated file").unwrap();
    let o = cuimg(&["gray", s(&photos.join("y.jpg")), "-o", s(&photos), "--format", "png", "--cpu"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert_eq!(std::fs::read(photos.join("y.png")).unwrap(), b"an unrelated file");
    let o = cuimg(&["gray", s(&photos.join("y.jpg")), "-o", s(&photos), "--format", "png", "--cpu", "--overwrite"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(cuimg::io::load_gray(photos.join("y.png")).unwrap().dimensions(), (20, 10));
    // A symlink in the way, to a bystander: not replaced, not written through.
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    std::fs::remove_file(photos.join("y.png")).unwrap();
    std::os::unix::fs::symlink(&victim, photos.join("y.png")).unwrap();
    let o = cuimg(&["gray", s(&photos.join("y.jpg")), "-o", s(&photos), "--format", "png", "--cpu", "--overwrite"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

/// A small valid JPEG with its frame header patched to claim `w` x `h`.
fn bomb(gray: bool, w: u16, h: u16) -> Vec<u8> {
    let mut jpg = if gray {
        cuimg::io::encode(&Image::<cuimg::Gray8>::from_fn(256, 256, |x, y| cuimg::Gray8([(x ^ y) as u8])), fmt())
    } else {
        cuimg::io::encode(&photo(256, 256, 6), fmt())
    }
    .unwrap();
    let sof = (2..jpg.len() - 1).find(|&i| jpg[i] == 0xFF && matches!(jpg[i + 1], 0xC0 | 0xC2)).unwrap();
    jpg[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
    jpg[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
    jpg
}

fn fmt() -> cuimg::io::Format {
    cuimg::io::Format::Jpeg { quality: 90 }
}

/// Both JPEG bombs of the issue (a gray one claiming 65535 x 65535, a color one 40000 x
/// 40000, each a few kilobytes) are refused from their headers in well under a second
/// each, with the others written and no temporary file left: on the CPU path and on the
/// default path (nvJPEG where there is a GPU).
#[test]
fn jpeg_bombs_are_refused_before_allocation() {
    let dir = temp("bombs");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    std::fs::write(inp.join("gray-bomb.jpg"), bomb(true, 65535, 65535)).unwrap();
    std::fs::write(inp.join("color-bomb.jpg"), bomb(false, 40000, 40000)).unwrap();
    cuimg::io::save(&photo(64, 48, 7), inp.join("fine.jpg")).unwrap();
    for (op, extra) in [("gray", "--cpu"), ("equalize", "--cpu"), ("gray", "--gpu=all"), ("lut", "--gpu=all")] {
        let _ = std::fs::remove_dir_all(&out);
        let start = Instant::now();
        let o = cuimg_within(Duration::from_secs(60), &[op, s(&inp), "-o", s(&out), extra]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{op} {extra}: {err}");
        for b in ["gray-bomb.jpg", "color-bomb.jpg"] {
            assert!(err.lines().any(|l| l.contains(b) && l.contains("over the limit")), "{op} {extra}: {err}");
        }
        assert!(sanitizing() || start.elapsed() < Duration::from_secs(20), "{op} {extra}: {:?}", start.elapsed());
        assert_eq!(names(&out), ["fine.jpg"], "{op} {extra}");
    }
    // The library refuses them the same way, by value (no process-wide setting).
    let limits = cuimg::Limits::default();
    for b in [bomb(true, 65535, 65535), bomb(false, 40000, 40000)] {
        let r = cuimg::io::decode_with::<Rgb8>(&b, "bomb.jpg".as_ref(), &limits);
        assert!(matches!(r, Err(cuimg::Error::Limit { .. })), "{r:?}");
        assert!(matches!(cuimg::io::decode_luma(&b, "bomb.jpg".as_ref()), Err(cuimg::Error::Limit { .. })));
    }
    // A large flat photo (the most compressible kind) passes the pixels-per-byte bound.
    let flat = cuimg::io::encode(&Image::<Rgb8>::filled(4000, 3000, 128), fmt()).unwrap();
    assert!(cuimg::io::decode_with::<Rgb8>(&flat, "flat.jpg".as_ref(), &limits).is_ok());
}

/// A 5 GB sparse file named .png (zeros, then one with a PNG header) is refused from its
/// first bytes and its length, without reading it; `/dev/zero` linked as zero.png and a
/// FIFO named x.png (in a folder and named alone) are refused before they are opened.
#[test]
fn huge_endless_and_special_files_are_refused_without_reading() {
    let dir = temp("special");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let zeros = std::fs::File::create(inp.join("zeros.png")).unwrap();
    zeros.set_len(5 << 30).unwrap();
    let mut header = cuimg::io::encode(&photo(8, 8, 8), cuimg::io::Format::Png).unwrap();
    header.truncate(33);
    std::fs::write(inp.join("big.png"), &header).unwrap();
    std::fs::OpenOptions::new().write(true).open(inp.join("big.png")).unwrap().set_len(5 << 30).unwrap();
    std::os::unix::fs::symlink("/dev/zero", inp.join("zero.png")).unwrap();
    let fifo = inp.join("x.png");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    cuimg::io::save(&photo(10, 10, 9), inp.join("fine.png")).unwrap();
    let out = dir.join("out");
    let start = Instant::now();
    let o = cuimg_within(Duration::from_secs(60), &["gray", s(&inp), s(&fifo), "-o", s(&out), "--cpu"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(sanitizing() || start.elapsed() < Duration::from_secs(20), "{:?}: {err}", start.elapsed());
    assert!(err.contains("zeros.png") && err.contains("neither a PNG nor a JPEG"), "{err}");
    assert!(err.contains("big.png") && err.contains("over the limit"), "{err}");
    assert!(err.contains("zero.png") && err.contains("not a regular file"), "{err}");
    assert!(err.contains("x.png") && err.contains("not a regular file"), "{err}");
    assert_eq!(names(&out), ["fine.png"]);
    assert!(err.contains("1 images written, 5 failed"), "{err}");
}

/// A recursive glob over a folder with two symlink loops (one to the top, one sideways
/// into a sibling) ends, and takes each real file once.
#[test]
fn symlink_loops_under_a_recursive_glob_end() {
    let dir = temp("loops");
    let top = dir.join("top");
    std::fs::create_dir_all(top.join("a/deep")).unwrap();
    std::fs::create_dir_all(top.join("b")).unwrap();
    cuimg::io::save(&photo(8, 8, 1), top.join("one.png")).unwrap();
    cuimg::io::save(&photo(8, 8, 2), top.join("a/deep/two.png")).unwrap();
    cuimg::io::save(&photo(8, 8, 3), top.join("b/three.png")).unwrap();
    std::os::unix::fs::symlink(&top, top.join("a/deep/up")).unwrap();
    std::os::unix::fs::symlink(top.join("a"), top.join("b/side")).unwrap();
    let pattern = format!("{}/**/*.png", top.display());
    let out = dir.join("out");
    let o = cuimg_within(Duration::from_secs(30), &["gray", &pattern, "-o", s(&out), "--cpu"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(names(&out), ["one.png", "three.png", "two.png"]);
}

/// `--memory` bounds the bytes in flight: a file that alone needs more is reported, not
/// read; the others go through; `--report` gives the peak resident memory against it.
#[test]
fn the_memory_budget_refuses_what_cannot_fit() {
    let dir = temp("budget");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    cuimg::io::save(&photo(1000, 1000, 1), inp.join("big.png")).unwrap();
    cuimg::io::save(&photo(100, 100, 2), inp.join("small.png")).unwrap();
    let out = dir.join("out");
    let o = cuimg(&["equalize", s(&inp), "-o", s(&out), "--cpu", "--memory", "2M", "--report"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("big.png") && err.contains("budget"), "{err}");
    assert!(err.contains("peak resident"), "{err}");
    assert_eq!(names(&out), ["small.png"]);
    let o = cuimg(&["equalize", s(&inp), "-o", s(&out), "--memory", "lots"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// SIGINT stops the reading of new files: what is in flight finishes, the rest is reported
/// as not processed, the summary is printed, the exit code is 130, no temporary file is
/// left, and every output there is whole.
#[test]
fn sigint_finishes_what_is_in_flight_and_prints_the_summary() {
    let dir = temp("sigint");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    const N: usize = 400;
    cuimg::io::save(&photo(800, 600, 1), inp.join("p000.png")).unwrap();
    for i in 1..N {
        std::fs::copy(inp.join("p000.png"), inp.join(format!("p{i:03}.png"))).unwrap();
    }
    let out = dir.join("out");
    let child = Command::new(bin())
        .args(["clahe", s(&inp), "-o", s(&out), "--cpu"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first output is there (the run is under way), on a 2-core debug build and on
    // a 16-core release one alike.
    let start = Instant::now();
    while std::fs::read_dir(&out).map_or(true, |d| d.count() == 0) && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted") && err.contains("images written"), "{err}");
    let written = names(&out);
    assert!(written.len() < N, "{err}");
    assert!(!written.iter().any(|n| n.starts_with('.')), "no temporary file: {written:?}");
    for n in &written {
        assert_eq!(cuimg::io::load_rgb(out.join(n)).unwrap().dimensions(), (800, 600), "{n} is whole");
    }
    let summary = err.lines().find(|l| l.contains("images written")).unwrap();
    assert!(summary.starts_with(&format!("{} images written, {} failed", written.len(), N - written.len())), "{err}");
}

/// Gray stays gray and alpha stays wherever the command has a form for it, on the CPU and on
/// the default path (the GPU where there is one), each equal to the library's CPU reference;
/// where alpha must go, the file's warning says so.
#[test]
fn gray_and_alpha_inputs_keep_their_format_through_every_command() {
    use cuimg::{EqualizeMode, Gray8, GrayWeights, La8, Lut, Rgba8, cpu};
    use image::ColorType::{L8, La8 as LA, Rgb8 as RGB, Rgba8 as RGBA};
    let dir = temp("formats");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let gray = Image::<Gray8>::from_fn(37, 23, |x, y| Gray8([(x * 5 + y * 3) as u8]));
    let la = Image::<La8>::from_fn(37, 23, |x, y| La8([(x * 5 + y) as u8, if x < 10 { 0 } else { (y * 9) as u8 }]));
    let rgba = Image::<Rgba8>::from_fn(37, 23, |x, y| {
        Rgba8([(x * 7) as u8, (y * 11) as u8, (x ^ y) as u8, if y < 5 { 0 } else { (x * 6) as u8 }])
    });
    let rgb = photo(37, 23, 3);
    cuimg::io::save(&gray, inp.join("gray.png")).unwrap();
    cuimg::io::save(&la, inp.join("la.png")).unwrap();
    cuimg::io::save(&rgba, inp.join("rgba.png")).unwrap();
    cuimg::io::save(&rgb, inp.join("rgb.png")).unwrap();
    let dropped = "alpha is dropped";
    // Per command: the color type of each output (gray, la, rgb, rgba) and the files warned.
    let table = [
        ("gray", [L8, L8, L8, L8], vec!["la.png", "rgba.png"]),
        ("bw", [L8, LA, RGB, RGBA], vec![]),
        ("equalize", [L8, LA, RGB, RGBA], vec![]),
        ("lut", [L8, LA, RGB, RGBA], vec![]),
        ("clahe", [L8, L8, RGB, RGBA], vec!["la.png"]),
    ];
    for path in ["--cpu", "--gpu=all"] {
        for (op, colors, warned) in &table {
            let out = dir.join(format!("out-{op}{path}"));
            let o = cuimg(&[op, s(&inp), "-o", s(&out), path]);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(0), "{op} {path}: {err}");
            for (name, color) in ["gray", "la", "rgb", "rgba"].iter().zip(colors) {
                let got = image::open(out.join(format!("{name}.png"))).unwrap();
                assert_eq!(got.color(), *color, "{op} {path} {name}");
                let warns = err.lines().any(|l| l.contains(&format!("{name}.png")) && l.contains(dropped));
                assert_eq!(warns, warned.contains(&&*format!("{name}.png")), "{op} {path} {name}: {err}");
            }
            let load = |name: &str| image::open(out.join(name)).unwrap();
            match *op {
                "equalize" => {
                    assert_eq!(
                        load("gray.png").into_luma8().into_raw(),
                        cpu::equalize(&gray.view()).unwrap().as_bytes()
                    );
                    assert_eq!(
                        load("la.png").into_luma_alpha8().into_raw(),
                        cpu::equalize(&la.view()).unwrap().as_bytes()
                    );
                    let want = cpu::equalize_color(&rgba.view(), EqualizeMode::Luma).unwrap();
                    assert_eq!(load("rgba.png").into_rgba8().into_raw(), want.as_bytes(), "{path}");
                }
                "lut" => {
                    let luts = [Lut::invert(), Lut::invert(), Lut::invert(), Lut::identity()];
                    let want = cpu::apply_luts(&rgba.view(), &luts).unwrap();
                    assert_eq!(load("rgba.png").into_rgba8().into_raw(), want.as_bytes(), "{path}: alpha kept");
                    let want = cpu::apply_luts(&la.view(), &luts[2..]).unwrap();
                    assert_eq!(load("la.png").into_luma_alpha8().into_raw(), want.as_bytes(), "{path}: alpha kept");
                }
                "gray" => {
                    let want = cpu::grayscale(&rgba.view(), GrayWeights::Bt601).unwrap();
                    assert_eq!(load("rgba.png").into_luma8().into_raw(), want.as_bytes(), "{path}");
                    assert_eq!(load("gray.png").into_luma8().into_raw(), gray.as_bytes(), "{path}");
                }
                _ => {}
            }
        }
    }
    // JPEG outputs have no alpha: said per file.
    let o = cuimg(&["lut", s(&inp.join("rgba.png")), "-o", s(&dir.join("jpg")), "--format", "jpg", "--cpu"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("JPEG has none"), "{}", stderr(&o));
}

/// The issue's memory run (on the lent machine: `--ignored`, about two minutes a path on 16
/// cores): 64 copies of a 20000 x 20000 PNG to gray with `--memory 16G`, on the CPU and on
/// the default path (the GPU's pipeline), each run's peak resident memory (VmHWM, from
/// `--report`) printed against the budget and held under it plus the stated constant of
/// docs/RELIABILITY.md (2 GiB: the process, the CUDA context, the pipeline slots' kept
/// buffers and the streams' staging). `CUIMG_RSS_FILES` and `CUIMG_RSS_SIDE` shrink it.
#[test]
#[ignore = "minutes and 25 GB of decoding: run on the lent machine with --ignored"]
fn peak_memory_stays_within_the_budget() {
    let files: usize = std::env::var("CUIMG_RSS_FILES").map_or(64, |v| v.parse().unwrap());
    let side: u32 = std::env::var("CUIMG_RSS_SIDE").map_or(20000, |v| v.parse().unwrap());
    let dir = temp("rss");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let img = Image::<Rgb8>::from_fn(side, side, |x, y| Rgb8([(x / 64) as u8, (y / 64) as u8, ((x + y) / 97) as u8]));
    cuimg::io::save(&img, inp.join("p00.png")).unwrap();
    drop(img);
    for i in 1..files {
        std::fs::copy(inp.join("p00.png"), inp.join(format!("p{i:02}.png"))).unwrap();
    }
    let budget: u64 = 16 << 30;
    const CONSTANT: u64 = 2 << 30;
    for path in ["--cpu", "--gpu=all"] {
        let out = dir.join(format!("out{path}"));
        let start = Instant::now();
        let o = cuimg_within(
            Duration::from_secs(1200),
            &["gray", s(&inp), "-o", s(&out), path, "--memory", "16G", "--report"],
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{err}");
        let line = err.lines().find(|l| l.starts_with("memory: peak resident")).expect("the peak in the report");
        let words: Vec<&str> = line.split_whitespace().collect();
        let unit = match words[4] {
            "GiB" => (1u64 << 30) as f64,
            "MiB" => (1u64 << 20) as f64,
            _ => 1.0,
        };
        let peak = words[3].parse::<f64>().unwrap() * unit;
        let summary = err.lines().find(|l| l.contains("images written")).unwrap();
        println!("{path}: {summary}; {line}; {:.0} s", start.elapsed().as_secs_f64());
        assert!(peak <= (budget + CONSTANT) as f64, "{path}: {line}");
        std::fs::remove_dir_all(&out).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A budget of a few files' worth on a folder of JPEGs (on a GPU: the nvJPEG path, whose
/// reader admits files while the batched decoder checks them on rayon's threads) ends, with
/// every file written, for each command's path.
#[test]
fn a_small_budget_never_stalls_the_run() {
    let dir = temp("small-budget");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let jpg = cuimg::io::encode(&photo(640, 480, 3), cuimg::io::Format::Jpeg { quality: 85 }).unwrap();
    for i in 0..40 {
        std::fs::write(inp.join(format!("p{i:02}.jpg")), &jpg).unwrap();
    }
    // PNGs too: on a GPU, the pipeline's path.
    let pngs = dir.join("png");
    std::fs::create_dir_all(&pngs).unwrap();
    let png = cuimg::io::encode(&photo(640, 480, 4), cuimg::io::Format::Png).unwrap();
    for i in 0..40 {
        std::fs::write(pngs.join(format!("p{i:02}.png")), &png).unwrap();
    }
    for (op, inp) in [("gray", &inp), ("equalize", &inp), ("equalize", &pngs)] {
        let out = dir.join(format!("out-{op}-{}", inp.file_name().unwrap().to_string_lossy()));
        // About three files' cost (file + 3 images of 640x480x3).
        let o = cuimg_within(Duration::from_secs(120), &[op, s(inp), "-o", s(&out), "--memory", "9M"]);
        assert_eq!(o.status.code(), Some(0), "{op}: {}", stderr(&o));
        assert_eq!(names(&out).len(), 40, "{op} {inp:?}");
    }
}
