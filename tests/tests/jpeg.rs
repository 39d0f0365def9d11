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
    let rgb = s.download(&jpeg.decode_as::<cuimg::Rgb8>(&s, &bytes).unwrap()).unwrap();
    assert!(rgb.pixels().iter().all(|p| p.0[0] == p.0[1] && p.0[1] == p.0[2]));
}

#[test]
fn encode_reads_back() {
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    let s = gpu.stream().unwrap();
    for (name, img) in color_photos() {
        let dev = s.upload(&img.view()).unwrap();
        let bytes = jpeg.encode(&s, &dev, 90).unwrap();
        assert!(cuimg::io::jpeg_is_complete(&bytes), "{name}");
        let back = cuimg::io::decode_rgb(&bytes, std::path::Path::new("x.jpg")).unwrap();
        let db = psnr(back.as_bytes(), img.as_bytes());
        assert!(db > 30.0, "{name}: {db:.1} dB at quality 90");
        let gray = cuimg::cpu::grayscale(&img.view(), cuimg::GrayWeights::Bt601).unwrap();
        let bytes = jpeg.encode(&s, &s.upload(&gray.view()).unwrap(), 90).unwrap();
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
    let results = jpeg.decode_batch::<cuimg::Rgb8>(&s, &views).unwrap();
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
    let ok = jpeg.decode_as::<cuimg::Rgb8>(&s, &files[0]).unwrap();
    assert_eq!(ok.dimensions(), (200, 150));
}

/// The files of tests/data/jpeg, embedded (the GPU bundle runs this binary elsewhere).
fn data(name: &str) -> Vec<u8> {
    match name {
        "source.png" => include_bytes!("../data/jpeg/source.png").to_vec(),
        "progressive.jpg" => include_bytes!("../data/jpeg/progressive.jpg").to_vec(),
        "restart.jpg" => include_bytes!("../data/jpeg/restart.jpg").to_vec(),
        "cmyk.jpg" => include_bytes!("../data/jpeg/cmyk.jpg").to_vec(),
        "truncated.png" => include_bytes!("../data/jpeg/truncated.png").to_vec(),
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
        match jpeg.decode_as::<cuimg::Rgb8>(&s, bytes) {
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
    assert_eq!(jpeg.decode_as::<cuimg::Rgb8>(&s, &ok).unwrap().dimensions(), (97, 61));
}

/// An EXIF `APP1` segment asking for `orientation` (1 to 8), put after a JPEG's SOI marker:
/// a little-endian TIFF header and one IFD entry (tag 0x0112, one SHORT).
fn with_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0".to_vec();
    exif.extend(1u16.to_le_bytes());
    for field in [0x0112u16, 3] {
        exif.extend(field.to_le_bytes());
    }
    exif.extend(1u32.to_le_bytes());
    exif.extend(orientation.to_le_bytes());
    exif.extend([0, 0, 0, 0, 0, 0]); // the value's padding, then no next IFD
    let mut out = jpeg[..2].to_vec();
    out.extend([0xFF, 0xE1]);
    out.extend(((exif.len() + 2) as u16).to_be_bytes());
    out.extend(exif);
    out.extend(&jpeg[2..]);
    out
}

/// Max difference and PSNR of two gray images of one size.
fn apart(a: &Image<Gray8>, b: &Image<Gray8>) -> (u8, f64) {
    assert_eq!(a.dimensions(), b.dimensions());
    let max = a.as_bytes().iter().zip(b.as_bytes()).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
    (max, psnr(a.as_bytes(), b.as_bytes()))
}

/// The CPU's luma decode (`io::decode_luma`, the `gray` tool's CPU decoder): against RGB
/// decoded and converted, within rounding on photos (the bound `Jpeg::decode_as::<Gray8>` has);
/// upright per EXIF, as `decode_rgb`; PNG, CMYK and cut files as `decode_rgb` takes them.
#[test]
fn luma_decode_on_the_cpu() {
    let name = std::path::Path::new("x.jpg");
    let gray_of = |bytes: &[u8]| {
        let rgb = cuimg::io::decode_rgb(bytes, name).unwrap();
        cuimg::cpu::grayscale(&rgb.view(), cuimg::GrayWeights::Bt601).unwrap()
    };
    let mut worst = (0u8, f64::INFINITY);
    for (label, img) in color_photos() {
        for (w, h) in [(img.width(), img.height()), (1, 1), (17, 3), (97, 61)] {
            let part = Image::<Rgb8>::from_fn(w, h, |x, y| img.get(x, y));
            let bytes = cuimg::io::encode(&part, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
            let luma = cuimg::io::decode_luma(&bytes, name).unwrap();
            let (max, db) = apart(&luma, &gray_of(&bytes));
            assert!(max <= 8 && db >= 45.0, "{label} {w}x{h}: {max} levels, {db:.1} dB");
            worst = (worst.0.max(max), worst.1.min(db));
        }
    }
    println!("CPU luma against RGB then gray, photos: at most {} levels, worst {:.1} dB", worst.0, worst.1);
    let noise = random::<Rgb8>(333, 257, 5);
    let bytes = cuimg::io::encode(&noise, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
    let (_, db) = apart(&cuimg::io::decode_luma(&bytes, name).unwrap(), &gray_of(&bytes));
    assert!(db >= DECODERS_AGREE_DB, "noise: {db:.1} dB");

    // EXIF orientation 6 (turned 90 degrees clockwise), 3 (180) and 1 (as stored).
    let (photo_label, photo) = &color_photos()[1];
    let plain = cuimg::io::encode(photo, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
    assert_eq!(cuimg::io::jpeg_orientation(&plain), None);
    let (w, h) = photo.dimensions();
    for (o, dims) in [(6, (h, w)), (3, (w, h)), (1, (w, h))] {
        let turned = with_orientation(&plain, o);
        assert_eq!(cuimg::io::jpeg_orientation(&turned).is_some(), o != 1, "{photo_label}: orientation {o}");
        let luma = cuimg::io::decode_luma(&turned, name).unwrap();
        assert_eq!(luma.dimensions(), dims, "orientation {o}");
        let (max, db) = apart(&luma, &gray_of(&turned));
        assert!(max <= 8 && db >= 45.0, "orientation {o}: {max} levels, {db:.1} dB");
    }
    let turned = cuimg::io::decode_luma(&with_orientation(&plain, 3), name).unwrap();
    let stored = cuimg::io::decode_luma(&plain, name).unwrap();
    assert_eq!(turned.get(0, 0), stored.get(w - 1, h - 1), "180 degrees");

    // Not a YCbCr JPEG: exactly RGB then gray. Cut: refused.
    for file in ["cmyk.jpg", "source.png"] {
        let bytes = data(file);
        assert_eq!(cuimg::io::decode_luma(&bytes, name).unwrap(), gray_of(&bytes), "{file}");
    }
    let err = cuimg::io::decode_luma(&plain[..plain.len() / 2], name).unwrap_err();
    assert!(matches!(err, Error::Decode { .. }) && err.to_string().contains("x.jpg"), "{err}");
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
    for (bytes, r) in files.iter().zip(jpeg.decode_batch::<cuimg::Rgb8>(&s, &views).unwrap()) {
        let cpu = cuimg::io::decode_rgb(bytes, std::path::Path::new("x.jpg")).unwrap();
        assert!(psnr(s.download(&r.unwrap()).unwrap().as_bytes(), cpu.as_bytes()) >= DECODERS_AGREE_DB);
    }
    // Uncommon files in a batch, on both backends: each its own result, no crash (the
    // default backend's batched call once took the process down on them).
    let odd: Vec<Vec<u8>> = ["progressive.jpg", "cmyk.jpg", "restart.jpg"].iter().map(|n| data(n)).collect();
    let mixed: Vec<&[u8]> = odd.iter().chain(&files).map(Vec::as_slice).collect();
    // And a codec on the hardware decoder's handle that does not use it (the `cuimg` tool's
    // decoders on the SMs and encoders).
    let sibling = Jpeg::new(&gpu).unwrap().another_without_hardware().unwrap();
    assert!(!sibling.hardware());
    for codec in [jpeg, sibling, Jpeg::new(&gpu).unwrap()] {
        let results = codec.decode_batch::<cuimg::Rgb8>(&s, &mixed).unwrap();
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

/// The hardware decoder's state, made before the first batch or by it, is sized again when a
/// batch brings more or larger images; the stream's page-locked staging buffer, which the
/// encoder reads bitstreams into, grows when a bitstream outgrows it. Every output against
/// the CPU, and each bitstream byte for byte against a fresh codec's.
#[test]
fn codec_buffers_grow_with_their_inputs() {
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    jpeg.prepare_hardware_decoder().unwrap();
    jpeg.prepare_hardware_decoder().unwrap(); // once made, nothing more to do
    Jpeg::without_hardware(&gpu).unwrap().prepare_hardware_decoder().unwrap(); // no hardware: nothing
    let s = gpu.stream().unwrap();
    let photo = &color_photos()[0].1;
    for (n, (w, h)) in [(3, (64, 48)), (5, (1501, 1001)), (2, (333, 257))] {
        let files: Vec<Vec<u8>> = (0..n)
            .map(|k| {
                let img = scaled(photo, w + k, h);
                cuimg::io::encode(&img, cuimg::io::Format::Jpeg { quality: 90 }).unwrap()
            })
            .collect();
        let views: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
        let results = jpeg.decode_batch::<cuimg::Gray8>(&s, &views).unwrap();
        assert_eq!(results.len(), n as usize);
        for (bytes, r) in files.iter().zip(results) {
            let got = s.download(&r.unwrap()).unwrap();
            let cpu = cuimg::io::decode_luma(bytes, std::path::Path::new("x.jpg")).unwrap();
            assert_eq!(got.dimensions(), cpu.dimensions());
            let (most, db) = apart(&got, &cpu);
            assert!(db >= DECODERS_AGREE_DB, "{w}x{h}: {db:.1} dB, {most} levels apart");
        }
    }
    // Small bitstream first, then noise at quality 100 (megabytes): the second outgrows the
    // buffer the first made.
    let small = s.upload(&random::<Gray8>(16, 16, 1).view()).unwrap();
    let noise = s.upload(&random::<Gray8>(1201, 901, 2).view()).unwrap();
    let first = jpeg.encode(&s, &small, 90).unwrap();
    let big = jpeg.encode(&s, &noise, 100).unwrap();
    assert!(big.len() > 4 * first.len().next_power_of_two(), "{} bytes", big.len());
    let fresh = Jpeg::new(&gpu).unwrap();
    assert_eq!(big, fresh.encode(&s, &noise, 100).unwrap(), "the grown buffer's bitstream");
    assert_eq!(first, fresh.encode(&s, &small, 90).unwrap());
    let back = cuimg::io::decode_luma(&big, std::path::Path::new("x.jpg")).unwrap();
    assert_eq!(back.dimensions(), (1201, 901));
}

/// `photo` resized to `w` x `h` (bilinear): large or odd-sized test images with a photo's
/// content.
fn scaled(photo: &Image<Rgb8>, w: u32, h: u32) -> Image<Rgb8> {
    let buf = image::RgbImage::from_raw(photo.width(), photo.height(), photo.as_bytes().to_vec()).unwrap();
    let up = image::imageops::resize(&buf, w, h, image::imageops::FilterType::Triangle);
    Image::<Rgb8>::from_bytes(w, h, up.as_raw()).unwrap()
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
    let big = |w, h| scaled(photo, w, h);
    let mut files = Vec::new();
    for (w, h) in [(1024, 1024), (1601, 1203), (2999, 1001)] {
        files.push(cuimg::io::encode(&big(w, h), cuimg::io::Format::Jpeg { quality: 90 }).unwrap());
    }
    let gray = cuimg::cpu::grayscale(&big(1283, 977).view(), cuimg::GrayWeights::Bt601).unwrap();
    files.push(cuimg::io::encode(&gray, cuimg::io::Format::Jpeg { quality: 85 }).unwrap());
    let views: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
    let one_by_one: Vec<_> = views.iter().map(|b| jpeg.decode_as::<cuimg::Rgb8>(&s, b).unwrap()).collect();
    let batched = jpeg.decode_batch::<cuimg::Rgb8>(&s, &views).unwrap();
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
    assert!(matches!(jpeg.decode_as::<cuimg::Rgb8>(&s, cut), Err(Error::Nvjpeg { .. })));
}

/// Gray decoding (`decode_as::<Gray8>`, `decode_batch::<Gray8>`) gives a file's luma plane, on both
/// backends, one call and batches, the SM decoder's sizes included: it agrees with the
/// `image` crate's decode converted with the same weights, and differs from nvJPEG's own RGB
/// decode converted by the grayscale kernel by rounding and clamping only. CMYK goes through
/// RGB (exactly that conversion), a gray file is its own plane, a cut file is refused.
#[test]
fn gray_decode_is_the_luma_plane() {
    let Some(gpu) = gpu() else { return };
    let Some(hardware) = jpeg_or_skip(&gpu) else { return };
    let on_sms = Jpeg::without_hardware(&gpu).unwrap();
    let s = gpu.stream().unwrap();
    let photo = &color_photos()[0].1;
    let mut cases: Vec<(String, Image<Rgb8>, bool)> =
        color_photos().into_iter().map(|(n, i)| (n.to_string(), i, true)).collect();
    for (w, h) in [(1, 1), (17, 3), (1601, 1203)] {
        cases.push((format!("photo {w}x{h}"), scaled(photo, w, h), true));
    }
    for (w, h) in [(1, 1), (333, 257)] {
        cases.push((format!("random {w}x{h}"), random::<Rgb8>(w, h, u64::from(w) + 7), false));
    }
    let bt601 = cuimg::GrayWeights::Bt601;
    let (mut worst_cpu, mut worst_kernel, mut most) = (f64::INFINITY, f64::INFINITY, 0u8);
    for (name, img, photo_like) in &cases {
        let bytes = cuimg::io::encode(img, cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
        let cpu = cuimg::io::decode_rgb(&bytes, std::path::Path::new("x.jpg")).unwrap();
        let cpu_gray = cuimg::cpu::grayscale(&cpu.view(), bt601).unwrap();
        for codec in [&hardware, &on_sms] {
            let single = s.download(&codec.decode_as::<cuimg::Gray8>(&s, &bytes).unwrap()).unwrap();
            let batch = codec.decode_batch::<cuimg::Gray8>(&s, &[&bytes, &bytes]).unwrap();
            for r in batch {
                let got = s.download(&r.unwrap()).unwrap();
                assert_eq!(got, single, "{name} ({codec:?}): batched and single gray decodes differ");
            }
            assert_eq!(single.dimensions(), img.dimensions(), "{name}");
            let db = psnr(single.as_bytes(), cpu_gray.as_bytes());
            assert!(db >= DECODERS_AGREE_DB, "{name} ({codec:?}): {db:.1} dB against the image crate");
            worst_cpu = worst_cpu.min(db);
            // nvJPEG's RGB decode of the same file, through the grayscale kernel.
            let rgb = codec.decode_as::<cuimg::Rgb8>(&s, &bytes).unwrap();
            let mut via_rgb = s.alloc::<Gray8>(rgb.width(), rgb.height()).unwrap();
            s.grayscale(&rgb, &mut via_rgb, bt601).unwrap();
            let via_rgb = s.download(&via_rgb).unwrap();
            let db = psnr(single.as_bytes(), via_rgb.as_bytes());
            let max = single.as_bytes().iter().zip(via_rgb.as_bytes()).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
            println!("{name} ({codec:?}): luma against RGB then gray: {db:.1} dB, at most {max} levels apart");
            if *photo_like {
                // Photos: rounding of the color conversion and of the weights only.
                assert!(db >= 45.0 && max <= 8, "{name} ({codec:?}): {db:.1} dB, {max} levels");
                worst_kernel = worst_kernel.min(db);
                most = most.max(max);
            } else {
                // Noise clamps R, G or B at 0 or 255 wherever chroma is extreme.
                assert!(db >= DECODERS_AGREE_DB, "{name} ({codec:?}): {db:.1} dB");
            }
        }
    }
    println!(
        "gray decode: worst {worst_cpu:.1} dB against the image crate; photos against RGB then the kernel: worst {worst_kernel:.1} dB, at most {most} levels"
    );
    // CMYK goes through RGB and the kernel; a gray file decodes to its own plane.
    let cmyk = data("cmyk.jpg");
    let gray_file = cuimg::io::encode(&random::<Gray8>(129, 65, 3), cuimg::io::Format::Jpeg { quality: 95 }).unwrap();
    for codec in [&hardware, &on_sms] {
        if let Ok(rgb) = codec.decode_as::<cuimg::Rgb8>(&s, &cmyk) {
            let mut want = s.alloc::<Gray8>(rgb.width(), rgb.height()).unwrap();
            s.grayscale(&rgb, &mut want, bt601).unwrap();
            let got = codec.decode_batch::<cuimg::Gray8>(&s, &[&cmyk]).unwrap().pop().unwrap().unwrap();
            assert_eq!(s.download(&got).unwrap(), s.download(&want).unwrap(), "CMYK ({codec:?})");
        }
        let DecodedJpeg::Gray(plane) = codec.decode(&s, &gray_file).unwrap() else { panic!("gray file in color") };
        assert_eq!(
            s.download(&codec.decode_as::<cuimg::Gray8>(&s, &gray_file).unwrap()).unwrap(),
            s.download(&plane).unwrap()
        );
        let cut = &gray_file[..gray_file.len() / 2];
        assert!(matches!(codec.decode_as::<cuimg::Gray8>(&s, cut), Err(Error::Nvjpeg { .. })));
        assert!(matches!(
            codec.decode_batch::<cuimg::Gray8>(&s, &[cut]).unwrap().pop().unwrap(),
            Err(Error::Nvjpeg { .. })
        ));
    }
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
                        for r in jpeg.decode_batch::<cuimg::Rgb8>(&s, &views).unwrap() {
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

/// A small valid JPEG with its frame header patched to claim `w` x `h`.
fn bomb(w: u16, h: u16) -> Vec<u8> {
    let mut jpg = cuimg::io::encode(&random::<Rgb8>(256, 256, 9), cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
    let sof = (2..jpg.len() - 1).find(|&i| jpg[i] == 0xFF && jpg[i + 1] == 0xC0).unwrap();
    jpg[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
    jpg[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
    jpg
}

/// A JPEG bomb (a file of kilobytes claiming 40000 x 40000) is refused from its header
/// before nvJPEG is called, alone and in a batch (the others decode); the limits are the
/// codec's, set as a value and taken over by the codecs made from it.
#[test]
fn bombs_never_reach_nvjpeg() {
    let Some(gpu) = gpu() else { return };
    let Some(jpeg) = jpeg_or_skip(&gpu) else { return };
    let s = gpu.stream().unwrap();
    let big = bomb(40000, 40000);
    assert!(matches!(jpeg.decode_as::<cuimg::Rgb8>(&s, &big), Err(Error::Limit { .. })));
    assert!(matches!(jpeg.decode_as::<cuimg::Gray8>(&s, &big), Err(Error::Limit { .. })));
    assert!(matches!(jpeg.decode(&s, &big), Err(Error::Limit { .. })));
    let fine = cuimg::io::encode(&random::<Rgb8>(64, 48, 1), cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
    let results = jpeg.decode_batch::<cuimg::Rgb8>(&s, &[&fine, &big, &fine]).unwrap();
    assert!(results[0].is_ok() && results[2].is_ok());
    assert!(matches!(results[1], Err(Error::Limit { .. })), "{:?}", results[1].as_ref().err());
    // Limits as a value: 64x48 RGB is 9216 bytes.
    let codec = jpeg.another().unwrap();
    codec.set_limits(cuimg::Limits::default().with_max_image_bytes(9215));
    assert!(matches!(codec.decode_as::<cuimg::Rgb8>(&s, &fine), Err(Error::Limit { .. })));
    assert!(
        codec.another().unwrap().decode_as::<cuimg::Rgb8>(&s, &fine).is_err(),
        "a codec made from it takes its limits"
    );
    assert!(jpeg.decode_as::<cuimg::Rgb8>(&s, &fine).is_ok(), "the first codec's are its own");
}
