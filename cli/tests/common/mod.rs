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

/// A fresh temporary folder for one test (`group` keeps the files' folders apart).
pub fn temp_in(group: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cuimg-{group}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
