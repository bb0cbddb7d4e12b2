#!/usr/bin/env bash
# Evidence for the CUPTI measurement layer (issue 3), run by hand on a GPU machine after a
# CUDA build; not a ctest. Usage: tests/gpu/profiler_evidence.sh BUILD_DIR OUT_DIR
# Writes to OUT_DIR: gpu_tests.log (ctest -L gpu, and the profiler's cpu tests, which on a GPU
# machine also run `stof profile` end to end), copy.json / copy_user.json (256 MiB copy, auto
# and user range), gemm.json + gemm_trace.json (cuBLAS fp16 4096^3; the trace opens in
# ui.perfetto.dev), overhead_1MiB.json / overhead_16MiB.json (copies of about 1 and 9 us on an
# H200, 500 back-to-back runs timed with and without activity tracing). Then prints each
# acceptance check with PASS or FAIL:
#   copy reads and writes 256 MiB +-2 % (dram__bytes_read/write.sum), activity vs CUDA events
#   within 3 %, the GEMM above 600 TFLOP/s with its kernels and bytes, the tracing overhead.
set -uo pipefail
b=$1
out=$2
stof=$b/app/stof
mkdir -p "$out"
{
  ctest --test-dir "$b" -L gpu --output-on-failure
  echo "== profiler cpu tests (on this GPU machine) =="
  ctest --test-dir "$b" -L cpu -R 'profiler|Profil|Cupti|Chrome|CreateProfiler' --output-on-failure
} >"$out/gpu_tests.log" 2>&1
echo "tests: $(grep -E 'tests passed|tests failed' "$out/gpu_tests.log" | tr '\n' ' ')"
"$stof" profile copy --bytes 268435456 --json >"$out/copy.json" || echo "copy: exit $?"
"$stof" profile copy --bytes 268435456 --range user --json >"$out/copy_user.json" || echo "copy user: exit $?"
"$stof" profile gemm --m 4096 --n 4096 --k 4096 --json --trace "$out/gemm_trace.json" \
  >"$out/gemm.json" || echo "gemm: exit $?"
for mib in 1 16; do
  "$stof" profile copy --bytes $((mib << 20)) --runs 500 --overhead --no-counters --json \
    >"$out/overhead_${mib}MiB.json" || echo "overhead ${mib} MiB: exit $?"
done

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def load(name):
    try:
        return json.load(open(f"{out}/{name}.json"))
    except Exception as e:  # a failed run left no JSON
        print(f"{name}: no result ({e})")
        return None
def check(ok, text):
    print(("PASS " if ok else "FAIL ") + text)
MiB = 2 ** 20
for name in ("copy", "copy_user"):
    j = load(name)
    if not j:
        continue
    s, a = j["summary"], j["availability"]
    print(f"{name}: {j['device']['name']} ({j['device']['chip']}), latency {s['latency_us']:.2f} us "
          f"(CUDA events), {j['counters']['range_mode']} range, {j['counters']['passes']} pass(es)")
    if a["range"]["available"]:
        for key in ("dram_bytes_read", "dram_bytes_write"):
            v = s[key] / MiB
            check(abs(v / 256 - 1) <= 0.02, f"{name} {key} = {v:.3f} MiB (256 +-2 %)")
    else:
        print(f"counters unavailable: {a['range']['why_not']}")
    if s["activity_vs_events"] is not None:
        check(abs(s["activity_vs_events"]) <= 0.03,
              f"{name} activity {s['activity_latency_us']:.2f} us vs events {s['latency_us']:.2f} us: "
              f"{100 * s['activity_vs_events']:+.2f} % (within 3 %)")
    if s["achieved_bytes_per_s"]:
        print(f"{name} bandwidth {s['achieved_bytes_per_s'] / 1e9:.0f} GB/s, "
              f"{s['ratio_to_floor']:.3f} x the floor")
j = load("gemm")
if j:
    s = j["summary"]
    check(s["achieved_flops_per_s"] > 600e12,
          f"gemm 4096^3 fp16: {s['achieved_flops_per_s'] / 1e12:.1f} TFLOP/s at {s['latency_us']:.2f} us "
          f"(> 600), {s['ratio_to_floor']:.3f} x the floor")
    names = sorted({k["name"] for k in j["activity"]["kernels"]})
    print(f"gemm kernels per run {s['kernels_per_run']}: {names}")
    if s["dram_bytes"]:
        print(f"gemm DRAM read {s['dram_bytes_read'] / 1e6:.1f} MB, write {s['dram_bytes_write'] / 1e6:.1f} MB, "
              f"L2 {s['lts_bytes'] / 1e6:.1f} MB (A+B+C = {3 * 4096 * 4096 * 2 / 1e6:.1f} MB)")
    for m in j["counters"]["metrics"]:
        vals = [r["values"].get(m["name"]) for r in j["counters"]["ranges"]]
        print(f"  {m['name']} [{m['unit']}]: {vals if m['available'] else m['why_not']}")
for mib in (1, 16):
    j = load(f"overhead_{mib}MiB")
    if not j:
        continue
    o, k = j["overhead"], j["activity"]["kernels"]
    dur = sorted(x["duration_us"] for x in k)[len(k) // 2] if k else float("nan")
    if o["measured"]:
        print(f"overhead, {mib} MiB copy ({dur:.2f} us kernel): tracing on "
              f"{o['events_median_us_on']:.3f} vs off {o['events_median_us_off']:.3f} us per run "
              f"by CUDA events ({o['events_pct']:+.2f} %), host {o['wall_us_per_run_on']:.3f} vs "
              f"{o['wall_us_per_run_off']:.3f} us per run ({o['wall_pct']:+.2f} %)")
    else:
        print("overhead not measured: " + j["availability"]["activity"].get("why_not", "?"))
PY
