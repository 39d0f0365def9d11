//! Building the kernels crate into the PTX module the host embeds.

use std::path::PathBuf;

use crate::{Result, root, run, target_dir};

/// Where the PTX is committed; the host crate embeds it with `include_str!`.
pub fn committed_path() -> PathBuf {
    root().join("host/src/runtime/ptx/cuimg_kernels.ptx")
}

/// Builds the kernels and returns the PTX text.
///
/// `target-cpu=sm_75`: PTX for `.target sm_75` is JIT-compiled by the driver for every GPU
/// from Turing on (sm_75, 80, 86, 89, 90, 100, 120, ...), and Turing is the oldest generation
/// that CUDA 13 still supports; nothing here needs a newer instruction (the atomics and
/// vector loads are all sm_70-era). LLVM then emits PTX ISA 7.0, which every driver since
/// CUDA 11.0 (R450) loads.
///
/// `-unroll-threshold=2000`: the byte loops over 16-byte vectors must unroll fully, or their
/// small arrays spill to local memory; `verify` fails if any kernel uses `.local`.
pub fn build() -> Result<String> {
    let target_dir = target_dir().join("kernels");
    run::step(
        &format!("build kernels-gpu -> PTX ({}, nvptx64-nvidia-cuda, -Zbuild-std=core)", run::kernels_toolchain()?),
        run::kernels_cargo()?
            .args(["rustc", "--release", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .arg("--target-dir")
            .arg(&target_dir)
            .args(["--", "--emit=asm", "-C", "linker=true", "-C", "target-cpu=sm_75"])
            .args(["-C", "llvm-args=-unroll-threshold=2000"]),
    )?;
    let asm = target_dir.join("nvptx64-nvidia-cuda/release/deps/cuimg_kernels.s");
    let ptx = std::fs::read_to_string(&asm).map_err(|e| format!("reading {}: {e}", asm.display()))?;
    let ptx = launch_bounds(&ptx)?;
    check(&ptx)?;
    Ok(ptx)
}

/// CUDA C's `__launch_bounds__(threads, blocks)`, which rustc has no attribute for: kernels
/// whose names start with the prefix get `.maxntid threads, 1, 1` and `.minnctapersm
/// blocks`, so ptxas keeps them to the registers that many blocks of that size per SM
/// allow. The host launches them with exactly `threads` threads along x.
const LAUNCH_BOUNDS: &[(&str, u32, u32)] = &[
    // The tiled separable resize: 3 blocks of 256 an SM (80 registers a thread, none
    // spilled), against 1 block (96 to 124 registers) without the bound; at 4 blocks (64
    // registers) ptxas spills up to 44 bytes.
    ("resize_separable", cuimg_abi::resize::SEPARABLE_THREADS, 3),
    // The area's separable kernels (not `resize_area_c*`, a pixel a thread): the same.
    ("resize_area4", cuimg_abi::resize::SEPARABLE_THREADS, 3),
    ("resize_area5", cuimg_abi::resize::SEPARABLE_THREADS, 3),
    ("resize_area8", cuimg_abi::resize::SEPARABLE_THREADS, 3),
    // Pillow's two passes in one tiled launch: the same blocks. Their RGB8 forms by dot
    // products (`_planes`) too: at 4 blocks (216 bytes spilled) the batch's Pillow rows
    // took 4 to 11% longer than at 3 (96 then, 80 in session 12's final tree), call 1.
    ("resize_pillow_tiled", cuimg_abi::resize::SEPARABLE_THREADS, 3),
];

/// Tiled kernels held to 4 blocks of 256 an SM (64 registers) instead of their prefix's 3,
/// each measured faster so on the lent H100 (docs/BENCHMARKS.md, session 9, calls 4 and 5):
/// at 3 blocks the batch kernels wait on their loads half the time. The first seven spill
/// at most 16 bytes at 64 registers (ptxas, sm_90, session 11's tree); the RGB8 cubic,
/// Pillow's RGB8 kernels and the RGB8 linear into tensors spill 52 to 232 and still gained
/// (Pillow's 16 to 31%, the cubic 3 to 12%, but 7% lost at 1080p to 224x224, in session 9).
/// The others are untried.
const FOUR_BLOCKS: &[&str] = &[
    "resize_separable2_c1",
    "resize_separable2_c1_tensor",
    "resize_separable2_c2",
    "resize_separable2_c3",
    "resize_separable4_c1",
    "resize_area4_c1",
    "resize_area4_c2",
    "resize_separable4_c3",
    "resize_separable4_c3_tensor",
    "resize_separable2_c3_tensor",
    "resize_pillow_tiled_c3",
    "resize_pillow_tiled_c3_tensor",
    // Their forms that read taps as words, measured so in session 10's call 1.
    "resize_pillow_tiled_words_c3",
    "resize_pillow_tiled_words_c3_tensor",
    // The RGB8 area's (4 taps, and 8 across by 4 down), spilling 4 and 80 bytes then (20
    // and 72 in session 11's tree): session 10, call 4.
    "resize_area4_c3",
    "resize_area84_c3",
    // 5 across and 4 down (session 14): the area's batch queued 241 and 230 us at 4 blocks,
    // 242 and 241 at 3 (call 4, alternated).
    "resize_area54_c3",
    // Lanczos-4's Gray8 kernel, spilling 48 bytes then (44 in session 11's tree): 8 to 14%
    // faster (session 10, call 6).
    // Its RGB8 one (92 bytes) moved -4 to +3%, within the noise: left at 3 blocks.
    "resize_separable_c1",
    // Pillow's kernels by the tensor cores' products, each pass's rows in one loop a count
    // of steps (no spill in those loops at 64 registers; 112 to 228 bytes before them): the
    // batch's Pillow filters 6 to 9% faster queued, 4K->1080p bicubic and Lanczos RGB8 28%
    // (session 18, call 4, on an H200).
    "resize_pillow_tiled_mma_c1",
    "resize_pillow_tiled_mma_c1_tensor",
    "resize_pillow_tiled_mma_c3",
    "resize_pillow_tiled_mma_c3_tensor",
];

/// The PTX with [`LAUNCH_BOUNDS`]' directives after each matching entry's parameter list.
fn launch_bounds(ptx: &str) -> Result<String> {
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut pending = None;
    for line in ptx.lines() {
        out.push_str(line);
        out.push('\n');
        if let Some(name) = line.strip_prefix(".visible .entry ") {
            let name = name.trim_end_matches('(');
            pending = LAUNCH_BOUNDS.iter().find(|(prefix, ..)| name.starts_with(prefix)).map(|&(_, t, b)| (t, b));
            if FOUR_BLOCKS.contains(&name) {
                pending = pending.map(|(t, _)| (t, 4));
            }
        } else if line == ")"
            && let Some((threads, blocks)) = pending.take()
        {
            out.push_str(&format!(".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"));
        }
    }
    if pending.is_some() {
        return Err("a launch-bounded kernel's parameter list has no closing line".into());
    }
    Ok(out)
}

/// Structural checks that ptxas alone would not catch.
pub fn check(ptx: &str) -> Result {
    if let Some(line) = ptx.lines().find(|l| l.starts_with(".extern .func")) {
        return Err(format!("the PTX calls an unresolved function, which the driver cannot load: {line}"));
    }
    let mut kernel = "";
    for line in ptx.lines() {
        if let Some(rest) = line.strip_prefix(".visible .entry ") {
            kernel = rest.trim_end_matches('(');
        }
        if line.contains(".local ") {
            return Err(format!(
                "kernel {kernel} uses local memory (a spilled array: slow); keep its arrays in registers: {}",
                line.trim()
            ));
        }
    }
    // A panic's location in a path dependency is its absolute path: the PTX would differ
    // between checkouts (the stale-PTX check failed in a second worktree for it).
    let root = crate::root();
    if let Some(line) = ptx.lines().find(|l| l.contains("anon_") && decoded(l).contains(&*root.to_string_lossy())) {
        return Err(format!(
            "the PTX embeds this checkout's path ({}), likely a panic's location: remove the panic path. {}",
            root.display(),
            line.trim()
        ));
    }
    if !ptx.contains(".target sm_75") {
        return Err("the PTX does not target sm_75".into());
    }
    Ok(())
}

pub fn write_committed() -> Result {
    let ptx = build()?;
    let path = committed_path();
    run::write(&path, &ptx)?;
    eprintln!("wrote {} ({} kernels, {} bytes)", path.display(), kernels(&ptx).len(), ptx.len());
    let dir = path.parent().expect("the PTX has a folder");
    for old in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
        if old.path().to_string_lossy().contains(".cubin") {
            std::fs::remove_file(old.path()).map_err(|e| format!("removing {}: {e}", old.path().display()))?;
        }
    }
    let fresh = target_dir().join("cubins-fresh");
    let _ = std::fs::remove_dir_all(&fresh);
    let archs = crate::ptxas::assemble_all(&path, &fresh)?;
    for a in &archs {
        let cubin = std::fs::read(fresh.join(format!("sm_{a}.cubin"))).map_err(|e| e.to_string())?;
        std::fs::write(dir.join(format!("sm_{a}.cubin.deflate")), crate::ptxas::deflate(&cubin))
            .map_err(|e| format!("writing the sm_{a} cubin: {e}"))?;
    }
    run::write(&dir.join("cubins.rs"), &crate::ptxas::cubin_table(&archs))?;
    eprintln!("wrote {} cubins and cubins.rs in {}", archs.len(), dir.display());
    Ok(())
}

/// Fails unless the committed cubins and their table are what ptxas makes of the committed
/// PTX now.
pub fn check_cubins() -> Result {
    let path = committed_path();
    let dir = path.parent().expect("the PTX has a folder");
    let fresh = target_dir().join("cubins-fresh");
    let _ = std::fs::remove_dir_all(&fresh);
    let archs = crate::ptxas::assemble_all(&path, &fresh)?;
    let stale = |what: String| Err(format!("stale SASS: {what}; run `cargo xtask ptx` and commit the result"));
    let table = std::fs::read_to_string(dir.join("cubins.rs")).unwrap_or_default();
    if table != crate::ptxas::cubin_table(&archs) {
        return stale(format!("{} does not list exactly {archs:?}", dir.join("cubins.rs").display()));
    }
    for a in &archs {
        let committed = dir.join(format!("sm_{a}.cubin.deflate"));
        let now = std::fs::read(fresh.join(format!("sm_{a}.cubin"))).map_err(|e| e.to_string())?;
        if std::fs::read(&committed).ok() != Some(crate::ptxas::deflate(&now)) {
            return stale(format!("{} differs from ptxas's output", committed.display()));
        }
    }
    eprintln!("    SASS is fresh: {} cubins", archs.len());
    Ok(())
}

/// The names of the kernels (`.entry`) in a PTX module.
pub fn kernels(ptx: &str) -> Vec<&str> {
    ptx.lines().filter_map(|l| l.strip_prefix(".visible .entry ")).map(|k| k.trim_end_matches('(')).collect()
}

/// The bytes of a PTX `.b8` array initializer (`{47, 119, ...}`) as text.
fn decoded(line: &str) -> String {
    let Some(list) = line.split_once('{').and_then(|(_, rest)| rest.split_once('}')).map(|(l, _)| l) else {
        return String::new();
    };
    list.split(',').filter_map(|n| n.trim().parse::<u8>().ok()).map(char::from).collect()
}
