//! Several host threads, each with its own stream, running every operation at once on
//! shared read-only device inputs; and the `Send`/`Sync` guarantees of the public types.

use cuimg::{
    DeviceBuffer, DeviceImage, EqualizeMode, Gpu, Gray8, GrayWeights, Image, Lut, PinnedImage, Rgb8, Rgba8, Stream, cpu,
};
use cuimg_tests::{assert_same, random, skewed};

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}

/// What may cross threads (the compile-fail doc tests on `Stream` and `GatherCheck` pin
/// down what may not).
#[test]
fn public_types_are_send_and_sync_where_sound() {
    send_sync::<Gpu>();
    send_sync::<DeviceImage<Rgb8>>();
    send_sync::<DeviceBuffer<f32>>();
    send_sync::<PinnedImage<Gray8>>();
    send_sync::<Image<Rgba8>>();
    send_sync::<cuimg::Error>();
    send::<Stream>();
}

#[test]
fn threads_with_their_own_streams_agree_with_the_cpu() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let (w, h) = (1021, 769);
    let rgb = skewed::<Rgb8>(w, h, 61);
    let gray = random::<Gray8>(w, h, 62);
    let src: Vec<f32> = (0..50_000).map(|i| i as f32 * 0.25).collect();
    let idx: Vec<u32> = (0..200_000u32).map(|i| (i * 7919) % 50_000).collect();
    // Shared, read-only device inputs, uploaded once.
    let setup = gpu.stream().unwrap();
    let d_rgb = setup.upload(&rgb.view()).unwrap();
    let d_gray = setup.upload(&gray.view()).unwrap();
    let d_src = setup.upload_slice(&src).unwrap();
    let d_idx = setup.upload_slice(&idx).unwrap();
    setup.synchronize().unwrap();
    let want_gray = cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap();
    let want_hist = cpu::histogram(&rgb.view()).unwrap();
    let want_eq = cpu::equalize(&gray.view()).unwrap();
    let want_luma = cpu::equalize_color(&rgb.view(), EqualizeMode::Luma).unwrap();
    let want_lut = cpu::apply_lut(&gray.view(), &Lut::invert()).unwrap();
    let want_gather = cpu::gather(&src, &idx).unwrap();

    std::thread::scope(|scope| {
        for t in 0..6 {
            let (gpu, d_rgb, d_gray, d_src, d_idx) = (&gpu, &d_rgb, &d_gray, &d_src, &d_idx);
            let (want_gray, want_hist, want_eq, want_luma, want_lut, want_gather) =
                (&want_gray, &want_hist, &want_eq, &want_luma, &want_lut, &want_gather);
            scope.spawn(move || {
                let s = gpu.stream().unwrap();
                let lut = s.upload_lut::<Gray8>(&Lut::invert()).unwrap();
                // Fewer rounds under the sanitizers, which run each launch far slower.
                for round in 0..if cuimg_tests::sanitizing() { 2 } else { 8 } {
                    let what = format!("thread {t} round {round}");
                    let mut g = s.alloc::<Gray8>(w, h).unwrap();
                    s.grayscale(d_rgb, &mut g, GrayWeights::Bt601).unwrap();
                    let mut bins = s.alloc_histogram(3).unwrap();
                    s.histogram(d_rgb, &mut bins).unwrap();
                    let mut eq = s.alloc::<Gray8>(w, h).unwrap();
                    s.equalize(d_gray, &mut eq).unwrap();
                    let mut luma = s.alloc::<Rgb8>(w, h).unwrap();
                    s.equalize_color(d_rgb, &mut luma, EqualizeMode::Luma).unwrap();
                    let mut inv = s.alloc::<Gray8>(w, h).unwrap();
                    s.apply_lut(d_gray, &mut inv, &lut).unwrap();
                    let mut out = s.alloc_slice::<f32>(d_idx.len()).unwrap();
                    s.gather(d_src, d_idx, &mut out).unwrap().check().unwrap();
                    assert_same(&s.download(&g).unwrap(), want_gray, &what);
                    assert_eq!(&s.download_histogram(&bins).unwrap(), want_hist, "{what}");
                    assert_same(&s.download(&eq).unwrap(), want_eq, &what);
                    assert_same(&s.download(&luma).unwrap(), want_luma, &what);
                    assert_same(&s.download(&inv).unwrap(), want_lut, &what);
                    assert_eq!(&s.download_slice(&out).unwrap(), want_gather, "{what}");
                }
            });
        }
    });
}

/// The blocking API from many threads at once on one shared `Gpu`.
#[test]
fn blocking_calls_from_many_threads() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    std::thread::scope(|scope| {
        for t in 0..8u64 {
            let gpu = &gpu;
            scope.spawn(move || {
                let img = random::<Rgba8>(300 + t as u32, 200, t);
                for _ in 0..5 {
                    let got = gpu.grayscale(&img.view(), GrayWeights::Bt709).unwrap();
                    assert_same(&got, &cpu::grayscale(&img.view(), GrayWeights::Bt709).unwrap(), "blocking");
                }
            });
        }
    });
}

/// A stream made on one thread and first used on another: every call binds the GPU's
/// context itself (the first launch of a kernel once failed with CUDA_ERROR_INVALID_CONTEXT
/// when its occupancy query ran on a thread that had not used the GPU yet).
#[test]
fn a_stream_moved_to_a_fresh_thread_works() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let s = gpu.stream().unwrap();
    let img = random::<Rgb8>(333, 257, 71);
    let src = s.upload(&img.view()).unwrap();
    s.synchronize().unwrap();
    let want = cpu::grayscale(&img.view(), GrayWeights::Bt709).unwrap();
    let got = std::thread::spawn(move || {
        // Batch kernels were never launched in this process before: their occupancy is
        // queried here, on a thread that has never touched the GPU.
        let batch = s.upload_batch(&[img.view()]).unwrap();
        let mut gray = s.alloc_batch::<Gray8>(&batch.sizes()).unwrap();
        s.grayscale_batch(&batch, &mut gray, GrayWeights::Bt709).unwrap();
        let mut one = s.alloc::<Gray8>(333, 257).unwrap();
        s.grayscale(&src, &mut one, GrayWeights::Bt709).unwrap();
        (s.download_batch(&gray).unwrap().remove(0), s.download(&one).unwrap())
    })
    .join()
    .unwrap();
    assert_same(&got.0, &want, "batch on a fresh thread");
    assert_same(&got.1, &want, "single on a fresh thread");
}
