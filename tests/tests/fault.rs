//! A real device fault (a kernel that traps: `Stream::trap_for_tests`, feature
//! `test-hooks`, built only for this binary) and what follows it: every later call on
//! that GPU returns `Error::ContextLost`, none panics or hangs, dropping everything that
//! belonged to the lost context is safe, and opening the GPU again in the same process is the
//! same typed error (the driver documents that the process must be restarted; on an H100 with
//! driver 580 it refused both the primary context and a new one).
//!
//! One test, alone in its binary: the fault poisons the whole context, which every other test
//! of a binary would share.

use std::time::Duration;

use cuimg::{EqualizeMode, Error, Gray8, GrayWeights, Image, Lut, Pipeline, Rgb8, cpu};
use cuimg_tests::{Watchdog, assert_same, open_gpu, random};

/// Each call's outcome after the fault, by name: all must be `ContextLost`.
fn lost(name: &str, r: Result<impl Sized, Error>, failures: &mut Vec<String>) {
    match r {
        Err(e) if e.is_context_lost() => eprintln!("  {name}: {e}"),
        Err(e) => failures.push(format!("{name}: another error: {e:?}")),
        Ok(_) => failures.push(format!("{name}: succeeded on a lost context")),
    }
}

#[test]
fn a_device_fault_is_a_typed_error_and_a_new_gpu_works() {
    let _watchdog = Watchdog::new(Duration::from_secs(120), "the fault test");
    let Some(gpu) = open_gpu() else { return };
    let rgb = random::<Rgb8>(333, 257, 1);
    let s = gpu.stream().unwrap();
    let other = gpu.stream().unwrap();
    // Objects made before the fault, used and dropped after it.
    let dev = s.upload(&rgb.view()).unwrap();
    let mut out = s.alloc::<Gray8>(333, 257).unwrap();
    let mut pinned = gpu.alloc_pinned::<Rgb8>(333, 257).unwrap();
    pinned.copy_from(&rgb.view()).unwrap();
    let batch = s.upload_batch(&[rgb.view(), rgb.view()]).unwrap();
    let buf = s.upload_slice(&[1u32, 2, 3]).unwrap();
    s.synchronize().unwrap();

    s.trap_for_tests().unwrap();
    let first = s.synchronize().unwrap_err();
    assert!(first.is_context_lost(), "the trap's own error: {first:?}");
    assert!(first.to_string().contains("the GPU context is lost"), "{first}");

    eprintln!("every call after the fault:");
    let mut failures = Vec::new();
    let f = &mut failures;
    lost("Stream::synchronize, again", s.synchronize(), f);
    lost("Stream::synchronize, another stream", other.synchronize(), f);
    lost("Gpu::stream", gpu.stream(), f);
    lost("Gpu::memory", gpu.memory(), f);
    lost("Stream::alloc", s.alloc::<Gray8>(64, 64), f);
    lost("Stream::upload", s.upload(&rgb.view()), f);
    lost("Stream::download", s.download(&dev), f);
    lost("Stream::grayscale", s.grayscale(&dev, &mut out, GrayWeights::Bt601), f);
    lost("Stream::upload_pinned", other.upload_pinned(&pinned), f);
    lost("PinnedImage::as_bytes", pinned.as_bytes().map(<[u8]>::len), f);
    lost("Stream::download_slice", s.download_slice(&buf), f);
    lost("Stream::mark", s.mark(), f);
    lost("Gpu::grayscale", gpu.grayscale(&rgb.view(), GrayWeights::Bt601), f);
    lost("Gpu::histogram", gpu.histogram(&rgb.view()), f);
    lost("Gpu::equalize_color", gpu.equalize_color(&rgb.view(), EqualizeMode::Luma), f);
    lost("Gpu::apply_lut", gpu.apply_lut(&rgb.view(), &Lut::invert()), f);
    lost("Gpu::gather", gpu.gather(&[1u8, 2, 3], &[2, 1, 0]), f);
    lost("Gpu::alloc_pinned", gpu.alloc_pinned::<Gray8>(8, 8), f);
    lost("Stream::download_batch", s.download_batch(&batch), f);
    lost("Gpu::grayscale_batch", gpu.grayscale_batch(&[rgb.view()], GrayWeights::Bt601), f);
    // The pipeline: every image fails with the error (or the setup does), none panics.
    let mut results = Vec::new();
    let report = Pipeline::new(&gpu).run(
        vec![rgb.clone(), rgb.clone()],
        |s, a, b| s.grayscale(a, b, GrayWeights::Bt601),
        |_, r| results.push(r.map(|_| ())),
    );
    match report {
        Err(e) => lost("Pipeline::run", Err::<(), _>(e), f),
        Ok(_) => {
            for (i, r) in results.into_iter().enumerate() {
                lost(&format!("Pipeline::run, image {i}"), r, f);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "calls after the fault that did not say the context is lost:\n{}",
        failures.join("\n")
    );

    // Opening the GPU again, while the lost one is still held: the same typed error.
    match cuimg::Gpu::new() {
        Err(e) if e.is_context_lost() => eprintln!("Gpu::new beside the lost one: {e}"),
        other => panic!("Gpu::new beside the lost one: {other:?}"),
    }

    // Everything of the lost context dropped (buffers, pinned memory, streams, the GPU):
    // no panic, no hang (the watchdog).
    drop((dev, out, pinned, batch, buf, s, other, gpu));

    // Then: the driver documents that a process must be restarted after such a fault. Either
    // a new GPU works, bit-exact, or opening it is the same typed error; never another one.
    match cuimg::Gpu::new() {
        Ok(gpu) => {
            eprintln!("Gpu::new after dropping the lost one: works");
            check_works(&gpu, &rgb);
        }
        Err(e) if e.is_context_lost() => {
            eprintln!("Gpu::new after dropping the lost one: {e}");
            // What a reset of the device's primary context would do (a diagnostic, not
            // something cuimg does: it would pull the context from under other libraries).
            // SAFETY: no object of the lost context is left in this process.
            let reset = unsafe { cudarc::driver::sys::cuDevicePrimaryCtxReset_v2(0) };
            eprintln!("cuDevicePrimaryCtxReset: {reset:?}");
            match cuimg::Gpu::new() {
                Ok(gpu) => {
                    eprintln!("Gpu::new after the reset: works");
                    check_works(&gpu, &rgb);
                }
                Err(e) => {
                    eprintln!("Gpu::new after the reset: {e}");
                    assert!(e.is_context_lost(), "{e:?}");
                }
            }
        }
        Err(e) => panic!("Gpu::new after dropping the lost one: not ContextLost: {e:?}"),
    }
}

fn check_works(gpu: &cuimg::Gpu, rgb: &Image<Rgb8>) {
    let s = gpu.stream().unwrap();
    let dev = s.upload(&rgb.view()).unwrap();
    let mut g = s.alloc::<Gray8>(rgb.width(), rgb.height()).unwrap();
    s.grayscale(&dev, &mut g, GrayWeights::Bt601).unwrap();
    s.equalize_in_place(&mut g).unwrap();
    let want = cpu::equalize(&cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap().view()).unwrap();
    assert_same(&s.download(&g).unwrap(), &want, "after the fault");
}
