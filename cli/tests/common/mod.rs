//! What the tool's test files share: the binary, temporary folders, a synthetic photo.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use cuimg::{Image, Rgb8};

/// The binary: `CUIMG_BIN` when set (the GPU bundle runs these tests on the lent GPU with
/// its own copy), else the one cargo built.
pub fn bin() -> PathBuf {
    std::env::var_os("CUIMG_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cuimg")), PathBuf::from)
}

/// A fresh temporary folder for one test, removed with everything in it when the test
/// ends, passed or failed (`group` and `name` begin its name, to find it while it runs).
pub fn temp_in(group: &str, name: &str) -> Temp {
    Temp(tempfile::Builder::new().prefix(&format!("cuimg-{group}-{name}-")).tempdir().unwrap())
}

/// A test's temporary folder (see [`temp_in`]): a path wherever one is taken.
pub struct Temp(tempfile::TempDir);

impl std::ops::Deref for Temp {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Temp {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for Temp {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

pub fn photo(w: u32, h: u32, seed: u8) -> Image<Rgb8> {
    Image::from_fn(w, h, |x, y| Rgb8([(x * 7 + y) as u8 ^ seed, (y * 3) as u8, (x + y * 11) as u8 ^ seed]))
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
