//! Running child commands with a visible step banner and a clear failure message, on the
//! workspace's stable toolchain or the kernels' pinned nightly.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use crate::{Result, root};

/// Runs `cmd`, printing `step` first and its time after; fails naming the step.
pub fn step(step: &str, cmd: &mut Command) -> Result {
    eprintln!("\n==> {step}");
    let start = Instant::now();
    let status = cmd.status().map_err(|e| format!("{step}: could not start {:?}: {e}", cmd.get_program()))?;
    eprintln!("    ({step}: {:.1} s)", start.elapsed().as_secs_f64());
    if status.success() { Ok(()) } else { Err(format!("{step} failed ({status})")) }
}

/// A `cargo` command for the toolchain that runs xtask (the workspace's stable Rust).
pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// Variables through which the outer (stable) cargo would pick the toolchain of a child.
const TOOLCHAIN_VARS: [&str; 6] =
    ["RUSTUP_TOOLCHAIN", "RUSTC", "RUSTDOC", "CARGO", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER"];

/// A command on toolchain `toolchain` through rustup, free of the outer cargo's choices.
pub fn rustup_run(toolchain: &str, program: &str) -> Command {
    let mut c = Command::new("rustup");
    c.args(["run", toolchain, program]).current_dir(root());
    for var in TOOLCHAIN_VARS {
        c.env_remove(var);
    }
    c
}

/// The nightly the kernels pin (`kernels-gpu/rust-toolchain.toml`).
pub fn kernels_toolchain() -> Result<String> {
    let file = root().join("kernels-gpu/rust-toolchain.toml");
    let text = std::fs::read_to_string(&file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("channel"))
        .filter_map(|l| l.trim().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"').to_string())
        .next()
        .ok_or_else(|| format!("no `channel = \"...\"` in {}", file.display()))
}

/// `cargo` on the kernels' nightly, run in `kernels-gpu/`, after checking that the nightly
/// and its rust-src are installed (with the exact command to run when they are not).
pub fn kernels_cargo() -> Result<Command> {
    let pin = kernels_toolchain()?;
    let out = rustup_run(&pin, "rustc").args(["--print", "sysroot"]).output();
    let sysroot = match out {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        _ => {
            return Err(format!(
                "the kernels need the nightly toolchain {pin}, which is not installed; run\n\n    \
                 rustup toolchain install {pin} --component rust-src\n\n\
                 (on this project's offline machines, the install step that `.ci/run` runs first). \
                 Only building the kernels needs it; the library, tests and examples use stable Rust."
            ));
        }
    };
    if !sysroot.join("lib/rustlib/src/rust/library/core/src/lib.rs").is_file() {
        return Err(format!(
            "the kernels build core from source (-Zbuild-std), which needs the rust-src component of {pin}; run\n\n    \
             rustup component add rust-src --toolchain {pin}\n\n\
             (on this project's offline machines, the install step that `.ci/run` runs first)"
        ));
    }
    let mut c = rustup_run(&pin, "cargo");
    c.current_dir(root().join("kernels-gpu"));
    Ok(c)
}

pub fn write(path: &std::path::Path, text: &str) -> Result {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}
