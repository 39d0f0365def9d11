//! Batches: many images per launch, uniform and ragged, every image of every batch against
//! the CPU reference, outputs poisoned before the launch; and the typed errors of bad
//! batches.

use cuimg::{
    Bgra8, Color, DeviceBatch, EqualizeMode, Error, Gray, Gray8, GrayWeights, Image, La8, Lut, Pixel, Rgb8, Rgba8,
    Stream, cpu,
};
use cuimg_tests::{assert_same, random, skewed, stream};

/// Uniform batches of 1, 2 and 33 images, and ragged ones mixing 1x1, odd widths and 4K
/// (smaller ones under the sanitizers, where racecheck takes minutes over the large ones).
fn shapes() -> Vec<Vec<(u32, u32)>> {
    let (big, mid, many) = if cuimg_tests::sanitizing() {
        ((257, 131), (203, 157), (37, 29))
    } else {
        ((3840, 2160), (1021, 769), (127, 131))
    };
    vec![
        vec![(64, 48)],
        vec![(333, 257); 2],
        vec![many; 33],
        vec![(1, 1), (17, 3), mid, big, (1, 17), (16, 1), (15, 1)],
        vec![big, (1, 1)],
    ]
}

fn images<P: Pixel>(sizes: &[(u32, u32)], seed: u64) -> Vec<Image<P>> {
    sizes
        .iter()
        .enumerate()
        .map(
            |(i, &(w, h))| {
                if i % 2 == 0 { random::<P>(w, h, seed + i as u64) } else { skewed::<P>(w, h, seed + i as u64) }
            },
        )
        .collect()
}

/// A destination batch full of a pattern no kernel writes by accident.
fn poisoned<P: Pixel>(s: &Stream, sizes: &[(u32, u32)]) -> DeviceBatch<P> {
    let poison: Vec<Image<P>> = sizes
        .iter()
        .map(|&(w, h)| {
            let mut img = Image::<P>::new(w, h);
            img.as_bytes_mut().iter_mut().enumerate().for_each(|(i, b)| *b = 0xA5 ^ (i as u8).wrapping_mul(31));
            img
        })
        .collect();
    let views: Vec<_> = poison.iter().map(|i| i.view()).collect();
    s.upload_batch(&views).unwrap()
}

fn check_all<P: Pixel>(got: &[Image<P>], want: impl Iterator<Item = Image<P>>, what: &str) {
    let want: Vec<_> = want.collect();
    assert_eq!(got.len(), want.len(), "{what}: images");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_same(g, w, &format!("{what}, image {i} ({}x{})", w.width(), w.height()));
    }
}

fn color_ops<P: Color>(s: &Stream, seed: u64) {
    for sizes in shapes() {
        let imgs = images::<P>(&sizes, seed);
        let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
        let what = format!("{} batch of {}", P::NAME, sizes.len());
        let src = s.upload_batch(&views).unwrap();
        for weights in [GrayWeights::Bt601, GrayWeights::Bt709, GrayWeights::Average] {
            let mut gray = poisoned::<Gray8>(s, &sizes);
            s.grayscale_batch(&src, &mut gray, weights).unwrap();
            let want = views.iter().map(|v| cpu::grayscale(v, weights).unwrap());
            check_all(&s.download_batch(&gray).unwrap(), want, &format!("{what} gray {weights:?}"));
        }
        let mut bw = poisoned::<P>(s, &sizes);
        s.black_and_white_batch(&src, &mut bw, GrayWeights::Bt601).unwrap();
        let want = views.iter().map(|v| cpu::black_and_white(v, GrayWeights::Bt601).unwrap());
        check_all(&s.download_batch(&bw).unwrap(), want, &format!("{what} black and white"));
        for mode in [EqualizeMode::PerChannel, EqualizeMode::Luma] {
            let mut eq = poisoned::<P>(s, &sizes);
            s.equalize_color_batch(&src, &mut eq, mode).unwrap();
            let want = views.iter().map(|v| cpu::equalize_color(v, mode).unwrap());
            check_all(&s.download_batch(&eq).unwrap(), want, &format!("{what} equalize {mode:?}"));
        }
        // The blocking path agrees.
        let g = s.gpu();
        let want = views.iter().map(|v| cpu::grayscale(v, GrayWeights::Bt601).unwrap());
        check_all(&g.grayscale_batch(&views, GrayWeights::Bt601).unwrap(), want, &format!("{what} blocking gray"));
        let want = views.iter().map(|v| cpu::equalize_color(v, EqualizeMode::Luma).unwrap());
        check_all(&g.equalize_color_batch(&views, EqualizeMode::Luma).unwrap(), want, &format!("{what} blocking luma"));
    }
}

fn every_format_ops<P: Pixel>(s: &Stream, seed: u64) {
    for sizes in shapes() {
        let imgs = images::<P>(&sizes, seed);
        let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
        let what = format!("{} batch of {}", P::NAME, sizes.len());
        let src = s.upload_batch(&views).unwrap();
        // Histograms, one per image; stale bins from an earlier batch must not leak in.
        let mut bins = s.alloc_batch_histograms(P::CHANNELS, sizes.len()).unwrap();
        s.histogram_batch(&src, &mut bins).unwrap();
        s.histogram_batch(&src, &mut bins).unwrap();
        let got = s.download_batch_histograms(&bins).unwrap();
        for (i, (g, v)) in got.iter().zip(&views).enumerate() {
            assert_eq!(*g, cpu::histogram(v).unwrap(), "{what}: histogram of image {i}");
        }
        // One table for all images.
        let lut = Lut::gamma(1.8);
        let luts = s.upload_lut::<P>(&lut).unwrap();
        let mut out = poisoned::<P>(s, &sizes);
        s.apply_lut_batch(&src, &mut out, &luts).unwrap();
        check_all(&s.download_batch(&out).unwrap(), views.iter().map(|v| cpu::apply_lut(v, &lut).unwrap()), &what);
        // One set per image.
        let per_image: Vec<Vec<Lut>> = (0..sizes.len())
            .map(|i| {
                (0..P::CHANNELS).map(|c| Lut::from_fn(|v| v.wrapping_mul(3 + i as u8).wrapping_add(c as u8))).collect()
            })
            .collect();
        let luts = s.upload_batch_luts::<P>(&per_image).unwrap();
        let mut out = poisoned::<P>(s, &sizes);
        s.apply_lut_batch(&src, &mut out, &luts).unwrap();
        let want = views.iter().zip(&per_image).map(|(v, l)| cpu::apply_luts(v, l).unwrap());
        check_all(&s.download_batch(&out).unwrap(), want, &format!("{what}, tables per image"));
    }
}

fn gray_ops<P: Gray>(s: &Stream, seed: u64) {
    for sizes in shapes() {
        let imgs = images::<P>(&sizes, seed);
        let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
        let src = s.upload_batch(&views).unwrap();
        let mut eq = poisoned::<P>(s, &sizes);
        s.equalize_batch(&src, &mut eq).unwrap();
        let what = format!("{} batch of {} equalized", P::NAME, sizes.len());
        check_all(&s.download_batch(&eq).unwrap(), views.iter().map(|v| cpu::equalize(v).unwrap()), &what);
        check_all(&s.gpu().equalize_batch(&views).unwrap(), views.iter().map(|v| cpu::equalize(v).unwrap()), &what);
    }
}

#[test]
fn color_batches_match_cpu() {
    let Some(s) = stream() else { return };
    color_ops::<Rgb8>(&s, 100);
    color_ops::<Bgra8>(&s, 200);
}

#[test]
fn every_format_histogram_and_lut_batches_match_cpu() {
    let Some(s) = stream() else { return };
    every_format_ops::<Gray8>(&s, 300);
    every_format_ops::<La8>(&s, 400);
    every_format_ops::<Rgb8>(&s, 500);
    every_format_ops::<Rgba8>(&s, 600);
}

#[test]
fn gray_batches_equalize_like_cpu() {
    let Some(s) = stream() else { return };
    gray_ops::<Gray8>(&s, 700);
    gray_ops::<La8>(&s, 800);
}

#[test]
fn a_batch_image_copies_out() {
    let Some(s) = stream() else { return };
    let imgs = images::<Rgb8>(&[(5, 3), (640, 480)], 900);
    let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
    let batch = s.upload_batch(&views).unwrap();
    let mut one = s.alloc::<Rgb8>(640, 480).unwrap();
    s.copy_from_batch(&batch, 1, &mut one).unwrap();
    assert_same(&s.download(&one).unwrap(), &imgs[1], "image 1");
    assert!(matches!(s.copy_from_batch(&batch, 0, &mut one).unwrap_err(), Error::DimensionMismatch { .. }));
    assert!(matches!(s.copy_from_batch(&batch, 2, &mut one).unwrap_err(), Error::WrongLength { .. }));
}

/// `upload_staged`, one image after another on one stream through its staging buffer: small,
/// then larger (the buffer grows), 1x1, a padded view, and a batch upload between them on
/// the same buffer; each image its own, read back after all were queued. Empty is refused.
#[test]
fn staged_uploads_are_each_their_own_image() {
    let Some(s) = stream() else { return };
    let mut want = images::<Rgb8>(&[(5, 3), (1021, 769), (1, 1), (333, 257)], 950);
    let (row, pitch) = (17 * 3, 17 * 3 + 11);
    let src = random::<Rgb8>(17, 9, 951);
    let mut padded = vec![0xEEu8; pitch * 9];
    for y in 0..9u32 {
        padded[y as usize * pitch..][..row].copy_from_slice(bytemuck::cast_slice(src.view().row(y)));
    }
    let mut got: Vec<_> = want.iter().map(|img| s.upload_staged(&img.view()).unwrap()).collect();
    let batch = s.upload_batch(&[want[0].view()]).unwrap();
    got.push(s.upload_staged(&cuimg::ImageView::<Rgb8>::new(&padded, 17, 9, pitch).unwrap()).unwrap());
    want.push(src);
    for (i, (dev, img)) in got.iter().zip(&want).enumerate() {
        assert_same(&s.download(dev).unwrap(), img, &format!("staged upload {i}"));
    }
    assert_same(&s.download_batch(&batch).unwrap()[0], &want[0], "the batch between them");
    let empty = Image::<Rgb8>::new(0, 0);
    assert!(matches!(s.upload_staged(&empty.view()).unwrap_err(), Error::EmptyImage { .. }));
    // Larger than the staging cap: through it in bands of rows (the last one short), then a
    // small image again on the same buffer.
    let big = random::<Rgb8>(4801, 4799, 952);
    assert!(big.as_bytes().len() > cuimg::runtime::STAGED_CHUNK_BYTES);
    let (dev_big, dev_small) = (s.upload_staged(&big.view()).unwrap(), s.upload_staged(&want[0].view()).unwrap());
    assert_same(&s.download(&dev_big).unwrap(), &big, "an upload in bands");
    assert_same(&s.download(&dev_small).unwrap(), &want[0], "a small one after it");
}

/// Bad batches get typed errors and launch nothing; the stream works afterwards.
#[test]
fn bad_batches_are_typed_errors() {
    let Some(s) = stream() else { return };
    let none: [cuimg::ImageView<'_, Rgb8>; 0] = [];
    assert!(matches!(s.upload_batch(&none).unwrap_err(), Error::EmptyBatch));
    assert!(matches!(s.gpu().grayscale_batch(&none, GrayWeights::Bt601).unwrap_err(), Error::EmptyBatch));
    assert!(matches!(s.alloc_batch::<Rgb8>(&[]).unwrap_err(), Error::EmptyBatch));
    assert!(matches!(s.alloc_batch::<Rgb8>(&[(4, 4), (0, 3)]).unwrap_err(), Error::EmptyImage { .. }));
    let src = s.alloc_batch::<Rgb8>(&[(4, 4), (5, 5)]).unwrap();
    // A size mismatch between source and destination.
    let mut dst = s.alloc_batch::<Gray8>(&[(4, 4), (5, 6)]).unwrap();
    assert!(matches!(
        s.grayscale_batch(&src, &mut dst, GrayWeights::Bt601).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
    let mut short = s.alloc_batch::<Gray8>(&[(4, 4)]).unwrap();
    assert!(matches!(s.grayscale_batch(&src, &mut short, GrayWeights::Bt601).unwrap_err(), Error::WrongLength { .. }));
    let mut bins = s.alloc_batch_histograms(3, 1).unwrap();
    assert!(matches!(s.histogram_batch(&src, &mut bins).unwrap_err(), Error::WrongLength { .. }));
    assert!(matches!(s.alloc_batch_histograms(3, 0).unwrap_err(), Error::EmptyBatch));
    let luts = s.upload_batch_luts::<Rgb8>(&vec![vec![Lut::invert(); 3]; 3]).unwrap();
    let mut out = s.alloc_batch::<Rgb8>(&src.sizes()).unwrap();
    assert!(matches!(s.apply_lut_batch(&src, &mut out, &luts).unwrap_err(), Error::WrongLength { .. }));
    assert!(matches!(s.upload_batch_luts::<Rgb8>(&[vec![Lut::invert(); 2]]).unwrap_err(), Error::WrongLength { .. }));
    // Larger than any device memory: a typed error, not a crash.
    let huge = vec![(65_535u32, 65_535u32); 64];
    let err = s.alloc_batch::<Rgba8>(&huge).unwrap_err();
    assert!(matches!(err, Error::OutOfDeviceMemory(_) | Error::TooLarge { .. }), "{err}");
    // The stream still works.
    let img = Image::<Rgb8>::filled(9, 9, 40);
    assert_eq!(s.gpu().grayscale_batch(&[img.view()], GrayWeights::Bt601).unwrap()[0].get(8, 8), Gray8([40]));
}

/// CPU only: the error for an empty batch reads well.
#[test]
fn empty_batch_error_message() {
    assert_eq!(Error::EmptyBatch.to_string(), "empty batch: a batch needs at least one image");
}
