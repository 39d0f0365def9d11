//! CLAHE on the device: the tile tables (one block per tile), then the bilinear apply, on
//! one stream with nothing copied back in between.

use cudarc::driver::LaunchConfig;
use cuimg_abi::clahe::{ClaheApply, ClaheApplyKernel, ClaheLuts, ClaheLutsKernel, LUTS_BLOCK, LUTS_SHARED_BYTES};

use super::Clahe;
use crate::error::Result;
use crate::image::{Image, ImageView};
use crate::pixel::Gray8;
use crate::runtime::{AsDeviceView, AsDeviceViewMut, Gpu, Stream};

impl Stream {
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
        let plan = params.plan(src.width(), src.height())?;
        let (tx, ty) = plan.tiles;
        let tiles = tx * ty;
        let mut luts = self.alloc_overwritten::<u8>(tiles as usize * 256)?;
        let mut luts = luts.write(&self.raw)?;
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let l = luts.ptr();
        let params = ClaheLuts {
            src: s,
            pitch: sl.pitch,
            width: sl.width,
            height: sl.height,
            tiles_x: tx,
            tile_w: plan.tile.0,
            tile_h: plan.tile.1,
            clip: plan.clip,
            lut_scale: plan.lut_scale,
            _pad: 0,
            luts: l,
        };
        let cfg = LaunchConfig {
            grid_dim: (tiles, 1, 1),
            block_dim: (LUTS_BLOCK, 1, 1),
            shared_mem_bytes: LUTS_SHARED_BYTES,
        };
        // SAFETY: pixels (x < width, y < height) at s + y*pitch + x lie in the source; `l`
        // holds 256 bytes per tile, one block per tile of 256 threads with the shared memory
        // the kernel documents; a tile's area fits in i32 (`Clahe::plan`).
        unsafe { self.launch::<ClaheLutsKernel>(cfg, params) }?;
        let (width, height) = (sl.width as u64, sl.height as u64);
        let params = ClaheApply {
            src: s,
            s_pitch: sl.pitch,
            dst: d,
            d_pitch: dl.pitch,
            width,
            height,
            tiles_x: tx,
            tiles_y: ty,
            inv_tw: 1.0f32 / plan.tile.0 as f32,
            inv_th: 1.0f32 / plan.tile.1 as f32,
            luts: l.as_const(),
        };
        let cfg = self.planar::<ClaheApplyKernel>(width, height, 0)?;
        // SAFETY: both views hold width x height pixels at their pitches; the tables were
        // written by the launch before, on this stream.
        unsafe { self.launch::<ClaheApplyKernel>(cfg, params) }
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
}
