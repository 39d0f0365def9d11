//! What a fresh clone needs is in the repository: the photos with their licences, the
//! licence files of every package, and no path outside it in any test, example, benchmark
//! or tool (issue "A fresh clone passes its own tests").

use std::path::{Path, PathBuf};

/// The repository this binary was built from; `None` (the tests say SKIP) where its source
/// is not there, as in the GPU bundle on another machine.
fn repo() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    if root.join("tests/harness.rs").is_file() {
        return Some(root);
    }
    eprintln!("SKIP: the repository's source is not at {}", root.display());
    None
}

/// Every source file (Rust, the golden makers' and benchmarks' Python, the run scripts)
/// under `dir`, skipping build outputs.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != "target" && name != "corpus" && name != "artifacts" {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "py" || e == "sh") {
            out.push(path);
        }
    }
}

#[test]
fn no_test_example_benchmark_or_tool_reads_outside_the_repository() {
    let Some(root) = repo() else { return };
    let root = || root.clone();
    let mut files = Vec::new();
    for dir in ["host", "cli", "tests", "xtask", "abi"] {
        sources(&root().join(dir), &mut files);
    }
    assert!(files.len() > 50, "found {} sources", files.len());
    // Made at run time, so that this file does not match itself.
    let shared = "shared";
    let outside = [format!("{shared}/images"), format!("../../{shared}")];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for p in &outside {
            assert!(!text.contains(p.as_str()), "{} names {p}, outside the repository", f.display());
        }
    }
}

#[test]
fn the_photos_and_the_licences_are_in_the_repository() {
    let Some(root) = repo() else { return };
    let root = || root.clone();
    let photos = root().join("tests/data/photos");
    for f in ["coffee.png", "chelsea.png", "camera.png", "LICENSES.md"] {
        assert!(photos.join(f).is_file(), "tests/data/photos/{f}");
    }
    let licences = std::fs::read_to_string(photos.join("LICENSES.md")).unwrap();
    assert!(
        ["coffee.png", "chelsea.png", "camera.png"].iter().all(|f| licences.contains(f)) && licences.contains("CC0")
    );
    for dir in [".", "host", "abi"] {
        for f in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(root().join(dir).join(f).is_file(), "{dir}/{f}: each published package carries both licences");
        }
    }
}

#[test]
fn the_readme_examples_are_documentation_tests() {
    let Some(root) = repo() else { return };
    let root = || root.clone();
    let lib = std::fs::read_to_string(root().join("host/src/lib.rs")).unwrap();
    assert!(lib.contains("#[cfg(doctest)]\n#[doc = include_str!(\"../../README.md\")]"));
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("```rust\n"), "the README has Rust examples");
    assert!(readme.contains("```toml\n[dependencies]\ncuimg"), "with the dependencies they need beside them");
    // Untagged blocks would be compiled as Rust: every block says its language.
    let mut fences = readme.lines().filter(|l| l.starts_with("```"));
    while let Some(open) = fences.next() {
        assert_ne!(open, "```", "a code block without a language");
        fences.next();
    }
}
