//! One axis of Pillow's resample, made once per process and shared by every plan that has
//! it: a batch of photos 512 to 768 wide and 384 to 576 tall has at most 257 widths and
//! 193 heights, however many of its 49,601 sizes it holds. Planned size by size, a batch
//! of 256 sizes never seen took 60 to 80 ms on the lent machines (a Lanczos axis alone
//! about 90 us on one core: its weights are sines in double); planned axis by axis, a size
//! whose width and height were seen before costs two lookups (a batch's, all under one
//! lock: [`axes`]). OpenCV's axes are kept the same way, in tables of [`Kept`] (`cv.rs`).
//!
//! An axis is a pure function of its key (`coeffs`' arguments), so the kept one is the one
//! a new call would make: nothing here changes a weight.

use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;

use super::PilFilter;
use super::pil::{AxisArgs, Planes, coeffs, planes, window8};
use super::plan::Taps;

/// `coeffs`' taps along one axis, and what the GPU's kernels and Pillow's passes ask of
/// them, each made once.
#[derive(Debug)]
pub(crate) struct PilAxis {
    /// (Reached as the axis itself: it derefs to them.)
    table: Taps<i32>,
    /// The input's length along the axis (the taps lie in `0..input`).
    pub input: usize,
    /// What the `_mma` kernels ask of the axis (`pil::window8`).
    pub window: usize,
    /// The inputs the outputs' nonzero weights reach, `first..end`: the rows Pillow's
    /// horizontal pass makes for the vertical one (`ImagingResampleInner`'s `ybox`).
    pub reach: (usize, usize),
    across: OnceLock<Option<Planes>>,
    down: OnceLock<Option<Planes>>,
}

impl PilAxis {
    fn new(taps: Taps<i32>, input: usize) -> PilAxis {
        let n = taps.first.len();
        let last = |i: usize| taps.weights[i * taps.taps..(i + 1) * taps.taps].iter().rposition(|&w| w != 0);
        let first = taps.first.first().map_or(0, |&f| f as usize);
        let end = (0..n).filter_map(|i| last(i).map(|k| taps.first[i] as usize + k + 1)).max().unwrap_or(first + 1);
        let window = window8(&taps);
        PilAxis { table: taps, input, window, reach: (first, end), across: OnceLock::new(), down: OnceLock::new() }
    }

    /// The taps in the planes form of the `_planes` kernels, across (`pil::planes` with the
    /// input's length) or down; made when first asked.
    pub fn planes(&self, across: bool) -> Option<&Planes> {
        match across {
            true => self.across.get_or_init(|| planes(&self.table, Some(self.input))),
            false => self.down.get_or_init(|| planes(&self.table, None)),
        }
        .as_ref()
    }
}

impl std::ops::Deref for PilAxis {
    type Target = Taps<i32>;

    fn deref(&self) -> &Taps<i32> {
        &self.table
    }
}

/// The same taps over the same input (all else is made from them).
impl PartialEq for PilAxis {
    fn eq(&self, other: &PilAxis) -> bool {
        self.table == other.table && self.input == other.input
    }
}

/// Values kept for the process by key within a budget of bytes (past it, the table starts
/// again: a pipeline's sizes repeat). Made outside the lock, so that other threads' lookups
/// do not wait for them; two threads making the same value at once make equal ones, and
/// the first kept is both's.
pub(super) struct Kept<K, V> {
    table: Mutex<Option<Table<K, V>>>,
    most: usize,
}

/// The values by key, and their bytes.
type Table<K, V> = (FxHashMap<K, Arc<V>>, usize);

impl<K: std::hash::Hash + Eq + Copy, V> Kept<K, V> {
    pub const fn new(most: usize) -> Kept<K, V> {
        Kept { table: Mutex::new(None), most }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Table<K, V>) -> R) -> R {
        f(self.table.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_default())
    }

    /// `made` (of `bytes`) kept under `key`, or the value kept there first.
    fn keep_in(&self, (map, used): &mut Table<K, V>, key: K, made: Arc<V>, bytes: usize) -> Arc<V> {
        if let Some(v) = map.get(&key) {
            return v.clone();
        }
        if *used + bytes > self.most {
            map.clear();
            *used = 0;
        }
        *used += bytes;
        map.insert(key, made.clone());
        made
    }

    /// The value kept under `key`, else `make()`'s (of `bytes(&value)` bytes), kept.
    pub fn get_or_make(&self, key: K, make: impl FnOnce() -> V, bytes: impl FnOnce(&V) -> usize) -> Arc<V> {
        if let Some(v) = self.with(|(map, _)| map.get(&key).cloned()) {
            return v;
        }
        let made = Arc::new(make());
        let n = bytes(&made);
        self.with(|t| self.keep_in(t, key, made, n))
    }

    /// The values of `keys`, in order: the kept ones found under one lock (a lock a key
    /// cost a batch of 256 sizes more than its lookups), the others made (on all cores
    /// where there are several, outside the lock) and kept under one more.
    pub fn get_many(&self, keys: &[K], make: impl Fn(K) -> V + Sync, bytes: impl Fn(&V) -> usize) -> Vec<Arc<V>>
    where
        K: Send + Sync,
        V: Send + Sync,
    {
        use rayon::prelude::*;
        let found: Vec<Option<Arc<V>>> = self.with(|(map, _)| keys.iter().map(|k| map.get(k).cloned()).collect());
        let mut seen = rustc_hash::FxHashSet::default();
        let missing: Vec<K> = keys.iter().zip(&found).filter(|(k, f)| f.is_none() && seen.insert(**k)).map(|(k, _)| *k).collect();
        if missing.is_empty() {
            return found.into_iter().map(|f| f.expect("found")).collect();
        }
        let made: Vec<Arc<V>> = match missing.len() {
            1 => vec![Arc::new(make(missing[0]))],
            _ => missing.par_iter().map(|&k| Arc::new(make(k))).collect(),
        };
        // (What was kept first, where another thread made the same key meanwhile.)
        let kept: FxHashMap<K, Arc<V>> = self.with(|t| {
            missing
                .into_iter()
                .zip(made)
                .map(|(k, v)| {
                    let n = bytes(&v);
                    (k, self.keep_in(t, k, v, n))
                })
                .collect()
        });
        keys.iter().zip(found).map(|(k, f)| f.unwrap_or_else(|| kept[k].clone())).collect()
    }
}

/// `coeffs`' arguments, the box's floats bit for bit.
type AxisKey = (usize, u32, u32, usize, PilFilter);

/// Most bytes of axes kept (their weights and first inputs, twice for the planes forms
/// made beside them); an axis to 224 is 5 to 20 KB from a photo, about 100 KB from a 4K
/// frame by Lanczos.
static AXES: Kept<AxisKey, PilAxis> = Kept::new(128 << 20);

fn key((input, in0, in1, out): AxisArgs, filter: PilFilter) -> AxisKey {
    (input, in0.to_bits(), in1.to_bits(), out, filter)
}

fn make((input, in0, in1, out, filter): AxisKey) -> PilAxis {
    let (in0, in1) = (f32::from_bits(in0), f32::from_bits(in1));
    PilAxis::new(coeffs(input, in0, in1, out, filter), input)
}

fn bytes(a: &PilAxis) -> usize {
    2 * (a.weights.len() + a.first.len()) * 4
}

/// The axis of `coeffs(input, in0, in1, out, filter)`, kept for the process.
pub(crate) fn axis(args: AxisArgs, filter: PilFilter) -> Arc<PilAxis> {
    let key = key(args, filter);
    AXES.get_or_make(key, || make(key), bytes)
}

/// The axes of `args`, in order (see [`Kept::get_many`]): a batch of new sizes whose
/// widths and heights were seen plans in one lookup an axis under one lock (made one by one
/// instead, each plan took the lock twice; made on all cores, each plan waited on the lock
/// and the threads: 430 to 560 us for 256 plans on a 16-core host).
pub(crate) fn axes(args: &[AxisArgs], filter: PilFilter) -> Vec<Arc<PilAxis>> {
    let keys: Vec<AxisKey> = args.iter().map(|&a| key(a, filter)).collect();
    AXES.get_many(&keys, make, bytes)
}

/// Whether two axes' arguments are the same key (the box's floats bit for bit).
pub(crate) fn same(a: AxisArgs, b: AxisArgs) -> bool {
    (a.0, a.1.to_bits(), a.2.to_bits(), a.3) == (b.0, b.1.to_bits(), b.2.to_bits(), b.3)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept axis is the one `coeffs` makes, its reach the rows its nonzero weights read,
    /// and the same key gives the same axis.
    #[test]
    fn kept_axes_are_what_coeffs_makes() {
        for f in [PilFilter::Box, PilFilter::Bilinear, PilFilter::Hamming, PilFilter::Bicubic, PilFilter::Lanczos] {
            for &(i, o, b0, b1) in &[(640, 224, 0.0, 640.0), (7, 3, 0.0, 7.0), (3, 7, 0.0, 3.0), (500, 61, 10.5, 333.25)] {
                let a = axis((i, b0, b1, o), f);
                assert!(Arc::ptr_eq(&a, &axis((i, b0, b1, o), f)), "{f:?} {i} -> {o}: kept");
                let t = coeffs(i, b0, b1, o, f);
                assert_eq!(a.table, t, "{f:?} {i} -> {o}");
                assert_eq!(a.window, window8(&t));
                let mut nonzero = Vec::new();
                for x in 0..o {
                    for k in (0..t.taps).filter(|&k| t.weights[x * t.taps + k] != 0) {
                        nonzero.push(t.first[x] as usize + k);
                    }
                }
                assert_eq!(a.reach, (t.first[0] as usize, nonzero.iter().max().unwrap() + 1), "{f:?} {i} -> {o}");
                assert_eq!(a.planes(true), planes(&t, Some(i)).as_ref());
                assert_eq!(a.planes(false), planes(&t, None).as_ref());
            }
        }
        // Every axis a plan's passes take is one `axes_of` names (made before the plans).
        for f in [PilFilter::Bilinear, PilFilter::Lanczos, PilFilter::Nearest] {
            type Case = ((usize, usize), (usize, usize), Option<[f32; 4]>);
            let cases: [Case; 6] = [
                ((640, 480), (224, 224), None),
                ((640, 480), (640, 224), None),
                ((640, 480), (224, 480), None),
                ((3, 400), (2, 3), None),
                ((5, 1000), (5, 7), Some([0.5, 2.0, 4.0, 900.0])),
                ((640, 480), (640, 480), Some([1.0, 0.0, 640.0, 480.0])),
            ];
            for (s, d, b) in cases {
                let named: Vec<Arc<PilAxis>> = super::super::pil::axes_of(s, d, f, b).map(|a| axis(a, f)).collect();
                let super::super::plan::Plan::Pillow { passes, .. } = super::super::pil::plan(s, false, d, f, b) else {
                    assert!(named.is_empty() || f != PilFilter::Nearest, "{s:?} -> {d:?}");
                    continue;
                };
                assert!(!passes.is_empty());
                for p in &passes {
                    assert!(named.iter().any(|a| Arc::ptr_eq(a, &p.taps)), "{f:?} {s:?} -> {d:?} {b:?}: an axis not named");
                }
            }
        }
        // Another box, another axis.
        assert!(!Arc::ptr_eq(&axis((640, 0.0, 640.0, 224), PilFilter::Bicubic), &axis((640, 0.0, 639.5, 224), PilFilter::Bicubic)));
    }
}
