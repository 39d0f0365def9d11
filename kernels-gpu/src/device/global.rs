//! Loads and stores in the global state space (`ld.global`, `st.global`).
//!
//! Every buffer reaches a kernel as an integer inside its parameter struct, so LLVM cannot
//! tell that the pointers made from it address global memory, and rustc's NVPTX backend
//! emits generic `ld`/`st` for them (SASS `LD.E`/`ST.E`, where nvcc emits `LDG`/`STG` for a
//! kernel's pointer parameters). These helpers say the state space in the instruction. A
//! generic address of global memory is the global address itself, so the same pointer
//! serves both forms.
//!
//! `STREAM` variants add the `.cs` cache operator (evict first, in L1 and L2): for data read or
//! written once, so that it does not push out of L2 what a kernel reads again (the source of
//! a random gather).

use core::arch::asm;

/// Sixteen bytes from global memory as four words.
///
/// # Safety
/// `p` is a 16-byte aligned address of 16 readable bytes of global memory.
#[inline(always)]
pub unsafe fn load_v4<const STREAM: bool>(p: *const u8) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller's contract; the asm only reads those 16 bytes.
    unsafe {
        if STREAM {
            asm!("ld.global.cs.v4.u32 {{{0}, {1}, {2}, {3}}}, [{4}];", out(reg32) a, out(reg32) b, out(reg32) c,
                 out(reg32) d, in(reg64) p, options(readonly, nostack, preserves_flags));
        } else {
            asm!("ld.global.v4.u32 {{{0}, {1}, {2}, {3}}}, [{4}];", out(reg32) a, out(reg32) b, out(reg32) c,
                 out(reg32) d, in(reg64) p, options(readonly, nostack, preserves_flags));
        }
    }
    [a, b, c, d]
}

/// Stores four words as sixteen bytes of global memory.
///
/// # Safety
/// `p` is a 16-byte aligned address of 16 writable bytes of global memory.
#[inline(always)]
pub unsafe fn store_v4<const STREAM: bool>(p: *mut u8, w: [u32; 4]) {
    // SAFETY: the caller's contract; the asm only writes those 16 bytes.
    unsafe {
        if STREAM {
            asm!("st.global.cs.v4.u32 [{0}], {{{1}, {2}, {3}, {4}}};", in(reg64) p, in(reg32) w[0], in(reg32) w[1],
                 in(reg32) w[2], in(reg32) w[3], options(nostack, preserves_flags));
        } else {
            asm!("st.global.v4.u32 [{0}], {{{1}, {2}, {3}, {4}}};", in(reg64) p, in(reg32) w[0], in(reg32) w[1],
                 in(reg32) w[2], in(reg32) w[3], options(nostack, preserves_flags));
        }
    }
}

/// An element the gather reads from global memory: one `ld.global` of its width.
pub trait Load: Copy {
    /// # Safety
    /// `p` is an aligned address of a readable `Self` in global memory.
    unsafe fn load_global(p: *const Self) -> Self;
}

macro_rules! load_scalar {
    ($t:ty, $ptx:literal, $class:ident) => {
        impl Load for $t {
            #[inline(always)]
            unsafe fn load_global(p: *const Self) -> Self {
                let v: $t;
                // SAFETY: the caller's contract; the asm only reads that element.
                unsafe { asm!($ptx, out($class) v, in(reg64) p, options(readonly, nostack, preserves_flags)) };
                v
            }
        }
    };
}

load_scalar!(u16, "ld.global.u16 {0}, [{1}];", reg16);
load_scalar!(u32, "ld.global.u32 {0}, [{1}];", reg32);
load_scalar!(u64, "ld.global.u64 {0}, [{1}];", reg64);

impl Load for u8 {
    #[inline(always)]
    unsafe fn load_global(p: *const Self) -> Self {
        let v: u16;
        // SAFETY: the caller's contract; PTX has no 8-bit registers, so the byte arrives
        // zero-extended in a 16-bit one.
        unsafe { asm!("ld.global.u8 {0}, [{1}];", out(reg16) v, in(reg64) p, options(readonly, nostack, preserves_flags)) };
        v as u8
    }
}

impl Load for u128 {
    #[inline(always)]
    unsafe fn load_global(p: *const Self) -> Self {
        // SAFETY: the caller's contract (a u128 is 16-byte aligned).
        let [a, b, c, d] = unsafe { load_v4::<false>(p as *const u8) };
        a as u128 | (b as u128) << 32 | (c as u128) << 64 | (d as u128) << 96
    }
}
