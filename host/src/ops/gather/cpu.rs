//! The serial CPU reference of gather.

use bytemuck::Pod;

use crate::error::Result;

/// `out[i] = src[idx[i]]`; an index out of range is an error naming the first bad position.
///
/// ```
/// let out = cuimg::cpu::gather(&[10.0f32, 20.0, 30.0], &[2, 0, 0]).unwrap();
/// assert_eq!(out, vec![30.0, 10.0, 10.0]);
/// let err = cuimg::cpu::gather(&[1u8, 2], &[0, 5, 9]).unwrap_err();
/// assert!(matches!(err, cuimg::Error::IndexOutOfRange { position: 1, index: 5, len: 2 }));
/// ```
pub fn gather<T: Pod>(src: &[T], idx: &[u32]) -> Result<Vec<T>> {
    super::check_source(src.len())?;
    super::first_bad_index(idx, src.len())?;
    Ok(idx.iter().map(|&j| src[j as usize]).collect())
}
