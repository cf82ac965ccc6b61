#!/usr/bin/env bash
# Create (or reuse) the project-local Python venv that runs cfn-lint on the
# synthesized templates: .venv-cfn-lint/ at the repo root, built from
# scripts/cfn-lint/requirements.txt (scripts/python-venv.sh). Idempotent. A venv
# of its own, not the emulator's: a change here must not rebuild moto's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/python-venv.sh
source "$ROOT/scripts/python-venv.sh"
ensure_venv "$ROOT/.venv-cfn-lint" "$ROOT/scripts/cfn-lint/requirements.txt" bin/cfn-lint 9 'cfn-lint' ''
