"""TFDS access to every dataset, offline, into a temporary data_dir."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow_datasets as tfds

import m2t_data
from m2t import settings

tfds.disable_progress_bar()
REPO_ROOT = Path(m2t_data.__file__).resolve().parent.parent


def manual(folder) -> dict:
    config = tfds.download.DownloadConfig(manual_dir=str(folder))
    return {"download_config": config}


def files_under(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()]


def test_builders_are_registered():
    names = set(tfds.list_builders(with_community_datasets=False))
    assert set(m2t_data.TFDS_BUILDERS) <= names


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tfds")


def test_noisy_sine(data_dir):
    ds = tfds.load("noisy_sine", split="train", data_dir=data_dir)
    (example,) = list(tfds.as_numpy(ds))
    time, x = m2t_data.noisy_sine()
    np.testing.assert_array_equal(example["time"], time)
    np.testing.assert_array_equal(example["x"], x)


def test_toy_char_corpus_keeps_line_order(data_dir):
    ds = tfds.load("toy_char_corpus", split="train", data_dir=data_dir)
    batch = next(iter(tfds.as_numpy(ds.batch(100_000))))
    lines = [line.decode() for line in batch["text"]]
    assert lines == m2t_data.time_machine_lines()


def test_toy_fra_eng_splits(data_dir):
    builder = tfds.builder("toy_fra_eng", data_dir=data_dir)
    builder.download_and_prepare()
    for split in ("train", "test"):
        ds = builder.as_dataset(split=split).batch(10_000)
        batch = next(iter(tfds.as_numpy(ds)))
        got = [
            (src.decode(), tgt.decode())
            for src, tgt in zip(batch["source"], batch["target"], strict=True)
        ]
        assert got == m2t_data.translation_pairs("embedded", split)


def test_toy_shapes_supervised(data_dir):
    ds, info = tfds.load(
        "toy_shapes",
        split="test",
        data_dir=data_dir,
        as_supervised=True,
        with_info=True,
    )
    assert info.splits["train"].num_examples == 6000
    assert info.features["label"].names[:2] == ["disk", "ring"]
    x, y = next(iter(tfds.as_numpy(ds.batch(1000))))
    assert x.shape == (1000, 28, 28, 1) and x.dtype == np.uint8
    np.testing.assert_array_equal(np.bincount(y), [100] * 10)
    ref_x, ref_y = m2t_data.toy_shapes("test")
    # TFDS shuffles by key: compare as multisets of (image, label).
    assert sorted(zip(map(bytes, x), y.tolist(), strict=True)) == sorted(
        zip(map(bytes, ref_x), ref_y.tolist(), strict=True)
    )


def test_time_machine_from_manual_dir(data_dir, time_machine_file):
    ds, info = tfds.load(
        "time_machine",
        split="train",
        data_dir=data_dir,
        with_info=True,
        download_and_prepare_kwargs=manual(time_machine_file.parent),
    )
    assert info.splits["train"].num_examples == 3221
    batch = next(iter(tfds.as_numpy(ds.batch(100_000))))
    lines = [line.decode() for line in batch["text"]]
    assert lines[0] == "the time machine by h g wells"
    assert sum(len(line) for line in lines) == 170_580


def test_fra_eng_from_manual_dir(data_dir, fra_eng_file):
    ds, info = tfds.load(
        "fra_eng",
        split="train[:3]",
        data_dir=data_dir,
        with_info=True,
        download_and_prepare_kwargs=manual(fra_eng_file.parent),
    )
    assert info.splits["train"].num_examples == 167_130
    got = [(ex["source"], ex["target"]) for ex in tfds.as_numpy(ds)]
    assert got == [(b"go .", b"va !"), (b"hi .", b"salut !"),
                   (b"run !", b"cours !")]  # fmt: skip
    assert "CC-BY 2.0" in info.description


def test_corrupt_manual_file_is_an_error_and_leaves_nothing(
    tmp_path, time_machine_file
):
    folder = tmp_path / "manual"
    folder.mkdir()
    data = bytearray(time_machine_file.read_bytes())
    data[100] ^= 0x20
    (folder / "timemachine.txt").write_bytes(bytes(data))
    out = tmp_path / "tfds"
    with pytest.raises(m2t_data.ChecksumError) as info:
        tfds.load(
            "time_machine",
            split="train",
            data_dir=out,
            download_and_prepare_kwargs=manual(folder),
        )
    message = str(info.value)
    assert "timemachine.txt" in message
    assert "090b5e7e70c295757f55df93cb0a180b9691891a" in message
    assert info.value.got in message
    assert files_under(out) == []
    assert not tfds.builder("time_machine", data_dir=out).is_prepared()


def test_file_missing_from_manual_dir_is_named(tmp_path):
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / "README").write_text("not the data")
    out = tmp_path / "tfds"
    with pytest.raises(m2t_data.DataNotFoundError, match="fra-eng.zip"):
        tfds.load(
            "fra_eng",
            split="train",
            data_dir=out,
            download_and_prepare_kwargs=manual(folder),
        )
    assert files_under(out) == []


def test_offline_without_manual_dir_is_named(tmp_path):
    with pytest.raises(m2t_data.DataNotFoundError, match="timemachine.txt"):
        tfds.load("time_machine", split="train", data_dir=tmp_path)


# ------------------------------------------------------ Fashion-MNIST


def test_fashion_mnist_absent_is_a_clear_error(tmp_path):
    with pytest.raises(m2t_data.DataNotFoundError, match="fashion_mnist"):
        m2t_data.images("fashion_mnist", data_dir=tmp_path, download=False)


def test_fashion_mnist_fallback_prints_notice(tmp_path, capsys):
    ds = m2t_data.images(
        "fashion_mnist",
        split="test",
        resize=96,
        batch_size=4,
        data_dir=tmp_path,
        download=False,
        fallback=True,
    )
    out = capsys.readouterr().out
    assert "notice:" in out and "toy_shapes" in out
    x, y = next(iter(ds))
    assert tuple(x.shape) == (4, 96, 96, 1) and tuple(y.shape) == (4,)


# ------------------------------------------- shadowing Hugging Face's

_SHADOW_CHECK = """
import sys
sys.path.insert(0, {root!r})
{first}
{second}
assert m2t_data.__file__.startswith({root!r}), m2t_data.__file__
assert "toy_shapes" in tfds.list_builders(with_community_datasets=False)
b = tfds.builder("noisy_sine", data_dir={out!r})
if {prepare}:
    b.download_and_prepare()
    assert b.info.splits["train"].num_examples == 1
import importlib.util
spec = importlib.util.find_spec("datasets")
assert spec is None or not str(spec.origin).startswith({root!r}), spec
print("ok")
"""


@pytest.mark.parametrize("tfds_first", [True, False], ids=["tfds", "ours"])
def test_data_package_never_shadows_hugging_face(tmp_path, tfds_first):
    imports = ["import tensorflow_datasets as tfds", "import m2t_data"]
    if not tfds_first:
        imports.reverse()
    code = _SHADOW_CHECK.format(
        root=str(REPO_ROOT),
        first=imports[0],
        second=imports[1],
        out=str(tmp_path),
        prepare=tfds_first,  # preparing imports TensorFlow: once is enough
    )
    env = settings.quiet_env()
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
