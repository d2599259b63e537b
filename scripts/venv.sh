# Sourced by the scripts in this folder: makes the project's virtualenv and installs into it.
#
#   source scripts/venv.sh          # cd to the repo root, create .venv if missing
#   install_project dev             # pip install -e '.[dev]' into it, quietly
#   use_venv .venv-other            # later calls make and install into that venv instead
#   install_project dev 'redis==5.0.0'  # with requirements pip must meet beside the extra's
#
# Needs only Python 3.11 or newer on the machine (python3.11, else python3).
# shellcheck shell=bash

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

use_venv() {
  # use_venv DIR: make DIR (under the repo root) the venv the other functions work on, and
  # create it if missing.
  venv_dir="$repo_root/$1"
  venv_python="$venv_dir/bin/python"
  ensure_venv
}

pick_python() {
  local candidate
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "error: cogworker needs Python 3.11 or newer (python3.11 or python3 on PATH)" >&2
  return 1
}

ensure_venv() {
  # A .venv whose interpreter no longer runs (moved, or its Python removed) is made anew.
  if [ -x "$venv_python" ] && "$venv_python" -c 'import pip' >/dev/null 2>&1; then
    return 0
  fi
  local python
  python=$(pick_python) || return 1
  echo "== creating $venv_dir with $("$python" --version 2>&1)"
  rm -rf "$venv_dir"
  "$python" -m venv "$venv_dir" || {
    echo "error: '$python -m venv' failed (on Debian the python3-venv package provides it)" >&2
    return 1
  }
}

install_project() {
  # install_project EXTRA [REQUIREMENT...]: pip install -e '.[EXTRA]' into the venv, quietly,
  # with the REQUIREMENTs (pins such as 'redis==5.0.0') met too; skipped when the venv holds
  # it already (see is_installed): pip would take seconds to find nothing to do.
  local extra=$1
  shift
  local stamp="$venv_dir/.installed-$extra"
  local wanted
  wanted="$(cksum <pyproject.toml)${*:+ $*}"
  if is_installed "$stamp" "$wanted"; then
    echo "== cogworker[$extra]${*:+ $*} is installed in $venv_dir (pyproject.toml unchanged)"
    return 0
  fi
  echo "== installing cogworker[$extra]${*:+ $*} into $venv_dir"
  "$venv_python" -m pip install --quiet --disable-pip-version-check -e ".[$extra]" "$@"
  echo "$wanted" >"$stamp"
}

is_installed() {
  # is_installed STAMP WANTED: whether an install wrote STAMP from this very pyproject.toml
  # (the dependencies, extras and version it installed) and requirements, as WANTED says,
  # and the venv's cogworker is still this checkout's sources (an editable install of another
  # checkout would have replaced it).
  [ -f "$1" ] && [ "$(cat "$1")" = "$2" ] &&
    "$venv_python" -I -c 'import importlib.util, sys
spec = importlib.util.find_spec("cogworker")
sys.exit(spec is None or spec.origin != sys.argv[1])' "$repo_root/src/cogworker/__init__.py"
}

use_venv .venv
