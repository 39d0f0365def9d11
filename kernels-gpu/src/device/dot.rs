//! Byte permutes, integer dot products (`prmt`, `dp2a`, `dp4a`), the tensor cores' integer
//! products (`mma.m8n8k16`), a multiply-add, a saturating pack of two bytes and a warp
//! shuffle, which LLVM's NVPTX backend does not emit from Rust (or, the multiply-add, not
//! as one): one instruction each where shifts and masks took two to five.

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

/// `hi` and `lo` each clipped to 0..=255, side by side, above them `rest`'s low half:
/// `rest << 16 | clip(hi) << 8 | clip(lo)` (`cvt.pack.sat.u8.s32.b32`, sm_72 on), one
/// instruction where two clips, a shift and an or took five.
#[inline(always)]
pub fn pack_sat_u8(hi: i32, lo: i32, rest: u32) -> u32 {
    let d: u32;
    // SAFETY: register arithmetic only.
    unsafe {
        core::arch::asm!(
            "cvt.pack.sat.u8.s32.b32 {d}, {hi}, {lo}, {rest};",
            d = out(reg32) d, hi = in(reg32) hi, lo = in(reg32) lo, rest = in(reg32) rest,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    d
}

/// `a * b + c`, wrapping (`mad.lo.s32`): what `wrapping_mul` and `wrapping_add` say, but
/// kept one multiply-add where LLVM, given two results of one `mma` as an array, shifted
/// the pair as 64 bits and masked (two instructions and an add for each such sum).
#[inline(always)]
pub fn mad_lo(a: i32, b: i32, c: i32) -> i32 {
    let d: i32;
    // SAFETY: register arithmetic only.
    unsafe {
        core::arch::asm!(
            "mad.lo.s32 {d}, {a}, {b}, {c};",
            d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c,
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

/// `c + A * B` of 8x8 `i32` sums, A 8x16 bytes (`a`: row `lane / 4`, columns
/// `4 * (lane % 4)` on, byte `i` the `i`th), B 16x8 bytes (`b`: column `lane / 4`, rows
/// `4 * (lane % 4)` on), the sums `c` at row `lane / 4`, columns `2 * (lane % 4)` and one
/// more: `mma.sync.aligned.m8n8k16` (the tensor cores' integer product, sm_75 on), A's
/// bytes unsigned where `SIGNED` is false and signed where it is true, B's unsigned. Exact:
/// 16 products of bytes and their sum fit an `i32` many times over.
///
/// Every lane of the warp must run it together (`.sync.aligned`): callers keep it out of
/// branches a warp may split on. Not `pure`, so that LLVM neither drops nor moves it.
#[inline(always)]
pub fn mma_m8n8k16<const SIGNED: bool>(a: u32, b: u32, c: [i32; 2]) -> [i32; 2] {
    let (d0, d1): (i32, i32);
    // SAFETY: register arithmetic only; the warp runs it converged (the caller's duty,
    // above), which the instruction needs for its result, not for memory safety.
    unsafe {
        if SIGNED {
            core::arch::asm!(
                "mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32 {{{d0}, {d1}}}, {{{a}}}, {{{b}}}, {{{c0}, {c1}}};",
                d0 = out(reg32) d0, d1 = out(reg32) d1, a = in(reg32) a, b = in(reg32) b,
                c0 = in(reg32) c[0], c1 = in(reg32) c[1],
                options(nomem, nostack, preserves_flags)
            )
        } else {
            core::arch::asm!(
                "mma.sync.aligned.m8n8k16.row.col.s32.u8.u8.s32 {{{d0}, {d1}}}, {{{a}}}, {{{b}}}, {{{c0}, {c1}}};",
                d0 = out(reg32) d0, d1 = out(reg32) d1, a = in(reg32) a, b = in(reg32) b,
                c0 = in(reg32) c[0], c1 = in(reg32) c[1],
                options(nomem, nostack, preserves_flags)
            )
        }
    };
    [d0, d1]
}

/// `shfl.sync.down.b32` over the whole warp: lane `i` gets `v` of lane `i + delta` (its own
/// past lane 31). Every lane of the warp must run it together.
#[inline(always)]
pub fn shfl_down(v: u32, delta: u32) -> u32 {
    let d: u32;
    // SAFETY: register exchange within the warp, which runs it converged (the caller's
    // duty).
    unsafe {
        core::arch::asm!(
            "shfl.sync.down.b32 {d}, {v}, {delta}, 31, -1;",
            d = out(reg32) d, v = in(reg32) v, delta = in(reg32) delta,
            options(nomem, nostack, preserves_flags)
        )
    };
    d
}

/// `vote.sync.all.pred` over the whole warp: whether `p` holds in every lane (the same
/// answer in each, so a branch on it keeps the warp converged). Every lane of the warp must
/// run it together.
#[inline(always)]
pub fn vote_all(p: bool) -> bool {
    let d: u32;
    // SAFETY: a vote within the warp, which runs it converged (the caller's duty).
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; vote.sync.all.pred q, p, -1; selp.u32 {d}, 1, 0, q; }}",
            d = out(reg32) d, v = in(reg32) p as u32,
            options(nomem, nostack, preserves_flags)
        )
    };
    d != 0
}
