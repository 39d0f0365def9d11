//! `cargo xtask tch`: one binary with cuimg and tch, PyTorch's C++ library (issue 29, part 4).
//!
//! tch 0.24 compiles its C++ wrappers against the headers of the one libtorch it pins
//! (2.11.0, the lent machine's PyTorch) and links it. This machine reaches PyPI, not
//! download.pytorch.org, so the step takes libtorch from PyTorch's own wheel, in
//! `target/tch/`:
//!
//! - `torch==2.11.0` (CUDA 13.0, 530 MB) downloaded without its dependencies, and only its
//!   `include/` and `lib/` unpacked (tch's `LIBTORCH`);
//! - the crate (`xtask/tch/main.rs`) depending on cuimg and on `tch = "=0.24.0"`, linked
//!   with `libtorch_cuda` kept (`--no-as-needed`: nothing names it, and without it libtorch
//!   has no CUDA) and the CUDA libraries it needs left to the machine that runs it
//!   (`--allow-shlib-undefined`: the wheel's own dependencies, cuDNN, cuBLAS and the rest,
//!   are not downloaded here).
//!
//! The binary lands in `target/tch/target/release/tch-beside-cuimg`; `gpu-bundle` carries
//! it when it is there, and `run.sh tch` runs it against the lent machine's PyTorch
//! (`torch/lib` on the library path, whose own paths find CUDA's wheels). Not part of
//! `verify`: it downloads 530 MB.

use std::path::PathBuf;
use std::process::Command;

use crate::{Result, root, run, target_dir};

/// The libtorch tch 0.24 pins (`torch-sys`'s `TORCH_VERSION`).
const TORCH: &str = "torch==2.11.0";

fn dir() -> PathBuf {
    target_dir().join("tch")
}

/// The built binary, where `run` leaves it.
pub fn binary() -> PathBuf {
    dir().join("target/release/tch-beside-cuimg")
}

pub fn run() -> Result {
    let libtorch = dir().join("torch");
    if !libtorch.join("lib/libtorch_cuda.so").exists() {
        let wheels = dir().join("wheel");
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run::step(
            &format!("pip download {TORCH} (no dependencies)"),
            Command::new(&python)
                .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--dest"])
                .arg(&wheels)
                .arg(TORCH),
        )?;
        let wheel = std::fs::read_dir(&wheels)
            .map_err(|e| format!("reading {}: {e}", wheels.display()))?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "whl"))
            .ok_or("pip left no wheel")?;
        run::step(
            "unpack libtorch's headers and libraries from the wheel",
            Command::new("unzip")
                .args(["-q", "-o"])
                .arg(&wheel)
                .args(["torch/include/*", "torch/lib/*", "-d"])
                .arg(dir()),
        )?;
    }
    let krate = dir().join("crate");
    run::write(
        &krate.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"tch-beside-cuimg\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [[bin]]\nname = \"tch-beside-cuimg\"\npath = {:?}\n\n\
             [dependencies]\ncuimg = {{ path = {:?} }}\ntch = \"=0.24.0\"\n\n[workspace]\n",
            root().join("xtask/tch/main.rs"),
            root().join("host"),
        ),
    )?;
    run::step(
        "build cuimg beside tch (libtorch 2.11)",
        run::cargo()
            .args(["rustc", "--release", "--bin", "tch-beside-cuimg", "--manifest-path"])
            .arg(krate.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(dir().join("target"))
            .env("LIBTORCH", &libtorch)
            .env("LIBTORCH_CXX11_ABI", "1")
            // The final link only (build scripts run here, without CUDA).
            .args(["--", "-C", "link-arg=-Wl,--no-as-needed", "-C", "link-arg=-ltorch_cuda"])
            .args(["-C", "link-arg=-Wl,--allow-shlib-undefined"]),
    )?;
    eprintln!("built {}", binary().display());
    Ok(())
}
