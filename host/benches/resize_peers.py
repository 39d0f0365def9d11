"""The peers of cuimg's resize benchmark (host/benches/resize.rs), on the same bytes in the
same call: NPP's nppiResize (libnppig of the CUDA toolkit, through ctypes) and torchvision
v2's resize on the GPU, with and without antialias.

    resize --dump DIR ...; python3 resize_peers.py DIR OUT.json

Method, as the Rust benchmark's: each case is warmed up, then timed call by call with CUDA
events and the median reported; inputs and outputs rotate among enough copies to exceed L2
twice (256 MiB). torchvision takes each tensor as users hand it over (uint8, CHW, on the
GPU); NPP is called per image with its stream context. NPP's ragged-batch entry point is not
used: the batch rows time a loop of single calls, as its simpler API makes users write.
"""
import ctypes
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch
from torchvision.transforms.v2 import InterpolationMode
from torchvision.transforms.v2 import functional as F

ROTATION = 256 << 20
WARM, RUNS = 5, 30
CASES = [((7680, 4320), (3840, 2160), "8K->4K"), ((3840, 2160), (1920, 1080), "4K->1080p"),
         ((1920, 1080), (224, 224), "1080p->224x224"), ((1920, 1080), (3840, 2160), "1080p x2")]


def timed(fn, sets):
    """Median and fastest ms of fn(i) calls, each between two events, after warm-up."""
    for i in range(WARM):
        fn(i % sets)
    torch.cuda.synchronize()
    times = []
    for i in range(RUNS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(i % sets)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2], times[0]


class Size(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int)]


class Rect(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("width", ctypes.c_int), ("height", ctypes.c_int)]


class StreamContext(ctypes.Structure):
    _fields_ = [("hStream", ctypes.c_void_p), ("nCudaDeviceId", ctypes.c_int), ("nMultiProcessorCount", ctypes.c_int),
                ("nMaxThreadsPerMultiProcessor", ctypes.c_int), ("nMaxThreadsPerBlock", ctypes.c_int),
                ("nSharedMemPerBlock", ctypes.c_size_t), ("nCudaDevAttrComputeCapabilityMajor", ctypes.c_int),
                ("nCudaDevAttrComputeCapabilityMinor", ctypes.c_int), ("nStreamFlags", ctypes.c_uint),
                ("nReserved0", ctypes.c_int)]


NPP_MODES = {"nn": 1, "linear": 2, "cubic": 4, "super": 8, "lanczos": 16}


def npp():
    for name in ("libnppig.so", "libnppig.so.13", "libnppig.so.12"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        for p in sorted(Path("/usr/local/cuda/lib64").glob("libnppig.so*")):
            lib = ctypes.CDLL(str(p))
            break
        else:
            raise OSError("libnppig not found")
    props = torch.cuda.get_device_properties(0)
    ctx = StreamContext()
    ctx.hStream = torch.cuda.current_stream().cuda_stream
    ctx.nCudaDeviceId = 0
    ctx.nMultiProcessorCount = props.multi_processor_count
    ctx.nMaxThreadsPerMultiProcessor = props.max_threads_per_multi_processor
    ctx.nMaxThreadsPerBlock = 1024
    ctx.nSharedMemPerBlock = 48 * 1024
    ctx.nCudaDevAttrComputeCapabilityMajor, ctx.nCudaDevAttrComputeCapabilityMinor = props.major, props.minor
    fns = {}
    for c in (1, 3):
        f = getattr(lib, f"nppiResize_8u_C{c}R_Ctx")
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, Size, Rect, ctypes.c_void_p, ctypes.c_int, Size, Rect, ctypes.c_int,
                      StreamContext]
        f.restype = ctypes.c_int
        fns[c] = f
    return fns, ctx


def npp_resize(fns, ctx, src, dst, mode):
    """src, dst: uint8 HWC (or HW) contiguous CUDA tensors."""
    c = 1 if src.dim() == 2 else src.shape[2]
    sh, sw = src.shape[:2]
    dh, dw = dst.shape[:2]
    status = fns[c](src.data_ptr(), sw * c, Size(sw, sh), Rect(0, 0, sw, sh), dst.data_ptr(), dw * c, Size(dw, dh),
                    Rect(0, 0, dw, dh), NPP_MODES[mode], ctx)
    if status < 0:
        raise RuntimeError(f"nppiResize_8u_C{c}R_Ctx: status {status}")


def load(d, meta):
    a = np.fromfile(d / meta["file"], dtype=np.uint8)
    shape = (meta["height"], meta["width"]) if meta["channels"] == 1 else (meta["height"], meta["width"], meta["channels"])
    return torch.from_numpy(a.reshape(shape)).cuda()


def main():
    d, out = Path(sys.argv[1]), Path(sys.argv[2])
    inputs = {m["name"]: m for m in json.loads((d / "inputs.json").read_text())}
    try:
        fns, ctx = npp()
        npp_error = None
    except (OSError, AttributeError) as e:
        fns, ctx, npp_error = None, None, str(e)
    rows = []
    tv = {"tv-bilinear": (InterpolationMode.BILINEAR, False), "tv-bilinear-aa": (InterpolationMode.BILINEAR, True),
          "tv-bicubic": (InterpolationMode.BICUBIC, False), "tv-bicubic-aa": (InterpolationMode.BICUBIC, True),
          "tv-nearest": (InterpolationMode.NEAREST, False)}
    for (sw, sh), (dw, dh), label in CASES:
        for fmt, c in (("RGB8", 3), ("Gray8", 1)):
            src = load(d, inputs[f"{sw}x{sh}-{fmt.lower()}"])
            nbytes = (sw * sh + dw * dh) * c
            sets = max(1, min(64, math.ceil(ROTATION / nbytes)))
            hwc = [src.clone() for _ in range(sets)]
            chw = [(x.permute(2, 0, 1) if c == 3 else x.unsqueeze(0)).contiguous() for x in hwc]
            for name, (mode, aa) in tv.items():
                med, fast = timed(lambda i: F.resize(chw[i], [dh, dw], interpolation=mode, antialias=aa), sets)
                rows.append({"case": label, "format": fmt, "peer": name, "median_ms": med, "min_ms": fast, "bytes": nbytes})
            if fns is not None:
                outs = [torch.empty((dh, dw, c) if c == 3 else (dh, dw), dtype=torch.uint8, device="cuda") for _ in range(sets)]
                for mode in NPP_MODES:
                    if mode == "super" and (dw > sw or dh > sh):
                        continue  # NPP's super sampling only shrinks
                    try:
                        med, fast = timed(lambda i: npp_resize(fns, ctx, hwc[i], outs[i], mode), sets)
                    except RuntimeError as e:
                        rows.append({"case": label, "format": fmt, "peer": f"npp-{mode}", "error": str(e)})
                        continue
                    rows.append({"case": label, "format": fmt, "peer": f"npp-{mode}", "median_ms": med, "min_ms": fast,
                                 "bytes": nbytes})
            del hwc, chw
            torch.cuda.empty_cache()
    batch = [load(d, m) for m in inputs["batch"]["images"]]
    chw = [x.permute(2, 0, 1).contiguous() for x in batch]
    for name, (mode, aa) in tv.items():
        med, fast = timed(lambda i: [F.resize(x, [224, 224], interpolation=mode, antialias=aa) for x in chw], 1)
        rows.append({"case": "batch 256 ragged ~640x480 -> 224x224", "format": "RGB8", "peer": name + " (per image)",
                     "median_ms": med, "min_ms": fast, "us_per_image": med * 1e3 / 256})
    if fns is not None:
        outs = [torch.empty((224, 224, 3), dtype=torch.uint8, device="cuda") for _ in batch]
        for mode in ("nn", "linear", "cubic", "super", "lanczos"):
            med, fast = timed(lambda i: [npp_resize(fns, ctx, x, o, mode) for x, o in zip(batch, outs)], 1)
            rows.append({"case": "batch 256 ragged ~640x480 -> 224x224", "format": "RGB8", "peer": f"npp-{mode} (per image)",
                         "median_ms": med, "min_ms": fast, "us_per_image": med * 1e3 / 256})
    import torchvision
    info = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "torchvision": torchvision.__version__,
            "npp_error": npp_error, "rows": rows}
    out.write_text(json.dumps(info, indent=1))
    for r in rows:
        print(r["case"], r["format"], r["peer"], f"{r['median_ms'] * 1e3:.1f} us" if "median_ms" in r else r.get("error"))


if __name__ == "__main__":
    main()
