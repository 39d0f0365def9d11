//! 16-byte vector loads and stores (`ld.global.v4.u32`), the width that lets a memory-bound
//! kernel reach full bandwidth with few instructions.

/// Sixteen bytes, aligned so that LLVM emits one vector access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct V16(pub [u32; 4]);

impl V16 {
    pub const ZERO: V16 = V16([0; 4]);

    /// Byte `i` (0..16), little-endian as the bytes lie in memory.
    #[inline(always)]
    pub fn byte(&self, i: usize) -> u32 {
        (self.0[i / 4] >> (8 * (i % 4))) & 0xff
    }

    /// Sixteen bytes packed from `b`, each taken modulo 256.
    #[inline(always)]
    pub fn from_bytes(b: &[u32; 16]) -> V16 {
        let mut w = [0u32; 4];
        let mut i = 0;
        while i < 16 {
            w[i / 4] |= (b[i] & 0xff) << (8 * (i % 4));
            i += 1;
        }
        V16(w)
    }
}

/// Loads the `i`-th 16-byte vector at `p`.
///
/// # Safety
/// `p` must be 16-byte aligned and `p + 16 * (i + 1)` bytes must be readable.
#[inline(always)]
pub unsafe fn load(p: *const u8, i: u64) -> V16 {
    // SAFETY: the caller's contract.
    unsafe { *(p as *const V16).add(i as usize) }
}

/// Group `g` of 16 pixels of `C` interleaved bytes: its `C` consecutive vectors, as words
/// (`4 * C` of the 16 used).
///
/// # Safety
/// `p` must be 16-byte aligned and `p + 16 * C * (g + 1)` bytes must be readable.
#[inline(always)]
pub unsafe fn load_group<const C: usize>(p: *const u8, g: u64) -> [u32; 16] {
    let mut words = [0u32; 16];
    for k in 0..C {
        // SAFETY: the caller's contract covers vectors g*C .. g*C + C.
        let v = unsafe { load(p, g * C as u64 + k as u64) };
        words[4 * k..4 * k + 4].copy_from_slice(&v.0);
    }
    words
}

/// Stores `v` as the `i`-th 16-byte vector at `p`.
///
/// # Safety
/// `p` must be 16-byte aligned and `p + 16 * (i + 1)` bytes must be writable.
#[inline(always)]
pub unsafe fn store(p: *mut u8, i: u64, v: V16) {
    // SAFETY: the caller's contract.
    unsafe { *(p as *mut V16).add(i as usize) = v }
}

/// The 4-byte word at `p`, loaded as global memory (`ld.global`): the pointers the kernels
/// form from their parameters' integers are generic to LLVM, whose generic loads (`LD.E`)
/// check the address space at run time where `ld.global` (`LDG.E`) does not.
///
/// # Safety
/// `p` is 4-byte aligned and points at readable global memory.
#[inline(always)]
pub unsafe fn load_global_u32(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller's contract; `cvta.to.global` maps the generic address of global
    // memory to its global one (identity on the generations the library runs on).
    unsafe {
        core::arch::asm!(
            "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.b32 {v}, [g]; }}",
            v = out(reg32) v,
            p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags)
        )
    };
    v
}

/// The 16 bytes at `p`, loaded as global memory in one access (`ld.global.v4.b32`; see
/// [`load_global_u32`]).
///
/// # Safety
/// `p` is 16-byte aligned and points at 16 readable bytes of global memory.
#[inline(always)]
pub unsafe fn load_global_v16(p: *const V16) -> V16 {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller's contract, as `load_global_u32`'s.
    unsafe {
        core::arch::asm!(
            "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.v4.b32 {{{a}, {b}, {c}, {d}}}, [g]; }}",
            a = out(reg32) a,
            b = out(reg32) b,
            c = out(reg32) c,
            d = out(reg32) d,
            p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags)
        )
    };
    V16([a, b, c, d])
}
