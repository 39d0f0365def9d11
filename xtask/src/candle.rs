//! `cargo xtask candle`: one binary with cuimg and candle's CUDA backend (issue 29, part 1).
//!
//! candle-core's `cuda` feature compiles its kernels with nvcc at build time and links
//! cudarc with `dynamic-linking` (the driver, cuBLAS, cuBLASLt, cuRAND and NVRTC), the
//! mode whose meeting with cuimg's `fallback-dynamic-loading` once broke the build. This
//! machine has neither a CUDA toolkit nor a driver, so the step builds its own, in
//! `target/candle/`:
//!
//! - nvcc, CCCL's headers and the libraries from NVIDIA's wheels on PyPI (CUDA 13.0, the
//!   lent machine's), in a venv;
//! - a link-time stand-in for `libcuda.so.1` (as the toolkit's `lib/stubs`): every driver
//!   function cudarc binds, empty, never run (the real driver is loaded where it runs);
//! - the crate (`xtask/candle/main.rs`) depending on cuimg and on candle-core with `cuda`,
//!   built for CUDA 13.0 bindings (`CUDARC_CUDA_VERSION`) and sm_90 (`CUDA_COMPUTE_CAP`,
//!   the lent H100's).
//!
//! The binary lands in `target/candle/target/release/candle-beside-cuimg`; `gpu-bundle`
//! carries it when it is there (`run.sh candle`). Not part of `verify`: it downloads
//! about 600 MB of wheels and builds for a quarter of an hour.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, root, run, target_dir};

/// The wheels: nvcc and CCCL's headers (`nv/target`, which CUDA 13's `cuda_fp16.h`
/// includes) of CUDA 13.0, the lent machine's (driver 580): candle's kernels go into the
/// binary as PTX, and a driver refuses PTX from a newer toolkit than its own
/// (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`, seen with 13.5's nvcc); and the libraries candle
/// links, whose sonames any 13.x matches.
/// nvcc's own parts are pinned too: its wheel takes any `nvidia-nvvm` (whose 13.5 `cicc`
/// wrote PTX 9.5, which 13.0's ptxas refused).
const WHEELS: [&str; 8] = [
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-cccl==13.0.85",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-nvrtc",
    "nvidia-cublas",
    "nvidia-curand",
];

/// The libraries cudarc and candle's kernels link, by the name the linker looks for and
/// the file the wheels hold.
const LIBS: [(&str, &str); 5] = [
    ("libcudart.so", "libcudart.so.13"),
    ("libcublas.so", "libcublas.so.13"),
    ("libcublasLt.so", "libcublasLt.so.13"),
    ("libcurand.so", "libcurand.so.10"),
    ("libnvrtc.so", "libnvrtc.so.13"),
];

fn dir() -> PathBuf {
    target_dir().join("candle")
}

/// The built binary, where `run` leaves it.
pub fn binary() -> PathBuf {
    dir().join("target/release/candle-beside-cuimg")
}

/// The wheels' CUDA folder (`nvidia/cu13` in the venv's site-packages), if installed.
fn wheels(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.flatten().map(|e| e.path().join("site-packages/nvidia/cu13")).find(|p| p.join("bin/nvcc").exists())
}

pub fn run() -> Result {
    let venv = dir().join("venv");
    if wheels(&venv).is_none() {
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run::step("create the candle venv", Command::new(&python).args(["-m", "venv"]).arg(&venv))?;
        run::step(
            "pip install nvcc, CCCL, cuBLAS, cuRAND, NVRTC",
            Command::new(venv.join("bin/pip")).args(["install", "--quiet", "--disable-pip-version-check"]).args(WHEELS),
        )?;
    }
    let cuda = wheels(&venv).ok_or("the wheels are installed, but no nvidia/cu13/bin/nvcc in the venv")?;
    // The toolkit as cudarc's build script looks for it: `$CUDA_ROOT/lib`, `lib/stubs`.
    let root_dir = dir().join("cuda");
    let lib = root_dir.join("lib");
    std::fs::create_dir_all(lib.join("stubs")).map_err(|e| format!("creating {}: {e}", lib.display()))?;
    for (name, file) in LIBS {
        let link = lib.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(cuda.join("lib").join(file), &link).map_err(|e| format!("linking {name}: {e}"))?;
    }
    // The crate, then the driver's stand-in from the cudarc it resolved.
    let krate = dir().join("crate");
    let host = root().join("host");
    run::write(
        &krate.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"candle-beside-cuimg\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [[bin]]\nname = \"candle-beside-cuimg\"\npath = {:?}\n\n\
             [dependencies]\ncuimg = {{ path = {host:?}, default-features = false, features = [\"dlpack\"] }}\n\
             candle-core = {{ version = \"0.11.1\", features = [\"cuda\"] }}\n\
             dlpark = {{ version = \"0.7\", default-features = false }}\nhalf = \"2\"\n\n[workspace]\n",
            root().join("xtask/candle/main.rs")
        ),
    )?;
    stub(&krate, &lib.join("stubs"))?;
    let includes = format!("-I{0}/include -I{0}/include/cccl", cuda.display());
    let path = format!("{}:{}", cuda.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    run::step(
        "build cuimg beside candle-core's CUDA backend",
        run::cargo()
            .args(["build", "--release", "--manifest-path"])
            .arg(krate.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(dir().join("target"))
            .env("CUDA_ROOT", &root_dir)
            .env("CUDARC_CUDA_VERSION", std::env::var("CUDARC_CUDA_VERSION").unwrap_or_else(|_| "13000".into()))
            .env("CUDA_COMPUTE_CAP", std::env::var("CUDA_COMPUTE_CAP").unwrap_or_else(|_| "90".into()))
            .env("NVCC_APPEND_FLAGS", includes)
            .env("PATH", path),
    )?;
    eprintln!("built {}", binary().display());
    Ok(())
}

/// `libcuda.so` (soname `libcuda.so.1`) with an empty function for each driver function
/// the resolved cudarc binds, in `stubs`.
fn stub(krate: &Path, stubs: &Path) -> Result {
    let out = run::cargo()
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(krate.join("Cargo.toml"))
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let manifest = meta["packages"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "cudarc"))
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or("cargo metadata: no cudarc")?;
    let sys = Path::new(manifest).with_file_name("src/driver/sys/mod.rs");
    let text = std::fs::read_to_string(&sys).map_err(|e| format!("reading {}: {e}", sys.display()))?;
    let mut names: Vec<&str> = text
        .split("pub unsafe fn ")
        .skip(1)
        .filter_map(|s| s.split('(').next())
        .filter(|n| n.starts_with("cu") && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    names.sort_unstable();
    names.dedup();
    let c: String = std::iter::once("/* A link-time stand-in for libcuda.so.1: never run. */\n".to_string())
        .chain(names.iter().map(|n| format!("void {n}(void) {{}}\n")))
        .collect();
    let src = stubs.join("stub.c");
    run::write(&src, &c)?;
    run::step(
        &format!("the driver's link-time stand-in ({} functions)", names.len()),
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
            .arg(stubs.join("libcuda.so"))
            .arg(&src),
    )
}
