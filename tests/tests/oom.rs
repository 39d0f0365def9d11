//! Running out of device memory in the middle of a pipeline and of a batch: a typed error
//! (`Error::OutOfDeviceMemory`) for the images that did not fit, correct results for the
//! others, nothing half-written returned as a result, and the same stream and pipeline work
//! again once memory is free.
//!
//! Alone in its binary: it fills the GPU's memory, which other tests running beside it would
//! need.

use std::time::Duration;

use cuimg::{DeviceBuffer, EqualizeMode, Error, GrayWeights, Image, Pipeline, Rgb8, cpu};
use cuimg_tests::{Watchdog, assert_same, open_gpu, random};

/// Allocates device memory until the GPU refuses, in steps from 1 GiB down to 2 MiB.
fn fill(s: &cuimg::Stream) -> Vec<DeviceBuffer<u8>> {
    let mut hog = Vec::new();
    for step in [1usize << 30, 64 << 20, 2 << 20] {
        loop {
            match s.alloc_slice::<u8>(step) {
                Ok(b) => hog.push(b),
                Err(Error::OutOfDeviceMemory(_)) => break,
                Err(e) => panic!("filling the GPU: not the typed out-of-memory error: {e:?}"),
            }
        }
    }
    s.synchronize().unwrap();
    hog
}

#[test]
fn out_of_memory_mid_pipeline_and_mid_batch_is_typed_and_recoverable() {
    let _watchdog = Watchdog::new(Duration::from_secs(300), "the out-of-memory test");
    let Some(gpu) = open_gpu() else { return };
    let s = gpu.stream().unwrap();
    let mut hog = fill(&s);
    let (free, total) = gpu.memory().unwrap();
    eprintln!("filled: {} allocations, {} MiB of {} MiB free", hog.len(), free >> 20, total >> 20);
    // Give back 64 MiB: room for small images, not for a 192 MB one.
    let mut given = 0;
    while given < 64 << 20 {
        given += hog.pop().expect("the GPU had memory").len();
    }
    s.synchronize().unwrap();

    let small = random::<Rgb8>(64, 48, 1);
    let big = random::<Rgb8>(8000, 8000, 2);
    let inputs = vec![small.clone(), small.clone(), big.clone(), small.clone(), small.clone()];
    let want_small = cpu::grayscale(&small.view(), GrayWeights::Bt601).unwrap();
    let pipeline = Pipeline::new(&gpu).depth(1).threads(1);
    let mut outcomes = Vec::new();
    pipeline
        .run(inputs.clone(), |s, a, b| s.grayscale(a, b, GrayWeights::Bt601), |i, r| outcomes.push((i, r)))
        .expect("the pipeline sets up in 64 MiB");
    // Under memcheck the sanitizer manages device memory itself, and what is left free after
    // filling differs: there the large image may fit, and must then be right.
    let loose = cuimg_tests::sanitizing();
    let want_big = cpu::grayscale(&big.view(), GrayWeights::Bt601).unwrap();
    for (i, r) in &outcomes {
        match (i, r) {
            (2, Err(Error::OutOfDeviceMemory(_))) => {}
            (2, Ok(img)) if loose => assert_same(img, &want_big, "the large image, under a sanitizer"),
            (2, other) => panic!("the 8000x8000 image in 64 MiB: {:?}", other.as_ref().map(|_| ())),
            (_, Ok(img)) => assert_same(img, &want_small, "a small image beside the one that did not fit"),
            (_, Err(e)) => panic!("small image {i}: {e:?}"),
        }
    }
    assert_eq!(outcomes.len(), inputs.len());

    // A batch whose input or output does not fit.
    let views = [big.view(), small.view()];
    match gpu.equalize_color_batch(&views, EqualizeMode::Luma) {
        Err(Error::OutOfDeviceMemory(_)) => {}
        Ok(_) if loose => {}
        other => panic!("a 192 MB batch in 64 MiB: {:?}", other.map(|v| v.len())),
    }
    let mid = random::<Rgb8>(3000, 3000, 3); // 27 MB in, 27 MB out, with 64 MiB free
    match gpu.equalize_color_batch(&[mid.view(), mid.view()], EqualizeMode::Luma) {
        Err(Error::OutOfDeviceMemory(_)) => {}
        Ok(_) if loose => {}
        other => panic!("a 54 MB batch and its output in 64 MiB: {:?}", other.map(|v| v.len())),
    }
    // The stream that failed still works.
    let dev = s.upload(&small.view()).unwrap();
    let mut out = s.alloc(64, 48).unwrap();
    s.grayscale(&dev, &mut out, GrayWeights::Bt601).unwrap();
    assert_same(&s.download(&out).unwrap(), &want_small, "the stream after running out");

    // Memory back: the same pipeline and batch now succeed, bit-exact.
    drop(hog);
    s.synchronize().unwrap();
    let mut n = 0;
    pipeline
        .run(
            inputs,
            |s, a, b| s.grayscale(a, b, GrayWeights::Bt601),
            |i, r| {
                let want =
                    if i == 2 { cpu::grayscale(&big.view(), GrayWeights::Bt601).unwrap() } else { want_small.clone() };
                assert_same(&r.unwrap(), &want, "after memory came back");
                n += 1;
            },
        )
        .unwrap();
    assert_eq!(n, 5);
    let eq = gpu.equalize_color_batch(&[mid.view(), mid.view()], EqualizeMode::Luma).unwrap();
    assert_same(&eq[1], &cpu::equalize_color(&mid.view(), EqualizeMode::Luma).unwrap(), "batch after");
    let _: Image<Rgb8> = eq.into_iter().next().unwrap();
}
