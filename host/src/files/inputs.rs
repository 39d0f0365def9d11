//! From the command line's INPUTS (files, folders, globs) to the files to read.
//!
//! Folders are read one level deep; a glob walks the folders under its literal prefix with
//! `walkdir`, following symlinks but entering no folder twice (by device and inode), so
//! symlink loops end the walk instead of growing it without end. Paths that are not regular
//! files (FIFOs, devices) are problems, never read: opening a FIFO waits for a writer.

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
/// matches of glob patterns (sorted). Inputs that name nothing, or nothing readable, are
/// returned as problems.
pub fn expand(inputs: &[String]) -> (Vec<PathBuf>, Vec<Problem>) {
    let (mut files, mut problems) = (Vec::new(), Vec::new());
    for input in inputs {
        let path = PathBuf::from(input);
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => folder(&path, &mut files, &mut problems),
            Ok(meta) if meta.is_file() => files.push(path),
            Ok(_) => problems.push((path, "not a regular file (a FIFO, device or socket): not read".into())),
            Err(_) if input.contains(['*', '?', '[', '{']) => glob(input, &mut files, &mut problems),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                problems.push((path, "no such file or folder".into()))
            }
            Err(e) => problems.push((path, format!("cannot read: {e}"))),
        }
    }
    (files, problems)
}

/// The image files of a folder (not of its subfolders), sorted.
fn folder(path: &Path, files: &mut Vec<PathBuf>, problems: &mut Vec<Problem>) {
    let entries = match std::fs::read_dir(path) {
        Ok(e) => e,
        Err(e) => return problems.push((path.to_path_buf(), format!("cannot read the folder: {e}"))),
    };
    let mut found = Vec::new();
    for p in entries.flatten().map(|e| e.path()).filter(|p| is_image(p)) {
        match std::fs::metadata(&p) {
            Ok(m) if m.is_file() => found.push(p),
            Ok(m) if m.is_dir() => {}
            Ok(_) => problems.push((p, "not a regular file (a FIFO, device or socket): not read".into())),
            Err(e) => problems.push((p, format!("cannot read: {e}"))),
        }
    }
    if found.is_empty() {
        problems.push((path.to_path_buf(), "the folder holds no PNG or JPEG file".into()));
    }
    found.sort();
    files.extend(found);
}

/// The regular files a glob pattern matches (`*`, `?` and `[...]` within a path component,
/// `**` across them, `{a,b}` alternatives).
fn glob(pattern: &str, files: &mut Vec<PathBuf>, problems: &mut Vec<Problem>) {
    let matcher = match globset::GlobBuilder::new(pattern).literal_separator(true).build() {
        Ok(g) => g.compile_matcher(),
        Err(e) => return problems.push((pattern.into(), format!("not a valid pattern: {e}"))),
    };
    // The walk starts at the components before the first with a wildcard.
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts.iter().take_while(|p| !p.contains(['*', '?', '[', '{'])).count();
    let rest = &parts[literal..];
    let base = match parts[..literal].join("/") {
        b if b.is_empty() && pattern.starts_with('/') => "/".to_string(),
        b if b.is_empty() => ".".to_string(),
        b => b,
    };
    let depth = if rest.iter().any(|p| p.contains("**")) { usize::MAX } else { rest.len() };
    let strip_dot = literal == 0 && !pattern.starts_with('/');
    let mut seen = HashSet::new();
    let walk = walkdir::WalkDir::new(&base).follow_links(true).max_depth(depth).sort_by_file_name();
    let before = files.len();
    // Each folder once, by identity: a symlink back up the tree (or two to one folder) is
    // not entered again.
    let entries = walk.into_iter().filter_entry(|e| {
        !e.file_type().is_dir() || super::identity::file_id(e.path()).is_ok_and(|id| seen.insert(id))
    });
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            // A loop walkdir found itself is what the identities above avoid: skipped.
            Err(e) if e.loop_ancestor().is_some() => continue,
            Err(e) => {
                let path = e.path().map_or_else(|| PathBuf::from(&base), Path::to_path_buf);
                problems.push((path, format!("cannot read: {e}")));
                continue;
            }
        };
        let path = entry.path();
        let name = if strip_dot { path.strip_prefix(".").unwrap_or(path) } else { path };
        if entry.file_type().is_dir() || !matcher.is_match(name) {
            continue;
        }
        if entry.file_type().is_file() {
            files.push(name.to_path_buf());
        } else {
            problems.push((name.to_path_buf(), "not a regular file (a FIFO, device or socket): not read".into()));
        }
    }
    if files.len() == before {
        problems.push((pattern.into(), "the pattern matches no file".into()));
    }
}
