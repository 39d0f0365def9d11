//! Which file a path reaches: the identity that the output policy and the folder walks
//! compare, whatever the path's spelling (`..`, symlinks, paths longer than PATH_MAX).

use std::path::Path;

/// A file's identity: device and inode where the platform has them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FileId(u64, u64);

/// The identity of the file `path` reaches (symlinks followed): device and inode on Unix;
/// elsewhere its canonical path (hashed), the best the platform offers.
pub fn file_id(path: &Path) -> std::io::Result<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)?;
        Ok(FileId(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::fs::canonicalize(path)?.hash(&mut h);
        Ok(FileId(0, h.finish()))
    }
}
