#!/usr/bin/env bash
# CLI tests of issue 34 (ctest label cpu): readers refuse special files by kind without
# blocking (every command that reads a plan, config or mask; each run under `timeout`, so a
# hang fails instead of stopping the suite), the size limit and a symlink loop are named; the
# atomic writer takes a 250-byte file name, refuses a read-only output unless --force, notes a
# hard-linked one; a CPU-tuned plan names the CPU; and Ctrl-C / SIGTERM stop `tune` (while it
# measures the whole model), `run`, a 1 GiB mask write and a PNG encode with exit code 130 /
# 143, the old output file unchanged and no temporary left. The seconds from the signal to
# the exit are printed (docs/robustness.md quotes them), not asserted: the bound is the
# watchdog's (app/cli/interrupt.h). Usage: cli_files_signals_test.sh path/to/stof
set -uo pipefail
stof=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
pass=0
py=/usr/bin/python3

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# refused NAME REGEX CMD...: exits 1..127 within 30 s with one stderr line matching REGEX.
refused() {
  local name=$1 regex=$2; shift 2
  timeout 30 "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq 124 ]; then bad "$name: still running after 30 s (blocked?)"; return; fi
  if [ "$rc" -lt 1 ] || [ "$rc" -gt 127 ]; then bad "$name: exit $rc, want 1..127 ($(cat "$tmp/err"))"; return; fi
  if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -Eq -e "$regex" "$tmp/err"; then
    bad "$name: stderr '$(cat "$tmp/err")' is not one line matching /$regex/"; return
  fi
  ok
}
hash_of() { "$stof" mask --mask "$1" --json | $py -c "import json,sys; print(json.load(sys.stdin)['hash'])"; }
# No "<name>.tmp-<pid>-<n>" left in $tmp.
no_temps() {
  if ls "$tmp" | grep -q '\.tmp-'; then bad "$1: temporaries left: $(ls "$tmp" | grep '\.tmp-')"; else ok; fi
}

# --- special files, limits, loops ------------------------------------------------------------
mkfifo "$tmp/p.json" "$tmp/m.npy" "$tmp/c.json"
fifo="is a FIFO \(named pipe\), not a regular file$"
refused "plan validate FIFO" "^stof plan validate: $tmp/p\.json: $fifo" "$stof" plan validate "$tmp/p.json"
refused "run --plan FIFO" "^stof run: $tmp/p\.json: $fifo" "$stof" run --plan "$tmp/p.json" --device cpu
refused "graph --config FIFO" "^stof graph: $tmp/c\.json: $fifo" "$stof" graph --config "$tmp/c.json"
refused "tune --config FIFO" "^stof tune: $tmp/c\.json: $fifo" "$stof" tune --config "$tmp/c.json" --device predict
refused "mask --mask FIFO" "^stof mask: $tmp/m\.npy: $fifo" "$stof" mask --mask "$tmp/m.npy"
refused "graph --config /dev/zero" "^stof graph: /dev/zero: is a character device, not a regular file$" \
  "$stof" graph --config /dev/zero
$py -c "open('$tmp/big.json', 'w').write('{' + ' ' * (16 << 20) + '}')"
refused "17 MiB config" "^stof graph: $tmp/big\.json: file is 16777218 bytes; HuggingFace configs are at most 16777216 bytes \(16 MiB\)$" \
  "$stof" graph --config "$tmp/big.json"
ln -s "$tmp/loop_b.json" "$tmp/loop_a.json"
ln -s "$tmp/loop_a.json" "$tmp/loop_b.json"
refused "symlink loop" "^stof plan validate: $tmp/loop_a\.json: cannot open: a symlink loop \(too many levels of symbolic links\)$" \
  "$stof" plan validate "$tmp/loop_a.json"
rm -f "$tmp/p.json" "$tmp/m.npy" "$tmp/c.json" "$tmp/loop_"*.json "$tmp/big.json"

# --- the atomic writer -----------------------------------------------------------------------
long="$tmp/$(printf 'a%.0s' $(seq 246)).npy"  # 250 bytes: its temporary was 265
if "$stof" mask --pattern causal --seq 64 --out "$long" >/dev/null 2>"$tmp/err" && [ -s "$long" ]; then ok
else bad "250-byte file name: $(cat "$tmp/err")"; fi
rm -f "$long"
"$stof" mask --pattern causal --seq 64 --out "$tmp/ro.npy" >/dev/null
before=$(hash_of "$tmp/ro.npy")
chmod 0444 "$tmp/ro.npy"
refused "read-only output" "^stof mask: $tmp/ro\.npy: is read-only \(mode 0444\): not replaced \(the file is unchanged; make it writable or force the write\)$" \
  "$stof" mask --pattern full --seq 64 --out "$tmp/ro.npy"
[ "$(hash_of "$tmp/ro.npy")" = "$before" ] && ok || bad "read-only output: the file changed"
if "$stof" mask --pattern full --seq 64 --out "$tmp/ro.npy" --force >/dev/null 2>"$tmp/err" &&
   [ "$(hash_of "$tmp/ro.npy")" != "$before" ] && [ "$(stat -c %a "$tmp/ro.npy")" = 444 ]; then ok
else bad "--force: not replaced, or the mode changed: $(cat "$tmp/err")"; fi
refused "--force on a command that writes nothing" "force" "$stof" graph --model bert-small --force
"$stof" mask --pattern causal --seq 64 --out "$tmp/linked.json" >/dev/null
ln "$tmp/linked.json" "$tmp/other.json"
"$stof" mask --pattern full --seq 64 --out "$tmp/linked.json" >/dev/null 2>"$tmp/err"
grep -qx "stof: note: $tmp/linked.json: had 1 other hard link (other names of the same file): it keeps the old content; the new content is at this name only" "$tmp/err" &&
  [ "$(hash_of "$tmp/other.json")" != "$(hash_of "$tmp/linked.json")" ] && ok ||
  bad "hard link: no note, or the other name changed: $(cat "$tmp/err")"
no_temps "writer"
rm -f "$tmp"/*.npy "$tmp"/*.json

# --- a CPU-tuned plan says where it was measured ------------------------------------------
"$stof" tune --model bert-small --batch 1 --seq 64 --device cpu --budget 5c --repeats 1 --quiet \
  --no-model --no-cache --out "$tmp/cpu.plan.json" >/dev/null 2>"$tmp/err" || bad "tune --device cpu: $(cat "$tmp/err")"
$py - "$tmp/cpu.plan.json" <<'PY' && ok || bad "CPU-tuned plan: device"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["device"]["name"] == "cpu", p["device"]
assert all(m["measured"] for m in p["measurements"]), p["measurements"]
PY
"$stof" run --plan "$tmp/cpu.plan.json" --device cpu --layers 1 --repeats 1 --json >"$tmp/out" 2>"$tmp/err" || bad "run the CPU plan: $(cat "$tmp/err")"
$py -c "import json,sys; j=json.load(open('$tmp/out')); sys.exit(0 if j['warnings'] == [] else 1)" && ok ||
  bad "replaying a CPU plan on the CPU warns: $(head -c 300 "$tmp/out")"
rm -f "$tmp"/*.json

# --- Ctrl-C and SIGTERM ----------------------------------------------------------------------
# interrupted NAME SIGNAL WANT_RC WAIT CMD...: starts CMD in the background, waits until WAIT
# (a number of seconds, or "temp": until a temporary appears in $tmp), sends SIGNAL, and
# checks the exit code; the seconds from the signal to the exit go to stdout.
interrupted() {
  local name=$1 sig=$2 want=$3 wait=$4; shift 4
  "$@" >/dev/null 2>"$tmp/sig.err" &
  local pid=$! t0 t1 rc
  if [ "$wait" = temp ]; then
    for _ in $(seq 3000); do ls "$tmp" | grep -q '\.tmp-' && break; sleep 0.01; done
    ls "$tmp" | grep -q '\.tmp-' || { bad "$name: no temporary appeared"; kill -KILL $pid; wait $pid; return; }
  else
    sleep "$wait"
  fi
  t0=$(date +%s.%N)
  kill "-$sig" $pid
  ( sleep 60; kill -KILL $pid 2>/dev/null ) &
  local guard=$!
  wait $pid
  rc=$?
  t1=$(date +%s.%N)
  kill $guard 2>/dev/null; wait $guard 2>/dev/null
  echo "$name: SIG$sig -> exit $rc after $($py -c "print(f'{$t1 - $t0:.2f}')") s"
  if [ "$rc" -ne "$want" ]; then bad "$name: exit $rc, want $want ($(cat "$tmp/sig.err"))"; return; fi
  grep -q "^stof: interrupted (SIG$sig): stopped; output files are unchanged$" "$tmp/sig.err" && ok ||
    bad "$name: stderr '$(tail -2 "$tmp/sig.err")'"
}

# tune: the issue's command, interrupted while it measures the whole model (it ran on 20 s and
# exited 0); --out names an existing plan, which must stay.
echo '{"old": "plan"}' >"$tmp/Q.json"
tune=("$stof" tune --model bert-small --batch 1 --seq 256 --pattern bigbird --device cpu --out "$tmp/Q.json"
      --budget 30c --repeats 1 --quiet --cache "$tmp/cache.jsonl")
for s in 3 5; do
  interrupted "tune (${s} s in)" INT 130 "$s" "${tune[@]}"
  [ "$(cat "$tmp/Q.json")" = '{"old": "plan"}' ] && ok || bad "tune: the old plan was replaced"
done
interrupted "tune, SIGTERM" TERM 143 4 "${tune[@]}"
[ "$(cat "$tmp/Q.json")" = '{"old": "plan"}' ] && ok || bad "tune SIGTERM: the old plan was replaced"
no_temps "tune"

# run on the CPU reference, minutes of work.
interrupted "run" INT 130 2 "$stof" run --model bert-base --batch 1 --seq 2048 --device cpu --quiet

# a 1 GiB NPY mask write, interrupted once its temporary exists; and a PNG encode (stb, seconds,
# no temporary yet) at L = 32768.
"$stof" mask --pattern causal --seq 64 --out "$tmp/big.npy" >/dev/null
"$stof" mask --pattern causal --seq 64 --out "$tmp/big.png" >/dev/null
before_npy=$(hash_of "$tmp/big.npy") before_png=$(hash_of "$tmp/big.png")
interrupted "1 GiB mask write" TERM 143 temp "$stof" mask --pattern bigbird --seq 32768 --out "$tmp/big.npy"
[ "$(hash_of "$tmp/big.npy")" = "$before_npy" ] && ok || bad "mask write: the old file changed"
interrupted "PNG encode" INT 130 2 "$stof" mask --pattern causal --seq 32768 --out "$tmp/big.png"
[ "$(hash_of "$tmp/big.png")" = "$before_png" ] && ok || bad "PNG encode: the old file changed"
no_temps "mask writes"

echo "cli_files_signals_test: $pass passed, $failures failed"
[ "$failures" -eq 0 ]
