#!/usr/bin/env bash
# `stof profile` end to end (ctest label cpu). Usage: profile_cli_test.sh path/to/stof cuda|nocuda
#  - nocuda build: the command exists and refuses with "no CUDA", exit 1;
#  - cuda build, no GPU: refuses with "no usable GPU", exit 1;
#  - cuda build with a GPU: a small copy measures, its JSON follows the stof-profile schema and
#    its Chrome trace has one "X" event per kernel; a bad --range is a one-line error.
set -uo pipefail
stof=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
py=/usr/bin/python3
bad() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$stof" profile --help >"$tmp/out" 2>&1 || bad "profile --help exits $?"
grep -q "copy" "$tmp/out" && grep -q "gemm" "$tmp/out" || bad "profile --help lacks copy/gemm"

"$stof" profile copy --bytes 1048576 --runs 5 --activity-runs 2 --json >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$build" = nocuda ]; then
  [ "$rc" -eq 1 ] || bad "nocuda: exit $rc, want 1"
  grep -q "this build has no CUDA" "$tmp/err" || bad "nocuda: stderr '$(cat "$tmp/err")'"
  "$stof" profile gemm --m 64 --n 64 --k 64 >/dev/null 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q "no CUDA" "$tmp/err" || bad "nocuda gemm: '$(cat "$tmp/err")'"
elif [ "$rc" -ne 0 ] && grep -q "no usable GPU" "$tmp/err"; then
  [ "$rc" -eq 1 ] || bad "no GPU: exit $rc, want 1"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "no GPU: want one stderr line, got '$(cat "$tmp/err")'"
else
  [ "$rc" -eq 0 ] || bad "copy on a GPU: exit $rc ($(cat "$tmp/err"))"
  $py - "$tmp/out" <<'PY' || bad "copy JSON: $(head -c 600 "$tmp/out")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "stof-profile" and j["version"] == 1, "schema"
assert j["availability"]["events"]["available"], "events"
assert j["latency"]["runs"] == 5 and len(j["latency"]["samples_us"]) == 5, "runs"
assert j["summary"]["latency_source"] == "cuda_events", "latency source"
a = j["availability"]["activity"]
if a["available"]:
    assert j["activity"]["runs"] == 2 and len(j["activity"]["kernels"]) >= 2, "kernels"
    assert all("Copy" in k["name"] for k in j["activity"]["kernels"]), "kernel names"
else:
    assert a["why_not"], "activity why_not"
r = j["availability"]["range"]
assert r["available"] or r["why_not"], "range why_not"
assert any(n.startswith("output check: 0 of") for n in j["notes"]), "output check"
PY
  "$stof" profile copy --bytes 1048576 --runs 3 --activity-runs 1 --no-counters \
    --trace "$tmp/trace.json" >"$tmp/out" 2>"$tmp/err" || bad "copy --trace: $(cat "$tmp/err")"
  grep -q "availability" "$tmp/out" || bad "human output lacks availability"
  $py - "$tmp/trace.json" <<'PY' || bad "trace: $(head -c 400 "$tmp/trace.json")"
import json, sys
t = json.load(open(sys.argv[1]))
x = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert t["otherData"].get("activity_why_not") or len(x) >= 1
assert all(e["dur"] >= 0 and e["ts"] >= 0 and "pid" in e and "tid" in e for e in x)
PY
  "$stof" profile copy --bytes 1024 --range nested >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" -ge 1 ] && [ "$rc" -le 127 ] && grep -q -- "--range" "$tmp/err" || bad "--range nested: exit $rc '$(cat "$tmp/err")'"
fi

if [ "$failures" -ne 0 ]; then
  echo "profile_cli_test: $failures failure(s)" >&2
  exit 1
fi
echo "profile_cli_test: ok ($build)"
