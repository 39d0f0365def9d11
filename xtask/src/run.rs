//! Running child commands with a visible step banner and a clear failure message.

use std::process::Command;
use std::time::Instant;

use crate::Result;

/// Runs `cmd`, printing `step` first and its time after; fails naming the step.
pub fn step(step: &str, cmd: &mut Command) -> Result {
    eprintln!("\n==> {step}");
    let start = Instant::now();
    let status = cmd.status().map_err(|e| format!("{step}: could not start {:?}: {e}", cmd.get_program()))?;
    eprintln!("    ({step}: {:.1} s)", start.elapsed().as_secs_f64());
    if status.success() { Ok(()) } else { Err(format!("{step} failed ({status})")) }
}

/// A `cargo` command for the toolchain that runs xtask (the pinned nightly).
pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(crate::root());
    c
}
