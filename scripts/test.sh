#!/usr/bin/env bash
# Set up if needed, then lint, type-check and run the whole test suite (unit + end-to-end through the real parts).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test  # ripple with the llm, eval and test extras
# tests/test_telemetry.py watches real runs under strace (no network, no file outside ripple's folders); it is
# skipped where strace is missing, so CI (root on Debian) installs it.
if ! command -v strace >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "ripple test: installing strace for tests/test_telemetry.py" >&2
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null; } \
    || echo "ripple test: strace could not be installed; tests/test_telemetry.py will be skipped" >&2
fi
.venv/bin/ruff check ripplecli tests bench
.venv/bin/mypy  # pyproject.toml's [tool.mypy]: ripplecli type-checked, Protocols against their implementations
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
