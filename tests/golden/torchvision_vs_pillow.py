"""How far torchvision v2's uint8 resize (antialias=True, the approximation of Pillow it
documents) is from Pillow's Image.resize, which cuimg's pil-* filters match exactly.

Run on the lent GPU machine (it has torch, torchvision and Pillow):
    python3 torchvision_vs_pillow.py ../data/photos

For each repository photo and a random image, to 224x224, to half size and to twice the
size, with BILINEAR and BICUBIC, on the CPU and on the GPU: the largest difference, the mean
difference and the share of bytes that differ. Prints a Markdown table.
"""
import sys
from pathlib import Path

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision.transforms.v2 import InterpolationMode
from torchvision.transforms.v2 import functional as F

MODES = {"bilinear": (Image.Resampling.BILINEAR, InterpolationMode.BILINEAR),
         "bicubic": (Image.Resampling.BICUBIC, InterpolationMode.BICUBIC)}


def images(folder):
    for p in sorted(Path(folder).glob("*.png")):
        yield p.stem, np.asarray(Image.open(p).convert("RGB"))
    yield "random 333x257", np.random.default_rng(28).integers(0, 256, (257, 333, 3), dtype=np.uint8)


def main():
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, Pillow {Image.__version__}")
    print()
    print("| image | size | filter | device | max | mean | bytes that differ |")
    print("|---|---|---|---|---:|---:|---:|")
    for name, rgb in images(sys.argv[1]):
        h, w = rgb.shape[:2]
        for size in [(224, 224), (max(1, w // 2), max(1, h // 2)), (w * 2, h * 2)]:
            for mode, (pil, tv) in MODES.items():
                want = np.asarray(Image.fromarray(rgb).resize(size, pil)).astype(np.int16)
                for device in ("cpu", "cuda"):
                    t = torch.from_numpy(rgb).permute(2, 0, 1).contiguous().to(device)
                    got = F.resize(t, [size[1], size[0]], interpolation=tv, antialias=True)
                    got = got.permute(1, 2, 0).cpu().numpy().astype(np.int16)
                    d = np.abs(got - want)
                    print(f"| {name} {w}x{h} | {size[0]}x{size[1]} | {mode} | {device} | {d.max()} | {d.mean():.3f} "
                          f"| {100 * (d > 0).mean():.1f}% |")


if __name__ == "__main__":
    main()
