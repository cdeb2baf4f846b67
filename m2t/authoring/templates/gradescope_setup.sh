#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image
# (Ubuntu, with the bundle unpacked in /autograder/source): the course's
# Python environment, in /opt/m2t.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
    python3 python3-venv python3-pip libseccomp2
python3 -m venv /opt/m2t
/opt/m2t/bin/pip install --no-cache-dir --upgrade pip
/opt/m2t/bin/pip install --no-cache-dir -e /autograder/source
# import TensorFlow once now, so the first submission does not pay for it
/opt/m2t/bin/python -c "import keras" >/dev/null 2>&1 || true
