"""Summary of a cupti_trace.c timeline (README.md beside this file): what the GPU does, per thread kind, and what each thread waits on."""
import collections, re, statistics, sys

K, M, S, A, T = [], [], [], {}, {}
apis = []
for line in open(sys.argv[1], errors="replace"):
    f = line.rstrip("\n").split("\t")
    if f[0] == "K":
        K.append((int(f[1]), int(f[2]), int(f[3]), int(f[4]), f[5], int(f[6])))
    elif f[0] == "M":
        M.append((int(f[1]), int(f[2]), int(f[3]), int(f[4]), int(f[5]), int(f[6])))
    elif f[0] == "S":
        S.append((int(f[1]), int(f[2]), int(f[3]), int(f[4]), int(f[5])))
    elif f[0] in "DR":
        a = (f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4]), f[5])
        apis.append(a)
        if int(f[4]):
            A[(f[0], int(f[4]))] = a
    elif f[0] == "T":
        T[int(f[1])] = f[2]
if not K:
    sys.exit("no kernels")
t0 = min(a[1] for a in apis) if apis else min(k[0] for k in K)


def kind(tid):
    return re.sub(r"\s*\d+$", "", T.get(tid, "?%d" % tid))


def who(corr):
    # A kernel's or copy's correlation id is its launching API call's (runtime first).
    a = A.get(("R", corr)) or A.get(("D", corr))
    return (kind(a[3]), a) if a else ("?", None)


def ms(x):
    return x / 1e6


print("threads:", dict(collections.Counter(kind(t) for t in T)))
last = max(k[1] for k in K)
print("timeline %.0f ms from the first API call; first kernel at %.0f ms" % (ms(last - t0), ms(min(k[0] for k in K) - t0)))

# GPU busy (any kernel) and summed kernel time per 250 ms, and per launching thread kind.
B = 250_000_000
nb = (last - t0) // B + 1
busy = [0] * nb
by_kind = collections.defaultdict(lambda: [0] * nb)
ivs = sorted((k[0], k[1]) for k in K)
cur_s, cur_e = ivs[0]
merged = []
for s, e in ivs[1:]:
    if s > cur_e:
        merged.append((cur_s, cur_e))
        cur_s, cur_e = s, e
    else:
        cur_e = max(cur_e, e)
merged.append((cur_s, cur_e))


def spread(s, e, arr):
    s, e = s - t0, e - t0
    while s < e:
        b = s // B
        end = min(e, (b + 1) * B)
        arr[b] += end - s
        s = end


for s, e in merged:
    spread(s, e, busy)
for k in K:
    spread(k[0], k[1], by_kind[who(k[3])[0]])
print("GPU busy (any kernel) per 250 ms, %:", [round(100 * b / B) for b in busy])
for kd, arr in sorted(by_kind.items()):
    print("  kernel time of %-8s per 250 ms, %% of one GPU:" % kd, [round(100 * b / B) for b in arr])

# Kernels by name.
agg = collections.defaultdict(lambda: [0, 0, collections.Counter()])
for k in K:
    a = agg[k[4][:60]]
    a[0] += 1
    a[1] += k[1] - k[0]
    a[2][who(k[3])[0]] += 1
print("\nkernels by total time (count, total ms, mean us, launched by):")
for n, (c, t, w) in sorted(agg.items(), key=lambda x: -x[1][1])[:25]:
    print("  %6d %9.1f %8.1f  %-60s %s" % (c, ms(t), t / c / 1e3, n, dict(w)))

# Delay from the launch call's end to the kernel's start, per launching kind (queueing on the GPU).
delay = collections.defaultdict(list)
for k in K:
    kd, a = who(k[3])
    if a:
        delay[kd].append(k[0] - a[2])
print("\nlaunch-to-start delay per kind (median / p90 / max us):")
for kd, d in sorted(delay.items()):
    d.sort()
    print("  %-8s n=%6d %8.1f %8.1f %8.1f" % (kd, len(d), d[len(d) // 2] / 1e3, d[int(len(d) * 0.9)] / 1e3, d[-1] / 1e3))

# Copies.
names = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP"}
cp = collections.defaultdict(lambda: [0, 0, 0])
for m in M:
    a = cp[(names.get(m[4], m[4]), who(m[3])[0])]
    a[0] += 1
    a[1] += m[5]
    a[2] += m[1] - m[0]
print("\ncopies (kind, launched by: count, MB, ms, GB/s while copying):")
for (n, kd), (c, b, t) in sorted(cp.items()):
    print("  %-5s %-8s %6d %9.1f %8.1f %6.1f" % (n, kd, c, b / 1e6, ms(t), b / max(t, 1)))
h2d = collections.defaultdict(lambda: [0] * nb)
for m in M:
    spread(m[0], m[1], h2d[names.get(m[4], m[4])])
for n, arr in sorted(h2d.items()):
    print("  %s engine time per 250 ms, %%:" % n, [round(100 * b / B) for b in arr])

# API time per thread kind.
per = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
for a in apis:
    x = per[kind(a[3])][a[0] + ":" + a[5]]
    x[0] += 1
    x[1] += a[2] - a[1]
print("\nAPI calls per thread kind (top by time: name count ms):")
for kd, d in sorted(per.items()):
    top = sorted(d.items(), key=lambda x: -x[1][1])[:10]
    print("  %-8s" % kd, "; ".join("%s %d %.0f" % (n, c, ms(t)) for n, (c, t) in top))

# One hardware batch, call by call, from the middle of the run.
hw = [a for a in apis if kind(a[3]) == "g0 hw" and a[0] == "R"]
if hw:
    mid = t0 + (last - t0) // 2
    i = min(range(len(hw)), key=lambda j: abs(hw[j][1] - mid))
    print("\nhardware decoder thread, runtime calls around the middle (start ms, us, name):")
    for a in hw[i : i + 60]:
        print("  %9.2f %9.1f %s" % (ms(a[1] - t0), (a[2] - a[1]) / 1e3, a[5]))
    # Its kernels and copies in that window.
    lo, hi = hw[i][1], hw[min(i + 60, len(hw) - 1)][2]
    mine = {a[4] for a in hw[i : i + 60]}
    print("  its GPU work in that window (start ms, us, what):")
    for k in sorted([k for k in K if k[3] in mine], key=lambda k: k[0])[:40]:
        print("   K %9.2f %8.1f %s" % (ms(k[0] - t0), (k[1] - k[0]) / 1e3, k[4][:70]))
    for m in sorted([m for m in M if m[3] in mine], key=lambda m: m[0])[:20]:
        print("   M %9.2f %8.1f %s %d" % (ms(m[0] - t0), (m[1] - m[0]) / 1e3, names.get(m[4]), m[5]))

# First API call of each kind and the opening calls that take long.
print("\nslow API calls (> 20 ms) in the first 1.5 s:")
for a in sorted(apis, key=lambda a: a[1]):
    if a[1] - t0 < 1.5e9 and a[2] - a[1] > 20e6:
        print("  %8.1f ms %8.1f ms %-10s %s" % (ms(a[1] - t0), ms(a[2] - a[1]), T.get(a[3], a[3]), a[0] + ":" + a[5]))
