"""Writes resize.txt: OpenCV's resize, copyMakeBorder, warpAffine and warpPerspective and
Pillow's Image.resize on 8-bit images, for issue 28's exactness tests.

Run on the lent GPU machine (it has OpenCV 5.0 and Pillow):
    python3 make_resize_goldens.py ../data/photos > resize.txt

Every line is one case, `kind key=value ...`, read by tests/tests/resize.rs, which makes the
same input (splitmix64 bytes as tests/harness.rs makes them, or a repository photo) and
runs the same call. `fnv` is FNV-1a 64 of the output bytes; outputs of up to 1 KiB are also
written in full (`bytes`, hex), so that a mismatch shows where it is.
"""
import sys

import cv2
import numpy as np
from PIL import Image

from make_goldens import fnv, random_image

CV_MODES = {
    "nearest": cv2.INTER_NEAREST,
    "nearest-exact": cv2.INTER_NEAREST_EXACT,
    "linear": cv2.INTER_LINEAR,
    "linear-exact": cv2.INTER_LINEAR_EXACT,
    "area": cv2.INTER_AREA,
    "cubic": cv2.INTER_CUBIC,
    "lanczos4": cv2.INTER_LANCZOS4,
}
PIL_MODES = {
    "nearest": Image.Resampling.NEAREST,
    "box": Image.Resampling.BOX,
    "bilinear": Image.Resampling.BILINEAR,
    "hamming": Image.Resampling.HAMMING,
    "bicubic": Image.Resampling.BICUBIC,
    "lanczos": Image.Resampling.LANCZOS,
}
BORDERS = {
    "constant": cv2.BORDER_CONSTANT,
    "replicate": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT,
    "reflect101": cv2.BORDER_REFLECT_101,
    "wrap": cv2.BORDER_WRAP,
}
# (source, destination) sizes: identity, 1 pixel both ways, integer and fractional factors
# up and down on each axis, x8 up, /16 down, extreme aspect ratios.
RESIZE_SIZES = [
    ((1, 1), (1, 1)), ((1, 1), (5, 3)), ((7, 5), (1, 1)), ((7, 5), (7, 5)), ((16, 16), (8, 8)),
    ((17, 13), (8, 6)), ((33, 17), (11, 17)), ((33, 17), (33, 5)), ((24, 18), (8, 6)),
    ((64, 48), (128, 96)), ((13, 7), (104, 56)), ((160, 96), (10, 6)), ((101, 67), (37, 29)),
    ((37, 29), (101, 67)), ((300, 2), (30, 20)), ((2, 300), (20, 30)), ((97, 61), (224, 224)),
    ((333, 257), (700, 500)), ((333, 257), (111, 85)), ((45, 45), (30, 30)), ((9, 9), (4, 4)),
]
PHOTO_SIZES = [(224, 224), (225, 150), (113, 75), (640, 426), (900, 600)]
MAX_INLINE = 1024


def seed_of(kind, w, h, c):
    return 5000 + len(kind) * 131 + w * 7 + h * 3 + c


def line(fields, make):
    """Prints the case `fields` with the output `make()` gives, or a comment with its error
    (one failing call must not lose the rest)."""
    try:
        out = make() if callable(make) else make
    except Exception as e:  # noqa: BLE001 - reported in the file, and the tests skip it
        print("# error: " + " ".join(f"{k}={v}" for k, v in fields) + f": {e!r}", flush=True)
        return
    data = np.ascontiguousarray(out).tobytes()
    text = " ".join(f"{k}={v}" for k, v in fields) + f" fnv={fnv(out):016x}"
    if len(data) <= MAX_INLINE:
        text += " bytes=" + data.hex()
    print(text, flush=True)


def pil(img, c):
    return Image.fromarray(img)  # L, LA, RGB or RGBA from the shape


def photos(folder):
    """The repository's photos as RGB (OpenCV reads BGR) and gray, with 2 and 4 channels made
    from them (alpha a gradient, so premultiplied paths differ from straight ones)."""
    out = []
    for name in ("chelsea", "coffee"):
        rgb = cv2.cvtColor(cv2.imread(f"{folder}/{name}.png", cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
        out.append((f"photo:{name}", 3, rgb))
    gray = cv2.imread(f"{folder}/camera.png", cv2.IMREAD_GRAYSCALE)
    out.append(("photo:camera", 1, gray))
    return out


def fmt(v):
    return repr(float(v))


def main():
    folder = sys.argv[1]
    print(f"# OpenCV {cv2.__version__}, Pillow {Image.__version__}, numpy {np.__version__}, "
          f"IPP {'on' if cv2.ipp.useIPP() else 'off'} ({cv2.ipp.getIppVersion()})")
    print("# kind key=value ... fnv=<FNV-1a 64 of the output> [bytes=<the output, hex>]")

    # resize: OpenCV's modes, every channel count, random images.
    for (sw, sh), (dw, dh) in RESIZE_SIZES:
        for c in (1, 2, 3, 4):
            img = random_image(seed_of("resize", sw, sh, c), sw, sh, c)
            for name, mode in CV_MODES.items():
                line([("kind", "cv-resize"), ("mode", name), ("c", c), ("src", f"{sw}x{sh}"),
                      ("seed", seed_of("resize", sw, sh, c)), ("dst", f"{dw}x{dh}")],
                     lambda: cv2.resize(img, (dw, dh), interpolation=mode))
            # OpenCV's own code, without Intel's IPP (which takes INTER_CUBIC for 1, 3 and 4
            # channels on x86 and rounds otherwise): `ipp=0`.
            cv2.ipp.setUseIPP(False)
            for name in ("cubic", "lanczos4", "area", "linear"):
                line([("kind", "cv-resize"), ("mode", name), ("ipp", 0), ("c", c), ("src", f"{sw}x{sh}"),
                      ("seed", seed_of("resize", sw, sh, c)), ("dst", f"{dw}x{dh}")],
                     lambda: cv2.resize(img, (dw, dh), interpolation=CV_MODES[name]))
            cv2.ipp.setUseIPP(True)
            # Pillow: L, LA, RGB, RGBA (LA and RGBA are resampled premultiplied).
            for name, mode in PIL_MODES.items():
                line([("kind", "pil-resize"), ("mode", name), ("c", c), ("src", f"{sw}x{sh}"),
                      ("seed", seed_of("resize", sw, sh, c)), ("dst", f"{dw}x{dh}")],
                     lambda: np.asarray(pil(img, c).resize((dw, dh), mode, reducing_gap=None)))
    # Pillow with a source box (a crop in the same pass, fractional as a random-resized crop's).
    for box in [(0.0, 0.0, 50.0, 40.0), (3.25, 7.5, 90.75, 60.0), (10.0, 5.0, 11.0, 6.0)]:
        sw, sh, dw, dh = 97, 61, 32, 24
        for c in (1, 3, 4):
            img = random_image(seed_of("resize", sw, sh, c), sw, sh, c)
            for name, mode in PIL_MODES.items():
                line([("kind", "pil-resize"), ("mode", name), ("c", c), ("src", f"{sw}x{sh}"),
                      ("seed", seed_of("resize", sw, sh, c)), ("dst", f"{dw}x{dh}"),
                      ("box", ",".join(fmt(v) for v in box))],
                     lambda: np.asarray(pil(img, c).resize((dw, dh), mode, box=box, reducing_gap=None)))
    # Real photos.
    for src, c, img in photos(folder):
        for (dw, dh) in PHOTO_SIZES:
            for name, mode in CV_MODES.items():
                line([("kind", "cv-resize"), ("mode", name), ("c", c), ("src", src), ("dst", f"{dw}x{dh}")],
                     lambda: cv2.resize(img, (dw, dh), interpolation=mode))
            cv2.ipp.setUseIPP(False)
            line([("kind", "cv-resize"), ("mode", "cubic"), ("ipp", 0), ("c", c), ("src", src), ("dst", f"{dw}x{dh}")],
                 lambda: cv2.resize(img, (dw, dh), interpolation=cv2.INTER_CUBIC))
            cv2.ipp.setUseIPP(True)
            for name, mode in PIL_MODES.items():
                line([("kind", "pil-resize"), ("mode", name), ("c", c), ("src", src), ("dst", f"{dw}x{dh}")],
                     lambda: np.asarray(pil(img, c).resize((dw, dh), mode, reducing_gap=None)))

    # copyMakeBorder: every border, pads inside and beyond the image.
    pads = [(0, 0, 0, 0), (1, 2, 3, 4), (5, 0, 0, 7), (9, 11, 13, 8)]
    for (sw, sh) in [(1, 1), (2, 3), (7, 5), (33, 17)]:
        for c in (1, 2, 3, 4):
            img = random_image(seed_of("border", sw, sh, c), sw, sh, c)
            for name, border in BORDERS.items():
                for (t, b, l, r) in pads:
                    value = [17, 200, 33, 250][:c]
                    line([("kind", "cv-border"), ("border", name), ("c", c), ("src", f"{sw}x{sh}"),
                          ("seed", seed_of("border", sw, sh, c)), ("pad", f"{t},{b},{l},{r}"),
                          ("value", ",".join(map(str, value)))],
                         lambda: cv2.copyMakeBorder(img, t, b, l, r, border, value=value))

    # warpAffine and warpPerspective: nearest and linear, constant and replicate borders,
    # forward and inverse maps.
    affine = {
        "rotate30": cv2.getRotationMatrix2D((20.5, 15.0), 30.0, 1.0),
        "rotate-137.5-scaled": cv2.getRotationMatrix2D((12.0, 9.0), -137.5, 0.73),
        "shear": np.array([[1.0, 0.35, -4.25], [0.1, 0.9, 2.5]]),
        "zoom5": np.array([[5.0, 0.0, -30.0], [0.0, 5.0, -20.0]]),
        "shift": np.array([[1.0, 0.0, 3.25], [0.0, 1.0, -1.5]]),
        "identity": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
        "rotate90": cv2.getRotationMatrix2D((20.0, 20.0), 90.0, 1.0),
    }
    perspective = {
        "mild": np.array([[1.02, 0.05, -3.0], [-0.03, 0.98, 2.0], [0.0004, -0.0002, 1.0]]),
        "strong": cv2.getPerspectiveTransform(
            np.float32([[0, 0], [40, 0], [40, 30], [0, 30]]),
            np.float32([[5, 3], [33, -2], [45, 36], [-4, 28]])),
        "horizon": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.03, 0.4]]),
        # w is exactly 0 at x = 8 (a column of infinite and NaN coordinates inside a
        # 16-pixel step with pixels inside the image), and at y = 4 (a whole row of them).
        "vanish-x": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.25, 0.0, -2.0]]),
        "vanish-y": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.125, -0.5]]),
    }
    interps = {"nearest": cv2.INTER_NEAREST, "linear": cv2.INTER_LINEAR}
    borders = {"constant": cv2.BORDER_CONSTANT, "replicate": cv2.BORDER_REPLICATE}
    for (sw, sh), (dw, dh) in [((41, 31), (41, 31)), ((41, 31), (23, 47)), ((1, 1), (5, 4)), ((200, 150), (211, 149))]:
        for c in (1, 3, 4):
            seed = seed_of("warp", sw, sh, c)
            img = random_image(seed, sw, sh, c)
            value = [9, 250, 128, 3][:c]
            for kind, table, warp in [("cv-warp-affine", affine, cv2.warpAffine),
                                      ("cv-warp-perspective", perspective, cv2.warpPerspective)]:
                for mname, m in table.items():
                    for iname, interp in interps.items():
                        for bname, border in borders.items():
                            for inverse, ipp in ((0, 1), (1, 1), (0, 0)):
                                flags = interp | (cv2.WARP_INVERSE_MAP if inverse else 0)
                                cv2.ipp.setUseIPP(bool(ipp))
                                line([("kind", kind), ("matrix", mname), ("m", ",".join(fmt(v) for v in m.ravel())),
                                      ("interp", iname), ("border", bname), ("inverse", inverse), ("ipp", ipp), ("c", c),
                                      ("src", f"{sw}x{sh}"), ("seed", seed), ("dst", f"{dw}x{dh}"),
                                      ("value", ",".join(map(str, value)))],
                                     lambda: warp(img, m, (dw, dh), flags=flags, borderMode=border,
                                                  borderValue=value))
                                cv2.ipp.setUseIPP(True)


if __name__ == "__main__":
    main()
