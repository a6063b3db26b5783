#!/usr/bin/env bash
# Run the whole test suite from nothing: set up .venv with the test extras, lint, type-check, test.
#
# The tests run in two halves: those not marked `browser` or `serial` in parallel
# (pytest-xdist, ELELEM_TEST_WORKERS processes, whole files per worker so a module's kernel
# is started once), then the `browser` and `serial` ones in one process. Extra arguments go
# to both (e.g. `bash scripts/test.sh -m "not browser" -x` or `bash scripts/test.sh
# tests/test_cli.py`); a `-m` expression is combined with each half's own. The script fails
# when either half fails; a half the arguments select nothing in is not a failure (pytest's
# exit 5), only the whole selecting nothing is. It ends with one line summing both halves.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check elelem_kernel tests bench
.venv/bin/ruff format --check elelem_kernel tests bench
.venv/bin/python -m mypy  # the package's types, as [tool.mypy] in pyproject.toml says

# The person's -m expression, taken out of the arguments to be combined with each half's.
mark="" rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    -m | --markexpr) mark="${2?-m needs an expression}"; shift 2 ;;
    --markexpr=*) mark="${1#*=}"; shift ;;
    -m?*) mark="${1#-m}"; shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
only() { if [ -n "$mark" ]; then echo "($mark) and ($1)"; else echo "$1"; fi; }

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
half() {  # half NAME PYTEST-ARGS...: run pytest, its output also kept in $logs/NAME
  local name=$1
  shift
  set +e
  .venv/bin/python -m pytest "$@" 2>&1 | tee "$logs/$name"
  echo "${PIPESTATUS[0]}" >"$logs/$name.status"
  set -e
}
half parallel -n "${ELELEM_TEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder \
  -m "$(only "not browser and not serial")" ${rest[@]+"${rest[@]}"}
half serial -m "$(only "browser or serial")" ${rest[@]+"${rest[@]}"} -n 0
parallel=$(cat "$logs/parallel.status") serial=$(cat "$logs/serial.status")

# One summary line for both halves, in pytest's words, from each half's last line.
.venv/bin/python - "$logs/parallel" "$logs/serial" <<'EOF'
import re, sys
counts, seconds = {}, 0.0
for log in sys.argv[1:]:
    lines = [l for l in open(log, errors="replace") if re.match(r"=+ .* in [\d.]+s", l)]
    if lines:
        last = lines[-1]
        seconds += float(re.search(r" in ([\d.]+)s", last)[1])
        for n, word in re.findall(r"(\d+) (\w+)", last.split(" in ")[0]):
            counts[word] = counts.get(word, 0) + int(n)
order = ["failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "warnings", "errors"]
words = sorted(counts, key=lambda w: order.index(w) if w in order else len(order))
said = ", ".join(f"{counts[w]} {w}" for w in words) or "no tests ran"
print(f"========== {said} in {seconds:.2f}s (both halves: tests/ in parallel, then serial) ==========")
EOF

[ "$parallel" = 5 ] && [ "$serial" = 5 ] && exit 5  # nothing selected at all
for status in "$parallel" "$serial"; do
  [ "$status" = 0 ] || [ "$status" = 5 ] || exit "$status"
done
