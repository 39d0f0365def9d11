#!/usr/bin/env bash
# Runs cuimg's release binaries on a GPU machine that has no Rust (built by `cargo xtask gpu-bundle`).
#
#   ./run.sh test       every test binary, with CUIMG_REQUIRE_GPU=1 (no silent skips)
#   ./run.sh examples   every example, on the embedded photo and on a shared one
#   ./run.sh sanitize   the sanitize tests under compute-sanitizer: memcheck, racecheck,
#                       synccheck, initcheck; exits non-zero on any finding
#   ./run.sh bench [args]  the kernel benchmark (writes to $OUT/bench or ./out/bench)
#   ./run.sh throughput [args]  batches, pipeline, GPU pool (writes to $OUT/throughput)
#   ./run.sh files [args]  the cuimg tool on JPEG and PNG folders, GPU against CPU; nvJPEG decode
#   ./run.sh all        test, examples, sanitize, then both benchmarks
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export CUIMG_IMAGES="$HERE/images" CUIMG_REQUIRE_GPU=1 CUIMG_HUGE=1 RUST_BACKTRACE=1 CUIMG_BIN="$HERE/bin/cuimg" CUIMG_REQUIRE_NVJPEG=1
OUTDIR=${OUT:-$HERE/out}
mkdir -p "$OUTDIR"

run_tests() {
  : > "$OUTDIR/tests.log"
  local passed=0 failed=0 bins_failed=()
  for t in "$HERE"/tests/*; do
    echo "== $(basename "$t")"
    local log; log=$("$t" 2>&1); local rc=$?
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

run_sanitize() {
  : > "$OUTDIR/sanitize.log"
  local bin="$HERE/tests/test-sanitize" findings=0
  for tool in memcheck racecheck synccheck initcheck; do
    echo "== compute-sanitizer --tool $tool"
    local log="$OUTDIR/sanitize-$tool.tmp"
    compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 "$bin" --test-threads=1 > "$log" 2>&1
    local rc=$?
    { echo "===== $tool (exit $rc)"; cat "$log"; } >> "$OUTDIR/sanitize.log"; rm -f "$log"; log="$OUTDIR/sanitize.log"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" "$log" | sed 's/^/    /'
    if [ $rc -ne 0 ]; then findings=$((findings + 1)); echo "    $tool: FAILED (exit $rc); see $log"; tail -30 "$log"; fi
  done
  echo "sanitize: $((4 - findings)) passed, $findings failed"
  [ "$findings" -eq 0 ]
}

mode=${1:-test}
shift || true
case "$mode" in
  test) run_tests ;;
  examples) run_examples ;;
  sanitize) run_sanitize ;;
  bench) "$HERE"/bench/kernels --images "$CUIMG_IMAGES" --out "$OUTDIR/bench" "$@" ;;
  throughput) "$HERE"/bench/throughput --out "$OUTDIR/throughput" "$@" ;;
  files) "$HERE"/examples/files_bench --out "$OUTDIR/files" "$@" ;;
  all)
    status=0
    run_tests || status=1
    run_examples > "$OUTDIR/examples.log" 2>&1 || { status=1; echo "examples FAILED"; }
    tail -40 "$OUTDIR/examples.log"
    run_sanitize || status=1
    "$HERE"/bench/kernels --images "$CUIMG_IMAGES" --out "$OUTDIR/bench" "$@" || status=1
    "$HERE"/bench/throughput --out "$OUTDIR/throughput" || status=1
    exit $status ;;
  *) echo "usage: $0 [test|examples|sanitize|bench|throughput|files|all]"; exit 2 ;;
esac
