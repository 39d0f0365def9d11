//! The previous gray histogram kernel (byte-by-byte run tracking), still selectable through a
//! benchmark knob for comparison, against the CPU reference. Alone in its binary: the knob is
//! process-global, and flipping it beside other tests would change which kernel they test.

use std::sync::atomic::Ordering::Relaxed;

use cuimg::{Gray8, cpu};
use cuimg_tests::{SIZES, random, skewed, stream};

#[test]
fn gray_run_tracking_kernel_matches_cpu() {
    let Some(s) = stream() else { return };
    cuimg::bench::GRAY_HISTOGRAM.store(1, Relaxed);
    for &(w, h) in SIZES {
        for img in [random::<Gray8>(w, h, 16), skewed::<Gray8>(w, h, 17), cuimg::Image::filled(w, h, 200)] {
            assert_eq!(s.gpu().histogram(&img.view()).unwrap(), cpu::histogram(&img.view()).unwrap(), "{w}x{h}");
        }
    }
    cuimg::bench::GRAY_HISTOGRAM.store(0, Relaxed);
}
