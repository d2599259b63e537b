# Sourced by the scripts in this folder: makes the project's virtualenv and installs into it.
#
#   source scripts/venv.sh          # cd to the repo root, create .venv if missing
#   install_project dev             # pip install -e '.[dev]' into it, quietly
#
# Needs only Python 3.11 or newer on the machine (python3.11, else python3).
# shellcheck shell=bash

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
venv_dir="$repo_root/.venv"
venv_python="$venv_dir/bin/python"

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
  # install_project EXTRA: pip install -e '.[EXTRA]' into the venv, quietly; skipped when the
  # venv holds it already (see is_installed): pip would take seconds to find nothing to do.
  local stamp="$venv_dir/.installed-$1"
  if is_installed "$stamp"; then
    echo "== cogworker[$1] is installed in $venv_dir (pyproject.toml unchanged)"
    return 0
  fi
  echo "== installing cogworker[$1] into $venv_dir"
  "$venv_python" -m pip install --quiet --disable-pip-version-check -e ".[$1]"
  cksum <pyproject.toml >"$stamp"
}

is_installed() {
  # is_installed STAMP: whether an install wrote STAMP from this very pyproject.toml (the
  # dependencies, extras and version it installed), and the venv's cogworker is still this
  # checkout's sources (an editable install of another checkout would have replaced it).
  [ -f "$1" ] && [ "$(cat "$1")" = "$(cksum <pyproject.toml)" ] &&
    "$venv_python" -I -c 'import importlib.util, sys
spec = importlib.util.find_spec("cogworker")
sys.exit(spec is None or spec.origin != sys.argv[1])' "$repo_root/src/cogworker/__init__.py"
}

ensure_venv
