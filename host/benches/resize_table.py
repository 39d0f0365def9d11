"""The markdown table of docs/BENCHMARKS.md's resize sections, from one call's records.

    python3 resize_table.py RESIZE.json PEERS.json BEFORE.json > table.md

RESIZE.json is `gpu-bundle/bench/resize --out`'s `resize.json`, PEERS.json
`resize_peers.py`'s output from the same call, BEFORE.json an earlier `resize.json` (its
"now" is the table's first column). Each row is set against NPP's and torchvision's closest
mode, timed in the same call on the same bytes; a row slower than either is marked, and
the marked rows are listed on standard error.
"""
import json
import sys

NPP = {"cv-nearest": "npp-nn", "cv-nearest-exact": "npp-nn", "pil-nearest": "npp-nn",
       "cv-linear": "npp-linear", "cv-linear-exact": "npp-linear", "cv-area": "npp-super",
       "cv-cubic": "npp-cubic", "cv-lanczos4": "npp-lanczos"}
TORCHVISION = {"cv-nearest": "tv-nearest", "cv-nearest-exact": "tv-nearest", "pil-nearest": "tv-nearest",
               "cv-linear": "tv-bilinear", "cv-linear-exact": "tv-bilinear", "cv-cubic": "tv-bicubic",
               "cv-area": "tv-bilinear-aa", "pil-box": "tv-bilinear-aa", "pil-bilinear": "tv-bilinear-aa",
               "pil-bicubic": "tv-bicubic-aa"}
BATCH = "batch 256 ragged ~640x480 -> 224x224"


def main(now_path, peers_path, before_path):
    now = json.load(open(now_path))
    before = {(r["case"], r["format"], r["filter"]): r for r in json.load(open(before_path))["rows"]}
    peers = {}
    for r in json.load(open(peers_path))["rows"]:
        peers.setdefault((r["case"], r["format"]), {})[r["peer"].replace(" (per image)", "")] = r.get("median_ms")
    print("| case | format | filter | before, us | now, us (per call) | queued, us | host, us | of a copy "
          "| NPP, us | torchvision, us | |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    slower = []
    for r in now["rows"]:
        case, fmt, flt = r["case"], r["format"], r["filter"]
        pe = peers.get((BATCH if case.startswith("batch") else case, fmt), {})
        us = r["median_ms"] * 1e3
        npp, tv = NPP.get(flt), TORCHVISION.get(flt)
        npp_ms, tv_ms = pe.get(npp) if npp else None, pe.get(tv) if tv else None
        mark = "slower" if any(p is not None and us > p * 1e3 for p in (npp_ms, tv_ms)) else ""
        if mark:
            slower.append(f"{case} {fmt} {flt}")
        b = before.get((case, fmt, flt))
        cells = [
            case, fmt, flt,
            f"{b['median_ms'] * 1e3:.0f}" if b else "",
            f"{us:.0f}" + (f" ({r['us_per_image']:.2f}/image)" if "us_per_image" in r else ""),
            f"{r['queued_ms'] * 1e3:.0f}" if r.get("queued_ms") else "",
            f"{r['host_us']:.0f}" if r.get("host_us") else "",
            f"{r['gbps'] / r['same_size_copy_gbps']:.2f}" if r.get("same_size_copy_gbps") else "",
            f"{npp_ms * 1e3:.0f} ({npp[4:]})" if npp_ms else "",
            f"{tv_ms * 1e3:.0f} ({tv[3:]})" if tv_ms else "",
            mark,
        ]
        print("| " + " | ".join(cells) + " |")
    print(f"{len(slower)} rows slower than a peer: " + "; ".join(slower), file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:4])
