//! Dynamic shared memory (`extern __shared__`), sized by the host at launch.

/// The block's dynamic shared memory as an array of `T`.
///
/// The host sizes it through the launch's `shared_mem_bytes`; each kernel documents how many
/// bytes it needs, and the host-side launcher computes exactly that.
#[inline(always)]
pub fn dynamic<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}
