# ruff: noqa: F821  (CONFIG and masked_softmax: from the lesson file around)
# Appended to a correct l16 by tests/test_gradescope_bundle.py: what an
# untouched skeleton could do inside Gradescope's container, tried at
# import time in the grading worker; the no-mask checks then fail with one
# line saying who it ran as and which attempts got through ("name=1").
import ctypes as _ctypes
import os as _os
import time as _time

try:  # say the module was loaded at all (where nothing stops a write)
    with open(CONFIG["marker"], "w") as _f:
        _f.write("loaded")
except OSError:
    pass

_R = {}


def _try(name):
    def wrap(fn):
        try:
            _R[name] = int(bool(fn()))
        except Exception:  # noqa: BLE001  a refusal is the expected outcome
            _R[name] = 0
        return fn

    return wrap


@_try("key")  # the answer key the judge grades the answers with
def _key():
    with open(CONFIG["key"]) as f:
        return f.read(1)


@_try("references")  # the graders, whose references compute the answers
def _references():
    with open(CONFIG["grader"]) as f:
        return f.read(1)


@_try("answers")  # rewrite the staged answers the judge will grade
def _answers():
    staged = _os.path.dirname(_os.path.abspath(__file__))
    with open(_os.path.join(staged, "answers.toml"), "a") as f:
        f.write("\n# rewritten\n")
    return True


@_try("staged")  # add a file beside the staged lesson files
def _staged():
    staged = _os.path.dirname(_os.path.abspath(__file__))
    with open(_os.path.join(staged, "l15_attention_pooling.py"), "w") as f:
        f.write("x = 1\n")
    return True


@_try("results")  # write in the folder results.json is written to
def _results():
    with open(CONFIG["results"] + ".mine", "w") as f:
        f.write("written by the submission")
    return True


@_try("daemon")  # a grandchild in a session of its own that outlives
def _daemon():  # run_autograder and rewrites results.json afterwards
    pid = _os.fork()
    if pid == 0:
        _os.setsid()
        if _os.fork() == 0:
            _ctypes.CDLL(None).prctl(15, CONFIG["survivor"].encode(), 0, 0, 0)
            for _ in range(90):
                _time.sleep(1)
                try:
                    with open(CONFIG["results"], "w") as f:
                        f.write('{"score": 999, "tests": []}')
                except OSError:
                    pass
            _os._exit(0)
        _os._exit(0)
    _os.waitpid(pid, 0)
    return True


REPORT = f"bundle: uid={_os.getuid()} euid={_os.geteuid()} gid={_os.getgid()} "
REPORT += " ".join(f"{k}={v}" for k, v in _R.items())
_masked_softmax = masked_softmax


def masked_softmax(X, valid_lens=None):
    if valid_lens is None:
        raise RuntimeError(REPORT)
    return _masked_softmax(X, valid_lens)
