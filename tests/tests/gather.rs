//! Gather: every element width, identity and random indices, and the device-side bounds
//! check.

use bytemuck::Pod;
use cuimg::{Error, cpu};
use cuimg_tests::stream;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const LENGTHS: &[usize] = &[1, 2, 3, 4, 5, 7, 16, 17, 1000, 65_537, 1 << 22];

fn check<T: Pod>(seed: u64) {
    let Some(s) = stream() else { return };
    let mut rng = SmallRng::seed_from_u64(seed);
    for &n in LENGTHS {
        let mut src = vec![T::zeroed(); n + 3];
        rng.fill(bytemuck::cast_slice_mut::<T, u8>(&mut src));
        let identity: Vec<u32> = (0..n as u32).collect();
        let random: Vec<u32> = (0..n).map(|_| rng.random_range(0..src.len() as u32)).collect();
        let d_src = s.upload_slice(&src).unwrap();
        for (kind, idx) in [("identity", identity), ("random", random)] {
            let d_idx = s.upload_slice(&idx).unwrap();
            // Poison: the output starts as garbage that the kernel must overwrite.
            let mut poison = vec![T::zeroed(); n];
            bytemuck::cast_slice_mut::<T, u8>(&mut poison).fill(0xA5);
            let mut d_out = s.upload_slice(&poison).unwrap();
            s.gather(&d_src, &d_idx, &mut d_out).unwrap().check().unwrap();
            let want = cpu::gather(&src, &idx).unwrap();
            // Bytes, not values: random bits make NaNs, and NaN != NaN.
            let got = s.download_slice(&d_out).unwrap();
            let same = bytemuck::cast_slice::<T, u8>(&got) == bytemuck::cast_slice::<T, u8>(&want);
            assert!(same, "{} {kind} n={n}", std::any::type_name::<T>());
        }
    }
}

#[test]
fn u8_matches_cpu() {
    check::<u8>(41);
}

#[test]
fn u16_matches_cpu() {
    check::<u16>(42);
}

#[test]
fn u32_i32_f32_match_cpu() {
    check::<u32>(43);
    check::<i32>(44);
    check::<f32>(45);
}

#[test]
fn f64_and_u128_match_cpu() {
    check::<f64>(46);
    check::<u128>(47);
}

#[test]
fn odd_sized_elements_match_cpu() {
    check::<[u8; 3]>(48);
    check::<[u16; 3]>(49);
    check::<[f32; 5]>(50);
}

#[test]
fn out_of_range_is_reported_at_the_first_bad_position() {
    let Some(s) = stream() else { return };
    let src: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let cases: Vec<(Vec<u32>, u64, u32)> = vec![
        (vec![100], 0, 100),
        (vec![0, 1, u32::MAX], 2, u32::MAX),
        ((0..10_000).map(|i| if i == 7777 || i == 9000 { 100 } else { i % 100 }).collect(), 7777, 100),
        ((0..5000).map(|i| if i % 1000 == 999 { u32::MAX - i } else { 3 }).collect(), 999, u32::MAX - 999),
    ];
    let d_src = s.upload_slice(&src).unwrap();
    for (idx, position, index) in cases {
        let d_idx = s.upload_slice(&idx).unwrap();
        let mut d_out = s.alloc_slice::<f32>(idx.len()).unwrap();
        let err = s.gather(&d_src, &d_idx, &mut d_out).unwrap().check().unwrap_err();
        assert!(
            matches!(err, Error::IndexOutOfRange { position: p, index: i, len: 100 } if p == position && i == index),
            "{err}"
        );
        let cpu_err = cpu::gather(&src, &idx).unwrap_err();
        assert_eq!(cpu_err.to_string(), err.to_string(), "CPU and GPU report the same");
        // The stream is still usable, and bad positions were zeroed, good ones gathered.
        let out = s.download_slice(&d_out).unwrap();
        for (o, &j) in out.iter().zip(&idx) {
            assert_eq!(*o, if (j as usize) < src.len() { src[j as usize] } else { 0.0 });
        }
    }
    // The blocking API too, and the context still works after the error.
    let err = s.gpu().gather(&src, &[5, 100]).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfRange { position: 1, index: 100, len: 100 }));
    assert_eq!(s.gpu().gather(&src, &[5, 99]).unwrap(), vec![5.0, 99.0]);
}

#[test]
fn empty_index_and_empty_source() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    assert_eq!(gpu.gather::<u32>(&[1, 2], &[]).unwrap(), Vec::<u32>::new());
    let err = gpu.gather::<u32>(&[], &[0]).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfRange { position: 0, index: 0, len: 0 }));
}
