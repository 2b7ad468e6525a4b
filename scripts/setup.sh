#!/usr/bin/env bash
# Set up (or refresh) the project's virtual environment in .venv: CPU torch first, then ripple with its
# LLM and test extras. Idempotent: a stamp keyed by pyproject.toml and this script skips a finished set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${RIPPLE_VENV:-.venv}
PY=${PYTHON:-python3}
stamp="$VENV/.ripple-setup-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ]; then
  exit 0
fi
echo "ripple setup: creating $VENV (first run builds llama-cpp-python, ~6 minutes)" >&2
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip
# CPU torch first: an open range would pull a multi-GB CUDA build.
"${pip[@]}" install "torch==2.13.0"
"${pip[@]}" install -e ".[llm,eval,test]"
rm -f "$VENV"/.ripple-setup-*
touch "$stamp"
echo "ripple setup: done" >&2
