#!/usr/bin/env bash
# GUI test of issue 34 (ctest label gui): stof-studio under Xvfb given a FIFO where it reads a
# plan (--open-plan), a layer profile (--open-profile), a mask (--open) or a config (--config).
# Each blocked forever before (the studio never drew a frame); now the plan, profile and mask
# are errors shown in the app (the dumped state's message names the file and its kind; a batch
# run whose start option failed then exits 1) and the config is a one-line refusal before the
# window opens. Each run is under `timeout`, so a hang fails the test (exit 124).
# Usage: studio_special_files_test.sh path/to/stof-studio
set -euo pipefail
studio=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/config"   # never the user's own recent files
command -v xvfb-run >/dev/null || { echo "xvfb-run missing: run scripts/setup" >&2; exit 1; }
run() { timeout 120 xvfb-run -a -s "-screen 0 1280x800x24" "$studio" "$@"; }
# A start option that fails: exit 1 after the frames (not 0, not a hang), the state dumped. The
# studio's own exit code comes through a file: xvfb-run's cleanup sometimes fails after a command
# that exits non-zero and then reports 5 instead (as in studio_test.sh's run_rc).
run_refused() {
  local rc
  rm -f "$tmp/rc"
  timeout 120 xvfb-run -a -s "-screen 0 1280x800x24" \
    sh -c '"$0" "$@"; echo $? >"'"$tmp/rc"'"' "$studio" "$@" 2>/dev/null || true
  rc=$(cat "$tmp/rc" 2>/dev/null || echo "none (timed out or xvfb-run failed)")
  [ "$rc" = 1 ] || { echo "FAIL: $*: exit $rc, want 1" >&2; exit 1; }
}

mkfifo "$tmp/plan.json" "$tmp/profile.json" "$tmp/mask.npy" "$tmp/config.json"
run_refused --no-gpu --panel fusion --open-plan "$tmp/plan.json" --dump-state "$tmp/plan_state.json" --frames 1
run_refused --panel profile --open-profile "$tmp/profile.json" --dump-state "$tmp/profile_state.json" --frames 1
run_refused --open "$tmp/mask.npy" --dump-state "$tmp/mask_state.json" --frames 1
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
for state, name in (("plan_state.json", "plan.json"), ("profile_state.json", "profile.json"),
                    ("mask_state.json", "mask.npy")):
    m = json.load(open(f"{d}/{state}"))["message"]
    want = f"{d}/{name}: is a FIFO (named pipe), not a regular file"
    assert m["level"] == "error" and want in m["text"], (state, m)
print("studio: a FIFO as plan, profile and mask is an error in the app")
PY
if run --config "$tmp/config.json" --frames 1 2>"$tmp/err"; then
  echo "FAIL: --config of a FIFO accepted" >&2; exit 1
fi
grep -qx "stof-studio: --config: $tmp/config.json: is a FIFO (named pipe), not a regular file" "$tmp/err" ||
  { echo "FAIL: --config of a FIFO: $(cat "$tmp/err")" >&2; exit 1; }
echo "studio: --config of a FIFO refused in one line"
