#!/usr/bin/env bash
# Fresh clone to the demo's first answer (issue 16), step by step: clone, set up with no pip cache, then the demo's
# ingest (with an empty encoder cache, so the one-time ONNX export is included) and its ask. Prints wall and CPU
# time per step and the load average. Everything goes under one scratch folder, removed first.
#   bash bench/fresh_clone.sh [SOURCE_REPO] [SCRATCH]      (defaults: this checkout, /tmp/ripple-fresh)
set -euo pipefail
source_repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
scratch=${2:-/tmp/ripple-fresh}
rm -rf "$scratch"
mkdir -p "$scratch"
export PIP_NO_CACHE_DIR=1 RIPPLE_CACHE="$scratch/cache" RIPPLE_HOME="$scratch/home"
step() {  # step NAME COMMAND...: run it, print its wall and CPU seconds
  local name=$1
  shift
  /usr/bin/time -f "$name: %e s wall, %U s user + %S s sys, load $(cut -d' ' -f1 /proc/loadavg)" "$@"
}
started=$(date +%s)
step clone git clone -q "$source_repo" "$scratch/repo"
cd "$scratch/repo"
step setup bash scripts/setup.sh demo
step ingest .venv/bin/ripple ingest sample_chats/*.json >/dev/null
step ask .venv/bin/ripple ask "Should Alex take Maya to Harbor Grill?" --k 20 >/dev/null
echo "fresh clone to first answer: $(($(date +%s) - started)) s wall; $(.venv/bin/pip list 2>/dev/null | grep -ci hnsw) hnswlib package(s): $(.venv/bin/pip list 2>/dev/null | grep -i hnsw | tr -s ' ' | paste -sd ',')"
