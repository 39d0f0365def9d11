//! Dynamic shared memory (`extern __shared__`), sized by the host at launch.

/// The block's dynamic shared memory as an array of `T`.
///
/// The host sizes it through the launch's `shared_mem_bytes`; each kernel documents how many
/// bytes it needs, and the host-side launcher computes exactly that.
#[inline(always)]
pub fn dynamic<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// Bytes of dynamic shared memory this launch provides (`%dynamic_smem_size`).
#[inline(always)]
pub fn dynamic_bytes() -> u32 {
    let n: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        core::arch::asm!("mov.u32 {0}, %dynamic_smem_size;", out(reg32) n, options(pure, nomem, nostack, preserves_flags))
    };
    n
}
