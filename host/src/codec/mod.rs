//! The codecs, each in tiers as cudarc wraps the driver:
//!
//! - `sys`: finding the native library at run time and its function table, typed as its C
//!   header declares them (nothing is linked at build time);
//! - `result`: one function a native call, the one `unsafe` call turned into a `Result`,
//!   with the contract its caller keeps written under `# Safety`;
//! - the safe codec: objects that own their native state, generic over the output format.
//!
//! [`jpeg`] is nvJPEG. The CPU codecs are `cuimg::io` (feature `io`), through the `image`
//! crate; both read a JPEG's header once, through [`jpeg::JpegFile`].

pub mod jpeg;
