//! Plans' tables kept on the device between calls on one stream, so that a call whose
//! sizes were seen before uploads only its jobs.
//!
//! A batch of 256 photos to 224x224 uploaded 0.5 to 3.7 MB of tables every call (pageable
//! copies), more than its kernels' time. Each stream keeps an arena: every axis's tables
//! (a plan's width or height, `axis.rs` and `cv.rs`, shared by every size that has it) are
//! one block in it for each role they take (across or down, and the area's paddings),
//! placed on first use on that stream and read by every later launch: a batch of sizes
//! never seen, whose widths and heights were, uploads only its jobs (where each image's
//! pixels are). The arena is the stream's alone, so a new block never makes another stream
//! wait. When a launch's new blocks do not fit, a larger arena replaces it and the launch's
//! blocks go there (the old one is freed after the work that reads it, as every buffer is).

use std::any::Any;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::tiles::{NO_SPAN, Spans, TILE_HEIGHTS};
use crate::error::{Error, Result};
use crate::runtime::{DeviceBuffer, Stream};
use crate::runtime::knobs::host_span;

/// An axis's tables as one block: its parts, each at a 16-byte boundary (vectors, for the
/// kernels that read their tables 16 bytes a load); and what the
/// launches ask of it each call, worked out once (the spans of its tiles).
pub(super) struct Block {
    bytes: Vec<u8>,
    parts: Vec<u64>,
    spans: Spans,
}

impl Default for Block {
    /// No parts, and no spans (a plan without tiles).
    fn default() -> Block {
        Block { bytes: Vec::new(), parts: Vec::new(), spans: [NO_SPAN; TILE_HEIGHTS] }
    }
}

impl Block {
    /// With the spans of tiles of rows reading `taps` rows each from `first` on.
    pub fn spans(mut self, first: &[i32], taps: usize) -> Block {
        self.spans = super::tiles::tile_spans(first, taps);
        self
    }

    /// `v` appended as the next part.
    pub fn part<T: bytemuck::Pod>(mut self, v: &[T]) -> Block {
        assert!(self.parts.len() < PARTS, "a block of at most {PARTS} parts");
        self.bytes.resize(self.bytes.len().next_multiple_of(ALIGN), 0);
        self.parts.push(self.bytes.len() as u64);
        self.bytes.extend_from_slice(bytemuck::cast_slice(v));
        self
    }
}

/// Where a plan's block lies: the arena byte offset of each of its parts; its spans
/// (borrowed from the stream's record: a batch of 256 plans copied none of them).
pub(super) struct Placed<'a>(&'a [u64], &'a Spans);

impl Placed<'_> {
    pub fn spans(&self) -> &Spans {
        self.1
    }

    /// How many parts the block has.
    pub fn parts(&self) -> usize {
        self.0.len()
    }

    /// Part `i`'s offset in elements of `T` from the arena's start (the kernels' tables are
    /// the arena, read as `T`).
    pub fn at<T>(&self, i: usize) -> Result<u32> {
        let elems = self.0[i] / std::mem::size_of::<T>() as u64;
        u32::try_from(elems).map_err(|_| Error::TooLarge { what: "the resize tables".into(), size: elems, limit: u32::MAX as u64 })
    }
}

/// One stream's arena and what lies in it, by plan.
#[derive(Default)]
pub(super) struct Resident {
    arena: Option<DeviceBuffer<u8>>,
    /// Counts the arenas made: a recorded call (`replay.rs`) reads the one of its own.
    generation: u64,
    used: u64,
    /// Each placed plan's record in `records`, by plan. The records lie in the order they
    /// were placed (a batch's plans, where they were new together), so a batch's lookups
    /// read them in order, where with the records in the table itself (170 bytes an entry,
    /// a few thousand of them) a batch read the table at random (session 15; not timed
    /// alone: the resident part of a batch call's host time was 6 to 10 us).
    index: FxHashMap<Key, u32>,
    records: Vec<Record>,
    /// The next upload of blocks fails (see `Stream::fail_next_resize_tables_for_tests`).
    #[cfg(feature = "test-hooks")]
    fail_next: bool,
}

/// Where parts and blocks start: 16 bytes, with the arena's start (a device allocation,
/// 256-byte aligned).
const ALIGN: usize = 16;

/// The first arena's size, and the most an arena may take (its offsets are u32 elements).
const FIRST: u64 = 1 << 20;
const MOST: u64 = 1 << 30;

/// A placed block: its item (held, so that its address stays its own while it is a key),
/// its parts' arena offsets (a block has at most [`PARTS`]), its spans.
struct Record {
    _item: Arc<dyn Any + Send + Sync>,
    parts: [u64; PARTS],
    len: usize,
    spans: Spans,
}

impl Resident {
    /// Each item's record, or `None` where one is not placed (indices, not borrows, so
    /// that a miss leaves the resident free to place them).
    fn records<T>(&self, items: &[(&Arc<T>, u8)]) -> Option<Vec<u32>> {
        items.iter().map(|&(p, role)| self.index.get(&key(p, role)).copied()).collect()
    }

    /// The placed blocks of `records`.
    fn placed(&self, records: &[u32]) -> Vec<Placed<'_>> {
        records.iter().map(|&i| self.records[i as usize].placed()).collect()
    }
}

impl Record {
    fn placed(&self) -> Placed<'_> {
        Placed(&self.parts[..self.len], &self.spans)
    }
}

/// The most parts a block has (a plan's four, an axis's of Pillow's four across).
const PARTS: usize = 4;

/// The roles of an axis's block (`Stream::with_blocks`): an axis that is one size's width
/// and another's height has a block for each. (Roles may carry more above bit 0.)
pub(super) const ACROSS: u8 = 0;
pub(super) const DOWN: u8 = 1;

/// An item's address and its role.
type Key = (usize, u8);

fn key<T>(item: &Arc<T>, role: u8) -> Key {
    (Arc::as_ptr(item) as usize, role)
}

impl Stream {
    /// Runs `launch(arena's device address, each item's parts in `items`' order)` while the
    /// arena is read on this stream, after placing the blocks (`block(item, role)`) of the
    /// items not yet in it, in one upload: an item is a plan or an axis, each `(item, role)`
    /// one block, placed once.
    pub(super) fn with_blocks<T: Send + Sync + 'static, R>(
        &self,
        items: &[(&Arc<T>, u8)],
        block: impl Fn(&T, u8) -> Block + Sync,
        launch: impl FnOnce(u64, &[Placed<'_>]) -> Result<R>,
    ) -> Result<R> {
        self.kept(|r: &mut Resident| {
            // Where every item's block is already placed (a batch of sizes seen before), one
            // lookup an item.
            let found = host_span("resident: lookup", || r.arena.as_ref().and_then(|_| r.records(items)));
            let records = match found {
                Some(records) => records,
                None => {
                    host_span("resident: place", || self.place(r, items, &block))?;
                    r.records(items).expect("every item's block placed")
                }
            };
            let placed = r.placed(&records);
            let read = r.arena.as_ref().expect("made by `place`").buf.read(&self.raw)?;
            launch(read.ptr().addr(), &placed)
        })
    }

    /// Which arena this stream's is (see [`Stream::with_arena`]).
    pub(super) fn arena_generation(&self) -> u64 {
        self.kept(|r: &mut Resident| r.generation)
    }

    /// `f`'s result, run while the arena is read on this stream, if it is still the one of
    /// `generation` (blocks are placed in an arena once and stay where they are); `None`
    /// where another has replaced it.
    pub(super) fn with_arena<R>(&self, generation: u64, f: impl FnOnce() -> Result<R>) -> Result<Option<R>> {
        self.kept(|r: &mut Resident| {
            let Some(arena) = r.arena.as_ref().filter(|_| r.generation == generation) else {
                return Ok(None);
            };
            let _read = arena.buf.read(&self.raw)?;
            f().map(Some)
        })
    }

    /// Places the blocks (`block(item, role)`) of the items not yet in `r`'s arena, in one
    /// upload (made on all cores where there are several); where they do not fit, in a
    /// larger arena that replaces it.
    fn place<T: Send + Sync + 'static>(
        &self,
        r: &mut Resident,
        items: &[(&Arc<T>, u8)],
        block: &(impl Fn(&T, u8) -> Block + Sync),
    ) -> Result<()> {
        use rayon::prelude::*;
        let missing = |r: &Resident| -> Vec<(&Arc<T>, u8)> {
            let mut seen = FxHashSet::default();
            items
                .iter()
                .copied()
                .filter(|&(p, role)| !r.index.contains_key(&key(p, role)) && seen.insert(key(p, role)))
                .collect()
        };
        let make = |new: &[(&Arc<T>, u8)]| -> Vec<Block> {
            match new.len() {
                0..8 => new.iter().map(|&(p, role)| block(p, role)).collect(),
                _ => new.par_iter().map(|&(p, role)| block(p, role)).collect(),
            }
        };
        let mut new = missing(r);
        let mut blocks = make(&new);
        let size = |b: &[Block]| b.iter().map(|b| (b.bytes.len() as u64).next_multiple_of(ALIGN as u64)).sum::<u64>();
        let capacity = r.arena.as_ref().map_or(0, |a| a.len() as u64);
        if r.used + size(&blocks) > capacity {
            // A new arena for this launch's blocks, room to grow after them.
            r.index.clear();
            r.records.clear();
            r.used = 0;
            new = missing(r);
            blocks = make(&new);
            let want = (2 * size(&blocks)).max(2 * capacity).max(FIRST);
            if size(&blocks) > MOST {
                return Err(Error::TooLarge { what: "one launch's resize tables".into(), size: size(&blocks), limit: MOST });
            }
            r.arena = None; // freed (after its readers) before the next is allocated
            r.arena = Some(self.alloc_slice::<u8>(want.min(MOST) as usize)?);
            r.generation += 1;
        }
        let arena = r.arena.as_mut().expect("made above");
        if !blocks.is_empty() {
            let mut bytes = Vec::with_capacity(size(&blocks) as usize);
            let mut at = Vec::with_capacity(blocks.len());
            for b in &blocks {
                at.push(r.used + bytes.len() as u64);
                bytes.extend_from_slice(&b.bytes);
                bytes.resize(bytes.len().next_multiple_of(ALIGN), 0);
            }
            let start = r.used as usize;
            #[cfg(feature = "test-hooks")]
            if std::mem::take(&mut r.fail_next) {
                return Err(Error::Cuda("made to fail by a test (Stream::fail_next_resize_tables_for_tests)".into()));
            }
            let mut to = arena.buf.write(&self.raw)?;
            self.raw.memcpy_htod(&bytes, &mut to.slice().slice_mut(start..start + bytes.len()))?;
            // Recorded only once their upload is queued: a failed one leaves no plan
            // recorded over bytes that never arrived (which the next new block, placed
            // at the same offset, would then have overwritten with its own).
            for ((&(item, role), b), at) in new.iter().zip(blocks).zip(at) {
                let mut parts = [0; PARTS];
                for (to, p) in parts.iter_mut().zip(&b.parts) {
                    *to = at + p;
                }
                let len = b.parts.len();
                r.index.insert(key(item, role), r.records.len() as u32);
                r.records.push(Record { _item: item.clone(), parts, len, spans: b.spans });
            }
            r.used += bytes.len() as u64;
        }
        Ok(())
    }
}

#[cfg(feature = "test-hooks")]
impl Stream {
    /// The next upload of resize tables on this stream fails before it is queued, as a copy
    /// the driver refuses would (test builds only: feature `test-hooks`).
    pub fn fail_next_resize_tables_for_tests(&self) {
        self.kept(|r: &mut Resident| r.fail_next = true);
    }
}
