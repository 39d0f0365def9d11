//! Cross-stream ordering: a write, a free or a host write of memory that several streams
//! read must wait for *every* one of those reads, not only the last.
//!
//! The pattern is the README's own: one read-only device input shared by streams. A long
//! read runs on stream 1 (many grayscale launches over an 8K image), a one-pixel read on
//! stream 2, and then stream 3 overwrites the input (or frees it and allocates the same
//! size). Before per-stream read tracking, stream 3 waited only for stream 2, and on an
//! H100 262,144 of stream 1's pixels came out computed from the new contents.
//!
//! These tests use only API that existed before the fix, so the same file shows the hole on
//! an older build.

use cuimg::{DeviceImage, Gray8, GrayWeights, Image, Rect, Rgb8, Stream, cpu};
use cuimg_tests::{assert_same, gpu, random};

/// 8K: each grayscale launch reads 100 MB, so the reads on stream 1 take milliseconds.
const W: u32 = 7680;
const H: u32 = 4320;
/// Launches on stream 1; each writes its own output, so every one is checked.
const READS: usize = 40;

struct Reads {
    outputs: Vec<DeviceImage<Gray8>>,
}

/// Queues the long reads of `src` on `s1` and a one-pixel histogram of it on `s2`.
fn read_on_two_streams(s1: &Stream, s2: &Stream, src: &DeviceImage<Rgb8>) -> Reads {
    let mut outputs = Vec::with_capacity(READS);
    for _ in 0..READS {
        // Poisoned by allocation order: every output is written by its own launch.
        let mut out = s1.alloc::<Gray8>(W, H).unwrap();
        s1.grayscale(src, &mut out, GrayWeights::Bt601).unwrap();
        outputs.push(out);
    }
    let mut bins = s2.alloc_histogram(3).unwrap();
    s2.histogram(&src.roi(Rect::new(0, 0, 1, 1)).unwrap(), &mut bins).unwrap();
    Reads { outputs }
}

fn check(s1: &Stream, reads: Reads, want: &Image<Gray8>) {
    for (i, out) in reads.outputs.iter().enumerate() {
        assert_same(&s1.download(out).unwrap(), want, &format!("read {i} of {READS} on stream 1"));
    }
}

/// Content that changes every pixel's gray value: the inverse of the original.
fn inverted(img: &Image<Rgb8>) -> Image<Rgb8> {
    let mut out = img.clone();
    out.as_bytes_mut().iter_mut().for_each(|b| *b = 255 - *b);
    out
}

#[test]
fn a_write_waits_for_every_stream_that_read() {
    let Some(gpu) = gpu() else { return };
    let original = random::<Rgb8>(W, H, 91);
    let want = cpu::grayscale(&original.view(), GrayWeights::Bt601).unwrap();
    let replacement = inverted(&original);
    let (s0, s1, s2, s3) = (gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap());
    for round in 0..3 {
        let mut src = s0.upload(&original.view()).unwrap();
        s0.synchronize().unwrap();
        let reads = read_on_two_streams(&s1, &s2, &src);
        s3.upload_into(&replacement.view(), &mut src).unwrap();
        check(&s1, reads, &want);
        // And the write itself happened: the input now holds the replacement.
        assert_same(&s3.download(&src).unwrap(), &replacement, &format!("round {round}: the overwrite"));
    }
}

#[test]
fn a_kernel_write_waits_for_every_stream_that_read() {
    let Some(gpu) = gpu() else { return };
    let original = random::<Rgb8>(W, H, 92);
    let want = cpu::grayscale(&original.view(), GrayWeights::Bt601).unwrap();
    let (s0, s1, s2, s3) = (gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap());
    let luts = s3.upload_lut::<Rgb8>(&cuimg::Lut::invert()).unwrap();
    let other = s3.upload(&random::<Rgb8>(W, H, 93).view()).unwrap();
    let mut src = s0.upload(&original.view()).unwrap();
    s0.synchronize().unwrap();
    let reads = read_on_two_streams(&s1, &s2, &src);
    s3.apply_lut(&other, &mut src, &luts).unwrap();
    check(&s1, reads, &want);
}

#[test]
fn a_free_waits_for_every_stream_that_read() {
    let Some(gpu) = gpu() else { return };
    let original = random::<Rgb8>(W, H, 94);
    let want = cpu::grayscale(&original.view(), GrayWeights::Bt601).unwrap();
    let replacement = inverted(&original);
    let (s0, s1, s2, s3) = (gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap());
    for _ in 0..3 {
        let src = s0.upload(&original.view()).unwrap();
        s0.synchronize().unwrap();
        let reads = read_on_two_streams(&s1, &s2, &src);
        drop(src);
        // The same size again, on a third stream, written at once: the allocator may hand
        // back the freed bytes, but only once every read of them is done.
        let mut fresh = s3.alloc::<Rgb8>(W, H).unwrap();
        s3.upload_into(&replacement.view(), &mut fresh).unwrap();
        check(&s1, reads, &want);
        assert_same(&s3.download(&fresh).unwrap(), &replacement, "the new allocation");
    }
}

#[test]
fn a_pinned_image_is_rewritten_only_after_every_copy_from_it() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = (3840, 2160);
    let original = random::<Rgb8>(w, h, 95);
    let mut pinned = gpu.alloc_pinned::<Rgb8>(w, h).unwrap();
    pinned.copy_from(&original.view()).unwrap();
    let (s1, s2) = (gpu.stream().unwrap(), gpu.stream().unwrap());
    // Stream 1 is busy for a while before its copy from the pinned image starts.
    let busy_src = s1.upload(&random::<Rgb8>(W, H, 96).view()).unwrap();
    let mut busy_dst = s1.alloc::<Gray8>(W, H).unwrap();
    for _ in 0..READS {
        s1.grayscale(&busy_src, &mut busy_dst, GrayWeights::Bt601).unwrap();
    }
    let d1 = s1.upload_pinned(&pinned).unwrap();
    let d2 = s2.upload_pinned(&pinned).unwrap();
    // The host rewrites the pinned image: it must wait for both copies.
    pinned.as_bytes_mut().unwrap().fill(0);
    assert_same(&s1.download(&d1).unwrap(), &original, "copy on stream 1");
    assert_same(&s2.download(&d2).unwrap(), &original, "copy on stream 2");
}

#[test]
fn a_download_into_pinned_memory_is_read_only_when_done() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = (3840, 2160);
    let original = random::<Gray8>(w, h, 97);
    let s = gpu.stream().unwrap();
    let dev = s.upload(&original.view()).unwrap();
    let mut pinned = gpu.alloc_pinned::<Gray8>(w, h).unwrap();
    pinned.as_bytes_mut().unwrap().fill(0x5A);
    s.download_pinned(&dev, &mut pinned).unwrap();
    // No synchronize: reading the pinned image waits for the copy.
    assert_eq!(pinned.as_bytes().unwrap(), original.as_bytes());
}

/// One launch that reads many images (`Stream::resize_images`) records those reads by one
/// event shared by all of them. A write to any of them on another stream still waits for
/// every such launch on stream 1 and for stream 2's read; also after a single read of the
/// first image on stream 1 recorded the shared event again (later on the same stream).
#[test]
fn a_write_waits_for_every_launch_that_read_many_images() {
    let Some(gpu) = gpu() else { return };
    let originals: Vec<Image<Rgb8>> = (0..3).map(|i| random::<Rgb8>(W, H, 98 + i)).collect();
    let replacements: Vec<Image<Rgb8>> = originals.iter().map(inverted).collect();
    // A 16th each way: OpenCV's cell sums, which read every byte of each source.
    let (filter, size) = ("cv-area".parse::<cuimg::Filter>().unwrap(), (W / 16, H / 16));
    let wants: Vec<Image<Rgb8>> =
        originals.iter().map(|o| cpu::resize(&o.view(), size.0, size.1, filter).unwrap()).collect();
    let want_gray = cpu::grayscale(&originals[0].view(), GrayWeights::Bt601).unwrap();
    let (s0, s1, s2, s3) = (gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap(), gpu.stream().unwrap());
    for round in 0..3 {
        let mut src: Vec<DeviceImage<Rgb8>> = originals.iter().map(|o| s0.upload(&o.view()).unwrap()).collect();
        s0.synchronize().unwrap();
        let views: Vec<_> = src.iter().map(|d| d.view()).collect();
        let outputs: Vec<_> = (0..READS / 2)
            .map(|_| {
                let mut out = s1.alloc_batch::<Rgb8>(&[size; 3]).unwrap();
                s1.resize_images(&views, &mut out, filter).unwrap();
                out
            })
            .collect();
        let mut gray = s1.alloc::<Gray8>(W, H).unwrap();
        if round > 0 {
            s1.grayscale(&src[0], &mut gray, GrayWeights::Bt601).unwrap();
        }
        let mut bins = s2.alloc_histogram(3).unwrap();
        s2.histogram(&src[2].roi(Rect::new(0, 0, 1, 1)).unwrap(), &mut bins).unwrap();
        drop(views);
        for (d, r) in src.iter_mut().zip(&replacements).rev() {
            s3.upload_into(&r.view(), d).unwrap();
        }
        for (i, out) in outputs.iter().enumerate() {
            let got = s1.download_batch(out).unwrap();
            for (k, (g, w)) in got.iter().zip(&wants).enumerate() {
                assert_same(g, w, &format!("round {round}: launch {i}, image {k}"));
            }
        }
        if round > 0 {
            assert_same(&s1.download(&gray).unwrap(), &want_gray, &format!("round {round}: the single read"));
        }
        for (d, r) in src.iter().zip(&replacements) {
            assert_same(&s3.download(d).unwrap(), r, &format!("round {round}: the overwrite"));
        }
    }
}
