//! Assembling the PTX with NVIDIA's ptxas, which needs no GPU: it proves the module is valid
//! for each generation and reports registers, shared memory and spills per kernel.
//!
//! ptxas comes from the `nvidia-cuda-nvcc` wheel on PyPI, installed into a venv cached under
//! `target/`, so no CUDA toolkit is needed on the machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, root, run};

/// The wheel that carries ptxas; pinned so reports are comparable between runs.
const NVCC_WHEEL: &str = "nvidia-cuda-nvcc==13.5.37";

/// The generations the library promises (Turing to Hopper); newer ones ptxas knows are added.
const REQUIRED: [u32; 5] = [75, 80, 86, 89, 90];

fn venv() -> PathBuf {
    root().join("target/ptxas-venv")
}

/// Finds ptxas in the cached venv, creating the venv on first use.
pub fn ptxas() -> Result<PathBuf> {
    if let Some(p) = find(&venv()) {
        return Ok(p);
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run::step("create the ptxas venv", Command::new(&python).args(["-m", "venv"]).arg(venv()))?;
    run::step(
        &format!("pip install {NVCC_WHEEL}"),
        Command::new(venv().join("bin/pip")).args(["install", "--quiet", "--disable-pip-version-check", NVCC_WHEEL]),
    )?;
    find(&venv()).ok_or_else(|| format!("{NVCC_WHEEL} installed, but no ptxas under {}", venv().display()))
}

fn find(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(found) = find(&p) {
                return Some(found);
            }
        } else if p.file_name().is_some_and(|n| n == "ptxas") && p.parent().is_some_and(|d| d.ends_with("bin")) {
            return Some(p);
        }
    }
    None
}

/// The architectures to assemble for: the required ones plus newer ones this ptxas lists.
fn architectures(ptxas: &Path) -> Result<Vec<u32>> {
    let out = Command::new(ptxas).arg("--list-arch").output().map_err(|e| format!("ptxas --list-arch: {e}"))?;
    let listed: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|a| a.trim_start_matches("sm_").parse().ok())
        .collect();
    let mut archs: Vec<u32> = REQUIRED.to_vec();
    if let Some(missing) = REQUIRED.iter().find(|a| !listed.contains(a)) {
        return Err(format!("this ptxas cannot assemble for sm_{missing}"));
    }
    archs.extend(listed.iter().filter(|a| **a > 90));
    archs.sort_unstable();
    archs.dedup();
    Ok(archs)
}

/// Assembles `ptx` for every architecture; writes ptxas's resource report to
/// `target/ptxas-report.txt` and returns its sm_90 part.
pub fn assemble_all(ptx: &Path) -> Result<String> {
    let ptxas = ptxas()?;
    let archs = architectures(&ptxas)?;
    let mut report = String::new();
    eprintln!(
        "\n==> ptxas {} for {}",
        ptx.display(),
        archs.iter().map(|a| format!("sm_{a}")).collect::<Vec<_>>().join(", ")
    );
    for arch in &archs {
        let out = Command::new(&ptxas)
            .arg(format!("-arch=sm_{arch}"))
            .args(["-v", "-o", "/dev/null"])
            .arg(ptx)
            .output()
            .map_err(|e| format!("running ptxas: {e}"))?;
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            return Err(format!("ptxas failed for sm_{arch}:\n{text}"));
        }
        eprintln!("    sm_{arch}: ok");
        report.push_str(&format!("## sm_{arch}\n{text}\n"));
    }
    let path = root().join("target/ptxas-report.txt");
    crate::ptx::write(&path, &report)?;
    eprintln!("    resource report: {}", path.display());
    Ok(report)
}
