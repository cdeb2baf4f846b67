"""Which `tf.distribute` strategy a run uses, and what follows from it.

    auto        a TPU when one is found, else MultiWorkerMirroredStrategy
                when TF_CONFIG names a cluster of several tasks, else
                MirroredStrategy over several GPUs, else the default
                (one device, no distribution)
    default     one device (the default strategy)
    mirrored    MirroredStrategy over every GPU, or, with no GPU, over
                `cpu_replicas` logical CPU devices (2 by default: the CPU
                split in two, so one machine runs what several devices do)
    multiworker MultiWorkerMirroredStrategy from TF_CONFIG
    tpu         TPUStrategy (a Cloud TPU VM, Colab, or $TPU_NAME)

Create the strategy before anything else touches TensorFlow's devices:
the multi-worker strategy configures the cluster at start-up.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import tensorflow as tf

STRATEGIES = ("auto", "default", "mirrored", "multiworker", "tpu")


@dataclass
class Placement:
    """A strategy and what the run needs to know about it.

    Attributes:
        strategy: the `tf.distribute.Strategy`.
        kind: "default", "mirrored", "multiworker" or "tpu".
        replicas: `strategy.num_replicas_in_sync`; the global batch is
            split into this many equal parts.
        devices: where the replicas run, e.g. ["/cpu:0", "/cpu:1"].
        workers: number of worker processes (1 unless multiworker).
        task: this process's (type, index), e.g. ("worker", 1); None alone.
        is_chief: this process writes the report, plots and logs.
        accelerator: "tpu", "gpu" or "cpu".
        chief: the (type, index) of the task that writes the report, e.g.
            ("worker", 0); None alone.
    """

    strategy: tf.distribute.Strategy
    kind: str
    replicas: int
    devices: list[str]
    workers: int = 1
    task: tuple[str, int] | None = None
    is_chief: bool = True
    accelerator: str = "cpu"
    chief: tuple[str, int] | None = None

    def describe(self) -> str:
        where = ", ".join(self.devices)
        text = f"{self.kind}: {self.replicas} replica(s) on {where}"
        if self.workers > 1:
            kind, index = self.task
            text += f"; {self.workers} workers, this is {kind} {index}"
        return text


def cluster_from_env() -> dict | None:
    """TF_CONFIG's cluster when it names more than one task, else None."""
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return None
    config = json.loads(raw)
    cluster = config.get("cluster", {})
    tasks = sum(len(v) for k, v in cluster.items() if k in ("chief", "worker"))
    return config if tasks > 1 else None


def tpu_is_likely() -> bool:
    """Cheap signs of a TPU, so `auto` never probes a network otherwise."""
    return bool(
        os.environ.get("TPU_NAME")
        or os.environ.get("COLAB_TPU_ADDR")
        or os.path.exists("/dev/accel0")
        or os.path.exists("/dev/vfio/0")
    )


def set_op_threads(threads: int) -> int:
    """How many threads one TensorFlow op may use on the CPU.

    `threads=1`: each op runs on one thread and independent ops run side
    by side (inter-op parallelism, one per core). For the course's small
    models on CPU that is much faster than TensorFlow's default of
    splitting every op over all cores: their ops are tiny, and splitting
    them costs more than it gains (the Transformer on 2 cores: 29,000
    instead of 15,800 tokens/s; docs/training.md). `threads=0` keeps
    TensorFlow's default. Left alone with a GPU or a TPU, where the CPU
    runs only the host's ops, and once TensorFlow has started (it can no
    longer change).

    Returns:
        The intra-op thread count in force (0: TensorFlow's default).
    """
    if int(threads) != threads or threads < 0:
        raise ValueError(
            f"`op_threads` must be an int >= 0 (0: TensorFlow's default), "
            f"got {threads!r}"
        )
    current = tf.config.threading.get_intra_op_parallelism_threads()
    if threads == current or tpu_is_likely():
        return current
    if tf.config.list_physical_devices("GPU"):
        return current
    try:
        tf.config.threading.set_intra_op_parallelism_threads(int(threads))
    except RuntimeError:  # TensorFlow has started: it keeps what it has
        return current
    return int(threads)


def choose(name: str = "auto", cpu_replicas: int = 2) -> Placement:
    """Make the strategy `name` (one of STRATEGIES) and describe it.

    Args:
        cpu_replicas: for `mirrored` on a machine without GPUs, how many
            logical CPU devices (replicas) to split the CPU into.
    """
    if name not in STRATEGIES:
        raise ValueError(
            f"`strategy` must be one of {STRATEGIES}, got {name!r}"
        )
    if isinstance(cpu_replicas, bool) or not isinstance(cpu_replicas, int):
        raise ValueError(f"--cpu-replicas must be an int, got {cpu_replicas!r}")
    if cpu_replicas < 1:
        raise ValueError(f"--cpu-replicas must be >= 1, got {cpu_replicas}")
    if name == "tpu" or (name == "auto" and tpu_is_likely()):
        try:
            return _tpu()
        except (ValueError, RuntimeError, tf.errors.OpError) as exc:
            if name == "tpu":
                raise ValueError(f"no TPU found ({exc})") from exc
    if name == "multiworker" or (name == "auto" and cluster_from_env()):
        return _multiworker()
    if name == "mirrored" and not tf.config.list_physical_devices("GPU"):
        split_cpu(cpu_replicas)  # before listing devices starts TensorFlow
    gpus = tf.config.list_logical_devices("GPU")
    if name == "mirrored" or (name == "auto" and len(gpus) > 1):
        devices = [d.name for d in gpus] or split_cpu(cpu_replicas)
        strategy = _mirrored(tuple(devices))
        return Placement(
            strategy,
            "mirrored",
            strategy.num_replicas_in_sync,
            devices,
            accelerator="gpu" if gpus else "cpu",
        )
    device = gpus[0].name if gpus else "/cpu:0"
    return Placement(
        tf.distribute.get_strategy(),
        "default",
        1,
        [device],
        accelerator="gpu" if gpus else "cpu",
    )


_MIRRORED: dict[tuple[str, ...], tf.distribute.MirroredStrategy] = {}


def _mirrored(devices: tuple[str, ...]) -> tf.distribute.MirroredStrategy:
    """One MirroredStrategy per set of devices and process: a second one
    over the same devices would reuse the first one's collective keys
    (TensorFlow then mixes up the two models' all-reduces)."""
    if devices not in _MIRRORED:
        _MIRRORED[devices] = tf.distribute.MirroredStrategy(devices=devices)
    return _MIRRORED[devices]


def split_cpu(count: int) -> list[str]:
    """Split the CPU into `count` logical devices; their names.

    Must come before TensorFlow starts its runtime. A process that has
    already split its CPU (into exactly `count`) keeps its devices.
    """
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * count
        )
    except RuntimeError:  # started: the devices are fixed
        pass
    devices = [d.name for d in tf.config.list_logical_devices("CPU")]
    if len(devices) != count:
        raise ValueError(
            f"--cpu-replicas {count}: TensorFlow already started in this "
            f"process with {len(devices)} CPU device(s); run the command in "
            "a fresh process"
        )
    return devices


def _tpu() -> Placement:
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
        tpu=os.environ.get("TPU_NAME", "")
    )
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    strategy = tf.distribute.TPUStrategy(resolver)
    devices = [d.name for d in tf.config.list_logical_devices("TPU")]
    return Placement(
        strategy,
        "tpu",
        strategy.num_replicas_in_sync,
        devices,
        accelerator="tpu",
    )


def _multiworker() -> Placement:
    config = cluster_from_env()
    if config is None:
        raise ValueError(
            "--strategy multiworker needs TF_CONFIG naming a cluster of "
            'several tasks, e.g. {"cluster": {"worker": ["host1:12345", '
            '"host2:12345"]}, "task": {"type": "worker", "index": 0}}'
        )
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    kind, index = resolver.task_type, int(resolver.task_id)
    cluster = config["cluster"]
    # The chief is task "chief" when there is one, else worker 0.
    is_chief = kind == "chief" or (kind == "worker" and index == 0)
    if "chief" in cluster and kind == "worker":
        is_chief = False
    workers = len(cluster.get("chief", [])) + len(cluster.get("worker", []))
    gpus = tf.config.list_logical_devices("GPU")
    devices = [d.name for d in gpus] or ["/cpu:0"]
    return Placement(
        strategy,
        "multiworker",
        strategy.num_replicas_in_sync,
        devices,
        workers=workers,
        task=(kind, index),
        is_chief=is_chief,
        accelerator="gpu" if gpus else "cpu",
        chief=("chief", 0) if "chief" in cluster else ("worker", 0),
    )


def jit_default(placement: Placement) -> bool:
    """XLA pays on accelerators; on CPU it was slower for most models."""
    return placement.accelerator in ("gpu", "tpu")


def mixed_policy(placement: Placement) -> str:
    """bfloat16 on TPU (no loss scaling needed), float16 elsewhere."""
    if placement.accelerator == "tpu":
        return "mixed_bfloat16"
    return "mixed_float16"
