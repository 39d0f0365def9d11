//! A call's launches, recorded as they are queued, and queued again without the call's host
//! work: what an operation does for a call it has seen before (a batch of the same sizes
//! into the same buffers), as a CUDA graph replays its kernels, but with nothing to build.
//!
//! A batch of 256 photos to 224x224 spent 30 to 40 us of host time before its one kernel
//! (plans, tables, jobs, the choice of tiles, the jobs' copy), about a seventh of the call
//! (session 24, on the lent H200). Replayed, it queues the kernel with the parameters it
//! had: the jobs stay in device memory the recording holds.
//!
//! What the runtime guarantees: every launch queued through [`Stream::launch`] while a
//! recording runs is kept (its kernel, grid and parameters), and the tables it read through
//! [`Stream::with_table`] are copied to memory the recording holds, not the stream's reused
//! buffer. What the operation guarantees: it records only calls whose launches read and
//! write nothing else but its caller's buffers and memory that outlives the recording (it
//! calls [`Stream::spoil_recording`] otherwise), and replays a recording only where those
//! buffers are the caller's again, at the same addresses and of the same layout.

use std::sync::Arc;

use cudarc::driver::LaunchConfig;
use cuimg_abi::Kernel;

use super::memory::DeviceBuffer;
use super::stream::Stream;
use crate::error::Result;

type Launch = Box<dyn Fn(&Stream) -> Result<()> + Send + Sync>;

/// The launches of one call, in order, with the tables they read.
#[derive(Default)]
pub(crate) struct Recording {
    launches: Vec<Launch>,
    tables: Vec<DeviceBuffer<u8>>,
    /// Run at each replay, after the launches (an operation's counts of its launches).
    also: Vec<Box<dyn Fn() + Send + Sync>>,
    spoiled: bool,
}

impl Stream {
    /// `f`'s result and its launches, recorded (`None` where `f` spoiled the recording).
    /// `f`'s work is queued as it would be without the recording. Recordings do not nest.
    pub(crate) fn record<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(R, Option<Arc<Recording>>)> {
        /// Ends the recording however `f` ends (a panic too: the stream records no more).
        struct End<'a>(&'a Stream);
        impl Drop for End<'_> {
            fn drop(&mut self) {
                self.0.recording.take();
            }
        }
        let before = self.recording.replace(Some(Recording::default()));
        assert!(before.is_none(), "a recording runs inside another");
        let end = End(self);
        let r = f();
        let recording = self.recording.take().filter(|r| !r.spoiled);
        drop(end);
        Ok((r?, recording.map(Arc::new)))
    }

    /// Whether a recording runs.
    pub(crate) fn recording(&self) -> bool {
        self.recording.borrow().is_some()
    }

    /// The running recording may not be replayed (a launch reads memory of this call alone).
    pub(crate) fn spoil_recording(&self) {
        if let Some(r) = self.recording.borrow_mut().as_mut() {
            r.spoiled = true;
        }
    }

    /// `f` runs at each replay of the running recording (none: nothing).
    pub(crate) fn on_replay(&self, f: impl Fn() + Send + Sync + 'static) {
        if let Some(r) = self.recording.borrow_mut().as_mut() {
            r.also.push(Box::new(f));
        }
    }

    /// Keeps a launch of `K` for the running recording, if one runs.
    pub(super) fn record_launch<K: Kernel>(&self, cfg: LaunchConfig, params: K::Params) {
        if let Some(r) = self.recording.borrow_mut().as_mut() {
            r.launches.push(Box::new(move |s: &Stream| {
                // SAFETY: run only by `Stream::replay`, whose contract is this launch's again.
                unsafe { s.launch_unrecorded::<K>(cfg, params) }
            }));
        }
    }

    /// Keeps `table`, which the running recording's launches read, for its replays (none
    /// runs: dropped, freed after the launches queued on it).
    pub(super) fn hold_table(&self, table: DeviceBuffer<u8>) {
        if let Some(r) = self.recording.borrow_mut().as_mut() {
            r.tables.push(table);
        }
    }

    /// Queues `recording`'s launches again, in order.
    ///
    /// # Safety
    /// `recording` was made on this stream, and every address its launches read or write
    /// other than its tables is, again, memory of the same size and layout, read or written
    /// under guards the caller holds until this returns (the recording's operation checks
    /// its own: the same buffers, sizes and choices as the recorded call's).
    pub(crate) unsafe fn replay(&self, recording: &Recording) -> Result<()> {
        let _reads = recording.tables.iter().map(|t| t.buf.read(&self.raw)).collect::<Result<Vec<_>, _>>()?;
        for launch in &recording.launches {
            launch(self)?;
        }
        for f in &recording.also {
            f();
        }
        Ok(())
    }
}
