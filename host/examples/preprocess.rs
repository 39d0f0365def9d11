//! An ML input pipeline (issue 29, part 5): a folder of JPEGs -> nvJPEG decode on the GPU ->
//! Pillow's antialiased bilinear resize to 224x224 -> ImageNet's mean and std -> NCHW f16
//! batches of 256 on the device, each handed on through DLPack; images per second from the
//! files. `host/examples/preprocess_torchvision.py` runs the same pipeline in torchvision v2
//! on the same files, for the comparison.
//!
//! `cargo run --release --features dlpack --example preprocess -- DIR [--batch N] [--repeat N] [--two-launches]`
//! (`--two-launches`: resize into a batch of images, then normalize, as before the two were
//! one launch)
//! `cargo run --release --features dlpack --example preprocess -- --make DIR` writes the two
//! sets it is measured on, made from the repository's photos (or the folder `CUIMG_IMAGES`
//! names): `DIR/imagenet` (1024 JPEGs of 500x375, quality 90) and `DIR/12mp` (64 of
//! 4000x3000).

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use cuimg::jpeg::Jpeg;
use cuimg::{DType, DeviceImage, Filter, Image, Normalize, Rgb8, Stream, TensorSpec, par};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut make, mut batch, mut repeat) = (None::<PathBuf>, None::<PathBuf>, 256usize, 1usize);
    let mut fused = true;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--make" => make = Some(args.next().expect("--make DIR").into()),
            "--batch" => batch = args.next().and_then(|n| n.parse().ok()).expect("--batch N"),
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).expect("--repeat N"),
            "--two-launches" => fused = false,
            _ if a.ends_with(".png") => {} // the example runner's output name: not used here
            path => dir = Some(path.into()),
        }
    }
    let gpu = match common::gpu()? {
        Some(g) => g,
        None => return Ok(()),
    };
    let jpeg = Jpeg::new(&gpu)?;
    let s = gpu.stream()?;
    if let Some(out) = make {
        return make_sets(&s, &jpeg, &out);
    }
    let Some(dir) = dir else {
        println!("usage: preprocess DIR [--batch N] [--repeat N] [--two-launches] | --make DIR");
        return Ok(());
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|source| cuimg::Error::Io { path: dir.clone(), source })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jpg" || x == "jpeg"))
        .collect();
    files.sort();
    if files.is_empty() {
        println!("no JPEGs in {}: nothing to do", dir.display());
        return Ok(());
    }
    let files: Vec<PathBuf> = (0..repeat).flat_map(|_| files.iter().cloned()).collect();
    let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET);
    let filter: Filter = "pil-bilinear".parse()?;

    // One warm-up batch (the decoder's state, the kernels' first launches), then the timed run.
    preprocess(&s, &jpeg, &files[..batch.min(files.len())], &spec, filter, fused)?;
    s.synchronize()?;
    let t = Instant::now();
    let mut last = None;
    for chunk in files.chunks(batch) {
        last = Some(preprocess(&s, &jpeg, chunk, &spec, filter, fused)?);
    }
    s.synchronize()?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} JPEGs from {} in batches of {batch}: {:.1} ms, {:.0} images/s (read, decode, resize, normalize{})",
        files.len(),
        dir.display(),
        secs * 1e3,
        files.len() as f64 / secs,
        if fused { "; resize and normalize in one launch" } else { "; resize, then normalize" }
    );
    if let Some(t) = last {
        let shape = t.shape();
        #[cfg(feature = "dlpack")]
        {
            use cuimg::dlpack::TensorView;
            let managed = t.into_dlpack()?;
            println!(
                "the last batch through DLPack: shape {:?}, {} bits an element",
                managed.shape(),
                managed.data_type().bits
            );
        }
        #[cfg(not(feature = "dlpack"))]
        println!("the last batch: {:?} (build with --features dlpack to hand it on through DLPack)", shape.dims());
        let _ = shape;
    }
    Ok(())
}

/// One batch: the files read and decoded, all resized to 224x224 and normalized into the
/// batch's tensor in one launch (`fused`), or resized into a batch of images in one launch
/// and normalized in another.
fn preprocess(
    s: &Stream,
    jpeg: &Jpeg,
    files: &[PathBuf],
    spec: &TensorSpec,
    filter: Filter,
    fused: bool,
) -> cuimg::Result<cuimg::DeviceTensor> {
    let bytes: Vec<Vec<u8>> = files
        .iter()
        .map(|p| std::fs::read(p).map_err(|source| cuimg::Error::Io { path: p.clone(), source }))
        .collect::<cuimg::Result<_>>()?;
    let views: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
    let decoded: Vec<DeviceImage<Rgb8>> =
        jpeg.decode_batch::<Rgb8>(s, &views)?.into_iter().collect::<cuimg::Result<_>>()?;
    let decoded: Vec<_> = decoded.iter().map(DeviceImage::view).collect();
    let mut tensor = s.alloc_tensor(spec.shape_of::<Rgb8>(files.len(), 224, 224))?;
    if fused {
        s.resize_to_tensor(&decoded, 224, 224, filter, spec, &mut tensor, 0)?;
    } else {
        let mut small = s.alloc_batch::<Rgb8>(&vec![(224, 224); files.len()])?;
        s.resize_images(&decoded, &mut small, filter)?;
        s.to_tensor_batch(&small, spec, &mut tensor)?;
    }
    Ok(tensor)
}

/// The two measured sets, from the repository's photos: crops at many offsets and scales,
/// resized on all cores, encoded by nvJPEG at quality 90.
fn make_sets(s: &Stream, jpeg: &Jpeg, out: &Path) -> cuimg::Result<()> {
    let dir = std::env::var_os("CUIMG_IMAGES").map_or_else(common::photos_dir, PathBuf::from);
    let photos: Vec<Image<Rgb8>> = ["chelsea", "coffee"]
        .iter()
        .map(|n| cuimg::io::load_rgb(dir.join(format!("{n}.png"))))
        .collect::<cuimg::Result<_>>()?;
    for (set, count, (w, h)) in [("imagenet", 1024usize, (500u32, 375u32)), ("12mp", 64, (4000, 3000))] {
        let d = out.join(set);
        std::fs::create_dir_all(&d).map_err(|source| cuimg::Error::Io { path: d.clone(), source })?;
        let t = Instant::now();
        for i in 0..count {
            let photo = &photos[i % photos.len()];
            // A crop of 60 to 100% of the photo at an offset of its own, then the size.
            let f = 0.6 + 0.4 * ((i * 37) % 101) as f64 / 100.0;
            let (cw, ch) = ((photo.width() as f64 * f) as u32, (photo.height() as f64 * f) as u32);
            let (x, y) = ((i as u32 * 13) % (photo.width() - cw + 1), (i as u32 * 7) % (photo.height() - ch + 1));
            let crop = photo.view().roi(cuimg::Rect::new(x, y, cw, ch))?;
            let img = par::resize(&crop, w, h, "pil-bicubic".parse()?)?;
            let file = jpeg.encode(s, &s.upload(&img.view())?, 90)?;
            let path = d.join(format!("{set}-{i:04}.jpg"));
            std::fs::write(&path, file).map_err(|source| cuimg::Error::Io { path, source })?;
        }
        println!("{count} JPEGs of {w}x{h} in {} ({:.1} s)", d.display(), t.elapsed().as_secs_f64());
    }
    Ok(())
}
