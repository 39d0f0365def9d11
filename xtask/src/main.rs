//! `cargo xtask <command>`: the project's build and check pipeline.
//!
//! - `ptx`: build the Rust kernels to PTX and write it into the host crate.
//! - `verify`: everything CI checks (stale PTX, ptxas for several GPU generations, fmt,
//!   clippy, tests, the host crate on stable Rust).
//! - `gpu-bundle`: release test binaries, examples and benchmarks, gathered with a run script
//!   into `gpu-bundle/` for a GPU machine that has no Rust.
//! - `candle`: one binary with cuimg and candle-core's CUDA backend (`candle.rs`).
//! - `tch`: one binary with cuimg and tch, PyTorch's C++ library (`tch.rs`).

mod bundle;
mod candle;
mod ptx;
mod ptxas;
mod run;
mod tch;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ptx") => ptx::write_committed(),
        Some("verify") => verify::run(args.iter().any(|a| a == "--skip-tests")),
        Some("gpu-bundle") => bundle::run(),
        Some("coexist") => verify::coexist(),
        Some("candle") => candle::run(),
        Some("tch") => tch::run(),
        Some("ptxas") => ptxas::assemble_all(&ptx::committed_path(), &target_dir().join("cubins")).map(|_| ()),
        _ => {
            eprintln!(
                "usage: cargo xtask <ptx | verify [--skip-tests] | gpu-bundle | ptxas | coexist | candle | tch>\n\
                 \n  ptx         build the kernels and write {}\
                 \n  verify      stale-PTX check, ptxas, fmt, clippy, tests, stable build\
                 \n  gpu-bundle  release binaries + run script in gpu-bundle/\
                 \n  ptxas       assemble the committed PTX for every GPU generation\
                 \n  coexist     build a crate with cuimg and cudarc linking the driver (verify's step)\
                 \n  candle      one binary with cuimg and candle-core's CUDA backend (downloads wheels)\
                 \n  tch         one binary with cuimg and tch, PyTorch's C++ library (downloads torch)",
                ptx::committed_path().display()
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// Where everything this tool builds or downloads goes: the target folder cargo was given
/// (`CARGO_TARGET_DIR`, relative to the workspace if relative), else the workspace's
/// `target/`. Nothing is written elsewhere.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        Some(dir) => root().join(dir),
        None => root().join("target"),
    }
}

pub type Result<T = ()> = std::result::Result<T, String>;
