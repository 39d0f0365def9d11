//! `cargo xtask gpu-bundle`: release test binaries, examples and the benchmark, with the
//! photos and a run script, in `gpu-bundle/`, for a GPU machine that has no Rust.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{Result, root, run, target_dir};

/// Runs a cargo build with JSON messages and returns `(kind, name, executable)` for every
/// executable it produced.
fn executables(args: &[&str]) -> Result<Vec<(String, String, PathBuf)>> {
    eprintln!("\n==> cargo {}", args.join(" "));
    let out = run::cargo()
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo {} failed", args.join(" ")));
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let kind = msg["target"]["kind"][0].as_str().unwrap_or("bin").to_string();
        let name = msg["target"]["name"].as_str().unwrap_or("unknown").to_string();
        let Some(exe) = msg["executable"].as_str() else {
            // An example built as a `cdylib` (for Python's ctypes) has no executable: its
            // file is the `.so` it produced.
            let cdylib = msg["target"]["crate_types"].as_array().is_some_and(|t| t.iter().any(|t| t == "cdylib"));
            let mut files = msg["filenames"].as_array().into_iter().flatten().filter_map(|f| f.as_str());
            if let (true, Some(so)) = (kind == "example" && cdylib, files.find(|f| f.ends_with(".so"))) {
                found.push(("cdylib".to_string(), name, PathBuf::from(so)));
            }
            continue;
        };
        let pkg = msg["package_id"].as_str().unwrap_or("").to_string();
        let kind = if kind == "bench" || kind == "example" {
            kind
        } else if msg["profile"]["test"].as_bool() == Some(true) {
            // Unit tests of a library are named after its package, of a binary after it
            // (`test-bin-cuimg`: the tool's, beside the library's `test-cuimg`).
            match kind.as_str() {
                "lib" => format!("test-{}", pkg_name(&pkg)),
                "bin" => format!("test-bin-{name}"),
                _ => format!("test-{name}"),
            }
        } else {
            format!("{kind}-{name}")
        };
        found.push((kind, name, PathBuf::from(exe)));
    }
    Ok(found)
}

fn pkg_name(id: &str) -> &str {
    // "path+file:///.../host#cuimg@0.1.0" -> "cuimg"
    id.rsplit('#').next().and_then(|s| s.split('@').next()).unwrap_or(id)
}

fn copy(from: &Path, to: &Path) -> Result {
    std::fs::copy(from, to).map(|_| ()).map_err(|e| format!("copying {} to {}: {e}", from.display(), to.display()))
}

pub fn run() -> Result {
    let dir = root().join("gpu-bundle");
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["tests", "examples", "bench", "images", "bin", "interop"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let mut all = executables(&["test", "--release", "--workspace", "--features", "cuimg-tests/hooks", "--no-run"])?;
    all.extend(executables(&[
        "build",
        "--release",
        "--package",
        "cuimg-cli",
        "--features",
        "test-hooks",
        "--bins",
        "--examples",
    ])?);
    // `--benches` also builds the library's own harness (a test binary of other features
    // than the test build's): only the benchmarks and examples are taken from it.
    all.extend(
        executables(&[
            "build",
            "--release",
            "--package",
            "cuimg",
            "--features",
            "bench-knobs,dlpack",
            "--examples",
            "--benches",
        ])?
        .into_iter()
        .filter(|(kind, ..)| !kind.starts_with("test-")),
    );
    // Two files of one name (`cli/tests/x.rs` and `tests/tests/x.rs`) would leave one
    // binary in the bundle, the other's tests silently not run there.
    let mut placed = std::collections::BTreeMap::new();
    for (kind, name, exe) in &all {
        // Test harnesses of crates with no tests of their own carry nothing to run.
        if ["test-bin-xtask", "test-cuimg-tests", "test-cuimg-cli", "test-bin-cuimg"].contains(&kind.as_str()) {
            continue;
        }
        let sub = if kind == "cdylib" {
            "interop"
        } else if kind.starts_with("test-") {
            "tests"
        } else if kind.starts_with("example") {
            "examples"
        } else if kind.starts_with("bench") {
            "bench"
        } else if kind == "bin-cuimg" {
            "bin"
        } else {
            continue;
        };
        let file = match sub {
            "tests" => kind.clone(),
            "bin" => "cuimg".to_string(),
            "interop" => format!("lib{name}.so"),
            _ => name.clone(),
        };
        let to = dir.join(sub).join(file);
        if let Some(other) = placed.insert(to.clone(), exe.clone()).filter(|_| sub == "tests") {
            return Err(format!(
                "{} and {} would both be {} in the bundle: rename one of their sources",
                other.display(),
                exe.display(),
                to.display()
            ));
        }
        copy(exe, &to)?;
    }
    doctests(&dir.join("tests/test-doc"))?;
    let images = root().join("tests/data/photos");
    let entries =
        std::fs::read_dir(&images).map_err(|e| format!("the test photos are missing at {}: {e}", images.display()))?;
    for e in entries.flatten() {
        copy(&e.path(), &dir.join("images").join(e.file_name()))?;
    }
    // OpenCV's CPU CLAHE, timed by Python on the GPU machine (which has OpenCV, not Rust).
    copy(&root().join("host/benches/clahe_opencv.py"), &dir.join("bench/clahe_opencv.py"))?;
    // NPP and torchvision beside the resize benchmark, on the bytes it dumps (`--dump`).
    copy(&root().join("host/benches/resize_peers.py"), &dir.join("bench/resize_peers.py"))?;
    // cuimg and candle in one binary (`run.sh candle`), where `cargo xtask candle` built it.
    if crate::candle::binary().exists() {
        copy(&crate::candle::binary(), &dir.join("interop/candle-beside-cuimg"))?;
    }
    // cuimg and tch (libtorch) in one binary (`run.sh tch`), where `cargo xtask tch` built it.
    if crate::tch::binary().exists() {
        copy(&crate::tch::binary(), &dir.join("interop/tch-beside-cuimg"))?;
    }
    // cuimg and PyTorch in one process through DLPack (`run.sh torch`).
    copy(&root().join("host/examples/dlpack_torch.py"), &dir.join("interop/dlpack_torch.py"))?;
    // `cuimg tensor`'s .npy files against torchvision v2 (`run.sh npy`).
    copy(&root().join("host/examples/tensor_npy.py"), &dir.join("interop/tensor_npy.py"))?;
    copy(&root().join("xtask/gpu-bundle-run.sh"), &dir.join("run.sh"))?;
    Command::new("chmod").arg("+x").arg(dir.join("run.sh")).status().map_err(|e| e.to_string())?;
    let size: u64 = walk(&dir);
    eprintln!(
        "\ngpu-bundle: {} executables, {:.1} MiB in {}",
        all.len(),
        size as f64 / (1 << 20) as f64,
        dir.display()
    );
    // The binaries embed the kernels and are several MB each; compressed, the bundle fits a
    // device machine's transfer limit (64 MiB) many times over.
    let archive = root().join("gpu-bundle.tar.xz");
    run::step(
        "compress gpu-bundle.tar.xz",
        // A dictionary as large as the bundle, in one thread, finds the kernels embedded in
        // every binary again: 82 MiB at -6 and 22 at -9 (a 64 MiB dictionary) in the third
        // session of 2026-11-25; with 137 kernels (1 GiB of binaries, session 7) -9 gave
        // 82 MiB and a 1.5 GiB dictionary 27, in 5 minutes. The device tool carries 64 MiB at
        // the most; unpacking needs 1.5 GiB of memory.
        Command::new("tar")
            .current_dir(root())
            .env("XZ_OPT", "--lzma2=preset=9,dict=1536MiB -T1")
            .args(["-cJf"])
            .arg(&archive)
            .arg("gpu-bundle"),
    )?;
    eprintln!(
        "{}: {:.1} MiB",
        archive.display(),
        std::fs::metadata(&archive).map_or(0, |m| m.len()) as f64 / (1 << 20) as f64
    );
    eprintln!(
        "run it on a GPU machine: tar xJf gpu-bundle.tar.xz && gpu-bundle/run.sh [test|examples|sanitize|bench|throughput|all]"
    );
    Ok(())
}

/// The library's documentation examples as one test binary (rustdoc's merged doctests of
/// edition 2024), so that the GPU machine, which has no Rust, runs them on a real GPU: there
/// a failing GPU call fails the example instead of skipping it. Keeping the compiled
/// doctests (`--persist-doctests`) is unstable, so this one build uses the kernels' pinned
/// nightly, in a target folder of its own.
fn doctests(to: &Path) -> Result {
    let kept = target_dir().join("doctests/kept");
    let _ = std::fs::remove_dir_all(&kept);
    let pin = run::kernels_toolchain()?;
    run::step(
        "documentation examples, compiled and kept (pinned nightly)",
        run::rustup_run(&pin, "cargo")
            .args(["test", "--release", "--package", "cuimg", "--doc", "--target-dir"])
            .arg(target_dir().join("doctests"))
            .env("RUSTDOCFLAGS", format!("-Zunstable-options --persist-doctests {}", kept.display()))
            .env("CUIMG_REQUIRE_GPU", "0"),
    )?;
    let merged = std::fs::read_dir(&kept)
        .map_err(|e| format!("reading {}: {e}", kept.display()))?
        .flatten()
        .map(|e| e.path().join("rust_out"))
        .find(|p| p.parent().is_some_and(|d| d.file_name().is_some_and(|n| n.to_string_lossy().starts_with("merged"))))
        .filter(|p| p.is_file())
        .ok_or("rustdoc kept no merged doctest binary")?;
    copy(&merged, to)
}

fn walk(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| if e.path().is_dir() { walk(&e.path()) } else { e.metadata().map_or(0, |m| m.len()) })
                .sum()
        })
        .unwrap_or(0)
}
