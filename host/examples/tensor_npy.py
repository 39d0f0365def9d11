"""`cuimg tensor`'s .npy files read by NumPy and PyTorch, against torchvision v2 on the same
photos (run on the lent GPU machine: `gpu-bundle/run.sh npy`).

    python3 tensor_npy.py PHOTOS OUT

PHOTOS: the photos `cuimg tensor` read; OUT: its output folders, `f16/` (--dtype f16
--normalize imagenet) and `bf16/` (--dtype bf16 --layout nhwc --flip). Each file must be
torchvision v2's `ToDtype(float32, scale=True)`, `Normalize` (ImageNet's), then `.half()`
or `.bfloat16()`, to the bit, with the shape and dtype NumPy reads from the header.
"""
import pathlib
import sys

import numpy as np
import PIL.Image
import torch
from torchvision.transforms import v2

# ImageNet's, as cuimg's Normalize::IMAGENET (a fourth channel 0 and 1; gray takes the first).
MEAN, STD = [0.485, 0.456, 0.406, 0.0], [0.229, 0.224, 0.225, 1.0]


def reference(path):
    """The photo in its own channels (gray stays gray, as cuimg keeps it)."""
    x = v2.functional.pil_to_tensor(PIL.Image.open(path))  # uint8, CHW
    x = v2.ToDtype(torch.float32, scale=True)(x)
    c = x.shape[0]
    return v2.Normalize(MEAN[:c], STD[:c])(x)


def main():
    photos, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    checks = 0
    for p in sorted(photos.iterdir()):
        if p.suffix.lower() != ".png":
            continue  # PNG's bytes are exact; JPEG decoders may differ
        ref = reference(p)
        c, h, w = ref.shape
        a = np.load(out / "f16" / (p.stem + ".npy"))
        assert a.dtype == np.float16 and a.shape == (1, c, h, w), (p.name, a.dtype, a.shape)
        got = torch.from_numpy(a)[0]
        assert torch.equal(got.view(torch.int16), ref.half().view(torch.int16)), f"{p.name}: f16 elements"
        b = np.load(out / "bf16" / (p.stem + ".npy"))
        assert b.dtype == np.uint16 and b.shape == (1, h, w, c), (p.name, b.dtype, b.shape)
        got = torch.from_numpy(b.view(np.int16)).view(torch.bfloat16)[0]
        want = ref.flip(-1).permute(1, 2, 0).contiguous().bfloat16()
        assert torch.equal(got.view(torch.int16), want.view(torch.int16)), f"{p.name}: bf16 NHWC flipped elements"
        checks += 2
    assert checks > 0, "no PNG photos"
    print(f"tensor-npy: {checks} .npy files equal to torchvision v2's tensors, read by NumPy and PyTorch")


if __name__ == "__main__":
    main()
