#!/usr/bin/env bash
# Runs cuimg's release binaries on a GPU machine that has no Rust (built by `cargo xtask gpu-bundle`).
#
#   ./run.sh test       every test binary, with CUIMG_REQUIRE_GPU=1 (no silent skips)
#   ./run.sh examples   every example, on the embedded photo and on a shared one
#   ./run.sh sanitize   every test binary and example under compute-sanitizer: memcheck (with
#                       leak checking), racecheck, synccheck, initcheck; exits non-zero on any
#                       finding (SANITIZE_TOOLS, SANITIZE_ONLY, SANITIZE_JOBS, SANITIZE_LIMIT
#                       change the run; all logs in sanitize-logs.tar.gz)
#   ./run.sh soak       the 10,000-operation soak (tests/tests/soak.rs), memory reported
#   ./run.sh bench [args]  the kernel benchmark (writes to $OUT/bench or ./out/bench)
#   ./run.sh throughput [args]  batches, pipeline, GPU pool (writes to $OUT/throughput)
#   ./run.sh clahe [args]  CLAHE on the GPU, then OpenCV's CPU CLAHE on all cores (writes to $OUT/clahe)
#   ./run.sh files [args]  the cuimg tool on JPEG and PNG folders, GPU against CPU; nvJPEG decode
#   ./run.sh torch      cuimg and PyTorch in one process through DLPack (interop/dlpack_torch.py)
#   ./run.sh npy        `cuimg tensor`'s .npy files against torchvision v2 (interop/tensor_npy.py)
#   ./run.sh candle     cuimg and candle's CUDA backend in one binary (when `cargo xtask candle` built it)
#   ./run.sh tch        cuimg and tch (libtorch) in one binary (when `cargo xtask tch` built it)
#   ./run.sh all        test, examples, sanitize, then both benchmarks
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export CUIMG_IMAGES="$HERE/images" CUIMG_REQUIRE_GPU=1 CUIMG_HUGE=1 RUST_BACKTRACE=1 CUIMG_BIN="$HERE/bin/cuimg" CUIMG_REQUIRE_NVJPEG=1
OUTDIR=${OUT:-$HERE/out}
mkdir -p "$OUTDIR"

# test-oom fills the GPU's memory. Beside it, other processes' allocations fail: tests under
# the sanitizers failed on a full GPU when `run.sh test` ran beside `run.sh sanitize`, and
# beside a process filling the memory as test-oom does, an initcheck launch faulted
# (docs/RELIABILITY.md). So test-oom holds this lock alone, and every other test binary and
# the sanitizers' parallel runs share it: `test` and `sanitize` may run at the same time,
# test-oom waiting for the others (and they for it).
GPU_LOCK="${TMPDIR:-/tmp}/cuimg-gpu-memory.lock"
with_gpu_lock() { # -s (shared) or -x (alone), then the command
  local mode=$1; shift
  if command -v flock > /dev/null; then flock "$mode" "$GPU_LOCK" "$@"; else "$@"; fi
}

run_tests() {
  : > "$OUTDIR/tests.log"
  local passed=0 failed=0 bins_failed=()
  for t in "$HERE"/tests/*; do
    echo "== $(basename "$t")"
    local log lock=-s; [ "$(basename "$t")" = test-oom ] && lock=-x
    log=$(with_gpu_lock $lock "$t" 2>&1); local rc=$?
    echo "$log" | grep -E "^test .*(FAILED|ok)$|^test result|SKIP|panicked|failures:" | grep -v "^test .* ok$" || true
    { echo "===== $(basename "$t") (exit $rc)"; echo "$log"; } >> "$OUTDIR/tests.log"
    local p f
    p=$(echo "$log" | sed -nE 's/^test result: .* ([0-9]+) passed; ([0-9]+) failed.*/\1/p' | awk '{s+=$1} END {print s+0}')
    f=$(echo "$log" | sed -nE 's/^test result: .* ([0-9]+) passed; ([0-9]+) failed.*/\2/p' | awk '{s+=$1} END {print s+0}')
    passed=$((passed + p)); failed=$((failed + f))
    if [ $rc -ne 0 ]; then bins_failed+=("$(basename "$t")"); [ "$f" -eq 0 ] && failed=$((failed + 1)); fi
  done
  echo "tests: $passed passed, $failed failed${bins_failed:+ (failing: ${bins_failed[*]})}"
  [ "$failed" -eq 0 ]
}

run_examples() {
  local rc=0
  mkdir -p "$OUTDIR/examples"
  for e in "$HERE"/examples/*; do
    local n; n=$(basename "$e")
    [ "$n" = files_bench ] && continue  # a benchmark: run.sh files
    echo "== example $n (embedded photo)"
    (cd "$OUTDIR/examples" && "$e") || rc=1
    echo "== example $n (coffee.png)"
    (cd "$OUTDIR/examples" && "$e" "$CUIMG_IMAGES/coffee.png" "$n-coffee.png") || rc=1
  done
  return $rc
}

# One sanitizer run: tool, what (test-NAME or example-NAME), command...; its log lands in
# $OUTDIR/sanitize/TOOL-WHAT.log and its last line says PASS or FAIL.
sanitize_one() {
  local tool=$1 what=$2; shift 2
  local log="$OUTDIR/sanitize/$tool-$what.log" extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  # initcheck cannot see what nvJPEG's hardware decoder writes (an engine, not a kernel),
  # so it took cuimg's kernels reading a decoded image for reads of uninitialized memory,
  # and nvJPEG's own encoder copies bytes it never wrote (nvjpegEncodeRetrieveBitstream:
  # 313,343 reports in test-jpeg). Under initcheck nvJPEG stays unloaded (JPEG goes through
  # the CPU, cuimg's kernels are checked) and test-jpeg, which is all nvJPEG, is left out;
  # memcheck, racecheck and synccheck check the nvJPEG paths. The doc examples crashed at
  # exit under every tool with nvJPEG loaded, after all of them passed with no finding; they
  # run with it unloaded too (test-doc-nvjpeg keeps them with it, under memcheck).
  local env=(env)
  if [ "$tool" = initcheck ] || [ "$what" = test-doc ]; then env+=(CUIMG_NO_NVJPEG=1 CUIMG_REQUIRE_NVJPEG=0); fi
  # One test at a time under racecheck, which lost track of kernels launched from several
  # threads at once ("Internal Sanitizer Error"), and under initcheck, which then reported
  # reads of memory never written and faulted instrumented launches (session 13: 5 of 15
  # runs of test-resize with its threads failed, 0 of 15 one test at a time, side by side;
  # memcheck and the tests without a sanitizer never failed with the threads:
  # docs/RELIABILITY.md). Not the CLI tests: their GPU work is in child processes, which
  # racecheck does not follow here (below).
  if { [ "$tool" = racecheck ] || [ "$tool" = initcheck ]; } && [ "${what#test-}" != "$what" ] && [ "$what" != test-cli ]; then
    set -- "$@" --test-threads=1
  fi
  # The CLI tests run the cuimg binary 14 tests at a time: under racecheck and synccheck
  # those children stalled past every limit. Their kernels are the library's, which the
  # other binaries check with both tools; memcheck and initcheck still follow the children.
  if [ "$what" = test-cli ] && { [ "$tool" = racecheck ] || [ "$tool" = synccheck ]; }; then
    extra+=(--target-processes application-only)
  fi
  local start=$SECONDS
  attempt() {
    # shellcheck disable=SC2086
    (cd "$OUTDIR/sanitize/work" && "${env[@]}" timeout "${SANITIZE_LIMIT:-540}" compute-sanitizer --tool "$tool" \
      "${extra[@]}" $SANITIZE_FLAGS --error-exitcode 99 --print-limit 20 "$@") > "$log" 2>&1
  }
  attempt "$@"
  local rc=$? verdict=PASS
  # compute-sanitizer itself crashed (a segfault before the target finished starting: seen
  # twice in eight runs of test-cli, whose children it follows): not a finding; run again,
  # once, and say so.
  if [ $rc -eq 139 ] && [ $((SECONDS - start)) -le 5 ]; then
    # The crashed run's target may live on, writing to its log: keep that file aside.
    mv "$log" "$log.crashed"
    echo "sanitize: compute-sanitizer crashed on $tool $what (log: $(basename "$log").crashed); running it again"
    attempt "$@"
    rc=$?
    echo "(run again after compute-sanitizer crashed: $(basename "$log").crashed)" >> "$log"
  fi
  [ $rc -ne 0 ] && verdict=FAIL
  [ $rc -eq 124 ] && verdict="FAIL (timed out)"
  local summary; summary=$(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$log" | tail -1)
  printf '%-10s %-22s %4ss exit %-3s %s  %s\n' "$tool" "$what" $((SECONDS - start)) "$rc" "$verdict" "$summary" | tee -a "$log"
}
export -f sanitize_one

# Every test binary and every example under memcheck (with leak checking), racecheck,
# synccheck and initcheck, several at a time; new tests and examples join by being built.
# Left out, each said: test-fault (it provokes a device fault on purpose, which every tool
# reports) and the benchmark example files_bench. CUIMG_SANITIZE=1 makes the tests that loop
# take fewer rounds; the huge-image tests skip (no CUIMG_HUGE).
run_sanitize() {
  rm -rf "$OUTDIR/sanitize"; mkdir -p "$OUTDIR/sanitize/work"
  # Binaries that never touch the GPU (CPU-only tests, tests that skip) pass instead of
  # failing for "no CUDA"; children (the CLI tests run the cuimg binary) are checked too.
  # API errors are not findings: the tests provoke them on purpose (a 1 TiB allocation,
  # filling the GPU) and check the typed errors cuimg returns for them.
  SANITIZE_FLAGS=""
  local help; help=$(compute-sanitizer --help 2>&1)
  for flag in "--require-cuda-init no" "--report-api-errors no"; do
    if grep -q -- "${flag%% *}" <<< "$help"; then SANITIZE_FLAGS="$SANITIZE_FLAGS $flag"; fi
  done
  export SANITIZE_FLAGS
  echo "sanitize: $(compute-sanitizer --version 2>&1 | tail -1); flags:$SANITIZE_FLAGS"
  local tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck} jobs=() alone=() t e
  # SANITIZE_ONLY="test-jpeg example-lut ...": only those (for a second look at a finding).
  only() { [ -z "${SANITIZE_ONLY:-}" ] || grep -qw -- "$1" <<< "$SANITIZE_ONLY"; }
  for t in "$HERE"/tests/*; do
    only "$(basename "$t")" || continue
    case $(basename "$t") in
      test-fault) echo "sanitize: leaving out test-fault (a deliberate device fault)"; continue ;;
      # It fills the GPU's memory: run after the others, by itself.
      test-oom) alone+=("$(basename "$t")|$t"); continue ;;
      test-doc) jobs+=("test-doc-nvjpeg|$t") ;;
    esac
    jobs+=("$(basename "$t")|$t")
  done
  for e in "$HERE"/examples/*; do
    only "example-$(basename "$e")" || continue
    [ "$(basename "$e")" = files_bench ] && { echo "sanitize: leaving out files_bench (a benchmark)"; continue; }
    local args=""
    # The batch example feeds each photo 64 times by default: once is enough here.
    [ "$(basename "$e")" = batch ] && args=" $CUIMG_IMAGES --repeat 1"
    jobs+=("example-$(basename "$e")|$e$args")
  done
  local list=() last=()
  for tool in $tools; do
    for j in "${jobs[@]}"; do
      case "$tool|${j%%|*}" in
        initcheck\|test-jpeg) echo "sanitize: leaving test-jpeg out of initcheck (nvJPEG's own writes and copies: see sanitize_one)"; continue ;;
        memcheck\|test-doc-nvjpeg) ;;
        *\|test-doc-nvjpeg) continue ;;
      esac
      list+=("$tool|$j")
    done
    for j in "${alone[@]}"; do last+=("$tool|$j"); done
  done
  echo "sanitize: $((${#list[@]} + ${#last[@]})) runs ($((${#jobs[@]} + ${#alone[@]})) binaries x tools: $tools), ${SANITIZE_JOBS:-12} at a time"
  local run='IFS="|" read -r tool what bin <<< "{}"; sanitize_one "$tool" "$what" $bin'
  printf '%s\n' "${list[@]}" | with_gpu_lock -s env -u CUIMG_HUGE CUIMG_SANITIZE=1 OUTDIR="$OUTDIR" xargs -P "${SANITIZE_JOBS:-12}" -I{} bash -c "$run"
  printf '%s\n' "${last[@]}" | with_gpu_lock -x env -u CUIMG_HUGE CUIMG_SANITIZE=1 OUTDIR="$OUTDIR" xargs -P 1 -I{} bash -c "$run"
  local total=$((${#list[@]} + ${#last[@]}))
  local failed; failed=$(grep -lE "^(memcheck|racecheck|synccheck|initcheck) .* FAIL" "$OUTDIR"/sanitize/*.log | wc -l)
  echo "sanitize: $((total - failed)) passed, $failed failed"
  for f in $(grep -lE "^(memcheck|racecheck|synccheck|initcheck) .* FAIL" "$OUTDIR"/sanitize/*.log); do
    echo "===== $f"; grep -E "=========|panicked|FAILED" "$f" | head -30; tail -12 "$f"
  done
  # Every log in one file, whatever the transfer limits on many files.
  tar czf "$OUTDIR/sanitize-logs.tar.gz" -C "$OUTDIR" sanitize && rm -rf "$OUTDIR/sanitize"
  [ "$failed" -eq 0 ]
}

mode=${1:-test}
shift || true
case "$mode" in
  test) run_tests ;;
  examples) run_examples ;;
  sanitize) run_sanitize ;;
  soak) CUIMG_SOAK=1 "$HERE"/tests/test-soak --nocapture ;;
  bench) "$HERE"/bench/kernels --images "$CUIMG_IMAGES" --out "$OUTDIR/bench" "$@" ;;
  throughput) "$HERE"/bench/throughput --out "$OUTDIR/throughput" "$@" ;;
  clahe)
    "$HERE"/bench/clahe --images "$CUIMG_IMAGES" --out "$OUTDIR/clahe" "$@" || exit 1
    python3 "$HERE"/bench/clahe_opencv.py "$CUIMG_IMAGES" "$OUTDIR/clahe/opencv-clahe.json" ;;
  files) "$HERE"/examples/files_bench --out "$OUTDIR/files" "$@" ;;
  torch) python3 "$HERE"/interop/dlpack_torch.py "$HERE"/interop/libdlpack_torch.so ;;
  candle) LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} "$HERE"/interop/candle-beside-cuimg ;;
  # `cuimg tensor`'s .npy files against torchvision v2, read by NumPy and PyTorch.
  npy) rm -rf "$OUTDIR/npy"
       "$HERE"/bin/cuimg tensor "$CUIMG_IMAGES"/*.png -o "$OUTDIR/npy/f16" --dtype f16 --normalize imagenet &&
       "$HERE"/bin/cuimg tensor "$CUIMG_IMAGES"/*.png -o "$OUTDIR/npy/bf16" --dtype bf16 --layout nhwc --flip \
         --normalize imagenet &&
       python3 "$HERE"/interop/tensor_npy.py "$CUIMG_IMAGES" "$OUTDIR/npy" ;;
  # libtorch from the machine's PyTorch (2.11, the version tch 0.24 pins); its libraries
  # find CUDA's wheels by their own paths.
  tch) LD_LIBRARY_PATH=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))'):${LD_LIBRARY_PATH:-} \
         "$HERE"/interop/tch-beside-cuimg ;;
  all)
    status=0
    run_tests || status=1
    run_examples > "$OUTDIR/examples.log" 2>&1 || { status=1; echo "examples FAILED"; }
    tail -40 "$OUTDIR/examples.log"
    python3 "$HERE"/interop/dlpack_torch.py "$HERE"/interop/libdlpack_torch.so || status=1
    run_sanitize || status=1
    "$HERE"/bench/kernels --images "$CUIMG_IMAGES" --out "$OUTDIR/bench" "$@" || status=1
    "$HERE"/bench/throughput --out "$OUTDIR/throughput" || status=1
    exit $status ;;
  *) echo "usage: $0 [test|examples|sanitize|soak|bench|throughput|clahe|files|torch|npy|candle|tch|all]"; exit 2 ;;
esac
