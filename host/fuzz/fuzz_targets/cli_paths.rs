//! The command-line tool's file paths: any INPUTS (file names, folders, glob patterns, odd
//! bytes) and any output extension, in a sandbox folder. Expanding them never panics; every
//! input file becomes exactly one job or one problem; no job writes over an input, over an
//! existing file or over another job's output, and every output lies in the output folder;
//! writing an output goes through a temporary file that never stays behind.
#![no_main]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../../src/files/identity.rs"]
mod identity;
#[path = "../../src/files/inputs.rs"]
mod inputs;
// (The engine's `probe` and `remove_temporaries` are not fuzzed here.)
#[allow(dead_code)]
#[path = "../../src/files/outputs.rs"]
mod outputs;

/// A folder with a few images, a subfolder and a file that is not an image; made once, in
/// the fuzz crate's ignored target folder.
fn sandbox() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/cli-sandbox-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("in/sub")).unwrap();
        std::fs::create_dir_all(dir.join("out")).unwrap();
        for f in ["in/a.png", "in/b.JPG", "in/c.jpeg", "in/sub/a.png", "in/notes.txt", "in/out.png"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = sandbox();
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let ext = lines.next().filter(|e| !e.is_empty()).map(|e| e.chars().filter(|c| c.is_alphanumeric()).take(5).collect::<String>());
    // Inputs inside the sandbox: no absolute paths or `..`, so a pattern cannot walk the
    // machine's whole file system.
    let inputs: Vec<String> = lines
        .take(8)
        .map(|l| {
            let clean: Vec<&str> = l.split('/').filter(|c| !c.is_empty() && *c != "..").collect();
            dir.join("in").join(clean.join("/")).to_string_lossy().into_owned()
        })
        .collect();
    let (files, _problems) = inputs::expand(&inputs);
    for f in &files {
        assert!(f.exists(), "expand named a file that is not there: {}", f.display());
    }
    let out = dir.join(if data.first() == Some(&b'i') { "in" } else { "out" });
    let (policy, kept, unresolved) = outputs::Policy::new(files.clone(), false, false);
    assert!(kept.len() + unresolved.len() <= files.len());
    let (jobs, problems) = policy.plan(&kept, &out, ext.as_deref().filter(|e| !e.is_empty()));
    assert_eq!(jobs.len() + problems.len(), kept.len(), "every file a job or a problem");
    let ids: HashSet<identity::FileId> = kept.iter().map(|f| identity::file_id(f).unwrap()).collect();
    let mut targets = HashSet::new();
    for (input, target) in &jobs {
        assert!(!identity::file_id(target).is_ok_and(|id| ids.contains(&id)), "{} would overwrite an input", target.display());
        assert!(!target.exists(), "{} exists and would be replaced", target.display());
        assert!(targets.insert(target.clone()), "two jobs write {}", target.display());
        assert_eq!(target.parent(), Some(out.as_path()), "{} is outside the output folder", target.display());
        assert!(kept.contains(input));
    }
    // A write through a temporary file, to a name made of the input: the file holds the
    // bytes, or the claim or the write failed and left nothing behind.
    let name: String = text.chars().filter(|c| *c != '\0' && *c != '/').take(40).collect();
    let target = dir.join("out").join(if name.is_empty() || name == "." || name == ".." { "x" } else { &name });
    if policy.claim(&target).is_ok() && policy.write(&target, data).is_ok() {
        assert_eq!(std::fs::read(&target).unwrap(), data);
        let _ = std::fs::remove_file(&target);
    }
    let left: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".cuimg-"))
        .collect();
    assert!(left.is_empty(), "a temporary file stayed behind");
});
