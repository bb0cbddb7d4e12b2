#!/usr/bin/env bash
# End-to-end checks of plans of a KV cache past a square mask's 32768 keys (plan schema
# version 3, mask.rows "last"; issue 33): `stof select --plan-out` writes one for a long --seq
# with --q-len and for a long JSON spec file, `stof plan validate` accepts it and refuses a
# corrupted hash or a missing mask.rows by path, `stof run --plan` refuses it by name (it
# replays square layers), and a short decode step's plan stays version 2. Run by cli_test.sh
# (ctest cli.end_to_end) with the same argument. Usage: cli_plan_long_test.sh path/to/stof
set -uo pipefail
stof=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
py=/usr/bin/python3

bad() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
run_ok() {
  local name=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err" || bad "$name: exit $? ($(cat "$tmp/err"))"
}
# run_fail NAME RC REGEX CMD...: must exit RC with stderr matching REGEX
run_fail() {
  local name=$1 want=$2 regex=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = "$want" ] || { bad "$name: exit $rc, want $want ($(cat "$tmp/err"))"; return; }
  grep -Eq -e "$regex" "$tmp/err" || bad "$name: stderr '$(cat "$tmp/err")' does not match /$regex/"
}
# plan_check NAME FILE PYTHON-EXPR: EXPR with j = the plan's JSON
plan_check() {
  $py -c "import json,sys; j=json.load(open('$2')); sys.exit(0 if ($3) else 1)" ||
    bad "$1: $(head -c 600 "$2")"
}

# A decode step of a 4096-key sliding window over 131072 keys.
run_ok "select --plan-out past 32768" "$stof" select --pattern sliding_window --width 4096 \
  --seq 131072 --q-len 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --device h100 \
  --plan-out "$tmp/p.json"
plan_check "the plan holds the last row" "$tmp/p.json" "j['schema_version'] == 3 and \
j['mask']['rows'] == 'last' and j['mask']['seq_len'] == 131072 and \
j['mask']['spec'] == {'pattern': 'sliding_window', 'seq_len': 131072, 'width': 4096} and \
j['mask']['density'] == 4096 / 131072 and j['workload']['q_len'] == 1 and \
j['workload']['kv_heads'] == 8 and j['workload']['dtype'] == 'bf16' and \
j['mha']['chosen_by'] == 'shape' and j['mha']['num_warps'] == 5"
run_ok "plan validate of a version 3 plan" "$stof" plan validate "$tmp/p.json"
grep -q "^$tmp/p.json: valid plan (schema 3)$" "$tmp/out" || bad "validate text: $(cat "$tmp/out")"
grep -q "L 131072, d 128, bf16, 8 key/value heads, its last 1 rows" "$tmp/out" ||
  bad "validate workload line: $(cat "$tmp/out")"
run_ok "plan validate --json" "$stof" plan validate "$tmp/p.json" --json
plan_check "validate --json" "$tmp/out" "j['valid'] is True and j['schema_version'] == 3 and \
j['mask_hash'] == json.load(open('$tmp/p.json'))['mask']['hash']"

# A long JSON spec file (--mask) with --q-len: the same form.
printf '{"format": "stof-mask", "version": 1, "spec": {"pattern": "bigbird", "seq_len": 65536, "seed": 3}}' >"$tmp/long.json"
run_ok "select --mask long.json --plan-out" "$stof" select --mask "$tmp/long.json" --q-len 4 \
  --heads 16 --kv-heads 4 --head-dim 128 --device h100 --plan-out "$tmp/bb.json" --json
plan_check "select --json names the plan" "$tmp/out" "j['plan_out'] == '$tmp/bb.json'"
plan_check "long spec file plan" "$tmp/bb.json" "j['schema_version'] == 3 and \
j['mask']['rows'] == 'last' and j['mask']['spec']['pattern'] == 'bigbird' and \
j['mask']['spec']['seed'] == 3 and j['workload']['seq_len'] == 65536 and j['workload']['q_len'] == 4"
run_ok "plan validate of the long spec file's plan" "$stof" plan validate "$tmp/bb.json"

# Refused: a corrupted hash (the last row regenerated from the spec's row runs), mask.rows
# left out, and replay by `stof run` (square layers only).
$py -c "import json; j=json.load(open('$tmp/p.json')); j['mask']['hash']='0123456789abcdef'; json.dump(j, open('$tmp/hash.json','w'))"
run_fail "corrupted hash" 1 "^stof plan validate: $tmp/hash.json: mask\.hash: the plan was made for mask 0123456789abcdef, but its spec's last 1 rows now generate [0-9a-f]{16} \(did the generator change\?\)$" \
  "$stof" plan validate "$tmp/hash.json"
$py -c "import json; j=json.load(open('$tmp/p.json')); del j['mask']['rows']; json.dump(j, open('$tmp/norows.json','w'))"
run_fail "mask.rows missing" 1 "mask\.rows: required when workload\.seq_len \(131072\) is past a square mask's 32768" \
  "$stof" plan validate "$tmp/norows.json"
run_fail "run --plan of a version 3 plan" 1 "^stof run: $tmp/p.json: mask\.rows: the plan holds the last 1 rows of a 131072-key mask .*a layer's run and profile replay square layers \(L x L, L <= 32768\) \(refused\)$" \
  "$stof" run --plan "$tmp/p.json" --device cpu

# Up to 32768 keys a decode step's plan keeps the square mask at version 2, as before.
run_ok "select --plan-out of a short decode step" "$stof" select --pattern causal --seq 2048 \
  --q-len 16 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --device h100 --plan-out "$tmp/v2.json"
plan_check "short decode: version 2, square mask" "$tmp/v2.json" "j['schema_version'] == 2 and \
'rows' not in j['mask'] and j['mask']['seq_len'] == 2048 and j['mask']['hash'] == '07fca4c49a2e4943'"

if [ "$failures" -gt 0 ]; then
  echo "cli_plan_long_test: $failures failed" >&2
  exit 1
fi
echo "cli_plan_long_test: all passed"
