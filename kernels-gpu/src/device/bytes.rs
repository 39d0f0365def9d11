//! Byte permutes (`prmt`), which pack bytes from two words in one instruction.

use core::arch::asm;

/// `prmt.b32`: byte `i` of the result is byte `sel >> 4i & 7` of the eight bytes of `b:a`.
#[inline(always)]
pub fn prmt(a: u32, b: u32, sel: u32) -> u32 {
    let d: u32;
    // SAFETY: an ALU instruction on registers only.
    unsafe {
        asm!("prmt.b32 {0}, {1}, {2}, {3};", out(reg32) d, in(reg32) a, in(reg32) b, in(reg32) sel,
             options(pure, nomem, nostack, preserves_flags))
    };
    d
}

/// The low bytes of four words as one word, `r[0]` lowest: three permutes.
#[inline(always)]
pub fn pack4(r: [u32; 4]) -> u32 {
    prmt(prmt(r[0], r[1], 0x40), prmt(r[2], r[3], 0x40), 0x5410)
}
