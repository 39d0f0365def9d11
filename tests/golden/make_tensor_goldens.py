"""Writes torchvision-tensor.txt: digests of torchvision v2's tensors of the repository's
color photos (`to_image`, `to_dtype(float32, scale=True)`, `normalize` with ImageNet's mean
and std; then `.half()`, `.bfloat16()`, NHWC, a horizontal flip, ToDtype alone), which
tests/tests/tensor.rs compares with cuimg's `to_tensor`. Each is made on the CPU and on the
GPU; the script stops if the two differ.

Run on the lent GPU machine (it has torch and torchvision):
    python3 make_tensor_goldens.py ../data/photos > torchvision-tensor.txt
"""
import sys
from pathlib import Path

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision.transforms.v2 import functional as F

from make_goldens import fnv

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def cases(x):
    """The tensors of one uint8 CHW image, by case name."""
    unit = F.to_dtype(x, torch.float32, scale=True)
    norm = F.normalize(unit, MEAN, STD)
    flipped = F.normalize(F.to_dtype(F.horizontal_flip(x), torch.float32, scale=True), MEAN, STD)
    return {
        "unit-f32-nchw": unit,
        "imagenet-f32-nchw": norm,
        "imagenet-f16-nchw": norm.half(),
        "imagenet-bf16-nchw": norm.bfloat16(),
        "imagenet-f32-nhwc": norm.permute(1, 2, 0),
        "imagenet-f16-nhwc": norm.half().permute(1, 2, 0),
        "imagenet-f32-flip": flipped,
        "imagenet-bgr-f16-nchw": F.normalize(unit[[2, 1, 0]], MEAN[::-1], STD[::-1]).half(),
    }


def digest(t):
    t = t.contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return fnv(t.view(torch.int16).numpy())
    return fnv(t.numpy())


def main():
    photos = Path(sys.argv[1] if len(sys.argv) > 1 else "../data/photos")
    print(f"# torchvision {torchvision.__version__}, torch {torch.__version__}: case digest (FNV-1a 64 of the "
          "tensor's bytes, contiguous, little-endian)")
    for name in ["chelsea", "coffee"]:
        rgb = np.asarray(Image.open(photos / f"{name}.png").convert("RGB"))
        x = F.to_image(rgb)
        on_cpu = cases(x)
        on_gpu = cases(x.cuda()) if torch.cuda.is_available() else on_cpu
        for case, t in on_cpu.items():
            d = digest(t)
            if digest(on_gpu[case]) != d:
                sys.exit(f"{name} {case}: torchvision's CPU and GPU tensors differ")
            print(f"tv-{name}-{case} {d:016x}")


if __name__ == "__main__":
    main()
