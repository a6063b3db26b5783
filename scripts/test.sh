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
counts, times = {}, []
for log in sys.argv[1:]:
    lines = [l for l in open(log, errors="replace") if re.match(r"=+ .* in [\d.]+s", l)]
    times.append(float(re.search(r" in ([\d.]+)s", lines[-1])[1]) if lines else 0.0)
    for n, word in re.findall(r"(\d+) (\w+)", lines[-1].split(" in ")[0] if lines else ""):
        word = {"error": "errors", "warning": "warnings"}.get(word, word)
        counts[word] = counts.get(word, 0) + int(n)
order = ["failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "warnings", "errors"]
words = sorted(counts, key=lambda w: order.index(w) if w in order else len(order))
said = ", ".join(
    f"{counts[w]} {w[:-1] if counts[w] == 1 and w in ('errors', 'warnings') else w}" for w in words
)
print(
    f"========== {said or 'no tests ran'} in {sum(times):.2f}s "
    f"(parallel half {times[0]:.2f}s, serial half {times[1]:.2f}s) =========="
)
EOF

[ "$parallel" = 5 ] && [ "$serial" = 5 ] && exit 5  # nothing selected at all
for status in "$parallel" "$serial"; do
  [ "$status" = 0 ] || [ "$status" = 5 ] || exit "$status"
done
