//! nvJPEG: decode against the `image` crate's decoder (the two IDCTs and chroma upsamplers
//! round differently, so the bound is a PSNR, stated below), encode read back by the `image`
//! crate, batches with bad files among good ones, and typed errors.

use cuimg::jpeg::{DecodedJpeg, Jpeg};
use cuimg::{Error, Gray8, Image, Rgb8};
use cuimg_tests::{color_photos, gpu, random};

/// PSNR of two images of the same size, in dB.
fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mse = a.iter().zip(b).map(|(&x, &y)| (x as f64 - y as f64).powi(2)).sum::<f64>() / a.len() as f64;
    if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() }
}

/// The lowest PSNR accepted between nvJPEG's and the `image` crate's decode of one file.
const DECODERS_AGREE_DB: f64 = 30.0;

fn jpeg_or_skip(gpu: &cuimg::Gpu) -> Option<std::sync::Arc<Jpeg>> {
    match Jpeg::new(gpu) {
        Ok(j) => Some(j),
        Err(Error::NoNvjpeg(why)) if std::env::var("CUIMG_REQUIRE_NVJPEG").as_deref() != Ok("1") => {
            eprintln!("SKIP: {why}");
            None
        }
        Err(e) => panic!("nvJPEG is there but could not be used: {e}"),
    }
}

#[test]
fn missing_library_is_a_typed_error() {
    // Where the library is missing (CI), the error names it and where cuimg looked.
    if std::env::var_os("CUIMG_NVJPEG").is_none() && cuimg::jpeg::load().is_err() {
        let err = cuimg::jpeg::load().unwrap_err();
        assert!(matches!(err, Error::NoNvjpeg(_)));
        assert!(err.to_string().contains("libnvjpeg"), "{err}");
    }
}

#[test]
fn decode_agrees_with_the_image_crate() {
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    println!("{jpeg:?}");
    let s = gpu.stream().unwrap();
    let mut cases: Vec<(String, Image<Rgb8>)> = color_photos().into_iter().map(|(n, i)| (n.to_string(), i)).collect();
    for (w, h) in [(1, 1), (17, 3), (333, 257), (1023, 769)] {
        cases.push((format!("random {w}x{h}"), random::<Rgb8>(w, h, w as u64)));
    }
    let mut worst = f64::INFINITY;
    for (name, img) in &cases {
        for quality in [75, 90, 100] {
            let bytes = cuimg::io::encode(img, cuimg::io::Format::Jpeg { quality }).unwrap();
            let cpu = cuimg::io::decode_rgb(&bytes, std::path::Path::new("x.jpg")).unwrap();
            let DecodedJpeg::Rgb(dev) = jpeg.decode(&s, &bytes).unwrap() else {
                panic!("{name}: a color JPEG came back gray")
            };
            let gpu_img = s.download(&dev).unwrap();
            assert_eq!(gpu_img.dimensions(), img.dimensions(), "{name}");
            let db = psnr(gpu_img.as_bytes(), cpu.as_bytes());
            worst = worst.min(db);
            assert!(db >= DECODERS_AGREE_DB, "{name} q{quality}: nvJPEG and the image crate differ: {db:.1} dB");
        }
    }
    println!("nvJPEG vs image crate decode: worst PSNR {worst:.1} dB over {} files", cases.len() * 3);
}

#[test]
fn gray_jpegs_decode_to_gray() {
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    let s = gpu.stream().unwrap();
    let img = random::<Gray8>(129, 65, 3);
    let bytes = cuimg::io::encode(&img, cuimg::io::Format::Jpeg { quality: 95 }).unwrap();
    let DecodedJpeg::Gray(dev) = jpeg.decode(&s, &bytes).unwrap() else { panic!("a gray JPEG came back in color") };
    let cpu = image::load_from_memory(&bytes).unwrap().into_luma8();
    let db = psnr(s.download(&dev).unwrap().as_bytes(), cpu.as_raw());
    assert!(db >= DECODERS_AGREE_DB, "{db:.1} dB");
    // And as RGB on request: every channel the gray value.
    let rgb = s.download(&jpeg.decode_rgb(&s, &bytes).unwrap()).unwrap();
    assert!(rgb.pixels().iter().all(|p| p.0[0] == p.0[1] && p.0[1] == p.0[2]));
}

#[test]
fn encode_reads_back() {
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    let s = gpu.stream().unwrap();
    for (name, img) in color_photos() {
        let dev = s.upload(&img.view()).unwrap();
        let bytes = jpeg.encode_rgb(&s, &dev, 90).unwrap();
        assert!(cuimg::io::jpeg_is_complete(&bytes), "{name}");
        let back = cuimg::io::decode_rgb(&bytes, std::path::Path::new("x.jpg")).unwrap();
        let db = psnr(back.as_bytes(), img.as_bytes());
        assert!(db > 30.0, "{name}: {db:.1} dB at quality 90");
        let gray = cuimg::cpu::grayscale(&img.view(), cuimg::GrayWeights::Bt601).unwrap();
        let bytes = jpeg.encode_gray(&s, &s.upload(&gray.view()).unwrap(), 90).unwrap();
        let back = image::load_from_memory(&bytes).unwrap();
        assert_eq!(back.color(), image::ColorType::L8, "{name}: a gray JPEG");
        assert!(psnr(back.into_luma8().as_raw(), gray.as_bytes()) > 30.0);
    }
}

#[test]
fn batches_report_each_bad_file_alone() {
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    let s = gpu.stream().unwrap();
    let imgs: Vec<Image<Rgb8>> = (0..6).map(|i| random::<Rgb8>(200 + i * 7, 150, i as u64)).collect();
    let mut files: Vec<Vec<u8>> =
        imgs.iter().map(|i| cuimg::io::encode(i, cuimg::io::Format::Jpeg { quality: 90 }).unwrap()).collect();
    let cut = files[2].len() / 2;
    files[2].truncate(cut); // truncated
    files[4] = b"\xFF\xD8\xFF\xE0 not a jpeg at all".to_vec(); // corrupt
    let views: Vec<&[u8]> = files.iter().map(|f| f.as_slice()).collect();
    let results = jpeg.decode_batch_rgb(&s, &views).unwrap();
    assert_eq!(results.len(), 6);
    for (i, r) in results.iter().enumerate() {
        match (i, r) {
            (2 | 4, Err(e)) => assert!(matches!(e, Error::Nvjpeg { .. }), "file {i}: {e}"),
            (2 | 4, Ok(_)) => panic!("file {i} is bad but decoded"),
            (_, Ok(dev)) => {
                let cpu = cuimg::io::decode_rgb(&files[i], std::path::Path::new("x.jpg")).unwrap();
                assert!(psnr(s.download(dev).unwrap().as_bytes(), cpu.as_bytes()) >= DECODERS_AGREE_DB, "file {i}");
            }
            (_, Err(e)) => panic!("file {i}: {e}"),
        }
    }
    // The stream and the codec still work.
    let ok = jpeg.decode_rgb(&s, &files[0]).unwrap();
    assert_eq!(ok.dimensions(), (200, 150));
}

/// The files of tests/data/jpeg, embedded (the GPU bundle runs this binary elsewhere).
fn data(name: &str) -> Vec<u8> {
    match name {
        "source.png" => include_bytes!("data/jpeg/source.png").to_vec(),
        "progressive.jpg" => include_bytes!("data/jpeg/progressive.jpg").to_vec(),
        "restart.jpg" => include_bytes!("data/jpeg/restart.jpg").to_vec(),
        "cmyk.jpg" => include_bytes!("data/jpeg/cmyk.jpg").to_vec(),
        "truncated.png" => include_bytes!("data/jpeg/truncated.png").to_vec(),
        _ => panic!("no test file {name}"),
    }
}

/// JPEGs the `image` crate cannot write (tests/data/jpeg/README.md): the CPU decoder reads
/// them all; nvJPEG reads each or refuses it with a typed error (the tool then decodes it on
/// the CPU), and what it reads agrees with the CPU.
#[test]
fn progressive_cmyk_and_restart_jpegs() {
    let source = cuimg::io::decode_rgb(&data("source.png"), std::path::Path::new("source.png")).unwrap();
    let mut cpu_results = Vec::new();
    for name in ["progressive.jpg", "restart.jpg", "cmyk.jpg"] {
        let bytes = data(name);
        assert!(cuimg::io::jpeg_is_complete(&bytes), "{name}");
        let cpu = cuimg::io::decode_rgb(&bytes, std::path::Path::new(name)).unwrap();
        assert_eq!(cpu.dimensions(), (97, 61), "{name}");
        if name != "cmyk.jpg" {
            // (CMYK goes through a color conversion PIL and the decoder need not share.)
            let db = psnr(cpu.as_bytes(), source.as_bytes());
            assert!(db > 28.0, "{name}: {db:.1} dB against the source");
        }
        cpu_results.push((name, bytes, cpu));
    }
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    let s = gpu.stream().unwrap();
    for (name, bytes, cpu) in &cpu_results {
        match jpeg.decode_rgb(&s, bytes) {
            Ok(dev) => {
                let db = psnr(s.download(&dev).unwrap().as_bytes(), cpu.as_bytes());
                println!("{name}: nvJPEG decodes it, {db:.1} dB against the CPU decode");
                if *name != "cmyk.jpg" {
                    assert!(db >= DECODERS_AGREE_DB, "{name}: {db:.1} dB");
                }
            }
            Err(e) => {
                println!("{name}: nvJPEG refuses it: {e}");
                assert!(matches!(e, Error::Nvjpeg { .. }), "{name}: {e}");
            }
        }
    }
    // The codec still works after a refusal.
    let ok = cuimg::io::encode(&source, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
    assert_eq!(jpeg.decode_rgb(&s, &ok).unwrap().dimensions(), (97, 61));
}

/// A PNG cut short is refused by the decoder (no garbage image).
#[test]
fn truncated_png_is_refused() {
    let err = cuimg::io::decode_rgb(&data("truncated.png"), std::path::Path::new("truncated.png")).unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err}");
}

/// The default (SM) backend, the second decoder beside the hardware one, agrees too.
#[test]
fn the_default_backend_decodes_too() {
    let Some(gpu) = gpu() else { return };
    let Some(_) = jpeg_or_skip(&gpu) else { return };
    let jpeg = Jpeg::without_hardware(&gpu).unwrap();
    assert!(!jpeg.hardware());
    let s = gpu.stream().unwrap();
    let files: Vec<Vec<u8>> = color_photos()
        .iter()
        .map(|(_, img)| cuimg::io::encode(img, cuimg::io::Format::Jpeg { quality: 90 }).unwrap())
        .collect();
    let views: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
    for (bytes, r) in files.iter().zip(jpeg.decode_batch_rgb(&s, &views).unwrap()) {
        let cpu = cuimg::io::decode_rgb(bytes, std::path::Path::new("x.jpg")).unwrap();
        assert!(psnr(s.download(&r.unwrap()).unwrap().as_bytes(), cpu.as_bytes()) >= DECODERS_AGREE_DB);
    }
    // Uncommon files in a batch, on both backends: each its own result, no crash (the
    // default backend's batched call once took the process down on them).
    let odd: Vec<Vec<u8>> = ["progressive.jpg", "cmyk.jpg", "restart.jpg"].iter().map(|n| data(n)).collect();
    let mixed: Vec<&[u8]> = odd.iter().chain(&files).map(Vec::as_slice).collect();
    for codec in [jpeg, Jpeg::new(&gpu).unwrap()] {
        let results = codec.decode_batch_rgb(&s, &mixed).unwrap();
        assert_eq!(results.len(), mixed.len());
        for (i, (bytes, r)) in mixed.iter().zip(results).enumerate() {
            match r {
                // Each image its own file's: the batch pairs outputs with files even when
                // some of them went one at a time.
                Ok(img) => {
                    let cpu = cuimg::io::decode_rgb(bytes, std::path::Path::new("x.jpg")).unwrap();
                    let got = s.download(&img).unwrap();
                    assert_eq!(got.dimensions(), cpu.dimensions(), "file {i} ({codec:?})");
                    let db = psnr(got.as_bytes(), cpu.as_bytes());
                    assert!(db >= DECODERS_AGREE_DB, "file {i} ({codec:?}): {db:.1} dB");
                }
                Err(e) => assert!(matches!(e, Error::Nvjpeg { .. }), "{e}"),
            }
        }
    }
}

/// Images of a megapixel or more decode on the SMs in a codec without the hardware decoder
/// (nvJPEG's decoupled GPU decoder): color and gray, odd sizes, one call and batches.
#[test]
fn large_images_decode_on_the_sms() {
    let Some(gpu) = gpu() else { return };
    let Some(_) = jpeg_or_skip(&gpu) else { return };
    let jpeg = Jpeg::without_hardware(&gpu).unwrap();
    let s = gpu.stream().unwrap();
    let photo = &color_photos()[0].1;
    let big = |w: u32, h: u32| {
        let buf = image::RgbImage::from_raw(photo.width(), photo.height(), photo.as_bytes().to_vec()).unwrap();
        let up = image::imageops::resize(&buf, w, h, image::imageops::FilterType::Triangle);
        Image::<Rgb8>::from_bytes(w, h, up.as_raw()).unwrap()
    };
    let mut files = Vec::new();
    for (w, h) in [(1024, 1024), (1601, 1203), (2999, 1001)] {
        files.push(cuimg::io::encode(&big(w, h), cuimg::io::Format::Jpeg { quality: 90 }).unwrap());
    }
    let gray = cuimg::cpu::grayscale(&big(1283, 977).view(), cuimg::GrayWeights::Bt601).unwrap();
    files.push(cuimg::io::encode(&gray, cuimg::io::Format::Jpeg { quality: 85 }).unwrap());
    let views: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
    let one_by_one: Vec<_> = views.iter().map(|b| jpeg.decode_rgb(&s, b).unwrap()).collect();
    let batched = jpeg.decode_batch_rgb(&s, &views).unwrap();
    for (i, ((bytes, a), b)) in views.iter().zip(one_by_one).zip(batched).enumerate() {
        let cpu = cuimg::io::decode_rgb(bytes, std::path::Path::new("x.jpg")).unwrap();
        for dev in [a, b.unwrap()] {
            let got = s.download(&dev).unwrap();
            assert_eq!(got.dimensions(), cpu.dimensions(), "file {i}");
            let db = psnr(got.as_bytes(), cpu.as_bytes());
            assert!(db >= DECODERS_AGREE_DB, "file {i}: {db:.1} dB");
        }
    }
    // A truncated large file is refused on this path too.
    let cut = &files[1][..files[1].len() * 2 / 3];
    assert!(matches!(jpeg.decode_rgb(&s, cut), Err(Error::Nvjpeg { .. })));
}

/// Four hardware codecs on four threads, batch sizes changing (so decoder states are made
/// while other threads decode): this hung the process before decoder states were made
/// under a lock (see `STATES` in host/src/jpeg.rs). A watchdog fails the test instead of
/// hanging CI.
#[test]
fn codecs_made_while_others_decode_do_not_hang() {
    let Some(gpu) = gpu() else { return };
    let Some(_) = jpeg_or_skip(&gpu) else { return };
    let progress = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    let photo = &color_photos()[1].1;
    let buf = image::RgbImage::from_raw(photo.width(), photo.height(), photo.as_bytes().to_vec()).unwrap();
    let files: Vec<Vec<u8>> = (0..8)
        .map(|i| {
            let up = image::imageops::resize(&buf, 1920 + i, 1080, image::imageops::FilterType::Nearest);
            let img = Image::<Rgb8>::from_bytes(1920 + i, 1080, up.as_raw()).unwrap();
            cuimg::io::encode(&img, cuimg::io::Format::Jpeg { quality: 90 }).unwrap()
        })
        .collect();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let (mut last, mut still) = (usize::MAX, 0);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let now = progress.load(std::sync::atomic::Ordering::Relaxed);
                still = if now == last { still + 1 } else { 0 };
                last = now;
                if still >= 120 {
                    eprintln!("no decode finished for 60 s: nvJPEG is hung");
                    std::process::abort();
                }
            }
        });
        let workers: Vec<_> = (0..4)
            .map(|t| {
                let (gpu, files, progress) = (&gpu, &files, &progress);
                scope.spawn(move || {
                    let s = gpu.stream().unwrap();
                    for round in 0..12 {
                        // A codec made mid-run, then batch sizes that change every round.
                        let jpeg = Jpeg::new(gpu).unwrap();
                        let n = 1 + (t + round) % files.len();
                        let views: Vec<&[u8]> = files[..n].iter().map(Vec::as_slice).collect();
                        for r in jpeg.decode_batch_rgb(&s, &views).unwrap() {
                            assert_eq!(r.unwrap().height(), 1080);
                        }
                        progress.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}
