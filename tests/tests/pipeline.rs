//! The overlapped pipeline and the GPU pool: every result in input order, none lost,
//! each equal to the CPU reference; failures of one image reported for that image only;
//! typed errors for a pool asked for a GPU that does not exist.

use cuimg::{Error, GpuPool, Gray8, GrayWeights, Image, Pipeline, Rgb8, cpu};
use cuimg_tests::{assert_same, gpu, random, skewed};

/// A few hundred images whose sizes change now and then (so slots reallocate), some tiny
/// (a sixteenth as many, and no 1080p, under the sanitizers, where racecheck takes minutes
/// over the full set).
fn inputs(n: usize) -> Vec<Image<Rgb8>> {
    let (n, every, large) = if cuimg_tests::sanitizing() { (n / 16, 3, (480, 270)) } else { (n, 37, (1920, 1080)) };
    (0..n)
        .map(|i| {
            let (w, h) = match (i / every) % 4 {
                0 => (320, 240),
                1 => (1 + i as u32 % 5, 1 + i as u32 % 3),
                2 => (641, 479),
                _ => large,
            };
            if i % 3 == 0 { random::<Rgb8>(w, h, i as u64) } else { skewed::<Rgb8>(w, h, i as u64) }
        })
        .collect()
}

/// One worker thread per GPU under the sanitizers: racecheck 2025.3 lost track of kernels
/// launched from several threads at once ("Internal Sanitizer Error"), in every run of this
/// binary. Several threads are tested without it (tests/tests/concurrent.rs, and this file).
fn one_thread_when_sanitizing(p: Pipeline) -> Pipeline {
    if cuimg_tests::sanitizing() { p.threads(1) } else { p }
}

#[test]
fn results_come_back_complete_and_in_order() {
    let Some(gpu) = gpu() else { return };
    let images = inputs(300);
    let shapes: &[(usize, usize)] =
        if cuimg_tests::sanitizing() { &[(1, 1), (2, 1)] } else { &[(1, 1), (4, 1), (2, 4)] };
    for &(depth, threads) in shapes {
        let mut got: Vec<(usize, Image<Gray8>)> = Vec::new();
        let report = one_thread_when_sanitizing(Pipeline::new(&gpu))
            .depth(depth)
            .threads(threads)
            .run(
                &images,
                |s, src, dst| {
                    s.grayscale(src, dst, GrayWeights::Bt601)?;
                    s.equalize_in_place(dst)
                },
                |i, r| got.push((i, r.expect("every image succeeds"))),
            )
            .unwrap();
        let depth = format!("{depth} slots x {threads} threads");
        assert_eq!(report.images, images.len(), "{depth}: report");
        assert_eq!(report.failed, 0);
        assert_eq!(got.len(), images.len(), "depth {depth}: results");
        for (k, (i, out)) in got.iter().enumerate() {
            assert_eq!(*i, k, "depth {depth}: order");
            let want = cpu::equalize(&cpu::grayscale(&images[k].view(), GrayWeights::Bt601).unwrap().view()).unwrap();
            assert_same(out, &want, &format!("depth {depth}, image {k}"));
        }
        println!("depth {depth}:\n{report}");
    }
}

#[test]
fn a_failing_image_fails_alone() {
    let Some(gpu) = gpu() else { return };
    // Widths 60..100: the operation fails (invalid weights, a typed error that launches
    // nothing) on every width divisible by 7, and succeeds on the others.
    let images: Vec<Image<Rgb8>> = (0..40).map(|i| random::<Rgb8>(60 + i, 48, 1000 + i as u64)).collect();
    let mut results = Vec::new();
    let report = one_thread_when_sanitizing(Pipeline::new(&gpu))
        .run(
            images.clone(),
            |s, src, dst| {
                let bad = src.width() % 7 == 0;
                let w = if bad { GrayWeights::Custom { r: f32::NAN, g: 0.0, b: 0.0 } } else { GrayWeights::Bt601 };
                s.grayscale(src, dst, w)
            },
            |i, r| results.push((i, r)),
        )
        .unwrap();
    assert_eq!((report.images, results.len()), (40, 40));
    for (k, (i, r)) in results.iter().enumerate() {
        assert_eq!(*i, k, "order");
        match r {
            Err(e) => {
                assert_eq!(images[k].width() % 7, 0, "image {k} failed: {e}");
                assert!(matches!(e, Error::InvalidWeights { .. }), "image {k}: {e}");
            }
            Ok(out) => {
                assert_ne!(images[k].width() % 7, 0, "image {k} should have failed");
                assert_same(out, &cpu::grayscale(&images[k].view(), GrayWeights::Bt601).unwrap(), "good image");
            }
        }
    }
    assert_eq!(report.failed, images.iter().filter(|i| i.width() % 7 == 0).count());
}

#[test]
fn a_pool_spreads_batches_and_pipelines() {
    let Some(_) = gpu() else { return };
    let pool = GpuPool::all().unwrap();
    assert!(!pool.is_empty());
    let images = inputs(120);
    let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    let gray = pool
        .split(
            &views,
            |v| v.width() as u64 * v.height() as u64,
            |g, share| g.grayscale_batch(share, GrayWeights::Bt601),
        )
        .unwrap();
    assert_eq!(gray.len(), images.len());
    for (k, g) in gray.iter().enumerate() {
        assert_same(g, &cpu::grayscale(&views[k], GrayWeights::Bt601).unwrap(), &format!("pool batch image {k}"));
    }
    let mut got = Vec::new();
    let report = one_thread_when_sanitizing(Pipeline::on(&pool))
        .run(images.clone(), |s, src, dst| s.grayscale(src, dst, GrayWeights::Bt601), |i, r| got.push((i, r.unwrap())))
        .unwrap();
    assert_eq!(report.per_gpu.iter().sum::<usize>(), images.len());
    for (k, (i, g)) in got.iter().enumerate() {
        assert_eq!(*i, k);
        assert_same(g, &cpu::grayscale(&views[k], GrayWeights::Bt601).unwrap(), &format!("pool pipeline image {k}"));
    }
    println!("pool of {}: {report}", pool.len());
}

#[test]
fn a_pool_of_missing_gpus_is_a_typed_error() {
    let err = GpuPool::with_devices(&[0, 977]).unwrap_err();
    assert!(matches!(err, Error::NoDevice(_) | Error::NoDriver(_)), "{err}");
    assert!(matches!(GpuPool::with_devices(&[]).unwrap_err(), Error::NoDevice(_)));
}

/// Page-locked inputs go straight to the device (no staging copy); results are the same.
#[test]
fn registered_inputs_upload_directly() {
    let Some(gpu) = gpu() else { return };
    let images = inputs(80);
    let locked = gpu.register(&images).unwrap();
    assert!(!locked.is_empty());
    let mut got = Vec::new();
    let report = one_thread_when_sanitizing(Pipeline::new(&gpu))
        .run(&images, |s, src, dst| s.grayscale(src, dst, GrayWeights::Bt709), |i, r| got.push((i, r.unwrap())))
        .unwrap();
    drop(locked);
    for (k, (i, g)) in got.iter().enumerate() {
        assert_eq!(*i, k);
        assert_same(g, &cpu::grayscale(&images[k].view(), GrayWeights::Bt709).unwrap(), &format!("image {k}"));
    }
    // Images of 1920x1080 are locked, so they skip the host copy in.
    println!("registered: {report}");
    // A plain upload of a locked image, then the lock released: the copy is complete.
    let big = random::<Rgb8>(1920, 1080, 77);
    let one = std::slice::from_ref(&big);
    let s = gpu.stream().unwrap();
    let locked = gpu.register(one).unwrap();
    let dev = s.upload(&big.view()).unwrap();
    drop(locked);
    assert_same(&s.download(&dev).unwrap(), &big, "upload from locked memory");
}

/// Workers that cannot start never hang the run: with some of them failed the others take
/// every image (and the report says why the rest did not start); with all of them failed
/// the run returns their error at once, having taken a few images and no more. Failed
/// workers on today's main left the feeder waiting for room in the queue for ever.
#[cfg(feature = "hooks")]
#[test]
fn workers_that_cannot_start_never_hang_the_run() {
    let Some(gpu) = gpu() else { return };
    let _watchdog = cuimg_tests::Watchdog::new(std::time::Duration::from_secs(120), "a pipeline whose workers fail");
    let images: Vec<Image<Rgb8>> = (0..40).map(|i| random::<Rgb8>(64, 48, i)).collect();
    let gray = |s: &cuimg::Stream, a: &cuimg::DeviceImage<Rgb8>, b: &mut cuimg::DeviceImage<Gray8>| {
        s.grayscale(a, b, GrayWeights::Bt601)
    };
    // Four workers (2 threads on each of the pool's GPUs, at least one GPU): three fail.
    let p = Pipeline::new(&gpu).threads(4);
    let mut got = 0;
    let report = p.clone().fail_workers_for_tests(3).run(&images, gray, |_, r| got += r.is_ok() as usize).unwrap();
    assert_eq!((got, report.images), (40, 40));
    assert_eq!(report.worker_errors.len(), 3, "{:?}", report.worker_errors);
    // All fail: an error, at once, and nothing reaches the sink.
    let mut sunk = 0;
    let taken = std::sync::atomic::AtomicUsize::new(0);
    let counted = images.iter().inspect(|_| {
        taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let err = p.fail_workers_for_tests(4).run(counted, gray, |_, _| sunk += 1).unwrap_err();
    assert!(err.to_string().contains("made to fail"), "{err}");
    assert_eq!(sunk, 0);
    assert!(taken.into_inner() < images.len(), "the rest of the input is left unread");
}
