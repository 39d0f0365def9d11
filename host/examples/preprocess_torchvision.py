"""The pipeline of examples/preprocess.rs in torchvision v2, for the comparison: a folder of
JPEGs read (`torchvision.io.read_file`), decoded on the GPU in batches
(`decode_jpeg(..., device="cuda")`), resized to 224x224 with antialias, scaled
(`to_dtype(float32, scale=True)`), normalized with ImageNet's mean and std and made f16, in
NCHW batches of 256; images per second from the files.

    python3 preprocess_torchvision.py DIR [--batch N] [--repeat N]
"""
import sys
import time
from pathlib import Path

import torch
import torchvision
from torchvision.io import decode_jpeg, read_file
from torchvision.transforms.v2 import functional as F

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def preprocess(paths):
    datas = [read_file(str(p)) for p in paths]
    imgs = decode_jpeg(datas, device="cuda")
    small = torch.stack([F.resize(i, [224, 224], antialias=True) for i in imgs])
    return F.normalize(F.to_dtype(small, torch.float32, scale=True), MEAN, STD).half()


def main():
    args = sys.argv[1:]
    batch = int(args[args.index("--batch") + 1]) if "--batch" in args else 256
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 1
    d = Path(args[0])
    files = sorted(p for p in d.iterdir() if p.suffix in (".jpg", ".jpeg")) * repeat
    preprocess(files[:batch])
    torch.cuda.synchronize()
    t = time.perf_counter()
    last = None
    for i in range(0, len(files), batch):
        last = preprocess(files[i:i + batch])
    torch.cuda.synchronize()
    secs = time.perf_counter() - t
    print(f"torchvision {torchvision.__version__}: {len(files)} JPEGs from {d} in batches of {batch}: "
          f"{secs * 1e3:.1f} ms, {len(files) / secs:.0f} images/s; last batch {tuple(last.shape)} {last.dtype}")


if __name__ == "__main__":
    main()
