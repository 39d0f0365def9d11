//! Property tests over sizes, row pitches and regions: host views (CPU only, run
//! everywhere) and the GPU paths for strided and region inputs (with a GPU).

use cuimg::{EqualizeMode, Gray8, GrayWeights, Image, ImageView, Lut, Rect, Rgb8, Rgba8, cpu};
use cuimg_tests::{assert_same, random};
use proptest::prelude::*;

/// A padded buffer holding `img` with `pad` extra bytes per row.
fn padded<P: cuimg::Pixel>(img: &Image<P>, pad: usize) -> (Vec<u8>, usize) {
    let row = img.width() as usize * P::CHANNELS;
    let pitch = row + pad;
    let mut bytes = vec![0xEEu8; pitch * img.height() as usize];
    for y in 0..img.height() {
        let start = y as usize * pitch;
        bytes[start..start + row].copy_from_slice(bytemuck::cast_slice(img.view().row(y)));
    }
    (bytes, pitch)
}

fn sizes() -> impl Strategy<Value = (u32, u32, usize, u64)> {
    (1u32..90, 1u32..60, 0usize..40, any::<u64>())
}

fn rect_in(w: u32, h: u32) -> impl Strategy<Value = Rect> {
    (0..w, 0..h)
        .prop_flat_map(move |(x, y)| (Just(x), Just(y), 1..=w - x, 1..=h - y))
        .prop_map(|(x, y, rw, rh)| Rect::new(x, y, rw, rh))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A strided view reads exactly the pixels of the image it was cut from.
    #[test]
    fn padded_views_read_the_image((w, h, pad, seed) in sizes()) {
        let img = random::<Rgb8>(w, h, seed);
        let (bytes, pitch) = padded(&img, pad);
        let view = ImageView::<Rgb8>::new(&bytes, w, h, pitch).unwrap();
        prop_assert_eq!(view.to_image(), img.clone());
        prop_assert_eq!(cpu::grayscale(&view, GrayWeights::Bt601).unwrap(), cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap());
    }

    /// Regions index like the parent, shifted.
    #[test]
    fn regions_index_like_their_parent((w, h, seed) in (2u32..70, 2u32..50, any::<u64>()), pick in any::<prop::sample::Index>()) {
        let img = random::<Gray8>(w, h, seed);
        let x = pick.index(w as usize) as u32;
        let y = pick.index(h as usize) as u32;
        let r = Rect::new(x, y, w - x, h - y);
        let roi = img.roi(r).unwrap();
        for yy in 0..r.height {
            for xx in 0..r.width {
                prop_assert_eq!(roi.get(xx, yy), img.get(x + xx, y + yy));
            }
        }
    }

    /// With a GPU: every operation on a strided host view and on a device region equals the
    /// CPU reference on the same pixels.
    #[test]
    fn gpu_strided_and_region_inputs_match_cpu((w, h, pad, seed) in sizes(), frac in (0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0)) {
        let Some(s) = cuimg_tests::stream() else { return Ok(()) };
        let g = s.gpu();
        let img = random::<Rgba8>(w, h, seed);
        let (bytes, pitch) = padded(&img, pad);
        let view = ImageView::<Rgba8>::new(&bytes, w, h, pitch).unwrap();
        assert_same(&g.grayscale(&view, GrayWeights::Bt709).unwrap(), &cpu::grayscale(&view, GrayWeights::Bt709).unwrap(), "grayscale, strided");
        prop_assert_eq!(g.histogram(&view).unwrap(), cpu::histogram(&view).unwrap());
        assert_same(&g.apply_lut(&view, &Lut::gamma(0.5)).unwrap(), &cpu::apply_lut(&view, &Lut::gamma(0.5)).unwrap(), "lut, strided");
        assert_same(&g.equalize_color(&view, EqualizeMode::Luma).unwrap(), &cpu::equalize_color(&view, EqualizeMode::Luma).unwrap(), "equalize, strided");

        let x = (frac.0 * w as f64) as u32 % w;
        let y = (frac.1 * h as f64) as u32 % h;
        let r = Rect::new(x, y, 1 + ((frac.2 * (w - x) as f64) as u32).min(w - x - 1), 1 + ((frac.3 * (h - y) as f64) as u32).min(h - y - 1));
        let dev = s.upload(&view).unwrap();
        let src = dev.roi(r).unwrap();
        let host = img.roi(r).unwrap();
        let mut gray = s.alloc::<Gray8>(r.width, r.height).unwrap();
        s.grayscale(&src, &mut gray, GrayWeights::Bt601).unwrap();
        assert_same(&s.download(&gray).unwrap(), &cpu::grayscale(&host, GrayWeights::Bt601).unwrap(), "grayscale, region");
        let mut bins = s.alloc_histogram(4).unwrap();
        s.histogram(&src, &mut bins).unwrap();
        prop_assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&host).unwrap());
        let mut eq = s.alloc::<Rgba8>(r.width, r.height).unwrap();
        s.equalize_color(&src, &mut eq, EqualizeMode::PerChannel).unwrap();
        assert_same(&s.download(&eq).unwrap(), &cpu::equalize_color(&host, EqualizeMode::PerChannel).unwrap(), "equalize, region");
        let gray_src = s.upload(&cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap().view()).unwrap();
        let mut geq = s.alloc::<Gray8>(r.width, r.height).unwrap();
        s.equalize(&gray_src.roi(r).unwrap(), &mut geq).unwrap();
        let host_gray = cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap();
        assert_same(&s.download(&geq).unwrap(), &cpu::equalize(&host_gray.roi(r).unwrap()).unwrap(), "gray equalize, region");
    }

    /// Any region of a device image downloads as the same region of the host image.
    #[test]
    fn device_regions_download_exactly((w, h, _pad, seed) in sizes(), r in (1u32..90, 1u32..60).prop_flat_map(|(w, h)| rect_in(w, h))) {
        let Some(s) = cuimg_tests::stream() else { return Ok(()) };
        let img = random::<Rgb8>(w.max(r.x + r.width), h.max(r.y + r.height), seed);
        let dev = s.upload(&img.view()).unwrap();
        prop_assert_eq!(s.download(&dev.roi(r).unwrap()).unwrap(), img.roi(r).unwrap().to_image());
    }
}
