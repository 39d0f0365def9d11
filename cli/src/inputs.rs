//! From the command line's INPUTS (files, folders, globs) to the work: each input file and
//! the output file it becomes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Extensions read as images.
const IMAGES: [&str; 3] = ["png", "jpg", "jpeg"];

fn is_image(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| IMAGES.contains(&e.to_ascii_lowercase().as_str()))
}

/// An input (or output) file with why it cannot be processed.
pub type Problem = (PathBuf, String);
/// An input file and the output it becomes.
pub type Job = (PathBuf, PathBuf);

/// The files INPUTS name: files as given, image files inside folders (sorted), and the
/// matches of glob patterns. Inputs that name nothing are returned as problems.
pub fn expand(inputs: &[String]) -> (Vec<PathBuf>, Vec<Problem>) {
    let (mut files, mut problems) = (Vec::new(), Vec::new());
    for input in inputs {
        let path = PathBuf::from(input);
        if path.is_dir() {
            match std::fs::read_dir(&path) {
                Ok(entries) => {
                    let mut found: Vec<PathBuf> =
                        entries.flatten().map(|e| e.path()).filter(|p| p.is_file() && is_image(p)).collect();
                    found.sort();
                    files.extend(found);
                }
                Err(e) => problems.push((path, format!("cannot read the folder: {e}"))),
            }
        } else if path.exists() {
            files.push(path);
        } else if input.contains(['*', '?', '[']) {
            match glob::glob(input) {
                Ok(matches) => {
                    let before = files.len();
                    files.extend(matches.flatten().filter(|p| p.is_file()));
                    if files.len() == before {
                        problems.push((path, "the pattern matches no file".into()));
                    }
                }
                Err(e) => problems.push((path, format!("not a valid pattern: {e}"))),
            }
        } else {
            problems.push((path, "no such file or folder".into()));
        }
    }
    let mut seen = HashSet::new();
    files.retain(|f| seen.insert(f.canonicalize().unwrap_or_else(|_| f.clone())));
    (files, problems)
}

/// Where each input's result goes: `out/<stem>.<ext>` (`ext` from `--format`, else the
/// input's own). An output that would overwrite an input, or another output, is a problem
/// for that input.
pub fn outputs(files: &[PathBuf], out: &Path, ext: Option<&str>) -> (Vec<Job>, Vec<Problem>) {
    let inputs: HashSet<PathBuf> = files.iter().filter_map(|f| f.canonicalize().ok()).collect();
    let out_dir = out.canonicalize().unwrap_or_else(|_| out.to_path_buf());
    let (mut jobs, mut problems, mut taken) = (Vec::new(), Vec::new(), HashSet::new());
    for f in files {
        let stem = f.file_stem().map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
        let ext = ext.map(str::to_owned).or_else(|| f.extension().map(|e| e.to_string_lossy().into_owned()));
        let name = format!("{stem}.{}", ext.unwrap_or_else(|| "png".into()));
        let target = out_dir.join(&name);
        if inputs.contains(&target) {
            problems.push((
                f.clone(),
                format!("would overwrite an input ({}); choose another -o folder", target.display()),
            ));
        } else if !taken.insert(target.clone()) {
            problems.push((f.clone(), format!("another input already writes {}", target.display())));
        } else {
            jobs.push((f.clone(), target));
        }
    }
    (jobs, problems)
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so an
/// interrupted run leaves no half-written image (only, at worst, a `.cuimg-tmp` file).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.{}.cuimg-tmp", std::process::id()));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
