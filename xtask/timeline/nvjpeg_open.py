# Which nvJPEG calls take the ~273 ms: handle, states, decoders, encoder, on one handle.
import ctypes, time, sys
t0 = time.time()
cuda = ctypes.CDLL("libcuda.so.1"); assert cuda.cuInit(0) == 0
dev = ctypes.c_int(); cuda.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0; cuda.cuCtxSetCurrent(ctx)
nj = ctypes.CDLL("/usr/local/cuda/lib64/libnvjpeg.so.13")
def t(label, f, *a):
    s = time.time(); r = f(*a); print("  %-40s status %d %6.0f ms" % (label, r, (time.time() - s) * 1e3), flush=True); return r
V = ctypes.c_void_p; B = ctypes.byref
for backend in [int(x) for x in sys.argv[1:]]:
    print("backend", backend)
    h = V(); t("nvjpegCreateEx", nj.nvjpegCreateEx, backend, None, None, 0, B(h))
    st = V(); t("nvjpegJpegStateCreate", nj.nvjpegJpegStateCreate, h, B(st))
    t("PreAllocate 1 1x1", nj.nvjpegDecodeBatchedPreAllocate, h, st, 1, 1, 1, 0, 3)
    t("PreAllocate 35 4000x3000", nj.nvjpegDecodeBatchedPreAllocate, h, st, 35, 4000, 3000, 0, 3)
    t("BatchedInitialize 35", nj.nvjpegDecodeBatchedInitialize, h, st, 35, 1, 3)
    st2 = V(); t("second JpegStateCreate", nj.nvjpegJpegStateCreate, h, B(st2))
    d = V(); t("DecoderCreate GPU_HYBRID", nj.nvjpegDecoderCreate, h, 2, B(d))
    ds = V(); t("DecoderStateCreate", nj.nvjpegDecoderStateCreate, h, d, B(ds))
    d2 = V(); t("DecoderCreate HYBRID", nj.nvjpegDecoderCreate, h, 1, B(d2))
    es = V(); t("EncoderStateCreate", nj.nvjpegEncoderStateCreate, h, B(es), None)
    ep = V(); t("EncoderParamsCreate", nj.nvjpegEncoderParamsCreate, h, B(ep), None)
    pb = V(); t("BufferPinnedCreate", nj.nvjpegBufferPinnedCreate, h, None, B(pb))
    db = V(); t("BufferDeviceCreate", nj.nvjpegBufferDeviceCreate, h, None, B(db))
    js = V(); t("JpegStreamCreate", nj.nvjpegJpegStreamCreate, h, B(js))
    t("JpegStateDestroy", nj.nvjpegJpegStateDestroy, st2)
