"""Writes opencv-yuv.txt: digests of OpenCV's cvtColor between YUV frames and RGB, BGR, RGBA,
BGRA and gray, for every code OpenCV has (decoding NV12, NV21, I420, YV12, YUY2 and UYVY;
encoding I420, YV12, and, where the build has them, NV12, NV21, YUY2 and UYVY), on
splitmix64 frames and images that tests/tests/yuv.rs makes identically. A code OpenCV lacks
is printed as a comment, and the Rust test skips it.

Run on the lent GPU machine (it has OpenCV):  python3 make_yuv_goldens.py > opencv-yuv.txt
"""
import cv2
import numpy as np

from make_goldens import fnv, splitmix_bytes

SIZES = [(2, 2), (6, 4), (64, 48), (334, 258)]
LAYOUTS = ["NV12", "NV21", "I420", "YV12", "YUYV", "UYVY"]
# The name OpenCV gives each layout in its codes.
CV_NAME = {"NV12": "NV12", "NV21": "NV21", "I420": "I420", "YV12": "YV12", "YUYV": "YUY2", "UYVY": "UYVY"}
FORMATS = [("gray", 1), ("rgb", 3), ("bgr", 3), ("rgba", 4), ("bgra", 4)]


def frame_bytes(layout, w, h):
    return w * h * 3 // 2 if layout in ("NV12", "NV21", "I420", "YV12") else w * h * 2


def frame_array(layout, w, h, data):
    if layout in ("NV12", "NV21", "I420", "YV12"):
        return np.frombuffer(data, dtype=np.uint8).reshape(h * 3 // 2, w)
    return np.frombuffer(data, dtype=np.uint8).reshape(h, w, 2)


def code(name):
    return getattr(cv2, name, None)


def main():
    print(f"# OpenCV {cv2.__version__}: case digest (FNV-1a 64 of the output bytes)")
    for (w, h) in SIZES:
        for li, layout in enumerate(LAYOUTS):
            frame = frame_array(layout, w, h, splitmix_bytes(5000 + w * 7 + h + li, frame_bytes(layout, w, h)))
            for fmt, _ in FORMATS:
                # OpenCV's gray decoders are by chroma form (GRAY_420 / GRAY_YUY2 / GRAY_UYVY).
                name = f"COLOR_YUV2{fmt.upper()}_{CV_NAME[layout]}"
                c = code(name)
                case = f"yuv-dec-{layout}-{fmt}-{w}x{h}"
                if c is None:
                    print(f"# {case}: no {name}")
                    continue
                print(f"{case} {fnv(cv2.cvtColor(frame, c)):016x}")
        for fmt, cn in FORMATS[1:]:
            img = np.frombuffer(splitmix_bytes(6000 + w * 7 + h + cn, w * h * cn), dtype=np.uint8).reshape(h, w, cn)
            for layout in LAYOUTS:
                name = f"COLOR_{fmt.upper()}2YUV_{CV_NAME[layout]}"
                c = code(name)
                case = f"yuv-enc-{fmt}-{layout}-{w}x{h}"
                if c is None:
                    print(f"# {case}: no {name}")
                    continue
                try:
                    out = cv2.cvtColor(img, c)
                except cv2.error as e:
                    print(f"# {case}: {name} fails: {str(e).splitlines()[-1]}")
                    continue
                print(f"{case} {fnv(out):016x}")


if __name__ == "__main__":
    main()
