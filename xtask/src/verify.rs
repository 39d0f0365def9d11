//! `cargo xtask verify`: every check CI makes, in the order that fails fastest.

use crate::{Result, ptx, ptxas, root, run};

pub fn run(skip_tests: bool) -> Result {
    // (a) The committed PTX must be exactly what the kernels build to now.
    let fresh = ptx::build()?;
    let path = ptx::committed_path();
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if fresh != committed {
        let copy = root().join("target/cuimg_kernels.fresh.ptx");
        ptx::write(&copy, &fresh)?;
        return Err(format!(
            "stale PTX: {} differs from what kernels-gpu builds now (fresh copy: {}); run `cargo xtask ptx` and commit the result",
            path.display(),
            copy.display()
        ));
    }
    eprintln!("    PTX is fresh: {} kernels in {}", ptx::kernels(&fresh).len(), path.display());

    // (b) ptxas for every GPU generation from Turing on.
    ptxas::assemble_all(&path)?;

    // (c) Formatting and lints, host and kernels.
    run::step("rustfmt (workspace)", run::cargo().args(["fmt", "--all", "--check"]))?;
    run::step(
        "rustfmt (kernels-gpu)",
        run::cargo().args(["fmt", "--check", "--manifest-path"]).arg(root().join("kernels-gpu/Cargo.toml")),
    )?;
    run::step(
        "clippy (workspace, all targets)",
        run::cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]),
    )?;
    run::step(
        "clippy (kernels-gpu, nvptx64)",
        run::cargo()
            .args(["clippy", "--release", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core", "--manifest-path"])
            .arg(root().join("kernels-gpu/Cargo.toml"))
            .arg("--target-dir")
            .arg(root().join("target/kernels-clippy"))
            .args(["--", "-D", "warnings"]),
    )?;

    // (d) All tests (GPU tests print `SKIP: no CUDA driver` where there is none).
    if !skip_tests {
        run::step("tests", run::cargo().args(["test", "--workspace"]))?;
    }

    // (e) Users build the library with stable Rust, never the nightly.
    let mut stable = std::process::Command::new("rustup");
    stable
        .current_dir(root())
        .args(["run", "1.95.0", "cargo", "build", "--package", "cuimg", "--target-dir"])
        .arg(root().join("target/stable"));
    for var in ["RUSTUP_TOOLCHAIN", "RUSTC", "RUSTDOC", "CARGO", "RUSTC_WRAPPER"] {
        stable.env_remove(var);
    }
    run::step("build the host crate with stable Rust 1.95.0", &mut stable)?;
    eprintln!("\nverify: all checks passed");
    Ok(())
}
