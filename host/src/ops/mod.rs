//! The operations, one folder each: `mod.rs` holds the operation's public parameter and
//! result types, `gpu.rs` its [`Stream`](crate::Stream) and [`Gpu`](crate::Gpu) methods (the
//! launches), `cpu.rs` its serial CPU reference (re-exported as [`crate::cpu`]), `op.rs` its
//! entry in the registry ([`crate::registry`]), listed once in [`OPERATIONS`]. The kernels
//! are `kernels-gpu/src/<op>.rs`, their parameters `abi/src/<op>.rs`. Operations build on
//! `crate::runtime` and never on each other's launch code; equalization reuses the
//! histogram and LUT launches through their `pub(crate)` entry points.

/// Declares each operation's folder and lists the registry entries its `op.rs` declares in
/// [`OPERATIONS`]: one line per operation, the only line a new one adds here.
macro_rules! operations {
    ($($folder:ident: [$($entry:ident),*];)*) => {
        $(pub mod $folder;)*

        /// Every image operation, as its folder's `op.rs` declares it ([`crate::registry`]).
        pub static OPERATIONS: &[&crate::registry::Operation] = &[$($(&$folder::op::$entry,)*)*];
    };
}

operations! {
    grayscale: [GRAYSCALE, BLACK_AND_WHITE];
    histogram: [HISTOGRAM];
    grayscale_histogram: [GRAYSCALE_HISTOGRAM];
    equalize: [EQUALIZE];
    lut: [LUT];
    clahe: [CLAHE];
    orient: [ORIENT];
    resize: [RESIZE];
    border: [BORDER];
    warp: [WARP];
    // Gather works on slices, not images: it is tested on its own (tests/tests/gather.rs).
    gather: [];
    tensor: [TENSOR];
    // YUV frames are not images either: tested on their own (tests/tests/yuv.rs).
    yuv: [];
}
