//! The operations, one folder each: `mod.rs` holds the operation's public parameter and
//! result types, `gpu.rs` its [`Stream`](crate::Stream) and [`Gpu`](crate::Gpu) methods (the
//! launches), `cpu.rs` its serial CPU reference (re-exported as [`crate::cpu`]), `op.rs` its
//! entry in the registry ([`crate::registry`]), listed once in [`OPERATIONS`]. The kernels
//! are `kernels-gpu/src/<op>.rs`, their parameters `abi/src/<op>.rs`. Operations build on
//! `crate::runtime` and never on each other's launch code; equalization reuses the
//! histogram and LUT launches through their `pub(crate)` entry points.

pub mod clahe;
pub mod equalize;
pub mod gather;
pub mod grayscale;
pub mod grayscale_histogram;
pub mod histogram;
pub mod lut;

/// Every image operation, as its folder's `op.rs` declares it ([`crate::registry`]). Gather
/// works on slices, not images: it is tested on its own (`tests/tests/gather.rs`).
pub static OPERATIONS: &[&crate::registry::Operation] = &[
    &grayscale::op::GRAYSCALE,
    &grayscale::op::BLACK_AND_WHITE,
    &histogram::op::HISTOGRAM,
    &grayscale_histogram::op::GRAYSCALE_HISTOGRAM,
    &equalize::op::EQUALIZE,
    &lut::op::LUT,
    &clahe::op::CLAHE,
];
