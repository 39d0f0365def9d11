//! The one policy for every path the tool writes (images, histogram files, `--plot`,
//! `--trace`): never an input, never an existing file unless `--overwrite` (and then only a
//! regular file), never through a symlink, never half-written.
//!
//! Files are told apart by device and inode (the file a path reaches, whatever its
//! spelling: `..`, symlinks, paths longer than PATH_MAX), not by canonical paths, which fail
//! for such paths. Each file is written to a temporary file that `tempfile` creates with
//! `O_EXCL` under a random name in the destination folder, synced, then renamed over the
//! destination: with `persist_noclobber` (a hard link, which fails on an existing name)
//! unless `--overwrite`.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::identity::{FileId, file_id};
use super::inputs::{Job, Problem};

/// What may be written, decided once before any work.
pub struct Policy {
    /// Every input's identity.
    inputs: HashSet<FileId>,
    /// Replace existing regular files (`--overwrite`).
    pub overwrite: bool,
    /// Sync each file's data before its rename (off with `--no-sync`).
    pub sync: bool,
    /// Destinations claimed so far (images, then `--plot` and `--trace`), by folder and name.
    claimed: Mutex<HashMap<(FileId, std::ffi::OsString), PathBuf>>,
}

impl Policy {
    /// The inputs' identities; an input that cannot be resolved is returned as a problem
    /// (it is not read either: nothing may be written that could be it).
    pub fn new(files: Vec<PathBuf>, overwrite: bool, sync: bool) -> (Policy, Vec<PathBuf>, Vec<Problem>) {
        let (mut inputs, mut kept, mut problems) = (HashSet::new(), Vec::new(), Vec::new());
        for f in files {
            match file_id(&f) {
                Ok(id) => {
                    // The same file named twice is processed once.
                    if inputs.insert(id) {
                        kept.push(f);
                    }
                }
                Err(e) => problems.push((f, format!("cannot resolve the input (so nothing is written): {e}"))),
            }
        }
        (Policy { inputs, overwrite, sync, claimed: Mutex::new(HashMap::new()) }, kept, problems)
    }

    /// Claims `path` as a destination: `Err(why)` when it is an input, another destination,
    /// an existing file without `--overwrite`, or not a regular file. Its folder must exist.
    pub fn claim(&self, path: &Path) -> Result<(), String> {
        let name = path.file_name().ok_or_else(|| format!("{} names no file", path.display()))?;
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = file_id(folder).map_err(|e| format!("cannot resolve its folder {}: {e}", folder.display()))?;
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot look at {}: {e}", path.display())),
            Ok(meta) => {
                if file_id(path).is_ok_and(|id| self.inputs.contains(&id)) {
                    return Err(format!("would overwrite an input ({}); choose another path", path.display()));
                }
                if !meta.file_type().is_file() {
                    let kind = if meta.file_type().is_symlink() { "a symbolic link" } else { "not a regular file" };
                    return Err(format!(
                        "{} exists and is {kind}: not replaced, even with --overwrite",
                        path.display()
                    ));
                }
                if !self.overwrite {
                    return Err(format!("{} exists; pass --overwrite to replace it", path.display()));
                }
            }
        }
        let mut claimed = self.claimed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(other) = claimed.insert((dir, name.to_owned()), path.to_path_buf()) {
            return Err(format!("{} is already written by this run (as {})", path.display(), other.display()));
        }
        Ok(())
    }

    /// Where each input's result goes: `out/<stem>.<ext>` (`ext` from `--format`, else the
    /// input's own), each claimed; an input whose destination cannot be claimed is a
    /// problem.
    pub fn plan(&self, files: &[PathBuf], out: &Path, ext: Option<&str>) -> (Vec<Job>, Vec<Problem>) {
        let (mut jobs, mut problems) = (Vec::new(), Vec::new());
        for f in files {
            let stem = f.file_stem().map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
            let ext = ext.map(str::to_owned).or_else(|| f.extension().map(|e| e.to_string_lossy().into_owned()));
            let target = out.join(format!("{stem}.{}", ext.unwrap_or_else(|| "png".into())));
            match self.claim(&target) {
                Ok(()) => jobs.push((f.clone(), target)),
                Err(why) => problems.push((f.clone(), why)),
            }
        }
        (jobs, problems)
    }

    /// Writes `bytes` to a claimed `path`: a new temporary file beside it (exclusive, random
    /// name), synced, renamed over it. An interrupted run leaves at worst a `.cuimg-*.tmp`
    /// file, which `tempfile` removes when it is dropped (and [`remove_temporaries`] on a
    /// second signal).
    pub fn write(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut tmp = tempfile::Builder::new().prefix(".cuimg-").suffix(".tmp").tempfile_in(folder)?;
        let _live = Live::new(tmp.path());
        tmp.write_all(bytes)?;
        if self.sync {
            tmp.as_file().sync_all()?;
        }
        if self.overwrite {
            // Checked again just before: the name may have been taken by an input meanwhile
            // (a rename over a symlink replaces the link, never what it points to).
            if file_id(path).is_ok_and(|id| self.inputs.contains(&id)) {
                return Err(std::io::Error::other("it is now an input; not replaced"));
            }
            tmp.persist(path).map(drop).map_err(|e| e.error)
        } else {
            tmp.persist_noclobber(path).map(drop).map_err(|e| match e.error.kind() {
                std::io::ErrorKind::AlreadyExists => {
                    std::io::Error::other("a file of that name appeared during the run; not replaced (--overwrite)")
                }
                _ => e.error,
            })
        }
    }
}

/// The temporary files being written now, removed by [`remove_temporaries`] when the
/// process must end at once (a second SIGINT): their `Drop`s never run then.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

struct Live(PathBuf);

impl Live {
    fn new(path: &Path) -> Live {
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(path.to_path_buf());
        Live(path.to_path_buf())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = live.iter().position(|p| *p == self.0) {
            live.swap_remove(i);
        }
    }
}

/// Removes the temporary files being written now.
pub fn remove_temporaries() {
    for p in LIVE.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
        let _ = std::fs::remove_file(p);
    }
}

/// Whether files can be made in `folder`: an anonymous temporary file (no name to plant a
/// link at), gone when closed.
pub fn probe(folder: &Path) -> std::io::Result<()> {
    tempfile::tempfile_in(folder).map(drop)
}
