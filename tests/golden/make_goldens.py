"""Writes opencv.txt: digests of OpenCV's own outputs, which the Rust tests compare with.

Run with opencv-python-headless and numpy installed:  python3 make_goldens.py ../data/photos
Inputs are either the repository's photos (tests/data/photos) or pseudo-random images from splitmix64, which
tests/harness.rs implements identically, so only digests (FNV-1a 64) need committing.
"""
import sys
import cv2
import numpy as np

MASK = (1 << 64) - 1


def splitmix_bytes(seed, n):
    out = bytearray()
    s = seed & MASK
    while len(out) < n:
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out += z.to_bytes(8, "little")
    return bytes(out[:n])


def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & MASK
    return h


def fnv(arr):
    return fnv1a(np.ascontiguousarray(arr).tobytes())


def random_image(seed, w, h, c):
    return np.frombuffer(splitmix_bytes(seed, w * h * c), dtype=np.uint8).reshape(h, w, c) if c > 1 else \
        np.frombuffer(splitmix_bytes(seed, w * h), dtype=np.uint8).reshape(h, w)


def main():
    lines = [f"# OpenCV {cv2.__version__}: case digest (FNV-1a 64 of the output bytes)"]
    SIZES = [(1, 1), (7, 3), (64, 48), (333, 257), (1920, 1080)]
    codes = {3: [("rgb", cv2.COLOR_RGB2GRAY), ("bgr", cv2.COLOR_BGR2GRAY)],
             4: [("rgba", cv2.COLOR_RGBA2GRAY), ("bgra", cv2.COLOR_BGRA2GRAY)]}
    for (w, h) in SIZES:
        for c in (3, 4):
            img = random_image(1000 + w * 7 + h + c, w, h, c)
            for name, code in codes[c]:
                lines.append(f"gray-{name}-{w}x{h} {fnv(cv2.cvtColor(img, code)):016x}")
        g = random_image(2000 + w + h, w, h, 1)
        lines.append(f"equalize-uniform-{w}x{h} {fnv(cv2.equalizeHist(g)):016x}")
        skew = (g % 37 + 100).astype(np.uint8)
        lines.append(f"equalize-skewed-{w}x{h} {fnv(cv2.equalizeHist(skew)):016x}")
    for v in (0, 77, 255):
        lines.append(f"equalize-constant{v}-33x17 {fnv(cv2.equalizeHist(np.full((17, 33), v, np.uint8))):016x}")

    photos = sys.argv[1]
    for name in ("chelsea", "coffee", "camera"):
        bgr = cv2.imread(f"{photos}/{name}.png", cv2.IMREAD_COLOR)
        gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        if name == "camera":
            gray = cv2.imread(f"{photos}/{name}.png", cv2.IMREAD_GRAYSCALE)
        else:
            lines.append(f"photo-gray-{name} {fnv(gray):016x}")
        lines.append(f"photo-equalize-{name} {fnv(cv2.equalizeHist(gray)):016x}")

    open("opencv.txt", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
