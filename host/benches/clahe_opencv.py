#!/usr/bin/env python3
"""OpenCV's CPU CLAHE on every core, on the inputs of host/benches/clahe.rs (the photo's luma
tiled to 8K, random 8K, 64 different 1080p tiles of the photo), for docs/BENCHMARKS.md.

    python3 host/benches/clahe_opencv.py [IMAGES_DIR] [OUT.json]

One 8K image: OpenCV parallelizes CLAHE inside the call (cv::parallel_for_ over tiles and rows),
on cv2.getNumThreads() threads. 64 images: one call per image from a thread pool of one thread per
core (cv2 releases the GIL), each call single-threaded, which is the faster way to use all cores
for many small images; the one-call-at-a-time figure is printed too.
"""
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

images = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/data/photos")
out = sys.argv[2] if len(sys.argv) > 2 else None
cores = os.cpu_count()
rgb = cv2.cvtColor(cv2.imread(os.path.join(images, "coffee.png")), cv2.COLOR_BGR2RGB)
gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)


def tiled(w, h, dx, dy):
    ys = (np.arange(h) + dy) % gray.shape[0]
    xs = (np.arange(w) + dx) % gray.shape[1]
    return np.ascontiguousarray(gray[ys][:, xs])


def median_ms(f, runs):
    f()
    t = []
    for _ in range(runs):
        a = time.perf_counter()
        f()
        t.append((time.perf_counter() - a) * 1e3)
    return sorted(t)[len(t) // 2]


rows = []
print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads, {cores} cores")
rng = np.random.default_rng(7)
for data, img in [("random", rng.integers(0, 256, (4320, 7680), dtype=np.uint8)), ("photo", tiled(7680, 4320, 0, 0))]:
    for grid in [(8, 8), (16, 16)]:
        c = cv2.createCLAHE(clipLimit=2.0, tileGridSize=grid)
        ms = median_ms(lambda: c.apply(img), 10)
        print(f"8K {data:<8} grid {grid[0]}x{grid[1]}: {ms:.2f} ms (all threads, one call)")
        rows.append({"case": "8K", "data": data, "grid": list(grid), "ms": ms, "threads": cv2.getNumThreads()})

batch = [tiled(1920, 1080, k * 37, k * 23) for k in range(64)]
c = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))
seq = median_ms(lambda: [c.apply(i) for i in batch], 5)
threads = cv2.getNumThreads()
cv2.setNumThreads(1)
with ThreadPoolExecutor(cores) as pool:
    def run():
        # One CLAHE object per call: the object keeps scratch buffers and is not thread-safe.
        list(pool.map(lambda i: cv2.createCLAHE(2.0, (8, 8)).apply(i), batch))
    par = median_ms(run, 5)
cv2.setNumThreads(threads)
print(f"64 x 1080p photos, 8x8: {seq * 1e3 / 64:.1f} us/image one call at a time ({threads} threads each); "
      f"{par * 1e3 / 64:.1f} us/image, {cores} calls at once")
rows.append({"case": "64 x 1080p", "data": "photo", "grid": [8, 8], "us_per_image_sequential": seq * 1e3 / 64,
             "us_per_image_all_cores": par * 1e3 / 64, "cores": cores})
if out:
    with open(out, "w") as f:
        json.dump({"opencv": cv2.__version__, "cores": cores, "rows": rows}, f, indent=2)
