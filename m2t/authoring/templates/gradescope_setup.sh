#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image
# (Ubuntu, with the bundle unpacked in /autograder/source): the course's
# Python environment, in /opt/m2t, and the user the students' code runs as.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
    python3 python3-venv python3-pip libseccomp2 passwd
python3 -m venv /opt/m2t
/opt/m2t/bin/pip install --no-cache-dir --upgrade pip
/opt/m2t/bin/pip install --no-cache-dir -e /autograder/source
chmod -R a+rX /opt/m2t  # the workers' uids run this Python
# Gradescope's best practices: the students' code never runs as root. Each
# grading worker runs as a uid of its own from @WORKER_UIDS@ (its processes
# counted and killed apart from any other's), registered here as the
# subordinate ids of a system user without a home or a login.
if ! id m2t-worker >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin \
        --user-group m2t-worker
fi
usermod --add-subuids @WORKER_UIDS@ --add-subgids @WORKER_UIDS@ m2t-worker
# Only root reads the bundle: its graders and answer key.
chmod -R go= /autograder/source
# import TensorFlow once now, so the first submission does not pay for it
/opt/m2t/bin/python -c "import keras" >/dev/null 2>&1 || true
