"""Writes opencv-orient.txt: digests of OpenCV's flip, rotate and transpose on the images
tests/tests/orient.rs makes (splitmix64 bytes, as tests/harness.rs makes them), for every
EXIF orientation and channel count 1 to 4.

Run on the lent GPU machine (it has OpenCV):  python3 make_orient_goldens.py > opencv-orient.txt
"""
import cv2
import numpy as np

from make_goldens import fnv, random_image

# EXIF orientation -> OpenCV calls that make it.
ORIENT = {
    1: lambda m: m.copy(),
    2: lambda m: cv2.flip(m, 1),
    3: lambda m: cv2.rotate(m, cv2.ROTATE_180),
    4: lambda m: cv2.flip(m, 0),
    5: lambda m: cv2.transpose(m),
    6: lambda m: cv2.rotate(m, cv2.ROTATE_90_CLOCKWISE),
    7: lambda m: cv2.flip(cv2.transpose(m), -1),
    8: lambda m: cv2.rotate(m, cv2.ROTATE_90_COUNTERCLOCKWISE),
}
# (Digests are computed in pure Python: larger sizes take minutes.)
SIZES = [(1, 1), (1, 17), (17, 1), (7, 3), (64, 48), (333, 257)]


def main():
    print(f"# OpenCV {cv2.__version__}: orient-<exif>-c<channels>-<w>x<h> digest (FNV-1a 64 of the output bytes)")
    for (w, h) in SIZES:
        for c in (1, 2, 3, 4):
            img = random_image(3000 + w * 7 + h + c, w, h, c)
            for tag, f in ORIENT.items():
                print(f"orient-{tag}-c{c}-{w}x{h} {fnv(f(img)):016x}")


if __name__ == "__main__":
    main()
