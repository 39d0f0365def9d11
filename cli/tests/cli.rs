//! The `cuimg` binary on temporary folders: good files become outputs equal to the CPU
//! reference, every bad file is reported with its path and skipped, nothing half-written or
//! overwritten is left behind, and the exit code says whether all went well.
//!
//! The binary is `CUIMG_BIN` when set (the GPU bundle runs these tests on the lent GPU with
//! its own copy of the binary), else the one cargo built.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use common::{bin, photo, s, stderr};
use cuimg::{GrayWeights, Image, Rgb8, cpu};

mod common;

fn cuimg(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("the cuimg binary runs")
}

fn temp(name: &str) -> common::Temp {
    common::temp_in("cli", name)
}

#[test]
fn good_files_are_processed_and_bad_ones_reported() {
    let dir = temp("mixed");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    let (a, b) = (photo(64, 48, 1), photo(333, 257, 2));
    cuimg::io::save(&a, inp.join("a.png")).unwrap();
    cuimg::io::save(&b, inp.join("b.png")).unwrap();
    // Bad files: corrupt PNG, empty file, truncated JPEG, not an image.
    std::fs::write(inp.join("corrupt.png"), b"\x89PNG\r\n\x1a\nthis is not a png").unwrap();
    std::fs::write(inp.join("empty.png"), b"").unwrap();
    let jpg = cuimg::io::encode(&b, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
    std::fs::write(inp.join("cut.jpg"), &jpg[..jpg.len() / 2]).unwrap();
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, b"hello").unwrap();

    let o = cuimg(&["gray", s(&inp), s(&notes), "-o", s(&out), "--report"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for bad in ["corrupt.png", "empty.png", "cut.jpg", "notes.txt"] {
        assert!(err.contains(bad), "no error names {bad}:\n{err}");
    }
    assert!(err.contains("truncated JPEG"), "{err}");
    for (name, img) in [("a", &a), ("b", &b)] {
        let got = cuimg::io::load_gray(out.join(format!("{name}.png"))).unwrap();
        assert_eq!(got, cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap(), "{name}");
    }
    let left: Vec<String> =
        std::fs::read_dir(&out).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
    assert_eq!(left.len(), 2, "only the two good outputs, no temporary files: {left:?}");
    assert!(err.contains("decode"), "the report's stages: {err}");
}

#[test]
fn inputs_are_never_overwritten() {
    let dir = temp("inplace");
    let img = photo(20, 10, 3);
    cuimg::io::save(&img, dir.join("p.png")).unwrap();
    let before = std::fs::read(dir.join("p.png")).unwrap();
    let o = cuimg(&["equalize", s(&dir), "-o", s(&dir)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("would overwrite an input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.join("p.png")).unwrap(), before);
}

#[test]
fn an_unwritable_output_folder_is_a_clear_error() {
    let dir = temp("unwritable");
    let img = photo(8, 8, 4);
    cuimg::io::save(&img, dir.join("p.png")).unwrap();
    // A folder inside a file cannot be made.
    let file = dir.join("file");
    std::fs::write(&file, b"x").unwrap();
    let o = cuimg(&["gray", s(&dir.join("p.png")), "-o", s(&file.join("out"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot create the output folder"), "{}", stderr(&o));
}

#[test]
fn jpeg_out_and_tables_and_histograms() {
    let dir = temp("formats");
    let img = photo(100, 60, 5);
    cuimg::io::save(&img, dir.join("p.png")).unwrap();
    let out = dir.join("out");
    let o = cuimg(&[
        "lut",
        s(&dir.join("p.png")),
        "-o",
        s(&out),
        "--table",
        "invert",
        "--format",
        "jpg",
        "--quality",
        "95",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(out.join("p.jpg")).unwrap();
    assert!(cuimg::io::jpeg_is_complete(&bytes));
    assert_eq!(cuimg::io::decode_rgb(&bytes, Path::new("p.jpg")).unwrap().dimensions(), (100, 60));
    let o = cuimg(&["lut", s(&dir.join("p.png")), "-o", s(&out), "--table", "gamma:-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    let o = cuimg(&["histogram", s(&dir.join("p.png")), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("p.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 257);
    let want = cpu::histogram(&img.view()).unwrap();
    for (b, line) in lines[1..].iter().enumerate() {
        let counts: Vec<u32> = line.split(',').skip(1).map(|v| v.parse().unwrap()).collect();
        assert_eq!(counts, vec![want.channel(0)[b], want.channel(1)[b], want.channel(2)[b]], "bin {b}");
    }
}

/// The CPU path (`--cpu`) and the default path (the GPU where there is one) write the same
/// bytes: the kernels are exact.
#[test]
fn cpu_and_default_paths_agree() {
    let dir = temp("paths");
    for i in 0..6u8 {
        cuimg::io::save(&photo(50 + i as u32 * 13, 40, i), dir.join(format!("p{i}.png"))).unwrap();
    }
    for op in ["gray", "bw", "equalize"] {
        let (cpu_out, def_out) = (dir.join(format!("{op}-cpu")), dir.join(format!("{op}-default")));
        assert!(cuimg(&[op, s(&dir), "-o", s(&cpu_out), "--cpu"]).status.success());
        let o = cuimg(&[op, s(&dir), "-o", s(&def_out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        for i in 0..6 {
            let name = format!("p{i}.png");
            assert_eq!(
                std::fs::read(cpu_out.join(&name)).unwrap(),
                std::fs::read(def_out.join(&name)).unwrap(),
                "{op} {name}"
            );
        }
    }
}

/// A PNG header that claims 60000x60000 pixels: an error, without allocating 10 GB first.
#[test]
fn a_huge_header_is_refused_cheaply() {
    let dir = temp("bomb");
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
    let ihdr = [&60000u32.to_be_bytes()[..], &60000u32.to_be_bytes()[..], &[8, 2, 0, 0, 0]].concat();
    png.extend_from_slice(&ihdr);
    let crc = crc32(&[b"IHDR".as_slice(), &ihdr].concat());
    png.extend_from_slice(&crc.to_be_bytes());
    std::fs::write(dir.join("bomb.png"), &png).unwrap();
    let t = std::time::Instant::now();
    let o = cuimg(&["gray", s(&dir.join("bomb.png")), "-o", s(&dir.join("out")), "--cpu"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("bomb.png"));
    assert!(t.elapsed().as_secs() < 10, "refused only after {:?}", t.elapsed());
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Many large images: more than the queues between decoding, the GPU and encoding hold at
/// once (a decoder blocked on a full queue once starved the pipeline's host copies of
/// threads, and the run stalled).
#[test]
fn many_files_flow_through() {
    let dir = temp("many");
    let img = photo(1280, 720, 9);
    let bytes = cuimg::io::encode(&img, cuimg::io::Format::Png).unwrap();
    for i in 0..80 {
        std::fs::write(dir.join(format!("f{i:02}.png")), &bytes).unwrap();
    }
    let out = dir.join("out");
    let o = cuimg(&["gray", s(&dir), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 80);
    let want = cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap();
    assert_eq!(cuimg::io::load_gray(out.join("f79.png")).unwrap(), want);
}

/// Progressive, CMYK and restart-marker JPEGs all come out (through nvJPEG, or the CPU
/// decoder for what nvJPEG refuses); a truncated PNG is reported, on both paths.
#[test]
fn unusual_jpegs_and_a_truncated_png() {
    // Embedded (the GPU bundle runs this binary elsewhere), written out here.
    let dir = temp("unusual");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for (f, bytes) in [
        ("progressive.jpg", &include_bytes!("../../tests/data/jpeg/progressive.jpg")[..]),
        ("cmyk.jpg", &include_bytes!("../../tests/data/jpeg/cmyk.jpg")[..]),
        ("restart.jpg", &include_bytes!("../../tests/data/jpeg/restart.jpg")[..]),
        ("truncated.png", &include_bytes!("../../tests/data/jpeg/truncated.png")[..]),
    ] {
        std::fs::write(data.join(f), bytes).unwrap();
        if f.ends_with(".jpg") {
            std::fs::write(dir.join(f), bytes).unwrap();
        }
    }
    for (path, extra) in [("default", None), ("cpu", Some("--cpu"))] {
        let out = dir.join(format!("out-{path}"));
        let mut args = vec!["gray", s(&dir), "-o", s(&out), "--format", "jpg"];
        args.extend(extra);
        let o = cuimg(&args);
        assert!(o.status.success(), "{path}: {}", stderr(&o));
        for f in ["progressive.jpg", "cmyk.jpg", "restart.jpg"] {
            let img = image::load_from_memory(&std::fs::read(out.join(f)).unwrap()).unwrap();
            assert_eq!((img.width(), img.height()), (97, 61), "{path} {f}");
        }
        let o = cuimg(&["gray", s(&data.join("truncated.png")), "-o", s(&out), extra.unwrap_or("--gpu=all")]);
        assert_eq!(o.status.code(), Some(1), "{path}");
        assert!(stderr(&o).contains("truncated.png"), "{}", stderr(&o));
    }
}

/// Globs pick only their matches, an input named twice (folder, pattern and file) is done
/// once, and patterns that match nothing or do not parse are reported by name.
#[test]
fn globs_folders_and_files_together() {
    let dir = temp("globs");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let (a, b) = (photo(31, 17, 3), photo(5, 1, 4));
    cuimg::io::save(&a, inp.join("a.png")).unwrap();
    cuimg::io::save(&b, inp.join("b.png")).unwrap();
    std::fs::write(inp.join("c.jpg"), cuimg::io::encode(&a, cuimg::io::Format::Jpeg { quality: 90 }).unwrap()).unwrap();
    std::fs::write(inp.join("notes.txt"), b"not an image").unwrap();

    let out = dir.join("out-glob");
    let o = cuimg(&["gray", &format!("{}/*.png", s(&inp)), "-o", s(&out), "--cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
    names.sort();
    assert_eq!(names, ["a.png", "b.png"], "only the pattern's matches");
    assert_eq!(
        cuimg::io::load_gray(out.join("b.png")).unwrap(),
        cpu::grayscale(&b.view(), GrayWeights::Bt601).unwrap()
    );

    let out = dir.join("out-all");
    let (glob, file) = (format!("{}/?.png", s(&inp)), inp.join("a.png"));
    let nothing = format!("{}/*.tiff", s(&inp));
    let broken = format!("{}/[a.png", s(&inp));
    let o = cuimg(&["gray", s(&inp), &glob, s(&file), &nothing, &broken, "-o", s(&out), "--cpu"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("*.tiff") && err.contains("matches no file"), "{err}");
    assert!(err.contains("[a.png"), "{err}");
    assert!(!err.contains("another input already writes"), "a file named twice is done once: {err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3, "a, b and c from the folder, once each");
}

/// `--gpu` takes an index or `all`; an index the driver does not have stops the run before
/// any file is touched (exit 2), with or without a driver.
#[test]
fn a_gpu_that_is_not_there_is_a_clear_error() {
    let dir = temp("nogpu");
    cuimg::io::save(&photo(8, 8, 5), dir.join("a.png")).unwrap();
    let out = dir.join("out");
    let o = cuimg(&["gray", s(&dir.join("a.png")), "-o", s(&out), "--gpu", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--gpu x: an index or \"all\""), "{}", stderr(&o));
    let o = cuimg(&["gray", s(&dir.join("a.png")), "-o", s(&out), "--gpu", "99"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("GPU 99 was asked for") || err.contains("libcuda"), "{err}");
    assert!(!out.join("a.png").exists());
}

/// On a machine with two GPUs, `--gpu 1` and `--gpu all` give the CPU's results (the lent
/// two-GPU machine runs this; elsewhere it says SKIP).
#[test]
fn second_gpu_and_all_gpus() {
    if cuimg::Gpu::with_device(1).is_err() {
        // Straight to stderr: the test harness captures eprintln!, and a SKIP must show.
        let _ = writeln!(std::io::stderr(), "SKIP: --gpu 1 needs a second GPU");
        return;
    }
    let dir = temp("gpu1");
    let imgs: Vec<Image<Rgb8>> = (0..24).map(|i| photo(100 + i * 13, 37 + i, i as u8)).collect();
    for (i, img) in imgs.iter().enumerate() {
        cuimg::io::save(img, dir.join(format!("p{i:02}.png"))).unwrap();
    }
    for which in ["1", "all"] {
        let out = dir.join(format!("out-{which}"));
        let o = cuimg(&["equalize", s(&dir), "-o", s(&out), "--gpu", which, "--report"]);
        let err = stderr(&o);
        assert!(o.status.success(), "--gpu {which}: {err}");
        if which == "all" {
            assert!(err.contains("2 x"), "both GPUs named in the report: {err}");
        }
        for (i, img) in imgs.iter().enumerate() {
            let got = cuimg::io::load_rgb(out.join(format!("p{i:02}.png"))).unwrap();
            let want = cpu::equalize_color(&img.view(), cuimg::EqualizeMode::Luma).unwrap();
            assert_eq!(got, want, "--gpu {which}, image {i}");
        }
    }
}

/// A 16-bit PNG is processed at 8 bits (the library's rounding) and the user is told which
/// file lost its low bits; ordinary files give no such warning.
#[test]
fn sixteen_bit_pngs_are_reduced_with_a_warning() {
    let dir = temp("sixteen");
    let deep = image::ImageBuffer::<image::Rgb<u16>, Vec<u16>>::from_fn(37, 11, |x, y| {
        image::Rgb([(x * 1777 + y * 3) as u16, (y * 5003) as u16, 65535 - (x * 911) as u16])
    });
    deep.save(dir.join("deep.png")).unwrap();
    cuimg::io::save(&photo(9, 9, 6), dir.join("plain.png")).unwrap();
    assert_eq!(cuimg::io::bits_per_channel(&std::fs::read(dir.join("deep.png")).unwrap()), Some(16));

    for extra in ["--cpu", "--gpu=all"] {
        let out = dir.join(format!("out{extra}"));
        let o = cuimg(&["gray", s(&dir), "-o", s(&out), extra]);
        let err = stderr(&o);
        assert!(o.status.success(), "{extra}: {err}");
        assert!(err.contains("deep.png: 16 bits per channel, reduced to 8"), "{extra}: {err}");
        assert!(!err.contains("plain.png"), "{extra}: {err}");
        // The library refuses the file unless asked to round it, as the tool does.
        let refused = cuimg::io::load_rgb(dir.join("deep.png"));
        assert!(matches!(refused, Err(cuimg::Error::UnsupportedFormat(_))), "{refused:?}");
        let eight = cuimg::io::load_converted::<cuimg::Rgb8>(dir.join("deep.png")).unwrap();
        let want = cpu::grayscale(&eight.view(), GrayWeights::Bt601).unwrap();
        assert_eq!(cuimg::io::load_gray(out.join("deep.png")).unwrap(), want, "{extra}");
    }
}

/// Damaged files of every kind (bytes flipped in headers and in the compressed data, lengths
/// changed, files cut short) never crash the tool, on the GPU (nvJPEG) or the CPU: each
/// input is either written or reported by name, and the exit code is 0 or 1.
#[test]
fn damaged_files_are_written_or_reported_never_a_crash() {
    let dir = temp("fuzz");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let img = photo(203, 77, 7);
    let jpg = cuimg::io::encode(&img, cuimg::io::Format::Jpeg { quality: 85 }).unwrap();
    let png = cuimg::io::encode(&img, cuimg::io::Format::Png).unwrap();
    let progressive = include_bytes!("../../tests/data/jpeg/progressive.jpg");
    // A fixed xorshift stream: the same damaged files on every run, so a failure reproduces.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut names = Vec::new();
    for i in 0..96 {
        let (base, ext): (&[u8], &str) = match i % 3 {
            0 => (&jpg, "jpg"),
            1 => (&progressive[..], "jpg"),
            _ => (&png, "png"),
        };
        let mut bytes = base.to_vec();
        match (i / 3) % 4 {
            // A few random bytes anywhere (headers included).
            0 => (0..1 + next() % 4).for_each(|_| {
                let at = (next() as usize) % bytes.len();
                bytes[at] = next() as u8;
            }),
            // One byte in the first 600 (markers, lengths, tables, sizes).
            1 => {
                let at = (next() as usize) % 600.min(bytes.len());
                bytes[at] ^= 1 << (next() % 8);
            }
            // Cut anywhere.
            2 => bytes.truncate((next() as usize) % bytes.len()),
            // A run of the compressed data replaced by noise, the end kept.
            _ => {
                let start = bytes.len() / 3 + (next() as usize) % (bytes.len() / 3);
                for b in &mut bytes[start..start + 64] {
                    *b = next() as u8;
                }
            }
        }
        let name = format!("d{i:02}.{ext}");
        std::fs::write(inp.join(&name), &bytes).unwrap();
        names.push(name);
    }
    for extra in ["--gpu=all", "--cpu"] {
        let out = dir.join(format!("out{extra}"));
        let o = cuimg(&["gray", s(&inp), "-o", s(&out), "--format", "jpg", extra]);
        let err = stderr(&o);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{extra}: exit {:?}\n{err}", o.status);
        assert!(!err.contains("panicked"), "{extra}: {err}");
        let mut reported = 0;
        for name in &names {
            let stem = name.split('.').next().unwrap();
            let written = out.join(format!("{stem}.jpg")).exists();
            let named = err.lines().any(|l| l.starts_with("error: ") && l.contains(&format!("{name}:")));
            assert!(written != named, "{extra}: {name} must be written or reported, once (written {written}):\n{err}");
            reported += usize::from(named);
        }
        assert!(reported > 0 && reported < names.len(), "{extra}: {reported} of {} reported", names.len());
        let left = std::fs::read_dir(&out).unwrap().count();
        assert_eq!(left, names.len() - reported, "{extra}: no temporary files left");
    }
}

/// `--trace` writes every thread's timeline as a Chrome trace, and `--report` sums it per
/// kind of thread.
#[test]
fn trace_writes_a_timeline() {
    let dir = temp("trace");
    for i in 0..6 {
        cuimg::io::save(&photo(40 + i, 30, i as u8), dir.join(format!("p{i}.png"))).unwrap();
    }
    let trace = dir.join("trace.json");
    let o = cuimg(&["gray", s(&dir), "-o", s(&dir.join("out")), "--cpu", "--report", "--trace", s(&trace)]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("threads (share of their time"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    for stage in ["read", "decode", "kernel", "encode", "write"] {
        let n = events.iter().filter(|e| e["name"] == stage && e["ph"] == "X").count();
        assert_eq!(n, 6, "{stage}: one span per image");
    }
    assert!(
        events.iter().any(|e| e["ph"] == "M" && e["args"]["name"].as_str().is_some_and(|n| n.starts_with("worker")))
    );
}

/// `cuimg clahe`: on luma by default, per channel on request, equal to the library's CPU
/// reference on both paths (the GPU when there is one); an image too small for the grid is
/// reported and the others written; bad `--clip` and `--tiles` stop the run before any file.
#[test]
fn clahe_matches_the_library_and_refuses_bad_parameters() {
    let dir = temp("clahe");
    let (inp, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    let images = [photo(64, 48, 1), photo(333, 257, 2)];
    for (i, img) in images.iter().enumerate() {
        cuimg::io::save(img, inp.join(format!("p{i}.png"))).unwrap();
    }
    cuimg::io::save(&photo(3, 3, 3), inp.join("tiny.png")).unwrap();
    for (args, clahe, mode) in [
        (vec![], cuimg::Clahe::default(), cuimg::EqualizeMode::Luma),
        (vec!["--cpu"], cuimg::Clahe::default(), cuimg::EqualizeMode::Luma),
        (
            vec!["--per-channel", "--clip", "3", "--tiles", "4x3"],
            cuimg::Clahe::new(3.0, (4, 3)).unwrap(),
            cuimg::EqualizeMode::PerChannel,
        ),
    ] {
        let _ = std::fs::remove_dir_all(&out);
        let mut all = vec!["clahe", s(&inp), "-o", s(&out)];
        all.extend(&args);
        let o = cuimg(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: the tiny image fails, the rest pass: {err}");
        assert!(err.contains("tiny.png") && err.contains("do not fit a 3x3 image"), "{err}");
        assert!(!out.join("tiny.png").exists());
        for (i, img) in images.iter().enumerate() {
            let got = cuimg::io::load_rgb(out.join(format!("p{i}.png"))).unwrap();
            assert_eq!(got, cpu::clahe_color(&img.view(), clahe, mode).unwrap(), "{args:?} p{i}");
        }
    }
    for (bad, says) in [
        (["--tiles", "0x8"], "no tiles"),
        (["--tiles", "8"], "COLUMNSxROWS"),
        (["--clip", "-1"], "not a finite number above 0"),
        (["--clip", "NaN"], "not a finite number above 0"),
    ] {
        let o = cuimg(&["clahe", s(&inp), "-o", s(&dir.join("bad")), bad[0], bad[1]]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&o).contains(says), "{bad:?}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `gray` on JPEG files gives each file's luma plane (`io::decode_luma`) on every path:
/// nvJPEG's hardware and SM decoders, the CPU decoders beside them and `--cpu`. A file with
/// an EXIF orientation comes out upright on each (nvJPEG decodes pixels as stored, so the tool
/// sends it through the CPU decoder), and every output, read back, is within JPEG's loss of
/// the input's luma.
#[test]
fn gray_jpegs_are_their_luma_and_upright() {
    let dir = temp("luma");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    // Smooth content (JPEG keeps it well), big enough for the SM decoders' path.
    let smooth = |w: u32, h: u32, k: u32| {
        Image::<Rgb8>::from_fn(w, h, |x, y| {
            Rgb8([((x * 255) / w) as u8, ((y * 255) / h) as u8, (((x + y + k * 40) * 97) / (w + h)) as u8])
        })
    };
    let mut want = Vec::new();
    for (i, (w, h)) in [(1601, 1203), (97, 61), (1, 1), (640, 480)].into_iter().enumerate() {
        let mut bytes = cuimg::io::encode(&smooth(w, h, i as u32), cuimg::io::Format::Jpeg { quality: 95 }).unwrap();
        if i == 3 {
            // An EXIF orientation 6 (turned 90 degrees clockwise) after the SOI marker.
            let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0\x06\0\0\0\0\0\0\0".to_vec();
            let mut seg = vec![0xFF, 0xE1];
            seg.extend(((exif.len() + 2) as u16).to_be_bytes());
            seg.append(&mut exif);
            bytes.splice(2..2, seg);
            assert!(cuimg::io::jpeg_orientation(&bytes).is_some());
        }
        let name = format!("f{i}.jpg");
        std::fs::write(inp.join(&name), &bytes).unwrap();
        want.push((name, cuimg::io::decode_luma(&bytes, Path::new("x.jpg")).unwrap()));
    }
    assert_eq!(want[3].1.dimensions(), (480, 640), "orientation applied by the CPU decoder");
    // (label, arguments, environment)
    type Shape<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);
    let runs: [Shape; 4] = [
        ("default", &[], &[]),
        ("the CPU decoders beside nvJPEG's", &["--tune", "cpu-decoders=4,sm-decoders=0"], &[]),
        ("the SM decoders only", &["--tune", "cpu-decoders=0,ramp-decoders=0,sm-decoders=2"], &[]),
        ("--cpu", &["--cpu"], &[]),
    ];
    for (label, extra, env) in runs {
        let out = dir.join(format!("out-{}", label.len()));
        let mut args = vec!["gray", s(&inp), "-o", s(&out)];
        args.extend(extra);
        let o = Command::new(bin()).args(&args).envs(env.iter().copied()).output().unwrap();
        assert!(o.status.success(), "{label}: {}", stderr(&o));
        for (name, luma) in &want {
            let got = cuimg::io::load_gray(out.join(name)).unwrap();
            assert_eq!(got.dimensions(), luma.dimensions(), "{label} {name}");
            let mse =
                got.as_bytes().iter().zip(luma.as_bytes()).map(|(a, b)| (*a as f64 - *b as f64).powi(2)).sum::<f64>()
                    / got.as_bytes().len() as f64;
            let db = 10.0 * (255.0f64 * 255.0 / mse.max(1e-9)).log10();
            assert!(db >= 38.0, "{label} {name}: {db:.1} dB against the input's luma");
        }
    }
    // Among other files (here a PNG), which take the GPU path for PNG, the JPEGs still give
    // their luma plane, upright; the PNG its exact BT.601 gray.
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    for (name, _) in &want[1..] {
        std::fs::copy(inp.join(name), mixed.join(name)).unwrap();
    }
    let png = photo(33, 17, 9);
    cuimg::io::save(&png, mixed.join("p.png")).unwrap();
    let out = dir.join("out-mixed");
    let o = cuimg(&["gray", s(&mixed), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        cuimg::io::load_gray(out.join("p.png")).unwrap(),
        cpu::grayscale(&png.view(), GrayWeights::Bt601).unwrap()
    );
    for (name, luma) in &want[1..] {
        let got = cuimg::io::load_gray(out.join(name)).unwrap();
        assert_eq!(got.dimensions(), luma.dimensions(), "mixed {name}");
        let mse = got.as_bytes().iter().zip(luma.as_bytes()).map(|(a, b)| (*a as f64 - *b as f64).powi(2)).sum::<f64>()
            / got.as_bytes().len() as f64;
        assert!(10.0 * (255.0f64 * 255.0 / mse.max(1e-9)).log10() >= 38.0, "mixed {name}");
    }
}

/// When nvJPEG cannot make a codec (`CUIMG_FAIL_CODECS`, a test hook), its threads take
/// their work to the CPU: the hardware decoder's and the SM decoders' files are decoded
/// there, the encoders encode there; every file is still written, none lost, no hang.
#[test]
fn codecs_that_cannot_open_leave_their_work_to_the_cpu() {
    let dir = temp("nocodec");
    let inp = dir.join("in");
    std::fs::create_dir_all(&inp).unwrap();
    let mut want = Vec::new();
    for i in 0..40u32 {
        let img = photo(64 + i, 48, i as u8);
        let bytes = cuimg::io::encode(&img, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
        std::fs::write(inp.join(format!("p{i:02}.jpg")), &bytes).unwrap();
        want.push((format!("p{i:02}"), img.dimensions()));
    }
    for failing in ["hardware", "default", "hardware,default"] {
        for format in ["jpg", "png"] {
            let out = dir.join(format!("out-{}-{format}", failing.len()));
            let o = Command::new(bin())
                .args(["gray", s(&inp), "-o", s(&out), "--format", format, "--tune", "cpu-decoders=0,ramp-decoders=0"])
                .env("CUIMG_FAIL_CODECS", failing)
                .output()
                .unwrap();
            let err = stderr(&o);
            assert!(o.status.success(), "{failing} {format}: {err}");
            if err.contains("nvJPEG (") {
                // The JPEG path ran (a GPU with nvJPEG): it said what it could not open.
                assert!(err.contains("CUIMG_FAIL_CODECS"), "{failing}: {err}");
            }
            for (stem, dims) in &want {
                let got = cuimg::io::load_gray(out.join(format!("{stem}.{format}"))).unwrap();
                assert_eq!(got.dimensions(), *dims, "{failing} {format} {stem}");
            }
            assert_eq!(std::fs::read_dir(&out).unwrap().count(), want.len(), "{failing} {format}");
        }
    }
}

/// The small frictions of a first run: an empty folder or a pattern matching nothing is exit
/// 1 with its reason and makes no `-o` folder; `-o` at a file says so (exit 2); a path is
/// said once per message; the exit codes are in `--help`; messages about the CPU speak of
/// `--cpu`, not of Rust modules, and a `--cpu` run reports no GPU opening.
#[test]
fn first_run_frictions() {
    let dir = temp("frictions");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for input in [s(&empty).to_string(), format!("{}/*.png", dir.display())] {
        let out = dir.join("never-made");
        let o = cuimg(&["gray", &input, "-o", s(&out)]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{input}: {err}");
        assert!(err.contains("holds no PNG or JPEG") || err.contains("matches no file"), "{err}");
        assert!(!out.exists(), "{input}: the -o folder was made with nothing to write");
    }
    let img = photo(8, 8, 1);
    cuimg::io::save(&img, dir.join("p.png")).unwrap();
    std::fs::write(dir.join("bad.png"), b"\x89PNG\r\n\x1a\nbroken").unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let o = cuimg(&["gray", s(&dir.join("p.png")), "-o", s(&file)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a file; -o takes a folder"), "{}", stderr(&o));
    let out = dir.join("out");
    let o = cuimg(&["gray", s(&dir.join("bad.png")), s(&dir.join("p.png")), "-o", s(&out), "--cpu"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let line = err.lines().find(|l| l.contains("bad.png")).unwrap();
    assert_eq!(line.matches("bad.png").count(), 1, "the path said once: {line}");
    assert!(!err.contains("opening the GPU"), "a --cpu run opens no GPU: {err}");
    let help = String::from_utf8_lossy(&cuimg(&["--help"]).stdout).into_owned();
    assert!(help.contains("Exit codes: 0") && help.contains("130"), "{help}");
    let o = cuimg(&["gray", s(&dir.join("p.png")), "-o", s(&dir.join("out2"))]);
    let err = stderr(&o);
    assert!(!err.contains("cuimg::"), "the tool's messages name no Rust module: {err}");
    if err.contains("no GPU") {
        assert!(err.contains("--cpu"), "{err}");
    }
}

/// The subcommands are the registry's: every operation with a tool form is one, with each
/// of its parameters as an option, and a bad value stops the run before any file.
#[test]
fn every_registered_operation_is_a_command() {
    let help = String::from_utf8_lossy(&cuimg(&["--help"]).stdout).into_owned();
    let dir = temp("registry");
    let inp = dir.join("p.png");
    std::fs::create_dir_all(&dir).unwrap();
    cuimg::io::save(&cuimg::Image::<cuimg::Rgb8>::filled(5, 4, 90), &inp).unwrap();
    // The tuning is an option, checked like the others (no environment knobs).
    let o = cuimg(&["gray", inp.to_str().unwrap(), "-o", dir.join("t").to_str().unwrap(), "--tune", "decoders=3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a tuning key; the keys are jpeg-batch"));
    for op in cuimg::registry::OPERATIONS {
        let Some(form) = op.cli else { continue };
        assert!(help.lines().any(|l| l.trim_start().starts_with(form.command)), "{} is not a command: {help}", op.name);
        let sub = String::from_utf8_lossy(&cuimg(&[form.command, "--help"]).stdout).into_owned();
        for p in op.params {
            assert!(sub.contains(&format!("--{}", p.name)), "{} has no --{}: {sub}", form.command, p.name);
            if let Some(bad) = p.bad {
                let out = dir.join(format!("out-{}-{}", form.command, p.name));
                let o = cuimg(&[
                    form.command,
                    inp.to_str().unwrap(),
                    "-o",
                    out.to_str().unwrap(),
                    &format!("--{}={bad}", p.name),
                ]);
                assert_eq!(o.status.code(), Some(2), "{} --{} {bad}", form.command, p.name);
                assert!(!out.exists(), "a usage error makes no output folder");
            }
        }
    }
}
