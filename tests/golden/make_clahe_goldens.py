"""Writes opencv-clahe.txt: digests of OpenCV's CLAHE (createCLAHE(clip, grid).apply) on 8-bit
gray images, which tests/tests/clahe.rs compares cuimg's CLAHE with.

Run where OpenCV is (the lent GPU machine has OpenCV 5.0):
    python3 make_clahe_goldens.py ../data/photos [DEBUG_DIR]
Inputs are the repository's photos (tests/data/photos) or splitmix64 images (tests/harness.rs makes the same bytes),
so only digests (FNV-1a 64) are committed. With DEBUG_DIR, the outputs of two cases are also
written there as raw bytes, to find the first differing pixel where no OpenCV is at hand.
"""
import os
import sys

import cv2
import numpy as np

from make_goldens import fnv, random_image

# (width, height) and the grids tried on it: odd sizes, sizes that are not multiples of the
# grid (OpenCV extends those by reflection), one tile per column, the 1283x719 of the issue.
GEOMETRY = [
    ((1, 1), [(1, 1)]),
    ((7, 3), [(1, 1), (3, 3), (7, 2)]),
    ((64, 48), [(8, 8), (2, 3)]),
    ((333, 257), [(8, 8), (5, 7), (16, 16)]),
    ((1283, 719), [(8, 8)]),
    ((1920, 1080), [(8, 8), (3, 5)]),
]
CLIPS = [0.01, 1.0, 2.0, 40.0, 1000.0]


def images(w, h):
    g = random_image(3000 + w + h, w, h, 1)
    yield "random", g, CLIPS
    yield "skewed", (g % 37 + 100).astype(np.uint8), CLIPS
    yield "constant", np.full((h, w), 77, np.uint8), [2.0]


def clahe(img, clip, grid):
    return cv2.createCLAHE(clipLimit=clip, tileGridSize=grid).apply(img)


lines = [f"# OpenCV {cv2.__version__}: CLAHE case digest (FNV-1a 64 of the output bytes)"]
for (w, h), grids in GEOMETRY:
    for kind, img, clips in images(w, h):
        for grid in grids:
            for clip in clips:
                lines.append(f"clahe-{kind}-{w}x{h}-t{grid[0]}x{grid[1]}-c{clip} {fnv(clahe(img, clip, grid)):016x}")

photos = sys.argv[1]
for name in ("camera", "chelsea", "coffee"):
    if name == "camera":
        gray = cv2.imread(f"{photos}/{name}.png", cv2.IMREAD_GRAYSCALE)
    else:
        gray = cv2.cvtColor(cv2.imread(f"{photos}/{name}.png", cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    for grid in [(8, 8), (3, 5)]:
        for clip in [2.0, 40.0]:
            lines.append(f"clahe-photo-{name}-t{grid[0]}x{grid[1]}-c{clip} {fnv(clahe(gray, clip, grid)):016x}")

here = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(here, "opencv-clahe.txt"), "w").write("\n".join(lines) + "\n")
print(f"{len(lines) - 1} cases")
if len(sys.argv) > 2:
    g = random_image(3000 + 333 + 257, 333, 257, 1)
    clahe(g, 2.0, (5, 7)).tofile(os.path.join(sys.argv[2], "clahe-random-333x257-t5x7-c2.0.raw"))
    clahe(g, 40.0, (8, 8)).tofile(os.path.join(sys.argv[2], "clahe-random-333x257-t8x8-c40.0.raw"))
