#!/usr/bin/env bash
# Set up if needed, then lint and run the whole test suite (unit + end-to-end through the real parts).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test  # ripple with the llm, eval and test extras
.venv/bin/ruff check ripplecli tests bench
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
