#!/usr/bin/env bash
# CI: the student edition as a student receives it (DESIGN principle 10).
# tests/test_edition_venv.py builds it with `m2t release`, installs it by
# its README's command into a fresh virtual environment of its own and runs
# the student's loop there, once on the oldest and once on the newest
# Python the project supports (pyenv's). Run with the project's virtual
# environment active (.ci/run does, in the background beside the main run).
#
# pip here keeps no HTTP cache of the wheels, so the edition's wheels are
# kept in a folder of their own ($M2T_EDITION_WHEELS, default
# ~/.cache/m2t-ci/wheels): `pip download` fetches only what is missing
# (TensorFlow is 570 MB per Python version), then the installs read that
# folder only.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
export TF_CPP_MIN_LOG_LEVEL=3 PIP_DISABLE_PIP_VERSION_CHECK=1
pyenv_root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
pythons=()
for version in 3.10 3.13; do  # requires-python's floor, the newest here
  found=$(ls -d "$pyenv_root"/versions/"$version".*/bin/python"$version" \
    2>/dev/null | sort -V | tail -1)
  if [ -z "$found" ]; then
    echo "edition: no Python $version under $pyenv_root/versions" >&2
    exit 1
  fi
  pythons+=("$found")
done
wheels="${M2T_EDITION_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/m2t-ci/wheels}"
mkdir -p "$wheels"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# what the edition's `pip install -e . watchdog` needs: its dependencies
# (the edition's pyproject.toml is this one), watchdog and the build backend
python - > "$scratch/requirements.txt" <<'PY'
from m2t.settings import tomllib

with open("pyproject.toml", "rb") as f:
    project = tomllib.load(f)
print("\n".join(project["project"]["dependencies"]))
print("\n".join(project["build-system"]["requires"]))
print("watchdog")
PY
for python in "${pythons[@]}"; do
  "$python" -m venv "$scratch/pip"
  # a current pip for the download (3.10's own resolver backtracks for
  # minutes); the student's install keeps the pip the venv comes with
  "$scratch/pip/bin/python" -m pip install -q --upgrade pip
  "$scratch/pip/bin/python" -m pip download -q -d "$wheels" \
    --find-links "$wheels" -r "$scratch/requirements.txt"
  rm -rf "$scratch/pip"
done
echo "edition: wheels ready in $(( $(date +%s) - start )) s"
M2T_EDITION_PYTHONS=$(IFS=:; echo "${pythons[*]}") \
M2T_EDITION_WHEELS="$wheels" \
  python -m pytest -p no:cacheprovider -p no:xdist -q -o addopts=-ra \
    tests/test_edition_venv.py
times  # this shell's and its children's CPU time (user, system)
echo "edition: $(( $(date +%s) - start )) s wall"
