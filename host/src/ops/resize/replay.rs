//! A batch call seen before, replayed: the same sizes, boxes and paddings, between the same
//! buffers, with the same choices, queue the launches the call queued before (the runtime's
//! `replay.rs`), without its plans, tables, jobs and choice of tiles.
//!
//! A call is recorded the second time it is one of the last [`KEPT`] calls seen (a batch
//! seen once, as a data loader's ragged batches are, pays only its hash: 1 to 2 us for 256
//! images), and replayed from the third on. A stream keeps the last [`KEPT`] recordings, so
//! that calls that alternate between buffers (a double-buffered loader) replay too.
//!
//! A call is matched by everything its launches depend on ([`Call`]): the pixel type, the
//! filter, the buffers' addresses, each image's offset and size in them, its box and
//! padding, and the choices the tests and the benchmark may change (which kernels Pillow's
//! plans take, the tiles' height, the tables kept, the grids). Equal calls make equal
//! launches, so a replay writes the bytes the call would. The recorded launches also read
//! the stream's arena of tables (`resident.rs`): a recording is replayed only while that
//! arena is the one it read.

use std::any::TypeId;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustc_hash::FxHasher;

use super::{Filter, SourceBox};
use crate::ops::border::Padding;
use crate::runtime::{Entry, Recording, knobs};

/// Recordings a stream keeps, and calls seen it remembers.
const KEPT: usize = 4;

/// Whether batch calls are replayed (see [`resize_replay`]).
static REPLAY: AtomicBool = AtomicBool::new(true);

/// Replayed calls so far (see [`resize_replays`]).
static REPLAYS: AtomicU64 = AtomicU64::new(0);

/// For the benchmark and tests: whether batch calls seen before replay their launches (the
/// default), or plan every call, so that both are timed in one run. Either gives the same
/// bytes. Not part of the API.
pub fn resize_replay(on: bool) {
    REPLAY.store(on, Ordering::Relaxed);
}

/// Whether batch calls are replayed.
pub(super) fn enabled() -> bool {
    REPLAY.load(Ordering::Relaxed)
}

/// For tests: how many batch calls this process has replayed, so that a test of replays can
/// tell that they ran. Not part of the API.
pub fn resize_replays() -> u64 {
    REPLAYS.load(Ordering::Relaxed)
}

/// One image of a call: its source and destination in their buffers, its box and padding.
pub(super) type Image<'a> = (&'a Entry, &'a Entry, Option<SourceBox>, Option<(Padding, [u8; 4])>);

/// A batch call, as what its launches depend on (see the module's note): words read from
/// the call's own arguments each time they are needed, so that a call of new sizes, which
/// is only hashed, allocates nothing (its words made into a `Vec` took 2 to 12 us of a
/// fresh call on the lent host), and a recorded one is compared word by word, in one pass.
pub(super) struct Call<I> {
    pixel: TypeId,
    head: [u64; 8],
    count: usize,
    images: I,
}

/// A recorded call's words (see [`Call`]).
#[derive(PartialEq, Eq)]
pub(super) struct CallKey {
    pixel: TypeId,
    hash: u64,
    words: Vec<u64>,
}

impl<'a, I: Iterator<Item = Image<'a>> + Clone> Call<I> {
    /// The call of `count` `images` from the buffer at `from` into the one at `to`, of
    /// pixels `P`.
    pub fn new<P: 'static>(filter: Filter, from: u64, to: u64, count: usize, images: I) -> Call<I> {
        let filter = Filter::ALL.iter().position(|&(_, f)| f == filter).expect("every filter is listed") as u64;
        let [a, b, c, d] = choices();
        Call { pixel: TypeId::of::<P>(), head: [filter, a, b, c, d, from, to, count as u64], count, images }
    }

    /// `f` of each word in order, while it returns true; whether it did for every word.
    /// An image's words: its source's offset and size, its destination's, a tag, then the
    /// box and the padding the tag says it has. (A loop, not an iterator of iterators: the
    /// words of 256 images took 4 to 5 us that way, on the lent host.)
    #[inline(always)]
    fn visit(&self, mut f: impl FnMut(u64) -> bool) -> bool {
        let size = |e: &Entry| e.width as u64 | (e.height as u64) << 32;
        if !self.head.iter().all(|&w| f(w)) {
            return false;
        }
        for (s, d, bx, pad) in self.images.clone() {
            let tag = u64::from(bx.is_some()) | u64::from(pad.is_some()) << 1;
            if !(f(s.offset as u64) && f(size(s)) && f(d.offset as u64) && f(size(d)) && f(tag)) {
                return false;
            }
            if let Some(b) = bx
                && !(f(pair(b.x0.to_bits(), b.y0.to_bits())) && f(pair(b.x1.to_bits(), b.y1.to_bits())))
            {
                return false;
            }
            if let Some((p, color)) = pad
                && !(f(pair(p.top, p.bottom)) && f(pair(p.left, p.right)) && f(u32::from_le_bytes(color) as u64))
            {
                return false;
            }
        }
        true
    }

    /// Its words' hash, which [`Replays`] takes with it.
    pub fn hash(&self) -> u64 {
        let mut h = FxHasher::default();
        self.pixel.hash(&mut h);
        self.visit(|w| {
            h.write_u64(w);
            true
        });
        h.finish()
    }

    /// Whether `key` is this call's: every word the same (a pass that stops at the first
    /// word that differs; no hash, so that a replay's host time is one pass).
    fn is(&self, key: &CallKey) -> bool {
        if key.pixel != self.pixel {
            return false;
        }
        let mut at = 0;
        self.visit(|w| {
            at += 1;
            key.words.get(at - 1) == Some(&w)
        }) && at == key.words.len()
    }

    /// Its words, kept (for a recording).
    pub fn key(&self, hash: u64) -> CallKey {
        let mut words = Vec::with_capacity(self.head.len() + 5 * self.count);
        self.visit(|w| {
            words.push(w);
            true
        });
        CallKey { pixel: self.pixel, hash, words }
    }
}

fn pair(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// The choices between kernels and tiles that tests and the benchmark set for the process
/// (each gives the same bytes; the launches differ).
fn choices() -> [u64; 4] {
    let ops = super::pillow::choices() | super::plan::choices() << 8 | u64::from(knobs::kept_tables()) << 16;
    let cap = knobs::grid_cap().map_or(0, |c| c as u64 + 1);
    [ops, super::tiles::forced_rows() as u64, knobs::grid_waves() as u64, cap]
}

/// A stream's recorded calls, and the last calls seen.
#[derive(Default)]
pub(super) struct Replays {
    /// Their hashes, the most recent last (a hash alike by chance records a call early).
    seen: Vec<u64>,
    /// The most recently used last; `None` for a call recorded and found not replayable
    /// (planned each time, not recorded again).
    kept: Vec<(CallKey, Option<Kept>)>,
}

/// A recording, and the generation of the stream's arena its launches read.
#[derive(Clone)]
pub(super) struct Kept {
    pub recording: Arc<Recording>,
    pub arena: u64,
}

/// What a stream knows of a call.
pub(super) enum Found {
    /// Recorded: replay it.
    Recorded(Kept),
    /// Recorded, and not replayable: plan it.
    Planned,
    /// One of the last calls seen, not recorded (its hash): record it.
    Again(u64),
    /// Neither (its hash).
    New(u64),
}

impl Replays {
    /// What is known of `call`.
    pub fn find<'a, I: Iterator<Item = Image<'a>> + Clone>(&mut self, call: &Call<I>) -> Found {
        if let Some(i) = self.kept.iter().position(|(k, _)| call.is(k)) {
            let hit = self.kept.remove(i);
            let found = hit.1.clone();
            self.kept.push(hit);
            return found.map_or(Found::Planned, Found::Recorded);
        }
        let hash = call.hash();
        match self.seen.contains(&hash) {
            true => Found::Again(hash),
            false => Found::New(hash),
        }
    }

    /// A call of `hash` was made (and not recorded).
    pub fn saw(&mut self, hash: u64) {
        if self.seen.len() == KEPT {
            self.seen.remove(0);
        }
        self.seen.push(hash);
    }

    /// The recording of the call of `key` (`None`: it is not replayable).
    pub fn keep(&mut self, key: CallKey, kept: Option<Kept>) {
        self.seen.retain(|&h| h != key.hash);
        self.kept.retain(|(k, _)| *k != key);
        if self.kept.len() == KEPT {
            self.kept.remove(0);
        }
        self.kept.push((key, kept));
    }

    /// `call`'s recording may not be replayed (its arena is gone).
    pub fn forget<'a, I: Iterator<Item = Image<'a>> + Clone>(&mut self, call: &Call<I>) {
        self.kept.retain(|(k, _)| !call.is(k));
    }
}

/// A call was replayed.
pub(super) fn replayed() {
    REPLAYS.fetch_add(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::resize::{CvInterpolation, PilFilter};

    const E: [Entry; 3] = [
        Entry { offset: 0, width: 640, height: 480 },
        Entry { offset: 921_600, width: 600, height: 500 },
        Entry { offset: 1_821_600, width: 7, height: 3 },
    ];
    const OUT: [Entry; 3] = [
        Entry { offset: 0, width: 224, height: 224 },
        Entry { offset: 150_528, width: 224, height: 224 },
        Entry { offset: 301_056, width: 2, height: 1 },
    ];

    /// A call of a filter on buffers 1000 and 2000, with the box and padding of image 1.
    fn with<P: 'static, R>(
        filter: Filter,
        entries: &[Entry],
        bx: Option<SourceBox>,
        pad: Option<(Padding, [u8; 4])>,
        f: impl FnOnce(&Call<std::vec::IntoIter<Image<'_>>>) -> R,
    ) -> R {
        let images: Vec<Image<'_>> =
            entries.iter().zip(&OUT).enumerate().map(|(i, (s, d))| (s, d, bx.filter(|_| i == 1), pad.filter(|_| i == 1))).collect();
        f(&Call::new::<P>(filter, 1000, 2000, images.len(), images.into_iter()))
    }

    fn kept() -> Option<Kept> {
        Some(Kept { recording: Arc::new(Recording::default()), arena: 1 })
    }

    const LINEAR: Filter = Filter::OpenCv(CvInterpolation::Linear);

    fn find<'a, I: Iterator<Item = Image<'a>> + Clone>(r: &mut Replays, call: &Call<I>) -> Found {
        r.find(call)
    }

    /// A call is new, seen, recorded, then found; any difference in what its launches
    /// depend on is another call.
    #[test]
    fn calls_are_found_only_where_every_word_is_the_same() {
        let mut r = Replays::default();
        let bx = SourceBox { x0: 1.0, y0: 2.0, x1: 300.5, y1: 400.0 };
        let pad = (Padding { top: 1, bottom: 2, left: 3, right: 4 }, [114, 114, 114, 0]);
        with::<u8, _>(LINEAR, &E, Some(bx), Some(pad), |c| {
            assert!(matches!(find(&mut r, c), Found::New(h) if h == c.hash()));
            r.saw(c.hash());
            assert!(matches!(find(&mut r, c), Found::Again(h) if h == c.hash()));
            r.keep(c.key(c.hash()), kept());
            assert!(matches!(find(&mut r, c), Found::Recorded(_)));
        });
        let mut moved = E;
        moved[2].offset += 3;
        let mut taller = E;
        taller[0].height += 1;
        let others = [
            with::<u8, _>(LINEAR, &E, Some(bx), Some(pad), |c| matches!(find(&mut r, c), Found::Recorded(_))),
            with::<u16, _>(LINEAR, &E, Some(bx), Some(pad), |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(Filter::Pillow(PilFilter::Bilinear), &E, Some(bx), Some(pad), |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(LINEAR, &moved, Some(bx), Some(pad), |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(LINEAR, &taller, Some(bx), Some(pad), |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(LINEAR, &E, None, Some(pad), |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(LINEAR, &E, Some(SourceBox { x1: 300.25, ..bx }), Some(pad), |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(LINEAR, &E, Some(bx), None, |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(LINEAR, &E, Some(bx), Some((pad.0, [114, 114, 115, 0])), |c| matches!(find(&mut r, c), Found::New(_))),
            with::<u8, _>(LINEAR, &E, Some(bx), Some((Padding { left: 4, right: 3, ..pad.0 }, pad.1)), |c| {
                matches!(find(&mut r, c), Found::New(_))
            }),
            with::<u8, _>(LINEAR, &E[..2], Some(bx), Some(pad), |c| matches!(find(&mut r, c), Found::New(_))),
        ];
        assert_eq!(others, [true; 11], "found as expected, case by case");
        // Another address of the output buffer.
        let images: Vec<Image<'_>> = E.iter().zip(&OUT).map(|(s, d)| (s, d, None, None)).collect();
        let call = Call::new::<u8>(LINEAR, 1000, 2008, images.len(), images.into_iter());
        assert!(matches!(find(&mut r, &call), Found::New(_)));
    }

    /// The last [`KEPT`] calls seen are recorded when seen again (calls in turn), the
    /// last [`KEPT`] recordings kept; a call found not replayable is planned.
    #[test]
    fn the_last_calls_are_remembered_and_the_not_replayable_planned() {
        let mut r = Replays::default();
        let entries: Vec<[Entry; 3]> = (0..=KEPT as u32)
            .map(|i| {
                let mut e = E;
                e[0].width += i;
                e
            })
            .collect();
        let hash = |i: usize| with::<u8, _>(LINEAR, &entries[i], None, None, |c| c.hash());
        for i in 0..KEPT {
            r.saw(hash(i));
        }
        for (i, e) in entries[..KEPT].iter().enumerate() {
            with::<u8, _>(LINEAR, e, None, None, |c| {
                assert!(matches!(r.find(c), Found::Again(_)), "call {i} seen");
                r.keep(c.key(c.hash()), if i == 0 { None } else { kept() });
            });
        }
        with::<u8, _>(LINEAR, &entries[0], None, None, |c| assert!(matches!(r.find(c), Found::Planned)));
        // One more recording: the least recently used (call 1) goes.
        with::<u8, _>(LINEAR, &entries[KEPT], None, None, |c| r.keep(c.key(c.hash()), kept()));
        with::<u8, _>(LINEAR, &entries[1], None, None, |c| assert!(matches!(r.find(c), Found::New(_))));
        with::<u8, _>(LINEAR, &entries[2], None, None, |c| assert!(matches!(r.find(c), Found::Recorded(_))));
        // Forgotten: seen anew.
        with::<u8, _>(LINEAR, &entries[2], None, None, |c| {
            r.forget(c);
            assert!(matches!(r.find(c), Found::New(_)));
        });
    }
}

