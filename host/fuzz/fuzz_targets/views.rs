//! Any dimensions, pitch, region, weights and indices given to the validation paths and the
//! CPU operations: `Ok` or a typed error, never a panic, and results of the promised size.
#![no_main]

use cuimg::{EqualizeMode, Gray8, GrayWeights, Image, ImageView, Lut, PlanarView, Rect, Rgb8, cpu};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 24 {
        return;
    }
    let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    let (w, h, pitch) = (word(0) % 70, word(4) % 70, word(8) as usize % 400);
    let rect = Rect::new(word(12) % 80, word(16) % 80, data[20] as u32 % 80, data[21] as u32 % 80);
    let bytes = &data[24..];
    if let Ok(view) = ImageView::<Rgb8>::new(bytes, w, h, pitch) {
        let weights = GrayWeights::Custom { r: data[22] as f32 / 8.0 - 16.0, g: data[23] as f32 / 8.0 - 16.0, b: 0.5 };
        if let Ok(g) = cpu::grayscale(&view, weights) {
            assert_eq!(g.dimensions(), (w, h));
        }
        let _ = cpu::equalize_color(&view, EqualizeMode::Luma);
        let _ = cpu::apply_luts(&view, &[Lut::invert(); 3][..data[22] as usize % 4]);
        if let Ok(roi) = view.roi(rect) {
            assert_eq!(roi.to_image().dimensions(), (rect.width, rect.height));
            let _ = cpu::histogram(&roi);
        }
    }
    if let Ok(gray) = Image::<Gray8>::from_bytes(w, h, bytes) {
        let _ = cpu::equalize(&gray.view());
    }
    let _ = PlanarView::new([bytes, bytes, bytes], w, h, pitch).map(|p| cpu::grayscale_planar(&p, GrayWeights::Bt601));
    let idx: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) % 300).collect();
    let _ = cpu::gather(&bytes[..bytes.len().min(200)], &idx);
});
