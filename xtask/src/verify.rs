//! `cargo xtask verify`: every check CI makes, in the order that fails fastest.

use crate::{Result, ptx, root, run, target_dir};

pub fn run(skip_tests: bool) -> Result {
    // (a) The committed PTX must be exactly what the kernels build to now.
    let fresh = ptx::build()?;
    let path = ptx::committed_path();
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if fresh != committed {
        let copy = target_dir().join("cuimg_kernels.fresh.ptx");
        run::write(&copy, &fresh)?;
        return Err(format!(
            "stale PTX: {} differs from what kernels-gpu builds now (fresh copy: {}); run `cargo xtask ptx` and commit the result",
            path.display(),
            copy.display()
        ));
    }
    eprintln!("    PTX is fresh: {} kernels in {}", ptx::kernels(&fresh).len(), path.display());

    // (b) ptxas for every GPU generation from Turing on: the committed SASS must be exactly
    // what it makes of the PTX.
    ptx::check_cubins()?;

    // (c) Formatting and lints, host and kernels.
    run::step("rustfmt (workspace)", run::cargo().args(["fmt", "--all", "--check"]))?;
    run::step(
        "rustfmt (kernels-gpu)",
        run::cargo().args(["fmt", "--check", "--manifest-path"]).arg(root().join("kernels-gpu/Cargo.toml")),
    )?;
    run::step(
        "clippy (workspace, all targets, all features)",
        run::cargo().args(["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"]),
    )?;
    run::step(
        "clippy (kernels-gpu, nvptx64)",
        run::kernels_cargo()?
            .args(["clippy", "--release", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .arg("--target-dir")
            .arg(target_dir().join("kernels-clippy"))
            .args(["--", "-D", "warnings"]),
    )?;

    // (d) All tests on stable Rust (GPU tests print `SKIP: no CUDA driver` where there is
    // none), the ABI test among them: every kernel the host binds against the PTX's `.entry`.
    if !skip_tests {
        run::step("tests", run::cargo().args(["test", "--workspace"]))?;
        // The tests through cuimg's test-only hooks build only with their feature (a kernel
        // that traps, a second context; never in another build); without a GPU they skip.
        run::step(
            "tests: device fault and second context (feature `hooks`)",
            run::cargo().args([
                "test",
                "--package",
                "cuimg-tests",
                "--features",
                "hooks",
                "--test",
                "fault",
                "--test",
                "contexts",
            ]),
        )?;
    }

    // The core API without the `io` feature (no `image` crate): the library's promise that
    // files and the image crate's types are optional.
    run::step(
        "build the library without default features (no image crate)",
        run::cargo().args(["build", "--package", "cuimg", "--no-default-features", "--features", "cuda-12000"]),
    )?;

    // The documentation builds without a warning (broken links, stray HTML), with the
    // default features and without them.
    for extra in [&[][..], &["--package", "cuimg", "--no-default-features", "--features", "cuda-12000"][..]] {
        let mut doc = run::cargo();
        doc.args(["doc", "--no-deps"]).args(if extra.is_empty() { &["--workspace"][..] } else { extra });
        doc.env("RUSTDOCFLAGS", "-D warnings");
        run::step("documentation without warnings", &mut doc)?;
    }

    // How much of the public API is documented and has an example: rustdoc's own count
    // (unstable, so on the kernels' pinned nightly), printed for the README's claim.
    run::step(
        "documentation coverage (rustdoc --show-coverage, pinned nightly)",
        run::rustup_run(&run::kernels_toolchain()?, "cargo")
            .args(["rustdoc", "--package", "cuimg", "--lib", "--target-dir"])
            .arg(target_dir().join("coverage"))
            .args(["--", "-Zunstable-options", "--show-coverage"]),
    )?;

    // Beside every other cudarc user (issue 29, part 1): a crate that depends on cuimg
    // (default features off, so that it imposes no CUDA version) and on cudarc linking the
    // driver at build time for CUDA 12.8, as candle's `cuda` feature does, builds.
    coexist()?;

    // What crates.io would get: the two published crates packaged (the PTX and SASS travel
    // inside) and built from those packages alone, on stable Rust.
    // In a target folder of its own, so that forgetting the packaged ABI (below) does not make
    // the next test build rebuild everything that depends on the workspace's cuimg-abi.
    let packages = target_dir().join("packages");
    forget_packaged_abi(&packages)?;
    run::step(
        "package cuimg-abi and cuimg, and build them from the packages",
        run::cargo()
            .args(["package", "--package", "cuimg-abi", "--package", "cuimg", "--allow-dirty", "--target-dir"])
            .arg(&packages),
    )?;

    // (e) The oldest stable Rust the crates promise (`rust-version`) builds the library.
    run::step(
        "build the library with Rust 1.95.0 (rust-version)",
        run::rustup_run("1.95.0", "cargo")
            .args(["build", "--package", "cuimg", "--target-dir"])
            .arg(target_dir().join("msrv")),
    )?;
    eprintln!("\nverify: all checks passed");
    Ok(())
}

/// Cargo verifies `cuimg` against the `cuimg-abi` it has just packaged through a temporary
/// local registry, but takes a registry crate of a known name and version as unchanged: it
/// reuses an earlier unpacking in `$CARGO_HOME/registry/src/<registry>/` and the library it
/// built from it. After the ABI gained a module, verification built against the old one
/// ("could not find `clahe` in `cuimg_abi`"). Removing both (only cuimg-abi's: nothing else
/// is named so; the library only from `target`, verification's own folder) makes it unpack
/// and build the new package.
fn forget_packaged_abi(target: &std::path::Path) -> Result {
    run::step(
        "forget earlier packages of cuimg-abi",
        run::cargo().args(["clean", "--package", "cuimg-abi", "--target-dir"]).arg(target),
    )?;
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry/src")) else { return Ok(()) };
    for registry in std::fs::read_dir(&src).into_iter().flatten().flatten() {
        for krate in std::fs::read_dir(registry.path()).into_iter().flatten().flatten() {
            if krate.file_name().to_string_lossy().starts_with("cuimg-abi-") {
                let _ = std::fs::remove_dir_all(krate.path());
            }
        }
    }
    Ok(())
}

/// Builds, in the target folder, a crate that depends on cuimg and on cudarc with
/// `dynamic-linking` and `cuda-12080`: once cudarc panicked in its build script when cuimg's
/// `dynamic-loading` met another crate's `dynamic-linking`, and two version features make
/// two sets of bindings that collide. A library crate: nothing links, so no driver or CUDA
/// toolkit is needed here.
pub fn coexist() -> Result {
    let dir = target_dir().join("coexist");
    std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let host = root().join("host");
    let manifest = format!(
        "[package]\nname = \"coexist\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ncuimg = {{ path = {host:?}, default-features = false, features = [\"io\"] }}\n\
         cudarc = {{ version = \"0.19.10\", default-features = false, features = [\"std\", \"driver\", \"dynamic-linking\", \"cuda-12080\"] }}\n\n\
         [workspace]\n"
    );
    let lib = "//! cuimg beside another cudarc user.\npub fn best() -> bool {\n    cuimg::Device::best().is_gpu()\n}\n\n\
               pub fn version() -> u32 {\n    cudarc::driver::sys::CUDA_VERSION\n}\n";
    let write =
        |name: &str, text: &str| std::fs::write(dir.join(name), text).map_err(|e| format!("writing {name}: {e}"));
    write("Cargo.toml", &manifest)?;
    write("src/lib.rs", lib)?;
    // The workspace's versions, so that nothing new is resolved.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    run::step(
        "a crate with cuimg and cudarc (dynamic-linking, cuda-12080) builds",
        run::cargo()
            .args(["build", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(dir.join("target")),
    )
}
