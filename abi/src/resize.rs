//! Resizing. The host turns each resize into tables (what each output pixel reads, and with
//! which weights, made from the reference's own arithmetic); the kernels run them. Every
//! kernel takes an array of [`ResizeJob`]s, one per image (`blockIdx.z`), so a single image
//! and a ragged batch take the same kernels, and reads each job's tables at its offsets into
//! the launch's table buffers. Every source read is clamped into its image.

use crate::DevPtr;
use crate::tensor::TensorFormat;
use crate::yuv::Decode;

/// An image as the resize kernels read or write it: its first pixel's device address, its
/// row pitch in bytes, its size.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Plane {
    pub data: u64,
    pub pitch: u64,
    pub width: u32,
    pub height: u32,
}

pub use crate::pair;

impl Plane {
    /// Its `repr(C)` layout as words (see [`pair`]).
    pub const fn words(&self) -> [u64; 3] {
        [self.data, self.pitch, pair(self.width, self.height)]
    }
}

/// One image's resize. The meaning of `x`, `xw`, `y`, `yw` and `extra` is each kernel's (its
/// parameters say); they are element offsets into the launch's tables, or small integers.
///
/// A letterbox in the same launch: where `outer.data` is not 0, `dst` is the region of
/// `outer` at (`left`, `top`), and every kernel also writes `fill` (one byte a channel,
/// channel 0 lowest) to each pixel of `outer` outside it. The launch covers `outer`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResizeJob {
    pub src: Plane,
    pub dst: Plane,
    pub x: u32,
    pub xw: u32,
    pub y: u32,
    pub yw: u32,
    pub extra: u32,
    pub fill: u32,
    pub outer: Plane,
    pub left: u32,
    pub top: u32,
}

impl ResizeJob {
    /// The size the launch covers for this job: its frame's, else its output's.
    pub const fn extent(&self) -> (u32, u32) {
        if self.outer.data != 0 { (self.outer.width, self.outer.height) } else { (self.dst.width, self.dst.height) }
    }
}

/// A launch's jobs: `list[blockIdx.z]` on the device, or, where `list` is null, the one
/// job `one` carried in the parameters themselves (a single image's launch whose tables
/// are already on the device uploads nothing).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Jobs {
    pub list: DevPtr<ResizeJob>,
    pub one: ResizeJob,
}

/// Nearest neighbour: output `(x, y)` copies source `(ints[job.x + x], ints[job.y + y])`;
/// `u32::MAX` in either leaves it 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizeGather {
    pub jobs: Jobs,
    pub count: u32,
    pub _pad: u32,
    pub ints: DevPtr<u32>,
}

/// OpenCV's separable fixed point. Output `x` of a row sums `x_taps` source columns from
/// `ints[job.x + x]` with weights `shorts[job.xw + x * x_taps ..]`; the `y_taps` rows from
/// `ints[job.y + y]` are combined with `shorts[job.yw + y * y_taps ..]` by `rule` (0 linear,
/// 1 cubic, whose first `job.extra` elements of a row take the float form, 2 Lanczos-4, 3
/// OpenCV's bit-exact linear). Rule 4 is OpenCV's area average in float
/// (`ResizeArea_Invoker`), its weights `floats[job.xw ..]` and `floats[job.yw ..]` in place
/// of the shorts: each row's sum across `0 + s0*a0 + s1*a1 + ...`, then the rows'
/// `0 + b0*r0 + b1*r1 + ...`, each in list order (a list shorter than the taps is padded
/// with weights 0, which leave a sum of finite terms as it was). Each kernel's rules and
/// taps are constants of its code: the kernels of 2 taps take rules 0 and 3, of 4 rule 1,
/// of 8 rule 2, each with exactly its taps on both axes; the `ResizeArea4*`,
/// `ResizeArea54*`, `ResizeArea84*` and `ResizeArea8*` kernels rule 4 with 4 taps each way,
/// 5 across and 4 down, 8 across and 4 down, and 8 each way (a rule or count read at run
/// time branched on every tap).
///
/// The kernels work in tiles of [`SEPARABLE_TILE_W`] columns by `tile_rows` rows (at most
/// [`SEPARABLE_TILE_ROWS`]), one block of [`SEPARABLE_THREADS`] threads a tile: first every
/// source row the tile's rows read is summed across into shared memory (`tile_words` i32,
/// the launch's dynamic shared memory), then each output pixel combines its rows from there.
/// A source row shared by several output rows is summed across once, not once per output
/// row. `tile_rows` is the host's choice: the tile's source rows (from its first row's first
/// row to its last row's first row plus `y_taps`) times `SEPARABLE_TILE_W` times the
/// channels fit `tile_words`; one row always fits, given `y_taps` rows of space.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizeSeparable {
    pub jobs: Jobs,
    pub count: u32,
    pub x_taps: u32,
    pub y_taps: u32,
    pub rule: u32,
    pub ints: DevPtr<i32>,
    pub shorts: DevPtr<i16>,
    pub floats: DevPtr<f32>,
    pub tile_rows: u32,
    pub tile_words: u32,
}

/// [`ResizeSeparable::rule`] of OpenCV's area in float (the `ResizeArea4*`, `ResizeArea54*`,
/// `ResizeArea84*` and `ResizeArea8*` kernels).
pub const RULE_AREA: u32 = 4;

/// Output columns of a separable kernel's tile.
pub const SEPARABLE_TILE_W: u32 = 64;

/// Most output rows of a separable kernel's tile.
pub const SEPARABLE_TILE_ROWS: u32 = 32;

/// Threads of a separable kernel's block (one dimension): each makes 4 output pixels of a
/// row side by side, `SEPARABLE_TILE_W / 4` of them a row, so a block covers 16 rows at a
/// time (a tile of 32 rows in two).
pub const SEPARABLE_THREADS: u32 = 256;

/// Output pixels side by side that each thread of the gather kernels makes (the launch's x
/// extent is the widest output divided by it, rounded up).
pub const GATHER_PER_THREAD: u32 = 4;

/// Output pixels side by side that each thread of the cells kernels makes (the launch's x
/// extent is the widest output divided by it, rounded up).
pub const CELLS_PER_THREAD: u32 = 4;

/// OpenCV's integer-factor area: the sum of each `job.x` x `job.y` cell; `(sum + 2) >> 2`
/// when `job.extra` is 1, else the sum times `1.f / (x * y)` rounded to even.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizeCells {
    pub jobs: Jobs,
    pub count: u32,
    pub _pad: u32,
}

/// OpenCV's area average in float. Per axis, `ints[job.x ..]` holds `width + 1` list starts
/// then the source indices, `floats[job.xw ..]` their weights (`job.y`, `job.yw` for rows):
/// per row of the cell the weighted sum across, then the rows', each in list order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizeArea {
    pub jobs: Jobs,
    pub count: u32,
    pub _pad: u32,
    pub ints: DevPtr<u32>,
    pub floats: DevPtr<f32>,
}

/// One of Pillow's passes, along rows (`horizontal`) or columns: output index `i` sums
/// `job.y` inputs from `ints[job.x + i]` with weights `weights[job.xw + i * job.y ..]`,
/// 22-bit fixed point, clipped to a byte. A horizontal pass reads input row `r + job.extra`
/// for output row `r`; a vertical one input rows from `ints[job.x + r] - job.extra`.
/// `premultiply`: colors are multiplied by alpha as they are read (Pillow's `RGBa`);
/// `divide`: divided by it as they are written.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizePillow {
    pub jobs: Jobs,
    pub count: u32,
    pub horizontal: u32,
    pub premultiply: u32,
    pub divide: u32,
    pub ints: DevPtr<i32>,
    pub weights: DevPtr<i32>,
}

/// Pillow's two passes in one launch, for plans of a horizontal pass then a vertical one
/// (what `ImagingResampleInner` does where both sides change), tiled as [`ResizeSeparable`]:
/// the horizontal pass's bytes of every source row a tile reads go to shared memory
/// (`tile_words` words, one byte per row, channel and column), then the vertical pass reads
/// them there. Output column `x` sums `job.extra & 0xFFFF` source columns from
/// `ints[job.x + x]` with `weights[job.xw + x * that ..]`; output row `y` sums
/// `job.extra >> 16` of those rows from source row `ints[job.y + y]` with
/// `weights[job.yw + y * that ..]`, each pass in 22-bit fixed point clipped to a byte.
/// `premultiply`: colors are multiplied by alpha as they are read and divided by it as
/// they are written (Pillow's `RGBa` and `La`; the kernels of 1 and 3 channels, which have
/// no alpha, ignore it).
///
/// The `_planes` kernels (one channel and three, no alpha) read both passes' weights in
/// the planes form, the taps in groups of four (`taps.div_ceil(4)` groups, the taps past
/// the plan's weighted 0): output column `x`'s taps are the `4 * groups` source columns
/// from `ints[job.x + x]`, all of them in the source; output row `y`'s the rows from
/// `ints[job.y + y]`, as above. Group `g` of column `x` is a 16-byte vector, the words
/// `weights[job.xw + 4 * (g * dst.width + x) ..][..4]` read as `u32` (of row `y`,
/// `weights[job.yw + 4 * (g * dst.height + y) ..]`; `job.xw` and `job.yw` multiples of 4,
/// the tables 16-byte aligned): the four taps' low bytes (`w & 0xFF`, tap `i` in byte `i`),
/// the signed rests (`w >> 8`) of taps 0 and 1, then of taps 2 and 3, as 16-bit halves
/// (the lower tap in the low half), and a word unused. Each weight is `low + 256 * rest`,
/// so the kernels' dot products sum what the other form sums.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizePillowTiled {
    pub jobs: Jobs,
    pub count: u32,
    pub premultiply: u32,
    pub ints: DevPtr<i32>,
    pub weights: DevPtr<i32>,
    pub tile_rows: u32,
    pub tile_words: u32,
}

/// The `_mma` kernels' windows: 8 outputs side by side (of a tile's columns from a multiple
/// of 8, or of any 8 rows) read at most this many steps of 16 inputs, from the first one's
/// first input rounded down to a multiple of 4 (within a tile's rows, for the vertical pass)
/// to the last one's last tap. The host sends them no plan whose taps need more.
pub const PILLOW_MMA_STEPS: u32 = 4;

/// Most output rows of an `_mma` kernel's tile (twice [`SEPARABLE_TILE_ROWS`]: its vertical
/// pass gives each warp of the block 8 rows or more, and a taller tile sums fewer source
/// rows twice; their tile bytes are one a value, not the separable kernels' four).
pub const PILLOW_MMA_TILE_ROWS: u32 = 64;

/// The bytes past the `_mma` kernels' tile bytes in their shared memory (what the last
/// column's window may read past its rows): `tile_words * 4 = C * SEPARABLE_TILE_W * rs +
/// PILLOW_MMA_PAD`, `rs` (the bytes a column's rows take) a multiple of 16 whose quarter is
/// odd times 4.
pub const PILLOW_MMA_PAD: u32 = 64;

/// Where a tiled resize's pixels go in a tensor: its format, and the element each byte of
/// each channel becomes, `table[b * 4 + c]` (f32 bits, or a half's 16 bits in the low
/// half), made on the host by [`TensorFormat::bits`]: each element one load, not a
/// division and a conversion.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TensorOut {
    pub format: TensorFormat,
    pub table: DevPtr<u32>,
}

/// Entries of [`TensorOut::table`]: a channel's 256 bytes, 4 channels each.
pub const TENSOR_TABLE_LEN: usize = 256 * 4;

/// A separable resize (see [`ResizeSeparable`]) whose output pixels are normalized into a
/// float tensor as they are made (issue 29: resize and `to_tensor` in one pass): each job's
/// `dst.data` is the device address of its image's first element in the tensor, `dst.width`
/// and `dst.height` the resized size (`dst.pitch` unused); where `outer.data` is not 0 (the
/// same address), `outer.width` x `outer.height` is the tensor's image and `format.fill`
/// goes to its elements outside the resized rectangle. Each output byte becomes what
/// `to_tensor` makes of it ([`TensorOut`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizeSeparableTensor {
    pub resize: ResizeSeparable,
    pub out: TensorOut,
}

/// Pillow's two tiled passes ([`ResizePillowTiled`]) into a float tensor, as
/// [`ResizeSeparableTensor`] describes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizePillowTiledTensor {
    pub resize: ResizePillowTiled,
    pub out: TensorOut,
}

/// A separable resize of YUV frames into a float tensor (issue 29, part 3: a frame to a
/// resized, normalized tensor in one pass): as [`ResizeSeparableTensor`], each job's
/// `src.data` a frame's first byte and `src.width` and `src.height` its image's size
/// (`src.pitch` unused: planes are packed as `layout` says, one of `cuimg_abi::yuv`'s),
/// every source pixel decoded to RGB by `coef` as it is read: the sums are the resize's of
/// the image `yuv_to_image` would have made.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizeSeparableYuv {
    pub resize: ResizeSeparable,
    pub out: TensorOut,
    pub layout: u32,
    pub _pad: u32,
    pub coef: Decode,
}

/// Pillow's two tiled passes of YUV frames into a float tensor, as [`ResizeSeparableYuv`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResizePillowTiledYuv {
    pub resize: ResizePillowTiled,
    pub out: TensorOut,
    pub layout: u32,
    pub _pad: u32,
    pub coef: Decode,
}

kernels! {
    /// One output pixel per thread; 2-D over the largest output, `blockIdx.z` the job.
    ResizeGatherC1 = resize_gather_c1(ResizeGather);
    ResizeGatherC2 = resize_gather_c2(ResizeGather);
    ResizeGatherC3 = resize_gather_c3(ResizeGather);
    ResizeGatherC4 = resize_gather_c4(ResizeGather);
    /// Separable plans of at most 2 taps (linear), 4 (cubic), 8 (Lanczos-4): the fewer the
    /// taps, the fewer registers. One block of [`SEPARABLE_THREADS`] a tile (see
    /// [`ResizeSeparable`]), x and y over the largest output's tiles.
    ResizeSeparable2C1 = resize_separable2_c1(ResizeSeparable);
    ResizeSeparable2C2 = resize_separable2_c2(ResizeSeparable);
    ResizeSeparable2C3 = resize_separable2_c3(ResizeSeparable);
    ResizeSeparable2C4 = resize_separable2_c4(ResizeSeparable);
    ResizeSeparable4C1 = resize_separable4_c1(ResizeSeparable);
    ResizeSeparable4C2 = resize_separable4_c2(ResizeSeparable);
    ResizeSeparable4C3 = resize_separable4_c3(ResizeSeparable);
    ResizeSeparable4C4 = resize_separable4_c4(ResizeSeparable);
    ResizeSeparableC1 = resize_separable_c1(ResizeSeparable);
    ResizeSeparableC2 = resize_separable_c2(ResizeSeparable);
    ResizeSeparableC3 = resize_separable_c3(ResizeSeparable);
    ResizeSeparableC4 = resize_separable_c4(ResizeSeparable);
    /// OpenCV's area in float as separable tiles (rule 4 of [`ResizeSeparable`]): plans
    /// whose lists are at most 4 long each way, 5 across and 4 down, 8 across and 4 down,
    /// or 8 each way, padded to that.
    ResizeArea4C1 = resize_area4_c1(ResizeSeparable);
    ResizeArea4C2 = resize_area4_c2(ResizeSeparable);
    ResizeArea4C3 = resize_area4_c3(ResizeSeparable);
    ResizeArea4C4 = resize_area4_c4(ResizeSeparable);
    ResizeArea54C1 = resize_area54_c1(ResizeSeparable);
    ResizeArea54C2 = resize_area54_c2(ResizeSeparable);
    ResizeArea54C3 = resize_area54_c3(ResizeSeparable);
    ResizeArea54C4 = resize_area54_c4(ResizeSeparable);
    ResizeArea84C1 = resize_area84_c1(ResizeSeparable);
    ResizeArea84C2 = resize_area84_c2(ResizeSeparable);
    ResizeArea84C3 = resize_area84_c3(ResizeSeparable);
    ResizeArea84C4 = resize_area84_c4(ResizeSeparable);
    ResizeArea8C1 = resize_area8_c1(ResizeSeparable);
    ResizeArea8C2 = resize_area8_c2(ResizeSeparable);
    ResizeArea8C3 = resize_area8_c3(ResizeSeparable);
    ResizeArea8C4 = resize_area8_c4(ResizeSeparable);
    ResizeArea4C1Tensor = resize_area4_c1_tensor(ResizeSeparableTensor);
    ResizeArea4C2Tensor = resize_area4_c2_tensor(ResizeSeparableTensor);
    ResizeArea4C3Tensor = resize_area4_c3_tensor(ResizeSeparableTensor);
    ResizeArea4C4Tensor = resize_area4_c4_tensor(ResizeSeparableTensor);
    ResizeArea54C1Tensor = resize_area54_c1_tensor(ResizeSeparableTensor);
    ResizeArea54C2Tensor = resize_area54_c2_tensor(ResizeSeparableTensor);
    ResizeArea54C3Tensor = resize_area54_c3_tensor(ResizeSeparableTensor);
    ResizeArea54C4Tensor = resize_area54_c4_tensor(ResizeSeparableTensor);
    ResizeArea84C1Tensor = resize_area84_c1_tensor(ResizeSeparableTensor);
    ResizeArea84C2Tensor = resize_area84_c2_tensor(ResizeSeparableTensor);
    ResizeArea84C3Tensor = resize_area84_c3_tensor(ResizeSeparableTensor);
    ResizeArea84C4Tensor = resize_area84_c4_tensor(ResizeSeparableTensor);
    ResizeArea8C1Tensor = resize_area8_c1_tensor(ResizeSeparableTensor);
    ResizeArea8C2Tensor = resize_area8_c2_tensor(ResizeSeparableTensor);
    ResizeArea8C3Tensor = resize_area8_c3_tensor(ResizeSeparableTensor);
    ResizeArea8C4Tensor = resize_area8_c4_tensor(ResizeSeparableTensor);
    ResizeCellsC1 = resize_cells_c1(ResizeCells);
    ResizeCellsC2 = resize_cells_c2(ResizeCells);
    ResizeCellsC3 = resize_cells_c3(ResizeCells);
    ResizeCellsC4 = resize_cells_c4(ResizeCells);
    ResizeAreaC1 = resize_area_c1(ResizeArea);
    ResizeAreaC2 = resize_area_c2(ResizeArea);
    ResizeAreaC3 = resize_area_c3(ResizeArea);
    ResizeAreaC4 = resize_area_c4(ResizeArea);
    ResizePillowC1 = resize_pillow_c1(ResizePillow);
    ResizePillowC2 = resize_pillow_c2(ResizePillow);
    ResizePillowC3 = resize_pillow_c3(ResizePillow);
    ResizePillowC4 = resize_pillow_c4(ResizePillow);
    /// One block of [`SEPARABLE_THREADS`] a tile (see [`ResizePillowTiled`]).
    ResizePillowTiledC1 = resize_pillow_tiled_c1(ResizePillowTiled);
    ResizePillowTiledC2 = resize_pillow_tiled_c2(ResizePillowTiled);
    ResizePillowTiledC3 = resize_pillow_tiled_c3(ResizePillowTiled);
    ResizePillowTiledC4 = resize_pillow_tiled_c4(ResizePillowTiled);
    /// The same, reading the horizontal pass's taps four at a time as words.
    ResizePillowTiledWordsC3 = resize_pillow_tiled_words_c3(ResizePillowTiled);
    ResizePillowTiledWordsC4 = resize_pillow_tiled_words_c4(ResizePillowTiled);
    /// The horizontal pass by dot products, its tables the planes form.
    ResizePillowTiledPlanesC1 = resize_pillow_tiled_planes_c1(ResizePillowTiled);
    ResizePillowTiledPlanesC3 = resize_pillow_tiled_planes_c3(ResizePillowTiled);
    /// The `_mma` kernels (one channel and three, no alpha): both passes by the tensor
    /// cores' integer products, from the plain tables (see [`PILLOW_MMA_STEPS`]), in tiles
    /// of up to [`PILLOW_MMA_TILE_ROWS`] rows.
    ResizePillowTiledMmaC1 = resize_pillow_tiled_mma_c1(ResizePillowTiled);
    ResizePillowTiledMmaC3 = resize_pillow_tiled_mma_c3(ResizePillowTiled);
    /// The tiled kernels into tensors ([`ResizeSeparableTensor`], [`ResizePillowTiledTensor`]).
    ResizeSeparable2C1Tensor = resize_separable2_c1_tensor(ResizeSeparableTensor);
    ResizeSeparable2C2Tensor = resize_separable2_c2_tensor(ResizeSeparableTensor);
    ResizeSeparable2C3Tensor = resize_separable2_c3_tensor(ResizeSeparableTensor);
    ResizeSeparable2C4Tensor = resize_separable2_c4_tensor(ResizeSeparableTensor);
    ResizeSeparable4C1Tensor = resize_separable4_c1_tensor(ResizeSeparableTensor);
    ResizeSeparable4C2Tensor = resize_separable4_c2_tensor(ResizeSeparableTensor);
    ResizeSeparable4C3Tensor = resize_separable4_c3_tensor(ResizeSeparableTensor);
    ResizeSeparable4C4Tensor = resize_separable4_c4_tensor(ResizeSeparableTensor);
    ResizeSeparableC1Tensor = resize_separable_c1_tensor(ResizeSeparableTensor);
    ResizeSeparableC2Tensor = resize_separable_c2_tensor(ResizeSeparableTensor);
    ResizeSeparableC3Tensor = resize_separable_c3_tensor(ResizeSeparableTensor);
    ResizeSeparableC4Tensor = resize_separable_c4_tensor(ResizeSeparableTensor);
    ResizePillowTiledC1Tensor = resize_pillow_tiled_c1_tensor(ResizePillowTiledTensor);
    ResizePillowTiledC2Tensor = resize_pillow_tiled_c2_tensor(ResizePillowTiledTensor);
    ResizePillowTiledC3Tensor = resize_pillow_tiled_c3_tensor(ResizePillowTiledTensor);
    ResizePillowTiledC4Tensor = resize_pillow_tiled_c4_tensor(ResizePillowTiledTensor);
    ResizePillowTiledWordsC3Tensor = resize_pillow_tiled_words_c3_tensor(ResizePillowTiledTensor);
    ResizePillowTiledWordsC4Tensor = resize_pillow_tiled_words_c4_tensor(ResizePillowTiledTensor);
    ResizePillowTiledPlanesC1Tensor = resize_pillow_tiled_planes_c1_tensor(ResizePillowTiledTensor);
    ResizePillowTiledPlanesC3Tensor = resize_pillow_tiled_planes_c3_tensor(ResizePillowTiledTensor);
    ResizePillowTiledMmaC1Tensor = resize_pillow_tiled_mma_c1_tensor(ResizePillowTiledTensor);
    ResizePillowTiledMmaC3Tensor = resize_pillow_tiled_mma_c3_tensor(ResizePillowTiledTensor);
    /// YUV frames decoded to RGB into tensors ([`ResizeSeparableYuv`], [`ResizePillowTiledYuv`]).
    ResizeSeparable2YuvTensor = resize_separable2_yuv_tensor(ResizeSeparableYuv);
    ResizeSeparable4YuvTensor = resize_separable4_yuv_tensor(ResizeSeparableYuv);
    ResizeSeparableYuvTensor = resize_separable_yuv_tensor(ResizeSeparableYuv);
    ResizePillowTiledYuvTensor = resize_pillow_tiled_yuv_tensor(ResizePillowTiledYuv);
}
