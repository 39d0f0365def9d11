//! The contract between cuimg's GPU kernels (`kernels-gpu`, built for `nvptx64-nvidia-cuda`)
//! and its host code (`cuimg`): one `no_std` crate that both compile against.
//!
//! - Every kernel takes exactly one `#[repr(C)]` parameter struct by value. The kernel crate
//!   declares each kernel through its [`Kernel`] marker here, which pins the kernel's name and
//!   parameter type at compile time; the host launches through the same marker, so it cannot
//!   pass another struct.
//! - [`KERNELS`] lists every kernel with the size and alignment of its parameters. A host test
//!   reads the committed PTX's `.entry` declarations and checks each one against this list,
//!   without a GPU: a kernel whose parameter list differs from the host's fails CI.
//! - Constants both sides use (block size, table layout) and the formulas derived from them
//!   (shared-memory bytes, the fixed-point luma) are defined once, here.
//!
//! Device addresses are [`DevPtr`]/[`DevPtrMut`]: `u64`s with an element type, which the
//! kernels turn into raw pointers.
#![no_std]

use core::marker::PhantomData;

/// Threads per block of every kernel; the shared-memory formulas assume it.
pub const BLOCK: u32 = 256;
/// Warps per block.
pub const WARPS: u32 = BLOCK / 32;

/// A device address of `T`s to read.
#[repr(transparent)]
pub struct DevPtr<T>(u64, PhantomData<fn() -> T>);

/// A device address of `T`s to write.
#[repr(transparent)]
pub struct DevPtrMut<T>(u64, PhantomData<fn() -> T>);

macro_rules! device_pointer {
    ($name:ident, $raw:ty, $get:ident) => {
        impl<T> $name<T> {
            /// The address 0: "absent" where a kernel documents that it may be.
            pub const NULL: Self = $name(0, PhantomData);

            pub const fn new(addr: u64) -> Self {
                $name(addr, PhantomData)
            }

            /// This address plus `bytes`.
            pub const fn offset(self, bytes: u64) -> Self {
                $name(self.0 + bytes, PhantomData)
            }

            pub const fn addr(self) -> u64 {
                self.0
            }

            pub const fn is_null(self) -> bool {
                self.0 == 0
            }

            /// The same address, as `U`s (the caller answers for alignment).
            pub const fn cast<U>(self) -> $name<U> {
                $name(self.0, PhantomData)
            }

            /// The address as a pointer, for the kernels.
            #[inline(always)]
            pub fn $get(self) -> $raw {
                self.0 as usize as $raw
            }
        }

        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $name<T> {}

        impl<T> core::fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({:#x})", stringify!($name), self.0)
            }
        }
    };
}

device_pointer!(DevPtr, *const T, ptr);
device_pointer!(DevPtrMut, *mut T, ptr);

impl<T> DevPtrMut<T> {
    /// The same address, for a later kernel that reads what this one wrote.
    pub const fn as_const(self) -> DevPtr<T> {
        DevPtr(self.0, PhantomData)
    }
}

/// One image of a batch, as the batch kernels read it from the batch's device table: where
/// its pixels start (16-byte aligned, rows packed: `pitch = width * channels`) and its size.
/// Image `i` of a launch is `blockIdx.z`; a kernel that reads one batch and writes another
/// takes both tables, whose images have the same sizes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchImage {
    /// The device address of the first pixel.
    pub data: u64,
    pub width: u32,
    pub height: u32,
}

impl BatchImage {
    /// Pixels of the image.
    pub const fn pixels(&self) -> u64 {
        self.width as u64 * self.height as u64
    }
}

/// Two `u32`s as the `u64` word their `repr(C)` pair is (little-endian, as every GPU CUDA
/// runs on): for hosts that upload job tables as words, without an unsafe cast.
pub const fn pair(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// Most images one batch launch takes (`gridDim.z`); the host splits larger batches.
pub const MAX_BATCH_LAUNCH: u32 = 65535;

/// A kernel of the PTX module: its entry name and its one parameter struct (plain values,
/// which a host may keep and launch again: `Send`, `Sync` and `'static`).
pub trait Kernel: 'static {
    const NAME: &'static str;
    type Params: Copy + Send + Sync + 'static;
}

/// What the PTX must declare for a kernel: `.entry NAME(.param .align ALIGN .b8 _[SIZE])`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signature {
    pub name: &'static str,
    pub size: usize,
    pub align: usize,
}

impl Signature {
    pub const fn of<K: Kernel>() -> Signature {
        Signature { name: K::NAME, size: core::mem::size_of::<K::Params>(), align: core::mem::align_of::<K::Params>() }
    }
}

/// `a == b`, usable in constants (the kernel crate checks kernel names with it).
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Declares kernel markers and the op's [`Signature`] list:
/// `kernels! { /// doc
///     GrayC3Flat = gray_c3_flat(GrayFlat); }`.
macro_rules! kernels {
    ($($(#[$doc:meta])* $marker:ident = $name:ident($params:ty);)*) => {
        $(
            $(#[$doc])*
            pub struct $marker;

            impl $crate::Kernel for $marker {
                const NAME: &'static str = stringify!($name);
                type Params = $params;
            }
        )*

        /// Every kernel of this operation.
        pub const KERNELS: &[$crate::Signature] = &[$($crate::Signature::of::<$marker>()),*];
    };
}

/// One line per operation: its module here and its kernels in [`KERNELS`].
macro_rules! ops {
    ($($op:ident),* $(,)?) => {
        $(pub mod $op;)*

        /// Every kernel the host binds, by operation.
        pub const KERNELS: &[&[Signature]] = &[$($op::KERNELS),*];
    };
}

ops!(
    grayscale,
    histogram,
    grayscale_histogram,
    equalize,
    lut,
    gather,
    copy,
    clahe,
    orient,
    resize,
    border,
    warp,
    tensor,
    yuv
);
