//! Cross-stream ordering of every allocation, device and pinned host alike.
//!
//! cudarc keeps one read event and one write event per buffer, so a write (or a free) waits
//! only for the *last* stream that read it: with long reads on stream 1 and a short read on
//! stream 2, a write on stream 3 overwrote the buffer while stream 1 was still reading it
//! (seen on an H100: 262,144 wrong pixels). cuimg therefore turns cudarc's tracking off for
//! its contexts (`Gpu::with_device`) and every buffer carries a [`Tracked`] record instead:
//!
//! - the last write, as an event on the stream that wrote;
//! - every read since that write, one event per stream that read.
//!
//! A read waits for the last write; a write waits for the last write and for *every* read
//! since; a free makes the allocating stream wait for all of them before the stream-ordered
//! free, so a same-size allocation on any stream cannot be handed memory still being read.
//! Host access to pinned memory waits on the host the same way. A wait on an event of the
//! same stream is skipped: the stream orders its own work.
//!
//! If an event cannot be recorded (a dead context), the guard synchronizes the stream
//! instead, which orders everything that follows just as well.
//!
//! A launch that reads many buffers (a batch of 256 separate images) records one event for
//! all of them ([`Reads`]), shared by their histories: one event per buffer took 50 us of
//! the host's time a call on an H100. A shared event is only ever recorded again on its own
//! stream (reads are kept per stream), which moves it later on that stream: whoever waits on
//! it then waits for at least what it marked before.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use cudarc::driver::sys::{CUevent, CUevent_flags, CUevent_wait_flags};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError, PinnedHostSlice};
use cuimg_abi::{DevPtr, DevPtrMut};

/// A driver event, taken from its context's pool of free ones and given back when dropped.
///
/// Every new buffer and every new reading stream needs an event. Making one
/// (`cuEventCreate`) and destroying one takes the driver's process-wide lock for writing, which
/// waits for every driver call in flight in every thread and stalls the calls that come
/// after it (both nvJPEG hangs of docs/BENCHMARKS.md had a thread waiting there). The pool
/// makes that once per event instead of once per buffer.
struct Event {
    raw: CUevent,
    /// Blocking-sync (the host waits on it) rather than timing-free.
    host: bool,
    /// Keeps the context, and so the event, alive while in use.
    ctx: Arc<CudaContext>,
}

// SAFETY: a driver event may be recorded, waited on and destroyed from any thread.
unsafe impl Send for Event {}
// SAFETY: as above; the driver serializes calls on one event.
unsafe impl Sync for Event {}

/// Free events of one context and kind. The pool holds the context weakly: when the context
/// is gone, so are its events (the driver destroyed them with it) and the entry is dropped
/// without touching them. The `Weak` also keeps the context's allocation, so no new context
/// can be mistaken for it.
struct Free {
    ctx: Weak<CudaContext>,
    host: bool,
    events: Vec<RawEvent>,
}

struct RawEvent(CUevent);

// SAFETY: a raw event handle, only used while its context lives (see `Free`).
unsafe impl Send for RawEvent {}

impl Free {
    fn holds(&self, ctx: &Arc<CudaContext>, host: bool) -> bool {
        self.host == host && std::ptr::eq(self.ctx.as_ptr(), Arc::as_ptr(ctx))
    }
}

static FREE: Mutex<Vec<Free>> = Mutex::new(Vec::new());

/// Free events kept per context and kind; more are destroyed.
const KEEP: usize = 4096;

impl Event {
    fn take(ctx: &Arc<CudaContext>, host: bool) -> Result<Event, DriverError> {
        {
            let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
            let mine = free.iter_mut().find(|f| f.holds(ctx, host));
            if let Some(RawEvent(raw)) = mine.and_then(|f| f.events.pop()) {
                return Ok(Event { raw, host, ctx: ctx.clone() });
            }
        }
        ctx.bind_to_thread()?;
        let flags = if host { CUevent_flags::CU_EVENT_BLOCKING_SYNC } else { CUevent_flags::CU_EVENT_DISABLE_TIMING };
        let raw = cudarc::driver::result::event::create(flags)?;
        Ok(Event { raw, host, ctx: ctx.clone() })
    }

    /// Marks the end of the work queued on `stream` so far.
    fn record(&self, stream: &CudaStream) -> Result<(), DriverError> {
        // SAFETY: a live event (its context is held) and a stream of the same context.
        unsafe { cudarc::driver::result::event::record(self.raw, stream.cu_stream()) }
    }

    /// Makes `stream` wait for the work this event last marked.
    fn wait_on(&self, stream: &CudaStream) -> Result<(), DriverError> {
        // SAFETY: as above.
        unsafe {
            cudarc::driver::result::stream::wait_event(
                stream.cu_stream(),
                self.raw,
                CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
    }

    /// Blocks the host until the work this event last marked has finished.
    fn synchronize(&self) -> Result<(), DriverError> {
        // SAFETY: a live event.
        unsafe { cudarc::driver::result::event::synchronize(self.raw) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // Reusable at once: a stream already told to wait on it waits for the work it marked
        // then, whatever is recorded later.
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        free.retain(|f| f.ctx.strong_count() > 0);
        let at = match free.iter().position(|f| f.holds(&self.ctx, self.host)) {
            Some(at) => at,
            None => {
                free.push(Free { ctx: Arc::downgrade(&self.ctx), host: self.host, events: Vec::new() });
                free.len() - 1
            }
        };
        if free[at].events.len() < KEEP {
            free[at].events.push(RawEvent(self.raw));
        } else {
            // SAFETY: a live event (its context is held) that nothing uses any more.
            let _ = unsafe { cudarc::driver::result::event::destroy(self.raw) };
        }
    }
}

/// One recorded access: the stream it was queued on and an event after it. The stream is
/// held, not just named, so its handle cannot be reused by a new stream (which would then
/// be taken for this one and skip the wait) while the access may still be running.
struct Access {
    stream: Arc<CudaStream>,
    /// Shared by several histories where one [`Reads`] recorded their reads.
    event: Arc<Event>,
}

impl Access {
    fn on(&self, stream: &Arc<CudaStream>) -> bool {
        Arc::ptr_eq(&self.stream, stream)
    }
}

/// The accesses a later one may have to wait for.
#[derive(Default)]
struct History {
    write: Option<Access>,
    reads: Vec<Access>,
    /// Events the host waits on (pinned memory) block the waiting thread instead of
    /// spinning, so pipeline workers waiting for copies leave their cores to the others.
    host: bool,
}

impl History {
    fn for_host() -> History {
        History { host: true, ..History::default() }
    }

    fn new_event(&self, stream: &Arc<CudaStream>) -> Result<Event, DriverError> {
        Event::take(stream.context(), self.host)
    }
}

impl History {
    /// Makes `stream` wait for the last write, and for every read too when `all`.
    fn wait(&self, stream: &Arc<CudaStream>, all: bool) -> Result<(), DriverError> {
        let marks = self.write.iter().chain(self.reads.iter().filter(|_| all));
        for m in marks.filter(|m| !m.on(stream)) {
            m.event.wait_on(stream)?;
        }
        Ok(())
    }

    /// Blocks the host until every recorded access (or only the last write) has finished.
    fn host_wait(&self, all: bool) -> Result<(), DriverError> {
        for m in self.write.iter().chain(self.reads.iter().filter(|_| all)) {
            m.event.synchronize()?;
        }
        Ok(())
    }

    /// Records an access that has just been queued on `stream`.
    fn record(&mut self, stream: &Arc<CudaStream>, write: bool) -> Result<(), DriverError> {
        if write {
            // Every read so far was waited for by this write, so the write's event covers
            // them: they need not be remembered.
            self.reads.clear();
            if let Some(m) = self.write.as_mut() {
                m.stream = stream.clone();
                return m.event.record(stream);
            }
            let event = self.new_event(stream)?;
            event.record(stream)?;
            self.write = Some(Access { stream: stream.clone(), event: Arc::new(event) });
            return Ok(());
        }
        if let Some(m) = self.reads.iter().find(|m| m.on(stream)) {
            // A later event on the same stream covers the earlier one.
            return m.event.record(stream);
        }
        let event = self.new_event(stream)?;
        event.record(stream)?;
        self.reads.push(Access { stream: stream.clone(), event: Arc::new(event) });
        Ok(())
    }

    /// Records a read just queued on `stream` by `event`, recorded after it (see [`Reads`]).
    fn share_read(&mut self, stream: &Arc<CudaStream>, event: &Arc<Event>) {
        match self.reads.iter_mut().find(|m| m.on(stream)) {
            // The new event is later on the same stream: it covers the one it replaces.
            Some(m) => m.event = event.clone(),
            None => self.reads.push(Access { stream: stream.clone(), event: event.clone() }),
        }
    }
}

/// Records the access when dropped (after the caller has queued its work), falling back to
/// a stream synchronize when the event cannot be recorded.
fn finish(history: &Mutex<History>, stream: &Arc<CudaStream>, write: bool) {
    if lock(history).record(stream, write).is_err() {
        // Waiting for the work makes any later access safe without an event; if even this
        // fails the context is lost and no later work on it runs.
        let _ = stream.synchronize();
    }
}

fn lock(history: &Mutex<History>) -> MutexGuard<'_, History> {
    // The history stays consistent whatever panicked while it was held: every update is a
    // single push or assignment.
    history.lock().unwrap_or_else(|e| e.into_inner())
}

/// Device memory with its access history. All of cuimg's device allocations are one of
/// these, so no safe call can reorder a read and a write of the same bytes across streams.
pub(crate) struct Tracked<T> {
    slice: Option<CudaSlice<T>>,
    history: Mutex<History>,
    /// Memory of another library's ([`Tracked::borrowed`]): never freed here.
    borrowed: bool,
}

impl<T> Tracked<T> {
    /// Wraps memory that `stream` has just written (allocated and filled).
    pub fn written(slice: CudaSlice<T>, stream: &Arc<CudaStream>) -> Result<Tracked<T>, DriverError> {
        let mut history = History::default();
        history.record(stream, true)?;
        Ok(Tracked { slice: Some(slice), history: Mutex::new(history), borrowed: false })
    }

    /// Wraps memory another library owns, as written by the work queued on `stream` so far.
    /// Dropping it frees nothing: it waits on the host until every access cuimg queued has
    /// finished, so the owner may reuse or free the memory as soon as the drop returns.
    pub fn borrowed(slice: CudaSlice<T>, stream: &Arc<CudaStream>) -> Result<Tracked<T>, DriverError> {
        let mut t = Tracked::written(slice, stream)?;
        t.borrowed = true;
        Ok(t)
    }

    fn slice(&self) -> &CudaSlice<T> {
        self.slice.as_ref().expect("present until drop")
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slice().len()
    }

    /// The device address of element 0, as a number (for tables that point into this
    /// memory; accesses still go through [`Tracked::read`] and [`Tracked::write`]).
    pub fn device_addr(&self) -> u64 {
        let slice = self.slice();
        // With tracking off the guard records nothing; the address is all that is taken.
        slice.device_ptr(slice.stream()).0
    }

    pub fn context(&self) -> &Arc<cudarc::driver::CudaContext> {
        self.slice().context()
    }

    /// Waits on the host until every access cuimg queued on the memory has finished (before
    /// handing it to code that does not follow its events: a DLPack consumer).
    #[cfg(feature = "dlpack")]
    pub fn finish(&self) -> Result<(), DriverError> {
        lock(&self.history).host_wait(true)
    }

    /// Access for reading on `stream`: `stream` now waits for the last write, and the read
    /// is recorded when the guard drops, so queue the work before dropping it.
    pub fn read<'a>(&'a self, stream: &'a Arc<CudaStream>) -> Result<Read<'a, T>, DriverError> {
        lock(&self.history).wait(stream, false)?;
        Ok(Read { owner: self, stream })
    }

    /// Access for writing on `stream`: `stream` now waits for the last write and every read
    /// since; the write is recorded when the guard drops.
    pub fn write<'a>(&'a mut self, stream: &'a Arc<CudaStream>) -> Result<Write<'a, T>, DriverError> {
        lock(&self.history).wait(stream, true)?;
        Ok(Write { owner: self, stream })
    }
}

impl<T> Drop for Tracked<T> {
    fn drop(&mut self) {
        let Some(slice) = self.slice.take() else { return };
        let history = self.history.get_mut().unwrap_or_else(|e| e.into_inner());
        if self.borrowed {
            // Not ours to free: hand it back once nothing of cuimg's touches it. (If the wait
            // fails the context is lost and runs nothing more on it.)
            let _ = history.host_wait(true);
            let _ = slice.leak();
            return;
        }
        // cudarc frees on the allocating stream, stream-ordered: make that stream wait for
        // every access first (or, failing that, the host).
        if history.wait(slice.stream(), true).is_err() {
            let _ = history.host_wait(true);
        }
        drop(slice);
    }
}

/// A read access; see [`Tracked::read`].
pub(crate) struct Read<'a, T> {
    owner: &'a Tracked<T>,
    stream: &'a Arc<CudaStream>,
}

impl<T> Read<'_, T> {
    /// The device address of element 0.
    pub fn ptr(&self) -> DevPtr<T> {
        DevPtr::new(self.owner.slice().device_ptr(self.stream).0)
    }

    /// The memory, for cudarc's copy functions (which, with tracking off, add no ordering).
    pub fn slice(&self) -> &CudaSlice<T> {
        self.owner.slice()
    }
}

impl<T> Drop for Read<'_, T> {
    fn drop(&mut self) {
        finish(&self.owner.history, self.stream, false);
    }
}

/// Read accesses to several buffers on one stream, for work queued while the guard lives,
/// recorded when it drops by one event shared by all their histories (falling back to a
/// stream synchronize, as [`Read`] does).
pub(crate) struct Reads<'a> {
    histories: Vec<&'a Mutex<History>>,
    stream: &'a Arc<CudaStream>,
}

impl<'a> Reads<'a> {
    pub fn new(stream: &'a Arc<CudaStream>) -> Reads<'a> {
        Reads { histories: Vec::new(), stream }
    }

    /// Adds a read of `t`: the stream now waits for its last write. The device address of
    /// its element 0.
    pub fn add<T>(&mut self, t: &'a Tracked<T>) -> Result<DevPtr<T>, DriverError> {
        lock(&t.history).wait(self.stream, false)?;
        self.histories.push(&t.history);
        Ok(DevPtr::new(t.slice().device_ptr(self.stream).0))
    }
}

impl Drop for Reads<'_> {
    fn drop(&mut self) {
        if self.histories.is_empty() {
            return;
        }
        let event = Event::take(self.stream.context(), false).and_then(|e| e.record(self.stream).map(|()| Arc::new(e)));
        let Ok(event) = event else {
            // As `finish`: the work done, no later access needs an event.
            let _ = self.stream.synchronize();
            return;
        };
        for h in &self.histories {
            lock(h).share_read(self.stream, &event);
        }
    }
}

/// A write access; see [`Tracked::write`].
pub(crate) struct Write<'a, T> {
    owner: &'a mut Tracked<T>,
    stream: &'a Arc<CudaStream>,
}

impl<T> Write<'_, T> {
    /// The device address of element 0.
    pub fn ptr(&mut self) -> DevPtrMut<T> {
        let stream = self.stream;
        DevPtrMut::new(self.owner.slice.as_mut().expect("present until drop").device_ptr_mut(stream).0)
    }

    /// The memory, for cudarc's copy and memset functions.
    pub fn slice(&mut self) -> &mut CudaSlice<T> {
        self.owner.slice.as_mut().expect("present until drop")
    }
}

impl<T> Drop for Write<'_, T> {
    fn drop(&mut self) {
        finish(&self.owner.history, self.stream, true);
    }
}

/// Page-locked host memory with its access history: copies to the device read it, copies
/// from the device write it, and the host waits for the right ones before touching it.
pub(crate) struct TrackedHost {
    slice: Option<PinnedHostSlice<u8>>,
    history: Mutex<History>,
}

impl TrackedHost {
    pub fn new(slice: PinnedHostSlice<u8>) -> TrackedHost {
        TrackedHost { slice: Some(slice), history: Mutex::new(History::for_host()) }
    }

    fn slice(&self) -> &PinnedHostSlice<u8> {
        self.slice.as_ref().expect("present until drop")
    }

    pub fn context(&self) -> &Arc<cudarc::driver::CudaContext> {
        self.slice().context()
    }

    pub fn len(&self) -> usize {
        self.slice().len()
    }

    /// The bytes for the host to read, once every device write to them has finished.
    pub fn host_bytes(&self) -> Result<&[u8], DriverError> {
        lock(&self.history).host_wait(false)?;
        self.slice().as_slice()
    }

    /// The bytes for the host to write, once every device access has finished.
    pub fn host_bytes_mut(&mut self) -> Result<&mut [u8], DriverError> {
        let history = self.history.get_mut().unwrap_or_else(|e| e.into_inner());
        history.host_wait(true)?;
        *history = History::for_host();
        self.slice.as_mut().expect("present until drop").as_mut_slice()
    }

    /// For a copy to the device queued on `stream` while the guard lives.
    pub fn read<'a>(&'a self, stream: &'a Arc<CudaStream>) -> Result<HostRead<'a>, DriverError> {
        lock(&self.history).wait(stream, false)?;
        Ok(HostRead { owner: self, stream })
    }

    /// For a copy from the device queued on `stream` while the guard lives.
    pub fn write<'a>(&'a mut self, stream: &'a Arc<CudaStream>) -> Result<HostWrite<'a>, DriverError> {
        lock(&self.history).wait(stream, true)?;
        Ok(HostWrite { owner: self, stream })
    }
}

impl Drop for TrackedHost {
    fn drop(&mut self) {
        let history = self.history.get_mut().unwrap_or_else(|e| e.into_inner());
        // Freeing page-locked memory is not stream-ordered: wait on the host for every copy
        // that touches it. (If the wait fails the context is lost and runs no more copies.)
        let _ = history.host_wait(true);
        drop(self.slice.take());
    }
}

pub(crate) struct HostRead<'a> {
    owner: &'a TrackedHost,
    stream: &'a Arc<CudaStream>,
}

impl HostRead<'_> {
    pub fn slice(&self) -> &PinnedHostSlice<u8> {
        self.owner.slice()
    }

    /// The pinned bytes, for a copy queued while the guard lives (no host wait: the
    /// guard's stream already waits for every earlier write to them).
    pub fn bytes(&self) -> Result<&[u8], DriverError> {
        self.owner.slice().as_slice()
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        self.stream
    }
}

impl Drop for HostRead<'_> {
    fn drop(&mut self) {
        finish(&self.owner.history, self.stream, false);
    }
}

pub(crate) struct HostWrite<'a> {
    owner: &'a mut TrackedHost,
    stream: &'a Arc<CudaStream>,
}

impl HostWrite<'_> {
    pub fn slice(&mut self) -> &mut PinnedHostSlice<u8> {
        self.owner.slice.as_mut().expect("present until drop")
    }

    /// The pinned bytes, for a copy queued while the guard lives.
    pub fn bytes(&mut self) -> Result<&mut [u8], DriverError> {
        self.slice().as_mut_slice()
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        self.stream
    }
}

impl Drop for HostWrite<'_> {
    fn drop(&mut self) {
        finish(&self.owner.history, self.stream, true);
    }
}
