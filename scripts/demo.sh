#!/usr/bin/env bash
# The main job on the embedded defaults: set up, ingest the sample chats, ask a question whose answer
# needs several sessions, show the recall trace and the graph. Uses ./.ripple-demo as the store.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo  # no llama.cpp: the demo never loads a model
export RIPPLE_HOME="${RIPPLE_HOME:-$PWD/.ripple-demo}"
ripple=.venv/bin/ripple
question=${1:-"Should Alex take Maya to Harbor Grill?"}
"$ripple" ingest sample_chats/*.json
"$ripple" ask "$question" --k 20
"$ripple" graph stats
