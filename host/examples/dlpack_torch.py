"""cuimg and PyTorch in one process through DLPack (issue 29, part 4).

Loads the shared library `dlpack_torch.rs` builds and checks, with PyTorch's own
`torch.from_dlpack` and `Tensor.__dlpack__`:
  - cuimg's tensors (f32, f16, bf16; NCHW) arrive in PyTorch with the right device, shape,
    strides and type, writable, and equal bit for bit to torchvision v2's
    `ToDtype(scale=True)` and `Normalize` of the same image;
  - cuimg's images arrive as `[height, width, 3]` bytes with their pitch as a stride;
  - the deleter frees cuimg's memory (device memory stays level over many hand-offs);
  - PyTorch's tensors go into cuimg and come back as bytes, as PyTorch computes the inverse;
  - tensors cuimg cannot take (wrong type, strided, on the CPU) are refused with a message.

  python3 dlpack_torch.py path/to/libdlpack_torch.so
"""

import ctypes
import gc
import sys

import numpy as np
import torch
from torchvision.transforms.v2 import functional as F

VERSIONED = b"dltensor_versioned"
USED = b"used_dltensor_versioned"
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
DTYPES = [(0, torch.float32, torch.int32), (1, torch.float16, torch.int16), (2, torch.bfloat16, torch.int16)]

api = ctypes.pythonapi
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_GetName.restype = ctypes.c_char_p
api.PyCapsule_GetName.argtypes = [ctypes.py_object]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

lib = ctypes.CDLL(sys.argv[1])
P = ctypes.POINTER(ctypes.c_void_p)
lib.cuimg_export_tensor.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, P]
lib.cuimg_export_image.argtypes = [ctypes.c_uint32, ctypes.c_uint32, P]
lib.cuimg_import_to_image.argtypes = [ctypes.c_void_p, P]
lib.cuimg_last_error.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
lib.cuimg_last_error.restype = ctypes.c_size_t

checks = 0


def check(ok, what):
    global checks
    if not ok:
        print("FAIL:", what)
        sys.exit(1)
    checks += 1
    print("ok:", what)


def last_error():
    buf = ctypes.create_string_buffer(1024)
    n = lib.cuimg_last_error(buf, 1024)
    return buf.raw[: min(n, 1024)].decode()


class Handed:
    """A managed tensor cuimg handed out, as PyTorch's `from_dlpack` takes a producer."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # cuimg waited for its work before handing out: any stream may use it.
        return api.PyCapsule_New(self.ptr, VERSIONED, None)

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0


def call(f, *args):
    out = ctypes.c_void_p()
    rc = f(*args, ctypes.byref(out))
    return rc, out.value


def pattern(w, h):
    x, y = np.meshgrid(np.arange(w, dtype=np.int64), np.arange(h, dtype=np.int64))
    return np.stack([(x * 7 + y * 3) % 256, (x * y) % 256, (x + 2 * y) % 256], axis=-1).astype(np.uint8)


def torchvision_tensor(img, dtype):
    t = torch.from_numpy(img).permute(2, 0, 1).contiguous().cuda()
    t = F.normalize(F.to_dtype(t, torch.float32, scale=True), MEAN, STD)
    return t.to(dtype)[None]


def same_bits(a, b, as_int):
    return a.shape == b.shape and torch.equal(a.contiguous().view(as_int), b.contiguous().view(as_int))


print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
torch.cuda.init()

# 1. cuimg's tensors in PyTorch, against torchvision's.
for w, h in [(37, 23), (224, 224), (1, 1)]:
    img = pattern(w, h)
    for code, dtype, as_int in DTYPES:
        rc, ptr = call(lib.cuimg_export_tensor, w, h, code)
        check(rc == 0, f"export {w}x{h} {dtype}: {last_error() if rc else 'handed out'}")
        t = torch.from_dlpack(Handed(ptr))
        check(t.device == torch.device("cuda", 0), f"{w}x{h} {dtype} on cuda:0 ({t.device})")
        check(t.dtype == dtype and list(t.shape) == [1, 3, h, w], f"{w}x{h} {dtype}: {t.dtype} {list(t.shape)}")
        check(t.is_contiguous(), f"{w}x{h} {dtype}: packed strides {t.stride()}")
        want = torchvision_tensor(img, dtype)
        check(same_bits(t, want, as_int), f"{w}x{h} {dtype}: torchvision's elements, bit for bit")
        t.add_(0)  # writable: PyTorch refuses in-place work on a read-only import
        torch.cuda.synchronize()
        del t

# 2. cuimg's images: bytes with the pitch as a stride.
for w, h in [(37, 23), (640, 480)]:
    rc, ptr = call(lib.cuimg_export_image, w, h)
    check(rc == 0, f"export image {w}x{h}: {last_error() if rc else 'handed out'}")
    t = torch.from_dlpack(Handed(ptr))
    check(t.dtype == torch.uint8 and list(t.shape) == [h, w, 3], f"image {w}x{h}: {t.dtype} {list(t.shape)}")
    check(t.stride()[1:] == (3, 1) and t.stride()[0] >= 3 * w, f"image {w}x{h}: strides {t.stride()}")
    check(np.array_equal(t.cpu().numpy(), pattern(w, h)), f"image {w}x{h}: the pattern's bytes")
    del t

# 3. The deleter: 40 hand-offs of 4096x4096 f32 (192 MiB each) leave device memory level.
torch.cuda.synchronize()
gc.collect()
free0, _ = torch.cuda.mem_get_info()
for _ in range(40):
    rc, ptr = call(lib.cuimg_export_tensor, 4096, 4096, 0)
    assert rc == 0, last_error()
    t = torch.from_dlpack(Handed(ptr))
    del t
gc.collect()
torch.cuda.synchronize()
free1, _ = torch.cuda.mem_get_info()
check(free0 - free1 < 512 << 20, f"40 tensors of 192 MiB handed out and freed: free memory {free0 >> 20} -> {free1 >> 20} MiB")


# 4. PyTorch's tensors into cuimg and back as bytes.
def hand_in(t):
    """PyTorch's versioned capsule for `t`, consumed: its managed tensor's address."""
    cap = t.__dlpack__(max_version=(1, 0))
    name = api.PyCapsule_GetName(cap)
    check(name == VERSIONED, f"PyTorch hands out a versioned managed tensor ({name})")
    ptr = api.PyCapsule_GetPointer(cap, VERSIONED)
    api.PyCapsule_SetName(cap, USED)  # the consumer's mark: PyTorch's capsule no longer frees it
    return ptr


mean = torch.tensor(MEAN, device="cuda").view(1, 3, 1, 1)
std = torch.tensor(STD, device="cuda").view(1, 3, 1, 1)
gen = torch.Generator(device="cuda").manual_seed(29)
for w, h in [(37, 23), (224, 224)]:
    for _, dtype, _ in DTYPES:
        x = torchvision_tensor(pattern(w, h), dtype)
        x = x + (torch.rand(x.shape, device="cuda", generator=gen) * 0.02 - 0.01).to(dtype)
        # cuimg's inverse: (v * std + mean) * 255, each step one f32 rounding, to nearest even,
        # clamped; the same steps here, each its own kernel (none fused).
        want = (x.float() * std + mean) * 255
        want = want.round().clamp(0, 255).to(torch.uint8)[0].permute(1, 2, 0)
        torch.cuda.synchronize()
        rc, ptr = call(lib.cuimg_import_to_image, hand_in(x))
        check(rc == 0, f"import {w}x{h} {dtype}: {last_error() if rc else 'taken in'}")
        back = torch.from_dlpack(Handed(ptr))
        check(torch.equal(back, want), f"import {w}x{h} {dtype}: back to bytes as PyTorch computes them")
        del back

# 5. What cuimg cannot take is refused, with its reason, and freed.
bad = [
    (torch.zeros(1, 3, 8, 8, dtype=torch.int32, device="cuda"), "elements"),
    (torch.zeros(1, 3, 8, 8, device="cuda").transpose(2, 3), "strides"),
    (torch.zeros(1, 3, 8, 16, device="cuda")[..., ::2], "strides"),
    (torch.zeros(3, 8, 8, device="cuda"), "dimensions"),
    (torch.zeros(1, 3, 8, 8), "Cpu"),
]
for t, reason in bad:
    torch.cuda.synchronize()
    rc, _ = call(lib.cuimg_import_to_image, hand_in(t))
    msg = last_error()
    check(rc == -1 and reason in msg, f"refused ({reason}): {msg}")

print(f"dlpack-torch: {checks} checks passed")
