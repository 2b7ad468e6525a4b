#!/usr/bin/env bash
# Set up (or refresh) the project's virtual environment in .venv: CPU torch first, then ripple.
#   bash scripts/setup.sh demo   what the main job needs (ingest, ask, graph): no llama.cpp, nothing to compile on Python 3.11
#   bash scripts/setup.sh [test] also the local-model runtime (llama-cpp-python, compiled on its first install),
#                                the evaluation plot and the test tools: the `llm`, `eval` and `test` extras
# Idempotent: stamps keyed by pyproject.toml and this script skip a finished set-up. The full stamp covers the
# demo's, and a full set-up after a demo one only adds the extras (so demo then test builds llama.cpp once).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${RIPPLE_VENV:-.venv}
PY=${PYTHON:-python3}
profile=${1:-test}
case "$profile" in
  demo | test) ;;
  *) echo "usage: bash scripts/setup.sh [demo|test]" >&2; exit 2 ;;
esac
key=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
stamp() { echo "$VENV/.ripple-setup-$key-$1"; }
if [ -f "$(stamp test)" ] || [ -f "$(stamp "$profile")" ]; then
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
if [ ! -f "$(stamp demo)" ]; then
  echo "ripple setup: installing ripple into $VENV (a few minutes the first time)" >&2
  "${pip[@]}" install --upgrade pip
  # CPU torch first: an open range would pull a multi-GB CUDA build. Only the one-time ONNX export uses it.
  "${pip[@]}" install "torch==2.13.0"
  "${pip[@]}" install -e .
  find "$VENV" -maxdepth 1 -name '.ripple-setup-*' ! -name ".ripple-setup-$key-*" -delete  # stamps of older set-ups
  touch "$(stamp demo)"
fi
if [ "$profile" = test ]; then
  echo "ripple setup: adding llama-cpp-python (compiled the first time, ~6 minutes), the eval and test extras" >&2
  "${pip[@]}" install -e ".[llm,eval,test]"
  touch "$(stamp test)"
fi
echo "ripple setup: done" >&2
