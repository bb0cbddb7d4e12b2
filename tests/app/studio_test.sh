#!/usr/bin/env bash
# GUI test (ctest label gui): runs stof-studio under Xvfb in its batch modes. For the embedded
# default (BigBird L = 1024, BERT-base, 64 x 64) and for a mask file it compares the state the
# window shows (--dump-state) with the CLI's figures: layout counts at the chosen block size,
# at FlexAttention's 128 x 128 and in the block-size table, the Eq. 1 / Eq. 2 choice; it runs
# the "copy as CLI command" lines and compares their output; it checks that every panel's
# screenshot is a real picture, that a missing file is reported in the app (not a crash) and
# that bad options are refused. It checks the recent-files list across runs (kept under
# $XDG_CONFIG_HOME, here the test's own folder; a corrupt list is reported, not fatal) and that
# saving a mask (--save, the Save button's path) runs off the GUI thread: frames keep coming
# while the file is written, the file reloads to the same mask, and a bad path is an error.
# Usage: studio_test.sh path/to/stof-studio path/to/stof path/to/stof_png_check
set -euo pipefail
studio=$1 stof=$2 check=$3
assets="$(cd "$(dirname "$0")/../../assets" && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/config"   # never the user's own recent files
recent="$XDG_CONFIG_HOME/stof-studio/recent.json"
command -v xvfb-run >/dev/null || { echo "xvfb-run missing: run scripts/setup" >&2; exit 1; }
run() { xvfb-run -a -s "-screen 0 1600x900x24" "$studio" "$@"; }

# --- the default, every panel -------------------------------------------------------------
for panel in mask layout selection export; do
  run --panel "$panel" --screenshot "$tmp/$panel.png" --dump-state "$tmp/$panel.json" --frames 3
  "$check" "$tmp/$panel.png" 1600 900
done

"$stof" layout --pattern bigbird --seq 1024 --block 64x64 --json >"$tmp/layout64.json"
"$stof" layout --pattern bigbird --seq 1024 --block 128x128 --json >"$tmp/layout128.json"
for b in 16x16 32x128 128x16; do
  "$stof" layout --pattern bigbird --seq 1024 --block "$b" --json >"$tmp/table_$b.json"
done
"$stof" select --pattern bigbird --seq 1024 --batch 8 --heads 12 --head-dim 64 --device h100 --json >"$tmp/select.json"

# The copy-as-CLI lines of the layout panel's state, run as they are, with --json.
layout_cmd=$(/usr/bin/python3 -c "import json; print(json.load(open('$tmp/layout.json'))['cli']['layout'])")
select_cmd=$(/usr/bin/python3 -c "import json; print(json.load(open('$tmp/layout.json'))['cli']['select'])")
eval "\"$stof\" ${layout_cmd#stof } --json" >"$tmp/cli_layout.json"
eval "\"$stof\" ${select_cmd#stof } --json" >"$tmp/cli_select.json"

/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}"))
lay64, lay128, sel = load("layout64.json"), load("layout128.json"), load("select.json")
for panel in ("mask", "layout", "selection", "export"):
    s = load(f"{panel}.json")
    assert s["panel"] == panel, (panel, s["panel"])
    assert s["analysis_ready"] is True, panel
    assert s["mask"]["seq_len"] == 1024 and s["mask"]["spec"]["pattern"] == "bigbird", s["mask"]
    assert s["workload"] == {"batch": 8, "heads": 12, "seq_len": 1024, "head_dim": 64}, s["workload"]
    for k in ("full_blocks", "part_blocks", "empty_blocks", "index_bytes", "bitmap_bytes", "nnz"):
        assert s["layout"][k] == lay64[k], (panel, k, s["layout"][k], lay64[k])
        assert s["flex"]["layout"][k] == lay128[k], (panel, "flex", k, s["flex"]["layout"][k], lay128[k])
    assert abs(s["layout"]["wasted_fraction"] - lay64["wasted_fraction"]) < 1e-12
    # FLOPs: 4 d B H per element, over valid blocks and over the mask's nnz.
    per = 4 * 64 * 8 * 12
    assert s["work"]["valid_flops"] == per * lay64["nnz"], s["work"]
    assert s["work"]["block_kernel_flops"] == per * lay64["block_kernel_elements"], s["work"]
    assert len(s["row_valid"]) == 16 and max(s["row_valid"]) == lay64["max_blocks_per_row"]
    table = {(r["layout"]["block_m"], r["layout"]["block_n"]): r["layout"] for r in s["table"]}
    assert len(table) == 16, len(table)
    for b in ("16x16", "32x128", "128x16"):
        want = load(f"table_{b}.json")
        got = table[tuple(int(x) for x in b.split("x"))]
        for k in ("full_blocks", "part_blocks", "empty_blocks", "index_bytes"):
            assert got[k] == want[k], (b, k, got[k], want[k])
    if s["device"] == "H100-SXM-80GB":   # no GPU here: the studio predicts for the H100
        c = sel["choice"]
        got = s["selection"]
        assert got["kernel"] == c["kernel"], (got, c)
        assert (got["block_m"], got["block_n"], got["num_warps"]) == (c["block_m"], c["block_n"], c["num_warps"]), (got, c)
        assert got["eq1"]["valid_blocks"] == sel["eq1"]["valid_blocks"] == 844, got["eq1"]
        assert abs(got["eq1"]["threshold"] - sel["eq1"]["threshold"]) < 1e-12
        assert got["candidates"] == len(sel["eq2"]["candidates"]) == 64
# The commands the studio offers reproduce its figures.
s = load("layout.json")
cl, cs = load("cli_layout.json"), load("cli_select.json")
for k in ("full_blocks", "part_blocks", "empty_blocks"):
    assert cl[k] == s["layout"][k], (k, cl[k], s["layout"][k])
assert cs["choice"]["kernel"] == s["selection"]["kernel"]
assert cs["choice"]["block_m"] == s["selection"]["block_m"]
print("default state ok:", {k: s["layout"][k] for k in ("full_blocks", "part_blocks", "empty_blocks")}, s["selection"]["kernel"])
PY

# --- a mask file, another block size ------------------------------------------------------
run --open "$assets/masks/longformer-256.npy" --block 32x64 --panel layout \
    --screenshot "$tmp/file.png" --dump-state "$tmp/file.json" --frames 3
"$check" "$tmp/file.png" 1600 900
"$stof" layout --mask "$assets/masks/longformer-256.npy" --block 32x64 --json >"$tmp/file_cli.json"
/usr/bin/python3 - "$tmp" "$assets/masks/longformer-256.npy" <<'PY'
import json, sys
d, path = sys.argv[1], sys.argv[2]
s = json.load(open(f"{d}/file.json"))
c = json.load(open(f"{d}/file_cli.json"))
assert s["mask"]["path"] == path and s["mask"]["spec"] is None, s["mask"]
assert s["mask"]["seq_len"] == 256 and s["mask"]["dirty"] is False, s["mask"]
assert (s["layout"]["block_m"], s["layout"]["block_n"]) == (32, 64)
for k in ("full_blocks", "part_blocks", "empty_blocks", "nnz"):
    assert s["layout"][k] == c[k], (k, s["layout"][k], c[k])
assert s["cli"]["layout"] == f"stof layout --mask {path} --block 32x64", s["cli"]
assert s["cli"]["note"] == "", s["cli"]
print("file state ok:", {k: s["layout"][k] for k in ("full_blocks", "part_blocks", "empty_blocks")})
PY

# --- errors: shown in the app, never a crash; bad options refused --------------------------
run --open "$tmp/missing.npy" --screenshot "$tmp/err.png" --dump-state "$tmp/err.json" --frames 2
/usr/bin/python3 -c "
import json; s = json.load(open('$tmp/err.json'))
assert s['message']['level'] == 'error' and 'missing.npy' in s['message']['text'], s['message']
assert s['mask']['spec']['pattern'] == 'bigbird', 'the default stays open'
print('missing file reported:', s['message']['text'])"
if run --panel nonsense --screenshot "$tmp/x.png" 2>"$tmp/bad.err"; then
  echo "FAIL: --panel nonsense accepted" >&2; exit 1
fi
grep -q "panel" "$tmp/bad.err" || { echo "FAIL: --panel error: $(cat "$tmp/bad.err")" >&2; exit 1; }
if run --block 48x64 --screenshot "$tmp/x.png" 2>"$tmp/bad.err"; then
  echo "FAIL: --block 48x64 accepted" >&2; exit 1
fi

# --- recent files across sessions -----------------------------------------------------------
# The file run above opened the longformer mask: a later session lists it.
run --screenshot "$tmp/r.png" --dump-state "$tmp/recent1.json" --frames 1
/usr/bin/python3 - "$tmp/recent1.json" "$recent" "$assets/masks/longformer-256.npy" <<'PY'
import json, sys
s, f, path = (json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3])
assert f["format"] == "stof-studio-recent" and path in f["files"], f
assert path in s["recent"], s["recent"]
assert s["message"]["level"] == "info", s["message"]
print("recent files kept across sessions:", len(s["recent"]), "entries")
PY
echo '{"format": "stof-studio-recent", "version": 1, "files": [3' >"$recent"
run --screenshot "$tmp/r.png" --dump-state "$tmp/recent2.json" --frames 1
/usr/bin/python3 -c "
import json; s = json.load(open('$tmp/recent2.json'))
m = s['message']
assert m['level'] == 'error' and 'recent.json' in m['text'] and 'not valid JSON' in m['text'], m
assert s['recent'] == [] and s['analysis_ready'] is True, s['recent']
print('corrupt recent list reported:', m['text'][:90])"

# --- saving off the GUI thread --------------------------------------------------------------
run --seq 4096 --save "$tmp/saved.png" --dump-state "$tmp/saved.json" | tee "$tmp/save.out"
frames=$(sed -n 's/.* \([0-9][0-9]*\) frames drawn meanwhile.*/\1/p' "$tmp/save.out")
[ -n "$frames" ] && [ "$frames" -ge 1 ] || { echo "FAIL: no frames drawn while saving: $(cat "$tmp/save.out")" >&2; exit 1; }
"$stof" layout --mask "$tmp/saved.png" --block 64x64 --json >"$tmp/saved_cli.json"
/usr/bin/python3 - "$tmp" "$recent" <<'PY'
import json, sys
d, recent = sys.argv[1], sys.argv[2]
s, c = json.load(open(f"{d}/saved.json")), json.load(open(f"{d}/saved_cli.json"))
assert s["mask"]["path"] == f"{d}/saved.png" and s["mask"]["dirty"] is False and s["saving"] is False, s["mask"]
assert c["nnz"] == s["mask"]["nnz"], (c["nnz"], s["mask"]["nnz"])
assert json.load(open(recent))["files"][0] == f"{d}/saved.png"
print("saved off the GUI thread:", s["message"]["text"])
PY
if run --save "$tmp/no/such/dir/m.png" 2>"$tmp/bad.err"; then
  echo "FAIL: saving into a missing directory succeeded" >&2; exit 1
fi
grep -q "no/such/dir/m.png" "$tmp/bad.err" || { echo "FAIL: save error: $(cat "$tmp/bad.err")" >&2; exit 1; }
if run --save "$tmp/m.txt" 2>"$tmp/bad.err"; then
  echo "FAIL: saving as .txt succeeded" >&2; exit 1
fi
echo "studio: all checks passed"
