#!/usr/bin/env bash
# Create (or reuse) the project-local Python venv that runs cfn-lint on the
# synthesized templates: .venv-cfn-lint/ at the repo root, built from
# scripts/cfn-lint/requirements.txt. Idempotent: when the venv's stamp file
# holds the sha256 of requirements.txt, nothing is done. A venv of its own,
# not the emulator's: a change here must not rebuild moto's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$ROOT/scripts/cfn-lint/requirements.txt"
VENV="$ROOT/.venv-cfn-lint"
STAMP="$VENV/.requirements.sha256"

die() {
  printf '%s\n' "$1" >&2
  exit "${2:-1}"
}

req_hash() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$REQ" | cut -d' ' -f1
  else
    python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$REQ"
  fi
}

venv_ok() {
  [[ -f "$STAMP" && -x "$VENV/bin/cfn-lint" ]] || return 1
  [[ "$(cat "$STAMP")" == "$(req_hash)" ]] || return 1
  "$VENV/bin/python" -c 'pass' >/dev/null 2>&1
}

[[ -f "$REQ" ]] || die "cronfence: $REQ is missing." 1
if venv_ok; then
  exit 0
fi

# Serialise concurrent setups by locking this script's own file.
if command -v flock >/dev/null 2>&1; then
  exec 9<"${BASH_SOURCE[0]}"
  flock 9
  if venv_ok; then
    exit 0
  fi
fi

command -v python3 >/dev/null 2>&1 || die "cronfence: python3 is not installed; cfn-lint needs Python 3.9+ (Debian/Ubuntu: apt-get install python3 python3-venv)." 3
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' >/dev/null 2>&1 ||
  die "cronfence: $(python3 --version 2>&1) is too old; cfn-lint needs Python 3.9+." 3
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 ||
  die "cronfence: python3 has no venv/ensurepip module (Debian/Ubuntu: apt-get install python3-venv)." 3

echo "cronfence: creating $VENV (first run, or requirements changed) ..." >&2
rm -rf "$VENV"
python3 -m venv "$VENV" >&2 || { rm -rf "$VENV"; die "cronfence: 'python3 -m venv $VENV' failed." 3; }
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$REQ" >&2; then
  rm -rf "$VENV"
  die "cronfence: pip install of $REQ failed; PyPI must be reachable (or pip configured with an index that has cfn-lint)." 4
fi

# Written last, so a half-built venv never counts as ready.
req_hash >"$STAMP"
echo "cronfence: cfn-lint ready in $VENV" >&2
