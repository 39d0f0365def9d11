//! Byte permutes and integer dot products (`prmt`, `dp2a`, `dp4a`), which LLVM's NVPTX backend
//! does not emit from Rust: one instruction each where shifts and masks took three or four.

/// `prmt.b32`: byte `i` of the result is byte `s >> 4i & 7` of `b:a` (`a` bytes 0 to 3).
#[inline(always)]
pub fn prmt(a: u32, b: u32, s: u32) -> u32 {
    let d: u32;
    // SAFETY: register arithmetic only.
    unsafe {
        core::arch::asm!(
            "prmt.b32 {d}, {a}, {b}, {s};",
            d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, s = in(reg32) s,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    d
}

/// `c + a.lo * b.byte0 + a.hi * b.byte1`: `a`'s halves signed, `b`'s bytes unsigned
/// (`dp2a.lo.s32.u32`), the sum wrapping.
#[inline(always)]
pub fn dp2a_lo(a: u32, b: u32, c: i32) -> i32 {
    let d: i32;
    // SAFETY: register arithmetic only.
    unsafe {
        core::arch::asm!(
            "dp2a.lo.s32.u32 {d}, {a}, {b}, {c};",
            d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    d
}

/// `c + a.lo * b.byte2 + a.hi * b.byte3` (`dp2a.hi.s32.u32`; see [`dp2a_lo`]).
#[inline(always)]
pub fn dp2a_hi(a: u32, b: u32, c: i32) -> i32 {
    let d: i32;
    // SAFETY: register arithmetic only.
    unsafe {
        core::arch::asm!(
            "dp2a.hi.s32.u32 {d}, {a}, {b}, {c};",
            d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    d
}

/// `c + a.byte0 * b.byte0 + ... + a.byte3 * b.byte3`, every byte unsigned
/// (`dp4a.u32.u32`), the sum wrapping.
#[inline(always)]
pub fn dp4a(a: u32, b: u32, c: i32) -> i32 {
    let d: i32;
    // SAFETY: register arithmetic only.
    unsafe {
        core::arch::asm!(
            "dp4a.u32.u32 {d}, {a}, {b}, {c};",
            d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    d
}
