//! The cross-cutting tests, over the operation registry (`cuimg::registry::OPERATIONS`):
//! every operation, with its default parameters and each sample value, on every format it
//! takes, on random, peaky and constant images of the edge-case sizes, through every form:
//! all cores against the serial reference (here and in CI), strided host views, then the
//! GPU's blocking call, a ragged batch, and the stream launch from a source region into a
//! destination region with every byte around it kept (with a GPU). Bad parameters, formats an operation does not
//! take, empty images and mismatched targets are typed errors, and launch nothing.
//!
//! A new operation is tested here once it is listed in `OPERATIONS`; a folder under
//! `host/src/ops/` without its `op.rs`, or an image-to-image operation without its tool
//! form, fails a test that names it. Under the sanitizers (`CUIMG_SANITIZE=1`) the sizes
//! are the small ones.

use cuimg::registry::{
    AnyDeviceImage, AnyImage, AnyView, Args, Bound, DeviceOutput, OPERATIONS, Operation, Output, PixelFormat, Target,
};
use cuimg::{Error, Rect, Stream};
use cuimg_tests::{sanitizing, splitmix_bytes};

/// The sizes: single pixels, rows and columns, primes, around the 16-byte vector width.
fn sizes() -> &'static [(u32, u32)] {
    const SMALL: &[(u32, u32)] = &[(1, 1), (1, 17), (17, 1), (16, 1), (7, 3), (31, 29)];
    const ALL: &[(u32, u32)] = &[(1, 1), (1, 17), (17, 1), (16, 1), (7, 3), (31, 29), (127, 131), (333, 257)];
    if sanitizing() { SMALL } else { ALL }
}

/// A random, a peaky (a few values, as photos have) and a constant image.
fn images(format: PixelFormat, w: u32, h: u32, seed: u64) -> Vec<(&'static str, AnyImage)> {
    let n = (w * h) as usize * format.channels();
    let random = splitmix_bytes(seed, n);
    let peaky: Vec<u8> = random.iter().map(|b| b % 7 + 120).collect();
    [("random", random), ("peaky", peaky), ("constant", vec![77; n])]
        .into_iter()
        .map(|(kind, bytes)| (kind, AnyImage::from_bytes(format, w, h, &bytes).unwrap()))
        .collect()
}

/// The default parameters, then each sample value alone.
fn settings(op: &Operation) -> Vec<(String, Box<dyn Bound>)> {
    let mut out = vec![("defaults".to_string(), (op.bind)(&Args::defaults(op)).unwrap())];
    for p in op.params {
        for v in p.samples {
            let args = Args::parse(op, &[(p.name, v)]).unwrap();
            let bound = (op.bind)(&args).unwrap_or_else(|e| panic!("{} --{} {v}: {e}", op.name, p.name));
            out.push((format!("--{} {v}", p.name), bound));
        }
    }
    out
}

/// Both `Ok` and equal, or both `Err` with the same message.
#[track_caller]
fn same(got: &cuimg::Result<Output>, want: &cuimg::Result<Output>, what: &str) {
    match (got, want) {
        (Ok(g), Ok(w)) => assert!(g == w, "{what}: the results differ"),
        (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}: the errors differ"),
        (g, w) => panic!("{what}: got {:?}, want {:?}", g.as_ref().err(), w.as_ref().err()),
    }
}

/// `img` at (3, 2) inside a larger image of other bytes: its view there is strided (its rows
/// are not packed) and starts off the 16-byte grid.
fn framed(img: &AnyImage) -> AnyImage {
    let (w, h) = img.dimensions();
    let c = img.format().channels();
    let mut big = splitmix_bytes(w as u64 ^ 0x55, ((w + 7) * (h + 4)) as usize * c);
    let row = w as usize * c;
    for y in 0..h as usize {
        let at = ((y + 2) * (w as usize + 7) + 3) * c;
        big[at..at + row].copy_from_slice(&img.as_bytes()[y * row..(y + 1) * row]);
    }
    AnyImage::from_bytes(img.format(), w + 7, h + 4, &big).unwrap()
}

/// `img`'s pixels as a strided view inside `frame` (made by [`framed`]).
fn inside<'a>(frame: &'a AnyImage, img: &AnyImage) -> AnyView<'a> {
    let (w, h) = img.dimensions();
    frame.view().roi(Rect::new(3, 2, w, h)).unwrap()
}

/// Each case: op, setting, format, size, kind, image.
fn each_case(mut f: impl FnMut(&Operation, &str, &dyn Bound, &str, &AnyImage)) {
    for (k, op) in OPERATIONS.iter().enumerate() {
        for (setting, bound) in settings(op) {
            for &format in op.formats {
                for &(w, h) in sizes() {
                    for (kind, img) in images(format, w, h, k as u64 * 1000 + w as u64 * 7 + h as u64) {
                        let what = format!("{} ({setting}) {format} {w}x{h} {kind}", op.name);
                        f(op, &what, &*bound, kind, &img);
                    }
                }
            }
        }
    }
}

#[test]
fn every_folder_is_registered() {
    let ops = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src/ops");
    let names: Vec<&str> = OPERATIONS.iter().map(|op| op.name).collect();
    for entry in std::fs::read_dir(&ops).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let folder = path.file_name().unwrap().to_string_lossy().into_owned();
        // Gather works on slices, not images (tests/tests/gather.rs); YUV frames are not
        // images (tests/tests/yuv.rs).
        if matches!(folder.as_str(), "gather" | "yuv") {
            continue;
        }
        assert!(path.join("op.rs").is_file(), "host/src/ops/{folder}/ has no op.rs: declare the operation there");
        assert!(names.contains(&folder.as_str()), "host/src/ops/{folder}/ is not in OPERATIONS (host/src/ops/mod.rs)");
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "two operations share a name");
}

/// What the registry expects of every operation: parameters that bind, refuse their bad
/// value and unknown names; a tool form for each operation that maps images to images; a
/// reference named.
#[test]
fn every_operation_has_what_the_registry_expects() {
    for op in OPERATIONS {
        assert!(!op.reference.is_empty() && !op.about.is_empty(), "{}: no reference or description", op.name);
        assert!(!op.formats.is_empty(), "{} takes no format", op.name);
        (op.bind)(&Args::defaults(op)).unwrap_or_else(|e| panic!("{}: its defaults do not bind: {e}", op.name));
        assert!(Args::parse(op, &[("no-such-parameter", "1")]).is_err(), "{}", op.name);
        for p in op.params {
            if let Some(bad) = p.bad {
                let bound = (op.bind)(&Args::parse(op, &[(p.name, bad)]).unwrap());
                let e = bound.err().unwrap_or_else(|| panic!("{} --{} {bad} was taken", op.name, p.name));
                assert!(
                    matches!(e, Error::InvalidParameter { .. } | Error::InvalidWeights { .. }),
                    "{}: {e:?}",
                    op.name
                );
            }
        }
        let bound = (op.bind)(&Args::defaults(op)).unwrap();
        let maps_images = op.formats.iter().all(|&f| {
            let p = bound.produces(f).unwrap_or_else(|| panic!("{} lists {f} but makes nothing of it", op.name));
            p.image.is_some() && p.histogram.is_none()
        });
        assert!(!maps_images || op.cli.is_some(), "{} maps images to images but has no tool form (cli)", op.name);
        for f in PixelFormat::ALL.into_iter().filter(|f| !op.formats.contains(f)) {
            assert!(bound.produces(f).is_none(), "{} makes something of {f}, which it does not list", op.name);
        }
    }
}

/// All cores against the serial reference, and what each makes against `produces`; the
/// formats an operation does not take are refused by both. CPU only: runs in CI.
#[test]
fn all_cores_match_the_reference_on_every_format() {
    each_case(|op, what, bound, _, img| {
        let want = bound.cpu(&img.view());
        same(&bound.par(&img.view()), &want, what);
        // The same pixels as a strided view inside a larger image: the same result.
        let frame = framed(img);
        let strided = inside(&frame, img);
        same(&bound.cpu(&strided), &want, &format!("{what}, strided"));
        same(&bound.par(&strided), &want, &format!("{what}, strided, all cores"));
        if let Ok(out) = &want {
            let p = bound.produces(img.format()).unwrap();
            assert_eq!(
                out.image().map(|i| (i.format(), i.dimensions())),
                p.image.map(|f| (f, bound.size(img.dimensions().0, img.dimensions().1))),
                "{what}"
            );
            assert_eq!(out.histogram().map(|h| h.channels()), p.histogram, "{what}");
            assert_eq!(
                out.tensor().map(|t| t.shape()),
                p.tensor_shape(img.format(), bound.size(img.dimensions().0, img.dimensions().1)),
                "{what}"
            );
            if let Some(h) = out.histogram() {
                let (w, hh) = img.dimensions();
                assert!(
                    (0..h.channels()).all(|c| h.channel(c).iter().map(|&n| n as u64).sum::<u64>() == (w * hh) as u64),
                    "{what}"
                );
            }
        }
        let _ = op;
    });
    for op in OPERATIONS {
        let bound = (op.bind)(&Args::defaults(op)).unwrap();
        for f in PixelFormat::ALL.into_iter().filter(|f| !op.formats.contains(f)) {
            let img = AnyImage::from_bytes(f, 3, 2, &vec![9; 6 * f.channels()]).unwrap();
            for r in [bound.cpu(&img.view()), bound.par(&img.view())] {
                assert!(matches!(r, Err(Error::UnsupportedFormat(_))), "{} on {f}: {:?}", op.name, r.err());
            }
        }
    }
}

/// Empty images are errors on every form (the GPU's too, before anything is launched).
#[test]
fn empty_images_are_refused_by_every_form() {
    let gpu = cuimg_tests::gpu();
    for op in OPERATIONS {
        let bound = (op.bind)(&Args::defaults(op)).unwrap();
        let f = op.formats[0];
        for (w, h) in [(0, 0), (0, 5), (5, 0)] {
            let img = AnyImage::from_bytes(f, w, h, &[]).unwrap();
            let v = img.view();
            assert!(bound.cpu(&v).is_err() && bound.par(&v).is_err(), "{} {w}x{h}", op.name);
            if let Some(g) = &gpu {
                assert!(bound.gpu(g, &v).is_err(), "{} {w}x{h} on the GPU", op.name);
                assert!(bound.gpu_batch(g, &[v]).is_err(), "{} {w}x{h} in a batch", op.name);
            }
        }
        if let Some(g) = &gpu {
            assert!(matches!(bound.gpu_batch(g, &[]), Err(Error::EmptyBatch)), "{}: an empty batch", op.name);
        }
    }
}

/// A device image of `format` full of a pattern no operation makes by accident.
fn poisoned(s: &Stream, format: PixelFormat, w: u32, h: u32) -> AnyDeviceImage {
    let bytes: Vec<u8> = (0..(w * h) as usize * format.channels()).map(|i| 0xA5 ^ (i as u8).wrapping_mul(31)).collect();
    AnyDeviceImage::upload(s, &AnyImage::from_bytes(format, w, h, &bytes).unwrap().view()).unwrap()
}

/// The GPU's blocking form and the stream form on every case, and each setting and format
/// as one ragged batch of its random images, against the reference.
#[test]
fn the_gpu_forms_match_the_reference() {
    let Some(s) = cuimg_tests::stream() else { return };
    let g = s.gpu().clone();
    each_case(|_, what, bound, _, img| {
        let want = bound.cpu(&img.view());
        same(&bound.gpu(&g, &img.view()), &want, &format!("{what}, the GPU's call"));
        let frame = framed(img);
        same(&bound.gpu(&g, &inside(&frame, img)), &want, &format!("{what}, the GPU's call on a strided view"));
        stream_into_regions(&s, bound, img, &want, what);
    });
    for (k, op) in OPERATIONS.iter().enumerate() {
        for (setting, bound) in settings(op) {
            for &format in op.formats {
                let what = format!("{} ({setting}) {format}, in a batch", op.name);
                let batch: Vec<AnyImage> = sizes()
                    .iter()
                    .map(|&(w, h)| images(format, w, h, k as u64 * 1000 + w as u64 * 7 + h as u64).remove(0).1)
                    .collect();
                let views: Vec<AnyView<'_>> = batch.iter().map(|i| i.view()).collect();
                match bound.gpu_batch(&g, &views) {
                    Ok(outs) => {
                        assert_eq!(outs.len(), batch.len(), "{what}");
                        for (img, out) in batch.iter().zip(outs) {
                            same(&Ok(out), &bound.cpu(&img.view()), &format!("{what}: {:?}", img.dimensions()));
                        }
                    }
                    // A setting some size refuses (a grid larger than an image): the batch
                    // refuses it too.
                    Err(e) => assert!(
                        batch.iter().any(|i| bound.cpu(&i.view()).is_err()),
                        "{what}: the batch failed ({e}) where each image works"
                    ),
                }
            }
        }
    }
}

/// The stream form from a region of a larger source into a region of a larger poisoned
/// destination: the region holds the reference's bytes and every byte around it is kept;
/// bins are replaced, not added to. A target of the wrong size is an error that writes
/// nothing.
fn stream_into_regions(s: &Stream, bound: &dyn Bound, img: &AnyImage, want: &cuimg::Result<Output>, what: &str) {
    let (w, h) = img.dimensions();
    let f = img.format();
    // The source: `img` at (3, 2) inside a larger image.
    let big = framed(img);
    let dev = AnyDeviceImage::upload(s, &big.view()).unwrap();
    let src = dev.roi(Rect::new(3, 2, w, h)).unwrap();
    let p = bound.produces(f).unwrap();
    if let Some(shape) = p.tensor_shape(f, bound.size(w, h)) {
        return stream_into_a_tensor(s, bound, &src, shape, want, what);
    }
    // The output's size (an operation that turns swaps them).
    let (ow, oh) = bound.size(w, h);
    let at = Rect::new(1, 2, ow, oh);
    let mut dst = p.image.map(|q| poisoned(s, q, ow + 4, oh + 3));
    let before = dst.as_ref().map(|d| d.download(s).unwrap());
    let mut bins = p.histogram.map(|c| {
        let mut b = s.alloc_histogram(c).unwrap();
        // Bins that already hold counts (of another image): the launch replaces them.
        let filler = [PixelFormat::Gray8, PixelFormat::La8, PixelFormat::Rgb8, PixelFormat::Rgba8][c - 1];
        let other = AnyImage::from_bytes(filler, 5, 4, &splitmix_bytes(9, 20 * c)).unwrap();
        let histogram = cuimg::registry::find("histogram").unwrap();
        let other = AnyDeviceImage::upload(s, &other.view()).unwrap();
        (histogram.bind)(&Args::defaults(histogram))
            .unwrap()
            .stream(s, &other.view(), Target::Histogram(&mut b))
            .unwrap();
        b
    });
    fn target<'a>(
        dst: &'a mut Option<AnyDeviceImage>,
        bins: &'a mut Option<cuimg::DeviceHistogram>,
        r: Rect,
    ) -> Target<'a> {
        let image = dst.as_mut().map(|d| d.roi_mut(r).unwrap());
        Target::new(image, bins.as_mut()).expect("every operation makes something")
    }
    // A destination region one pixel narrower: refused, nothing written.
    if ow > 1 && p.image.is_some() {
        let r = bound.stream(s, &src, target(&mut dst, &mut bins, Rect::new(1, 2, ow - 1, oh)));
        assert!(r.is_err(), "{what}: a target of the wrong size was taken");
        assert!(
            dst.as_ref().unwrap().download(s).unwrap() == *before.as_ref().unwrap(),
            "{what}: a refused call wrote"
        );
    }
    let got = bound.stream(s, &src, target(&mut dst, &mut bins, at));
    match (got, want) {
        (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}, on a stream: the errors differ"),
        (Err(g), Ok(_)) => panic!("{what}, on a stream: {g}"),
        (Ok(()), Err(w)) => panic!("{what}, on a stream: taken where the reference says {w}"),
        (Ok(()), Ok(want)) => {
            if let (Some(dst), Some(want_img), Some(before)) = (&dst, want.image(), &before) {
                let got = dst.download(s).unwrap();
                let (gb, bb, ch) = (got.as_bytes(), before.as_bytes(), want_img.format().channels());
                let pitch = (ow + 4) as usize * ch;
                for y in 0..(oh + 3) as usize {
                    for x in 0..(ow + 4) as usize {
                        let i = y * pitch + x * ch;
                        let inside = (1..1 + ow as usize).contains(&x) && (2..2 + oh as usize).contains(&y);
                        let expect = match inside {
                            true => {
                                let j = ((y - 2) * ow as usize + (x - 1)) * ch;
                                &want_img.as_bytes()[j..j + ch]
                            }
                            false => &bb[i..i + ch],
                        };
                        assert!(
                            gb[i..i + ch] == *expect,
                            "{what}, on a stream: pixel ({x}, {y}) {} is {:?}, want {expect:?}",
                            if inside { "inside the region" } else { "outside the region" },
                            &gb[i..i + ch]
                        );
                    }
                }
            }
            if let (Some(bins), Some(want_hist)) = (&bins, want.histogram()) {
                assert_eq!(&s.download_histogram(bins).unwrap(), want_hist, "{what}, on a stream: the bins");
            }
        }
    }
}

/// The stream form of an operation that makes tensors, from a source region into image 1 of
/// a poisoned tensor of 3: image 1 holds the reference's elements, images 0 and 2 are kept.
/// A tensor with no image 1 is refused and nothing is written.
fn stream_into_a_tensor(
    s: &Stream,
    bound: &dyn Bound,
    src: &cuimg::registry::AnyDeviceView<'_>,
    shape: cuimg::TensorShape,
    want: &cuimg::Result<Output>,
    what: &str,
) {
    let poisoned = |images: usize| {
        let t = cuimg_tests::poisoned_tensor(s, cuimg::TensorShape { images, ..shape });
        let before = s.download_tensor(&t).unwrap();
        (t, before)
    };
    let (mut short, before) = poisoned(1);
    assert!(bound.stream(s, src, Target::Tensor(&mut short, 1)).is_err(), "{what}: a tensor without image 1 was taken");
    assert!(s.download_tensor(&short).unwrap() == before, "{what}: a refused call wrote");
    let (mut three, before) = poisoned(3);
    match (bound.stream(s, src, Target::Tensor(&mut three, 1)), want) {
        (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}, on a stream: the errors differ"),
        (Err(g), Ok(_)) => panic!("{what}, on a stream: {g}"),
        (Ok(()), Err(w)) => panic!("{what}, on a stream: taken where the reference says {w}"),
        (Ok(()), Ok(want)) => {
            let got = s.download_tensor(&three).unwrap();
            let per = shape.image_bytes();
            let (g, b) = (got.as_bytes(), before.as_bytes());
            assert!(
                g[..per] == b[..per] && g[2 * per..] == b[2 * per..],
                "{what}, on a stream: images 0 and 2 changed"
            );
            assert!(g[per..2 * per] == *want.tensor().unwrap().as_bytes(), "{what}, on a stream: image 1");
        }
    }
}

/// A resize, then each operation (`registry::Then`, the tool's `--resize`): every form gives
/// the serial forms' bytes in a row, the stream form through a device image between them.
#[test]
fn a_resize_then_each_operation_matches_the_two_in_a_row() {
    let resize = cuimg::registry::find("resize").unwrap();
    let first =
        || (resize.bind)(&Args::parse(resize, &[("size", "23x17"), ("filter", "pil-bicubic")]).unwrap()).unwrap();
    let gpu = cuimg_tests::gpu();
    for op in OPERATIONS {
        let img = images(PixelFormat::Rgb8, 61, 47, 7).remove(0).1;
        if !op.formats.contains(&PixelFormat::Rgb8) {
            continue;
        }
        let then = cuimg::registry::Then::new(first(), (op.bind)(&Args::defaults(op)).unwrap());
        let mid = first().cpu(&img.view()).unwrap();
        let want = (op.bind)(&Args::defaults(op)).unwrap().cpu(&mid.image().unwrap().view()).unwrap();
        assert_eq!(then.cpu(&img.view()).unwrap(), want, "{}", op.name);
        assert_eq!(then.par(&img.view()).unwrap(), want, "{} on all cores", op.name);
        let Some(gpu) = &gpu else { continue };
        assert_eq!(then.gpu(gpu, &img.view()).unwrap(), want, "{} on the GPU", op.name);
        assert_eq!(then.gpu_batch(gpu, &[img.view()]).unwrap(), vec![want.clone()], "{} in a batch", op.name);
        let s = gpu.stream().unwrap();
        let src = AnyDeviceImage::upload(&s, &img.view()).unwrap();
        let mut out = DeviceOutput::alloc(&s, &then, PixelFormat::Rgb8, 61, 47).unwrap();
        then.stream(&s, &src.view(), out.target()).unwrap();
        assert_eq!(out.download(&s).unwrap(), want, "{} on a stream", op.name);
    }
}
