//! Dropping things while the GPU still works on them: device images, pinned images, streams
//! and `Gpu` handles dropped with kernels and copies in flight. Nothing may free memory a
//! kernel or copy still touches (the results stay right, and `gpu-bundle/run.sh sanitize`
//! runs this binary under memcheck), and no drop may block forever (a watchdog). Also the
//! small pieces that had no test of their own: pinned images, `copy_slice` and stream marks.

use std::time::Duration;

use cuimg::{DeviceImage, Error, Gray8, GrayWeights, Image, Lut, Rgb8, Stream, cpu};
use cuimg_tests::{Watchdog, assert_same, gpu, random, sanitizing};

/// Large enough that the queued launches keep the GPU busy for milliseconds (smaller under
/// the sanitizers, where each launch takes far longer anyway).
fn size() -> (u32, u32) {
    if sanitizing() { (515, 300) } else { (7680, 4320) }
}

/// Queues `n` grayscale launches of `src` on `s`, each into its own output.
fn busy(s: &Stream, src: &DeviceImage<Rgb8>, n: usize) -> Vec<DeviceImage<Gray8>> {
    (0..n)
        .map(|_| {
            let mut out = s.alloc::<Gray8>(src.width(), src.height()).unwrap();
            s.grayscale(src, &mut out, GrayWeights::Bt601).unwrap();
            out
        })
        .collect()
}

#[test]
fn a_source_dropped_while_kernels_read_it() {
    let Some(gpu) = gpu() else { return };
    let _w = Watchdog::new(Duration::from_secs(120), "dropping a source in use");
    let (w, h) = size();
    let original = random::<Rgb8>(w, h, 1);
    let want = cpu::grayscale(&original.view(), GrayWeights::Bt601).unwrap();
    let (s1, s2) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    for _ in 0..3 {
        let src = s1.upload(&original.view()).unwrap();
        let outs = busy(&s1, &src, 20);
        drop(src); // the launches are still queued
        // The same size on another stream, overwritten at once: may reuse the freed bytes,
        // but only after the reads.
        let mut other = s2.alloc::<Rgb8>(w, h).unwrap();
        s2.upload_into(&Image::<Rgb8>::filled(w, h, 7).view(), &mut other).unwrap();
        for out in &outs {
            assert_same(&s1.download(out).unwrap(), &want, "an output of a dropped source");
        }
    }
}

#[test]
fn a_destination_dropped_while_a_kernel_writes_it() {
    let Some(gpu) = gpu() else { return };
    let _w = Watchdog::new(Duration::from_secs(120), "dropping a destination in use");
    let (w, h) = size();
    let src = gpu.stream().unwrap().upload(&random::<Rgb8>(w, h, 2).view()).unwrap();
    let (s1, s2) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    for _ in 0..3 {
        drop(busy(&s1, &src, 20)); // every output dropped with its write queued
        // New images of the same size on another stream, filled at once: the late writes
        // must not land in them.
        let fresh: Vec<_> = (0..4)
            .map(|_| {
                let mut d = s2.alloc::<Gray8>(w, h).unwrap();
                s2.upload_into(&Image::<Gray8>::filled(w, h, 0x5A).view(), &mut d).unwrap();
                d
            })
            .collect();
        s1.synchronize().unwrap();
        for d in &fresh {
            assert!(s2.download(d).unwrap().as_bytes().iter().all(|&b| b == 0x5A), "a freed output was written late");
        }
    }
}

#[test]
fn a_stream_and_the_gpu_handle_dropped_with_work_in_flight() {
    let Some(gpu) = gpu() else { return };
    let _w = Watchdog::new(Duration::from_secs(120), "dropping streams in use");
    let (w, h) = size();
    let original = random::<Rgb8>(w, h, 3);
    let want = cpu::grayscale(&original.view(), GrayWeights::Bt601).unwrap();
    let reader = gpu.stream().unwrap();
    for _ in 0..3 {
        // A stream on a clone of the handle; the clone and the stream are dropped while
        // the stream's launches are still queued.
        let handle = gpu.clone();
        let s = handle.stream().unwrap();
        let src = s.upload(&original.view()).unwrap();
        let outs = busy(&s, &src, 10);
        drop(handle);
        drop(s);
        drop(src);
        for out in &outs {
            assert_same(&reader.download(out).unwrap(), &want, "an output of a dropped stream");
        }
    }
    // A whole Gpu of its own, dropped last with its images: no hang, no fault.
    let own = cuimg::Gpu::new().unwrap();
    let s = own.stream().unwrap();
    let src = s.upload(&original.view()).unwrap();
    let outs = busy(&s, &src, 5);
    drop(own);
    drop(s);
    drop(src);
    drop(outs);
}

#[test]
fn pinned_images_dropped_with_copies_in_flight() {
    let Some(gpu) = gpu() else { return };
    let _w = Watchdog::new(Duration::from_secs(120), "dropping pinned images in use");
    let (w, h) = size();
    let original = random::<Rgb8>(w, h, 4);
    let s = gpu.stream().unwrap();
    let busy_src = s.upload(&original.view()).unwrap();
    for _ in 0..3 {
        let _ = busy(&s, &busy_src, 10);
        // An upload from pinned memory queued behind the launches, then the pinned image
        // dropped: the drop waits for the copy before it frees.
        let mut pinned = gpu.alloc_pinned::<Rgb8>(w, h).unwrap();
        pinned.copy_from(&original.view()).unwrap();
        let dev = s.upload_pinned(&pinned).unwrap();
        drop(pinned);
        assert_same(&s.download(&dev).unwrap(), &original, "an upload from a dropped pinned image");
        // A download into pinned memory, dropped before anyone reads it.
        let mut pinned = gpu.alloc_pinned::<Rgb8>(w, h).unwrap();
        s.download_pinned(&dev, &mut pinned).unwrap();
        drop(pinned);
    }
    s.synchronize().unwrap();
}

#[test]
fn pinned_images() {
    let Some(gpu) = gpu() else { return };
    let s = gpu.stream().unwrap();
    for (w, h) in [(1, 1), (3, 5), (333, 257)] {
        let img = random::<Rgb8>(w, h, 5);
        let mut pinned = gpu.alloc_pinned::<Rgb8>(w, h).unwrap();
        assert_eq!(pinned.dimensions(), (w, h));
        assert!(pinned.as_bytes().unwrap().iter().all(|&b| b == 0), "a new pinned image is zeroed");
        pinned.copy_from(&img.view()).unwrap();
        assert_eq!(pinned.view().unwrap().to_image(), img);
        let mut dev = s.upload_pinned(&pinned).unwrap();
        let luts = s.upload_lut::<Rgb8>(&Lut::invert()).unwrap();
        let src = s.upload_pinned(&pinned).unwrap();
        s.apply_lut(&src, &mut dev, &luts).unwrap();
        s.upload_pinned_into(&pinned, &mut s.alloc::<Rgb8>(w, h).unwrap()).unwrap();
        s.download_pinned(&dev, &mut pinned).unwrap();
        assert_same(
            &pinned.view().unwrap().to_image(),
            &cpu::apply_lut(&img.view(), &Lut::invert()).unwrap(),
            "round trip",
        );
        pinned.view_mut().unwrap().copy_from(&img.view()).unwrap();
        assert_eq!(pinned.as_bytes().unwrap(), img.as_bytes());
        // Sizes that do not match are typed errors.
        let other = Image::<Rgb8>::new(w + 1, h);
        assert!(matches!(pinned.copy_from(&other.view()), Err(Error::DimensionMismatch { .. })));
        let mut wrong = s.alloc::<Rgb8>(w + 1, h).unwrap();
        assert!(matches!(s.upload_pinned_into(&pinned, &mut wrong), Err(Error::DimensionMismatch { .. })));
        assert!(matches!(s.download_pinned(&wrong, &mut pinned), Err(Error::DimensionMismatch { .. })));
    }
    assert!(matches!(gpu.alloc_pinned::<Gray8>(0, 4), Err(Error::EmptyImage { .. })));
}

#[test]
fn copy_slice() {
    let Some(gpu) = gpu() else { return };
    let (s1, s2) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    for n in [1usize, 3, 1000, 1 << 20] {
        let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let src = s1.upload_slice(&data).unwrap();
        let mut dst = s2.upload_slice(&vec![0xDEAD_BEEFu32; n]).unwrap();
        // Written on stream 1, copied on stream 2, read on stream 1: each waits for the last.
        s2.copy_slice(&src, &mut dst).unwrap();
        assert_eq!(s1.download_slice(&dst).unwrap(), data);
    }
    let a = s1.upload_slice(&[1u8, 2, 3]).unwrap();
    let mut b = s1.alloc_slice::<u8>(4).unwrap();
    assert!(matches!(s1.copy_slice(&a, &mut b), Err(Error::WrongLength { expected: 3, actual: 4, .. })));
    let empty = s1.upload_slice::<u8>(&[]).unwrap();
    let mut empty2 = s1.alloc_slice::<u8>(0).unwrap();
    s1.copy_slice(&empty, &mut empty2).unwrap();
    assert!(s1.download_slice(&empty2).unwrap().is_empty());
}

#[test]
fn stream_marks_time_the_work_between_them() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = size();
    let s = gpu.stream().unwrap();
    let src = s.upload(&random::<Rgb8>(w, h, 6).view()).unwrap();
    // Once untimed: the first launches load the kernel and grow the memory pool (about 12 ms
    // on an H100, more than ten warm launches).
    drop(busy(&s, &src, 11));
    // The outputs allocated before the marks, so that only launches lie between them: with
    // an allocation between the first two, one launch once measured 106 ms and ten 1.3
    // (session 16, alone on an H100, 1 run in 5). The least of three tries compared.
    let mut outs: Vec<_> = (0..11).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
    let (mut one, mut ten) = (f32::MAX, f32::MAX);
    for _ in 0..3 {
        let a = s.mark().unwrap();
        s.grayscale(&src, &mut outs[0], GrayWeights::Bt601).unwrap();
        let b = s.mark().unwrap();
        for out in &mut outs[1..] {
            s.grayscale(&src, out, GrayWeights::Bt601).unwrap();
        }
        let c = s.mark().unwrap();
        let (ab, bc, ac) = (a.elapsed_ms(&b).unwrap(), b.elapsed_ms(&c).unwrap(), a.elapsed_ms(&c).unwrap());
        assert!(ab > 0.0 && bc > 0.0, "{ab} {bc}");
        assert!((ab + bc - ac).abs() <= 0.01 * ac + 0.01, "{ab} + {bc} != {ac}");
        (one, ten) = (one.min(ab), ten.min(bc));
    }
    if !sanitizing() {
        // Ten launches take longer than one.
        assert!(ten > one, "one launch {one} ms, ten {ten} ms (the least of three)");
    }
    // Marks of two streams of one GPU compare too.
    let other = gpu.stream().unwrap();
    let d = other.mark().unwrap();
    d.elapsed_ms(&other.mark().unwrap()).unwrap();
}
