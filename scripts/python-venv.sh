# Sourced by scripts/setup-emulator.sh and scripts/setup-cfn-lint.sh: one project-local Python venv built from a
# requirements file, reused while its stamp holds the file's sha256, rebuilt otherwise (never half-built: the stamp is
# written last). Exit codes: 3 Python or venv unusable, 4 pip install failed.
#
# ensure_venv VENV REQ READY_BIN MIN_MINOR WHAT ELSE
#   READY_BIN  the venv's program that must exist (bin/python, bin/cfn-lint)
#   MIN_MINOR  the lowest Python 3 minor version
#   WHAT       what the venv is for, in the messages ("the local AWS emulator (moto)")
#   ELSE       what a user can do instead, appended to the messages ("" for nothing)

die() {
  printf '%s\n' "$1" >&2
  exit "${2:-1}"
}

ensure_venv() {
  local venv=$1 req=$2 ready_bin=$3 min_minor=$4 what=$5 else=$6
  local stamp="$venv/.requirements.sha256"
  [[ -f "$req" ]] || die "cronfence: $req is missing." 1

  req_hash() {
    if command -v sha256sum >/dev/null 2>&1; then
      sha256sum "$req" | cut -d' ' -f1
    else
      python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$req"
    fi
  }
  venv_ok() {
    [[ -f "$stamp" && -x "$venv/$ready_bin" ]] || return 1
    [[ "$(cat "$stamp")" == "$(req_hash)" ]] || return 1
    # A venv whose base interpreter vanished (e.g. system python upgraded) is stale.
    "$venv/bin/python" -c 'pass' >/dev/null 2>&1
  }

  # Fast path, without any lock.
  venv_ok && return 0
  # Serialise concurrent setups (a test run and a dev run starting together) by locking this file, so no lock file is
  # left behind (two different venvs' first builds wait for each other too: rare, and only on a first build).
  if command -v flock >/dev/null 2>&1; then
    exec 9<"${BASH_SOURCE[0]}"
    flock 9
    venv_ok && return 0
  fi

  command -v python3 >/dev/null 2>&1 ||
    die "cronfence: python3 is not installed; $what needs Python 3.$min_minor+. Install it (Debian/Ubuntu: apt-get install python3 python3-venv python3-pip)$else." 3
  python3 -c "import sys; sys.exit(0 if sys.version_info >= (3, $min_minor) else 1)" >/dev/null 2>&1 ||
    die "cronfence: $(python3 --version 2>&1) is too old; $what needs Python 3.$min_minor+. Install a newer python3$else." 3
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 ||
    die "cronfence: python3 has no venv/ensurepip module; $what needs it to create its virtualenv. Install it (Debian/Ubuntu: apt-get install python3-venv)$else." 3

  echo "cronfence: creating $venv (first run, or requirements changed) ..." >&2
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >&2; then
    rm -rf "$venv"
    die "cronfence: 'python3 -m venv $venv' failed; $what needs a working venv module. Install it (Debian/Ubuntu: apt-get install python3-venv)$else." 3
  fi
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$req" >&2; then
    rm -rf "$venv"
    die "cronfence: pip install of $what's requirements ($req) failed; PyPI must be reachable (or pip configured with an index that has them)$else." 4
  fi
  req_hash >"$stamp"
  echo "cronfence: $what ready in $venv" >&2
}
