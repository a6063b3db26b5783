#!/usr/bin/env bash
# Run the whole test suite from nothing: set up .venv with the test extras, lint, type-check, test.
#
# The tests run in two parts (ELELEM_TEST_PART, tests/conftest.py): all but the `serial` ones
# in parallel (pytest-xdist, ELELEM_TEST_WORKERS processes, whole files per worker so a
# module's kernel or JupyterLab is started once; the browser files last, each worker that
# gets one starting its own JupyterLab and Chromium), then the `serial` ones (time budgets)
# in one process. Extra arguments go to both (e.g. `bash scripts/test.sh -m "not browser"
# -x` or `bash scripts/test.sh tests/test_cli.py`). The script fails when either part
# fails; a part the arguments select nothing in is not a failure (pytest's exit 5), only
# the whole selecting nothing is. It ends with one line summing both parts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check elelem_kernel tests bench
.venv/bin/ruff format --check elelem_kernel tests bench
.venv/bin/python -m mypy  # the package's types, as [tool.mypy] in pyproject.toml says

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
part() {  # part NAME PYTEST-ARGS...: pytest on one part (tests/conftest.py), output also in $logs/NAME
  local name=$1
  shift
  set +e
  ELELEM_TEST_PART=$name .venv/bin/python -m pytest "$@" 2>&1 | tee "$logs/$name"
  echo "${PIPESTATUS[0]}" >"$logs/$name.status"
  set -e
}
part parallel -n "${ELELEM_TEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder "$@"
part serial "$@" -n 0
parallel=$(cat "$logs/parallel.status") serial=$(cat "$logs/serial.status")

# One summary line for both parts, in pytest's words, from each part's last line. A part
# does not count the other's tests as deselected, so the sums are the whole suite's.
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
    f"(parallel part {times[0]:.2f}s, serial part {times[1]:.2f}s) =========="
)
EOF

[ "$parallel" = 5 ] && [ "$serial" = 5 ] && exit 5  # nothing selected at all
for status in "$parallel" "$serial"; do
  [ "$status" = 0 ] || [ "$status" = 5 ] || exit "$status"
done
