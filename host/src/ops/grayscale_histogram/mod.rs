//! Grayscale and the gray image's histogram in one pass over the source: what a chain of
//! grayscale then histogram (or then equalization) needs, without reading the gray image
//! back. The serial reference is `cpu.rs` ([`crate::cpu::grayscale_histogram`]), the launch
//! `gpu.rs` ([`Stream::grayscale_histogram`](crate::Stream::grayscale_histogram)), the kernels
//! `kernels-gpu/src/grayscale_histogram.rs`, their parameters `abi/src/grayscale_histogram.rs`.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;
