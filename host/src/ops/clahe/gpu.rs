//! CLAHE on the device: the tile tables (each tile split over several blocks, the last one
//! writing the table), then the bilinear apply, on one stream with nothing copied back in
//! between. Gray images, color images (per channel or on luma), and batches of either.

use cudarc::driver::LaunchConfig;
use cuimg_abi::clahe::{
    APPLY_COLOR_PIXELS, APPLY_PIXELS, ClaheApply, ClaheApplyBatch, ClaheApplyBatchKernel, ClaheApplyColor,
    ClaheApplyColorBatch, ClaheApplyColorBatchKernel, ClaheApplyColorKernel, ClaheApplyKernel, ClaheSource,
    ClaheTables, ClaheTablesBatch, ClaheTablesBatchKernel, ClaheTablesColorBatch, ClaheTablesColorBatchKernel,
    ClaheTablesKernel, Geometry, LUMA, TABLES_BLOCK, TABLES_SHARED_BYTES,
};
use cuimg_abi::{BLOCK, DevPtr, DevPtrMut};

use super::Clahe;
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::ops::equalize::EqualizeMode;
use crate::ops::grayscale::GrayWeights;
use crate::pixel::{Color, Gray8, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, Chunk, DeviceBatch, DeviceView, DeviceViewMut, Gpu, Stream};

/// What the tables kernel reads of a gray image.
fn gray_source() -> Result<ClaheSource> {
    Ok(ClaheSource { channels: 1, mode: 0, rgb: [0; 3], weights: GrayWeights::Bt601.fixed()? })
}

/// What the tables kernels read of a color image, and how many sets of tables that makes
/// (one per color channel, or the luma's).
fn color_source<P: Color>(mode: EqualizeMode) -> Result<(ClaheSource, u32)> {
    // The kernels take alpha, where there is one, as the fourth byte.
    debug_assert!(P::ALPHA.is_none_or(|a| a == 3));
    let weights = GrayWeights::Bt601.fixed()?;
    let rgb = P::RGB.map(|c| c as u32);
    Ok(match mode {
        EqualizeMode::PerChannel => (ClaheSource { channels: P::CHANNELS as u32, mode: 0, rgb, weights }, 3),
        EqualizeMode::Luma => (ClaheSource { channels: P::CHANNELS as u32, mode: LUMA, rgb, weights }, 1),
    })
}

/// The grid of a tables launch: one column of blocks per tile, enough blocks per tile that
/// all of them fill the GPU once (at most one per row of the tallest tile), `sets` deep.
fn tables_grid(resident: u32, tiles: u32, tile_h: u32, sets: u32) -> LaunchConfig {
    let splits = resident.div_ceil(tiles.saturating_mul(sets)).clamp(1, tile_h.clamp(1, 65535));
    LaunchConfig {
        grid_dim: (tiles, splits, sets),
        block_dim: (TABLES_BLOCK, 1, 1),
        shared_mem_bytes: TABLES_SHARED_BYTES,
    }
}

/// `gridDim.x` of a tables launch is the number of tiles, and the kernels index tiles in u32.
fn tile_count(params: &Clahe) -> Result<u32> {
    let (tx, ty) = params.tiles();
    let n = tx as u64 * ty as u64;
    if n > i32::MAX as u64 {
        return Err(Error::InvalidParameter {
            what: "CLAHE tile grid".into(),
            why: format!("{tx}x{ty} is {n} tiles; at most {} fit one launch", i32::MAX),
        });
    }
    Ok(n as u32)
}

/// The device scratch of one CLAHE call: `sets` sets of tile histograms and counters,
/// zeroed on the stream, and of tables.
struct Work {
    hist: crate::runtime::Tracked<u32>,
    luts: crate::runtime::Tracked<u8>,
    bins: usize,
}

impl Stream {
    fn clahe_work(&self, tiles: u32, sets: usize) -> Result<Work> {
        let bins = sets * tiles as usize * 256;
        let mut hist = self.alloc_overwritten::<u32>(bins + sets * tiles as usize)?;
        self.raw.memset_zeros(hist.write(&self.raw)?.slice())?;
        let luts = self.alloc_overwritten::<u8>(bins)?;
        Ok(Work { hist, luts, bins })
    }

    /// CLAHE of a gray image into `dst` (same size; either may be a region), bit-exact with
    /// OpenCV's `createCLAHE(clip_limit, tiles).apply` and with [`crate::cpu::clahe`].
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Clahe, Gray8, Image};
    /// let img = Image::from_fn(200, 120, |x, y| Gray8([(x / 2 + y / 3) as u8]));
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Gray8>(200, 120)?;
    /// stream.clahe(&src, &mut dst, Clahe::default())?;
    /// assert_eq!(stream.download(&dst)?, cuimg::cpu::clahe(&img.view(), Clahe::default())?);
    /// # Ok(()) }
    /// ```
    pub fn clahe(
        &self,
        src: &impl AsDeviceView<Gray8>,
        dst: &mut impl AsDeviceViewMut<Gray8>,
        params: Clahe,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("CLAHE", &src, &dst)?;
        let g = params.plan(src.width(), src.height())?;
        self.queue_clahe(&src, &mut dst, params, g, gray_source()?, 1)
    }

    /// CLAHE of a color image, per channel or on its BT.601 luma as `mode` says (alpha
    /// kept), bit-exact with [`crate::cpu::clahe_color`].
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Clahe, EqualizeMode, Image, Rgb8};
    /// let img = Image::from_fn(90, 60, |x, y| Rgb8([x as u8, (y * 2) as u8, 120]));
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Rgb8>(90, 60)?;
    /// let p = Clahe::new(3.0, (4, 4))?;
    /// stream.clahe_color(&src, &mut dst, p, EqualizeMode::Luma)?;
    /// assert_eq!(stream.download(&dst)?, cuimg::cpu::clahe_color(&img.view(), p, EqualizeMode::Luma)?);
    /// # Ok(()) }
    /// ```
    pub fn clahe_color<P: Color>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        params: Clahe,
        mode: EqualizeMode,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("CLAHE", &src, &dst)?;
        let g = params.plan(src.width(), src.height())?;
        let (source, sets) = color_source::<P>(mode)?;
        self.queue_clahe(&src, &mut dst, params, g, source, sets)
    }

    /// The tables (`sets` of them: one per channel read, from channel `source.mode` on, or
    /// the luma's), then the apply, for checked views of one image.
    fn queue_clahe<P: Pixel>(
        &self,
        src: &DeviceView<'_, P>,
        dst: &mut DeviceViewMut<'_, P>,
        params: Clahe,
        g: Geometry,
        source: ClaheSource,
        sets: u32,
    ) -> Result<()> {
        let tiles = tile_count(&params)?;
        let mut work = self.clahe_work(tiles, sets as usize)?;
        let mut hist = work.hist.write(&self.raw)?;
        let mut luts = work.luts.write(&self.raw)?;
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let (h, l) = (hist.ptr(), luts.ptr());
        let tables = ClaheTables {
            src: s,
            pitch: sl.pitch,
            width: sl.width,
            height: sl.height,
            source,
            tiles: params.abi(),
            geometry: g,
            _pad: 0,
            hist: h,
            done: DevPtrMut::new(h.addr() + work.bins as u64 * 4),
            luts: l,
        };
        let resident = self.resident_blocks::<ClaheTablesKernel>(TABLES_SHARED_BYTES)?;
        let cfg = tables_grid(resident, tiles, g.tile_h, sets);
        // SAFETY: pixels (x < width, y < height) at s + y*pitch + x*channels lie in the
        // source, every channel the source names is below `channels`; `h` holds `sets`
        // zeroed sets of histograms and counters (memset above, on this stream) and `l`
        // `sets` sets of tables; one column of blocks per tile, blocks and shared memory as
        // the kernel documents; `g` is this image's geometry (`Clahe::plan`).
        unsafe { self.launch::<ClaheTablesKernel>(cfg, tables) }?;
        let image = ClaheApply {
            src: s,
            s_pitch: sl.pitch,
            dst: d,
            d_pitch: dl.pitch,
            width: sl.width as u64,
            height: sl.height as u64,
            tiles_x: params.tiles().0,
            tiles_y: params.tiles().1,
            geometry: g,
            _pad: 0,
            luts: l.as_const(),
        };
        if P::CHANNELS == 1 {
            let cfg = self.planar::<ClaheApplyKernel>(image.width.div_ceil(APPLY_PIXELS), image.height, 0)?;
            // SAFETY: both views hold width x height pixels at their pitches; the tables were
            // written by the launch before, on this stream.
            unsafe { self.launch::<ClaheApplyKernel>(cfg, image) }
        } else {
            let cfg =
                self.planar::<ClaheApplyColorKernel>(image.width.div_ceil(APPLY_COLOR_PIXELS), image.height, 0)?;
            // SAFETY: as above, with `channels` bytes per pixel (3 or 4, alpha fourth) and
            // `sets` sets of tables (3 per channel, 1 on luma, as the kernel reads them).
            unsafe { self.launch::<ClaheApplyColorKernel>(cfg, ClaheApplyColor { image, source }) }
        }
    }

    /// CLAHE of every image of a gray batch (sizes may differ), each on its own tiles:
    /// one tables launch and one apply launch for the whole batch.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Clahe, Gray8, Image};
    /// let images = [Image::from_fn(64, 40, |x, y| Gray8([(x + y) as u8])), Image::filled(9, 17, 30)];
    /// let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    /// let stream = gpu.stream()?;
    /// let src = stream.upload_batch(&views)?;
    /// let mut dst = stream.alloc_batch::<Gray8>(&src.sizes())?;
    /// let p = Clahe::new(2.0, (4, 4))?;
    /// stream.clahe_batch(&src, &mut dst, p)?;
    /// let out = stream.download_batch(&dst)?;
    /// assert_eq!(out[0], cuimg::cpu::clahe(&views[0], p)?);
    /// assert_eq!(out[1], cuimg::cpu::clahe(&views[1], p)?);
    /// # Ok(()) }
    /// ```
    pub fn clahe_batch(&self, src: &DeviceBatch<Gray8>, dst: &mut DeviceBatch<Gray8>, params: Clahe) -> Result<()> {
        self.queue_clahe_batch(src, dst, params, gray_source()?, 1)
    }

    /// CLAHE of every image of a color batch (sizes may differ), per channel or on luma as
    /// `mode` says, each on its own tiles, bit-exact with [`crate::cpu::clahe_color`]: one
    /// tables launch and one apply launch for the whole batch.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Clahe, EqualizeMode, Image, Rgb8};
    /// let images = [Image::from_fn(64, 40, |x, y| Rgb8([x as u8, y as u8, 90])), Image::filled(9, 17, 30)];
    /// let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    /// let stream = gpu.stream()?;
    /// let src = stream.upload_batch(&views)?;
    /// let mut dst = stream.alloc_batch::<Rgb8>(&src.sizes())?;
    /// let p = Clahe::new(2.0, (4, 4))?;
    /// stream.clahe_color_batch(&src, &mut dst, p, EqualizeMode::Luma)?;
    /// let out = stream.download_batch(&dst)?;
    /// assert_eq!(out[0], cuimg::cpu::clahe_color(&views[0], p, EqualizeMode::Luma)?);
    /// assert_eq!(out[1], cuimg::cpu::clahe_color(&views[1], p, EqualizeMode::Luma)?);
    /// # Ok(()) }
    /// ```
    pub fn clahe_color_batch<P: Color>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        params: Clahe,
        mode: EqualizeMode,
    ) -> Result<()> {
        let (source, sets) = color_source::<P>(mode)?;
        self.queue_clahe_batch(src, dst, params, source, sets)
    }

    /// The tables (`sets` per image, as `source` says) and the apply of a whole batch, in
    /// chunks of as many images as one launch's `gridDim.z` takes.
    fn queue_clahe_batch<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        params: Clahe,
        source: ClaheSource,
        sets: u32,
    ) -> Result<()> {
        self.check_batch_pair("CLAHE", src, dst)?;
        let tiles = tile_count(&params)?;
        // Every image's geometry is checked here; the kernels work it out again with the
        // same function.
        let mut tallest = 1;
        for (w, h) in src.sizes() {
            tallest = tallest.max(params.plan(w, h)?.tile_h);
        }
        let mut work = self.clahe_work(tiles, src.len() * sets as usize)?;
        let mut hist = work.hist.write(&self.raw)?;
        let mut luts = work.luts.write(&self.raw)?;
        let (h, l) = (hist.ptr(), luts.ptr());
        let done = h.addr() + work.bins as u64 * 4;
        let from = src.read(&self.raw)?;
        let to_table = dst.table.read(&self.raw)?;
        let _to = dst.buf.write(&self.raw)?;
        let gray = P::CHANNELS == 1;
        let resident = if gray {
            self.resident_blocks::<ClaheTablesBatchKernel>(TABLES_SHARED_BYTES)?
        } else {
            self.resident_blocks::<ClaheTablesColorBatchKernel>(TABLES_SHARED_BYTES)?
        };
        // Tables and counters of one image: `sets` sets of `tiles`.
        let (set, counters) = (tiles as u64 * 256 * sets as u64, tiles as u64 * sets as u64);
        for chunk in Chunk::layered(src.len(), sets) {
            let first = chunk.start as u64 * set;
            // This chunk's share of the scratch (the write guards above stay held).
            let (c_hist, c_done, c_luts) =
                (h.offset(first * 4), DevPtrMut::new(done + chunk.start as u64 * counters * 4), l.offset(first));
            let cfg = tables_grid(resident, tiles, tallest, chunk.count * sets);
            let table = chunk.table(from.table.ptr());
            if gray {
                let params =
                    ClaheTablesBatch { src: table, tiles: params.abi(), hist: c_hist, done: c_done, luts: c_luts };
                // SAFETY: the table holds `count` entries pointing at packed gray images
                // inside the guarded allocation, each checked by `Clahe::plan` above; the
                // buffers hold a zeroed set (histograms, counters) and a set of tables per
                // image of the chunk; blocks and shared memory as the kernel documents.
                unsafe { self.launch::<ClaheTablesBatchKernel>(cfg, params) }?;
            } else {
                let params = ClaheTablesColorBatch {
                    src: table,
                    hist: c_hist,
                    done: c_done,
                    luts: c_luts,
                    tiles: params.abi(),
                    source,
                    sets,
                    _pad: 0,
                };
                // SAFETY: as above, with packed images of `channels` bytes per pixel whose
                // channel offsets the source names below `channels`, `sets` zeroed sets
                // per image and `gridDim.z` = images x sets.
                unsafe { self.launch::<ClaheTablesColorBatchKernel>(cfg, params) }?;
            }
        }
        for chunk in Chunk::layered(src.len(), sets) {
            let (src_table, dst_table) = (chunk.table(from.table.ptr()), chunk.table(to_table.ptr()));
            let luts = DevPtr::new(l.addr() + chunk.start as u64 * set);
            let (w, h) = src.max_extent();
            if gray {
                let params = ClaheApplyBatch { src: src_table, dst: dst_table, tiles: params.abi(), luts };
                let per_image = (w.div_ceil(APPLY_PIXELS), h);
                let cfg = self.batch_config::<ClaheApplyBatchKernel>(per_image, (32, BLOCK / 32), chunk.count, 0)?;
                // SAFETY: as above for the sources, and the destination table's entries
                // (equal sizes, checked) for the outputs; each image's tables were written
                // by the launch before, on this stream.
                unsafe { self.launch::<ClaheApplyBatchKernel>(cfg, params) }?;
            } else {
                let params = ClaheApplyColorBatch { src: src_table, dst: dst_table, luts, tiles: params.abi(), source };
                let per_image = (w.div_ceil(APPLY_COLOR_PIXELS), h);
                let cfg =
                    self.batch_config::<ClaheApplyColorBatchKernel>(per_image, (32, BLOCK / 32), chunk.count, 0)?;
                // SAFETY: as above, color: `sets` sets of tables per image, alpha fourth.
                unsafe { self.launch::<ClaheApplyColorBatchKernel>(cfg, params) }?;
            }
        }
        Ok(())
    }
}

impl Gpu {
    /// Blocking CLAHE of a gray host image; see [`Stream::clahe`].
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Clahe, Gray8, Image};
    /// let img = Image::from_fn(64, 48, |x, y| Gray8([(x * 3 + y) as u8]));
    /// let p = Clahe::new(3.0, (4, 3))?;
    /// assert_eq!(gpu.clahe(&img.view(), p)?, cuimg::cpu::clahe(&img.view(), p)?);
    /// # Ok(()) }
    /// ```
    pub fn clahe(&self, src: &ImageView<'_, Gray8>, params: Clahe) -> Result<Image<Gray8>> {
        params.plan(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<Gray8>(src.width(), src.height())?;
        s.clahe(&d_src.view(), &mut d_dst.view_mut(), params)?;
        s.download(&d_dst)
    }

    /// Blocking CLAHE of a color host image; see [`Stream::clahe_color`].
    pub fn clahe_color<P: Color>(&self, src: &ImageView<'_, P>, params: Clahe, mode: EqualizeMode) -> Result<Image<P>> {
        params.plan(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<P>(src.width(), src.height())?;
        s.clahe_color(&d_src.view(), &mut d_dst.view_mut(), params, mode)?;
        s.download(&d_dst)
    }

    /// Blocking CLAHE of many gray host images, each on its own tiles; see
    /// [`Stream::clahe_batch`].
    pub fn clahe_batch(&self, images: &[ImageView<'_, Gray8>], params: Clahe) -> Result<Vec<Image<Gray8>>> {
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<Gray8>(&src.sizes())?;
        s.clahe_batch(&src, &mut dst, params)?;
        s.download_batch(&dst)
    }

    /// Blocking CLAHE of many color host images, each on its own tiles, per channel or on
    /// luma; see [`Stream::clahe_color_batch`].
    pub fn clahe_color_batch<P: Color>(
        &self,
        images: &[ImageView<'_, P>],
        params: Clahe,
        mode: EqualizeMode,
    ) -> Result<Vec<Image<P>>> {
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<P>(&src.sizes())?;
        s.clahe_color_batch(&src, &mut dst, params, mode)?;
        s.download_batch(&dst)
    }
}
