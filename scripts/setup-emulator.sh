#!/usr/bin/env bash
# Create (or reuse) the project-local Python venv that runs the local AWS
# emulator (moto): .venv-emulator/ at the repo root, built from
# scripts/emulator/requirements.txt. Idempotent: when the venv's stamp file
# holds the sha256 of requirements.txt, nothing is done.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$ROOT/scripts/emulator/requirements.txt"
VENV="$ROOT/.venv-emulator"
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
  [[ -f "$STAMP" && -x "$VENV/bin/python" ]] || return 1
  [[ "$(cat "$STAMP")" == "$(req_hash)" ]] || return 1
  # A venv whose base interpreter vanished (e.g. system python upgraded) is stale.
  "$VENV/bin/python" -c 'pass' >/dev/null 2>&1
}

[[ -f "$REQ" ]] || die "cronfence: $REQ is missing." 1

# Fast path, without any lock.
if venv_ok; then
  exit 0
fi

# Serialise concurrent setups (e.g. a test run and a dev run starting together)
# by locking this script's own file, so no lock file is left behind.
if command -v flock >/dev/null 2>&1; then
  exec 9<"${BASH_SOURCE[0]}"
  flock 9
  if venv_ok; then
    exit 0
  fi
fi

if ! command -v python3 >/dev/null 2>&1; then
  die "cronfence: python3 is not installed; the local AWS emulator (moto) needs Python 3.10+. Install it (Debian/Ubuntu: apt-get install python3 python3-venv python3-pip) or set AWS_ENDPOINT_URL to an existing emulator." 3
fi

if ! python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1; then
  die "cronfence: $(python3 --version 2>&1) is too old; the local AWS emulator (moto 5.2.5) needs Python 3.10+. Install a newer python3 or set AWS_ENDPOINT_URL to an existing emulator." 3
fi

if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  die "cronfence: python3 has no venv/ensurepip module; the local AWS emulator (moto) needs it to create its virtualenv. Install it (Debian/Ubuntu: apt-get install python3-venv) or set AWS_ENDPOINT_URL to an existing emulator." 3
fi

echo "cronfence: creating $VENV (first run, or requirements changed) ..." >&2
rm -rf "$VENV"
if ! python3 -m venv "$VENV" >&2; then
  rm -rf "$VENV"
  die "cronfence: 'python3 -m venv $VENV' failed; the local AWS emulator (moto) needs a working venv module. Install it (Debian/Ubuntu: apt-get install python3-venv) or set AWS_ENDPOINT_URL to an existing emulator." 3
fi

if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$REQ" >&2; then
  rm -rf "$VENV"
  die "cronfence: pip install of the local AWS emulator's requirements ($REQ) failed; PyPI must be reachable (or pip configured with an index that has moto). Alternatively set AWS_ENDPOINT_URL to an existing emulator." 4
fi

# Written last, so a half-built venv never counts as ready.
req_hash >"$STAMP"
echo "cronfence: local AWS emulator ready in $VENV" >&2
