#!/usr/bin/env bash
# Create (or reuse) the project-local Python venv that runs LocalStack in host
# mode (no Docker) for the opt-in CRONFENCE_EMULATOR=localstack profile:
# .venv-localstack/ at the repo root, built from scripts/localstack/requirements.txt
# with scripts/localstack/constraints-v4.14.0.txt as pip constraints.
# Idempotent: when the venv's stamp file holds the sha256 of both files,
# nothing is done.
#
# Python: $CRONFENCE_LOCALSTACK_PYTHON if set, else the first 3.12+ of
# python3.13, python3.12, python3 on PATH, then pyenv's 3.13.x / 3.12.x.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$ROOT/scripts/localstack/requirements.txt"
CONSTRAINTS="$ROOT/scripts/localstack/constraints-v4.14.0.txt"
VENV="$ROOT/.venv-localstack"
STAMP="$VENV/.requirements.sha256"

die() {
  printf '%s\n' "$1" >&2
  exit "${2:-1}"
}

inputs_hash() {
  cat "$REQ" "$CONSTRAINTS" | sha256sum | cut -d' ' -f1
}

venv_ok() {
  [[ -f "$STAMP" && -x "$VENV/bin/python" ]] || return 1
  [[ "$(cat "$STAMP")" == "$(inputs_hash)" ]] || return 1
  # A venv whose base interpreter vanished (e.g. pyenv version removed) is stale.
  "$VENV/bin/python" -c 'import localstack.runtime.main' >/dev/null 2>&1
}

is_312_plus() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
  if [[ -n "${CRONFENCE_LOCALSTACK_PYTHON:-}" ]]; then
    is_312_plus "$CRONFENCE_LOCALSTACK_PYTHON" || die "cronfence: CRONFENCE_LOCALSTACK_PYTHON=$CRONFENCE_LOCALSTACK_PYTHON is not a Python 3.12+ interpreter." 3
    printf '%s\n' "$CRONFENCE_LOCALSTACK_PYTHON"
    return
  fi
  local candidate
  for candidate in python3.13 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && is_312_plus "$(command -v "$candidate")"; then
      command -v "$candidate"
      return
    fi
  done
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  for candidate in $(ls -d "$pyenv_root"/versions/3.13.* "$pyenv_root"/versions/3.12.* 2>/dev/null | sort -rV); do
    if [[ -x "$candidate/bin/python" ]] && is_312_plus "$candidate/bin/python"; then
      printf '%s\n' "$candidate/bin/python"
      return
    fi
  done
  die "cronfence: LocalStack 4.14.0 needs Python 3.12 or newer and none was found (looked for python3.13, python3.12, python3 on PATH and $pyenv_root/versions/3.1[23].*). Install one, or set CRONFENCE_LOCALSTACK_PYTHON to it." 3
}

[[ -f "$REQ" ]] || die "cronfence: $REQ is missing." 1
[[ -f "$CONSTRAINTS" ]] || die "cronfence: $CONSTRAINTS is missing." 1

if venv_ok; then
  exit 0
fi

# Serialise concurrent setups by locking this script's own file (no lock file left behind).
if command -v flock >/dev/null 2>&1; then
  exec 9<"${BASH_SOURCE[0]}"
  flock 9
  if venv_ok; then
    exit 0
  fi
fi

PYTHON="$(find_python)"
echo "cronfence: creating $VENV with $("$PYTHON" --version 2>&1) (first run, or requirements changed; about 40 s, 500 MB) ..." >&2
rm -rf "$VENV"
if ! "$PYTHON" -m venv "$VENV" >&2; then
  rm -rf "$VENV"
  die "cronfence: '$PYTHON -m venv $VENV' failed; LocalStack needs a Python with a working venv module." 3
fi

if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q -c "$CONSTRAINTS" -r "$REQ" >&2; then
  rm -rf "$VENV"
  die "cronfence: pip install of LocalStack ($REQ with constraints $CONSTRAINTS) failed; PyPI must be reachable (or pip configured with an index that has localstack-core)." 4
fi

# Written last, so a half-built venv never counts as ready.
inputs_hash >"$STAMP"
echo "cronfence: LocalStack ready in $VENV" >&2
