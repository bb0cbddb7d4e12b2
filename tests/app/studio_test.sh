#!/usr/bin/env bash
# GUI test (ctest label gui): starts stof-studio under Xvfb on the embedded default, saves a
# screenshot and the state it shows; checks the state's values (BigBird L = 1024, 64 x 64
# blocks, the kernel choice) against the CLI's, and that the screenshot is a real picture.
# Usage: studio_test.sh path/to/stof-studio path/to/stof path/to/stof_png_check
set -euo pipefail
studio=$1 stof=$2 check=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v xvfb-run >/dev/null || { echo "xvfb-run missing: run scripts/setup" >&2; exit 1; }

xvfb-run -a -s "-screen 0 1280x800x24" "$studio" --screenshot "$tmp/shot.png" --dump-state "$tmp/state.json" --frames 4

"$stof" layout --pattern bigbird --seq 1024 --block 64x64 --json >"$tmp/layout.json"
"$stof" select --pattern bigbird --seq 1024 --batch 8 --heads 12 --head-dim 64 --device h100 --json >"$tmp/select.json"
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(f"{d}/state.json"))
lay = json.load(open(f"{d}/layout.json"))
sel = json.load(open(f"{d}/select.json"))
assert s["mask"]["seq_len"] == 1024, s["mask"]
assert s["mask"]["spec"]["pattern"] == "bigbird", s["mask"]
assert abs((1 - s["mask"]["density"]) - 0.808) < 0.01, s["mask"]["density"]
for k in ("full_blocks", "part_blocks", "empty_blocks"):
    assert s["layout"][k] == lay[k], (k, s["layout"][k], lay[k])
assert s["workload"] == {"batch": 8, "heads": 12, "seq_len": 1024, "head_dim": 64}, s["workload"]
if s["device"] == "H100-SXM-80GB":   # no GPU here: the studio predicts for the H100
    assert s["selection"]["kernel"] == sel["choice"]["kernel"], (s["selection"], sel["choice"])
    assert s["selection"]["block_m"] == sel["choice"]["block_m"]
print("state ok:", s["layout"], s["selection"])
PY
"$check" "$tmp/shot.png" 1280 800
