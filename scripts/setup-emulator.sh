#!/usr/bin/env bash
# Create (or reuse) the project-local Python venv that runs the local AWS
# emulator (moto): .venv-emulator/ at the repo root, built from
# scripts/emulator/requirements.txt (scripts/python-venv.sh). Idempotent: when
# the venv's stamp file holds the sha256 of requirements.txt, nothing is done.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/python-venv.sh
source "$ROOT/scripts/python-venv.sh"
ensure_venv "$ROOT/.venv-emulator" "$ROOT/scripts/emulator/requirements.txt" bin/python 10 \
  'the local AWS emulator (moto)' ' or set AWS_ENDPOINT_URL to an existing emulator'
