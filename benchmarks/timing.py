"""Paired timing of two training steps, FLOP counts and the matmul peak.

A *step* is a compiled `tf.function` (forward, backward, optimizer update)
called with no arguments; its inputs are captured constants, the same
tensors on both sides. `compare` warms both sides up, picks how many calls
make one timing (about `target_s` seconds), then times the two sides
alternately, repetition after repetition, swapping which goes first, so
that load from other processes and clock drift hit both. The ratio of a
repetition is ours / theirs measured back to back; we report the min,
median and max of those ratios, never a ratio of two medians taken at
different times.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

import numpy as np
import tensorflow as tf

Step = Callable[[], tf.Tensor]


@dataclass
class Side:
    """One side of a comparison.

    Attributes:
        label: what it is, e.g. "ours: RNN(GRUCell)".
        step: a compiled training step taking no arguments.
        units: how many units (tokens, images, sequences) one step handles.
        params: trainable parameters, to show that both sides match.
        flops: floating-point operations of one step (None if not counted).
    """

    label: str
    step: Step
    units: int
    params: int
    flops: float | None = None
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)

    def run(self, calls: int) -> float:
        """Wall seconds per call over `calls` calls, waiting for the result.

        Also records the CPU seconds this process spent (all threads) per
        call: on a machine shared with other jobs, wall time grows with
        their load while CPU time mostly does not.
        """
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            out = self.step()
        np.asarray(out)  # the step ran synchronously; this fetches it
        self.last_cpu = (time.process_time() - cpu) / calls
        return (time.perf_counter() - start) / calls

    def record(self, calls: int) -> None:
        self.seconds.append(self.run(calls))
        self.cpu_seconds.append(self.last_cpu)


def summary(values: list[float]) -> dict[str, float]:
    """min, median and max of a list."""
    return {
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def calls_for(side: Side, target_s: float) -> int:
    """How many calls take about `target_s` seconds (at least 1)."""
    per_call = min(side.run(1) for _ in range(2))
    return max(1, round(target_s / per_call))


def compare(
    ours: Side,
    theirs: Side,
    *,
    reps: int,
    target_s: float,
    warmup: int = 2,
) -> dict:
    """Time `ours` against `theirs`; returns the record for the JSON file."""
    for side in (ours, theirs):
        side.run(warmup)  # traces, builds the optimizer, fills caches
    calls = max(calls_for(ours, target_s), calls_for(theirs, target_s))
    ratios, cpu_ratios = [], []
    for rep in range(reps):
        first, second = (ours, theirs) if rep % 2 == 0 else (theirs, ours)
        first.record(calls)
        second.record(calls)
        ratios.append(ours.seconds[-1] / theirs.seconds[-1])
        cpu_ratios.append(ours.cpu_seconds[-1] / theirs.cpu_seconds[-1])
    return {
        "ratio": summary(ratios),
        "cpu_ratio": summary(cpu_ratios),
        "ratios": ratios,
        "cpu_ratios": cpu_ratios,
        "calls_per_timing": calls,
        "ours": _side_record(ours),
        "theirs": _side_record(theirs),
    }


def _side_record(side: Side) -> dict:
    median = statistics.median(side.seconds)
    record = {
        "label": side.label,
        "params": side.params,
        "units_per_step": side.units,
        "step_ms": {k: v * 1e3 for k, v in summary(side.seconds).items()},
        "cpu_ms": {k: v * 1e3 for k, v in summary(side.cpu_seconds).items()},
        "units_per_s": side.units / median,
    }
    if side.flops is not None:
        record["gflop_per_step"] = side.flops / 1e9
        record["gflop_per_s"] = side.flops / median / 1e9
    return record


def train_step(
    model,
    inputs: tuple,
    targets,
    loss_fn: Callable,
    optimizer,
) -> tf.types.experimental.PolymorphicFunction:
    """A compiled step: loss, gradients, `optimizer.apply`; returns the loss.

    `jit_compile=False`, as the course's training code runs on CPU.
    """
    inputs = tuple(tf.convert_to_tensor(x) for x in inputs)
    targets = tf.convert_to_tensor(targets)
    model(*inputs)  # build the weights before the optimizer sees them

    @tf.function(jit_compile=False)
    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(targets, model(*inputs, training=True))
        variables = model.trainable_variables
        grads = tape.gradient(loss, variables)
        optimizer.apply(grads, variables)
        return loss

    return step


def param_count(model) -> int:
    """Trainable parameters of a built layer or model."""
    return int(sum(np.prod(v.shape) for v in model.trainable_variables))


# Ops whose cost is a matrix product, and how to count it: 2 flops (a
# multiply and an add) per term of every output element.
def _matmul_flops(op) -> float:
    adjoint = "transpose_a" if op.type == "MatMul" else "adj_x"
    a = op.inputs[0].shape
    inner = a[-2] if op.get_attr(adjoint) else a[-1]
    return 2.0 * op.outputs[0].shape.num_elements() * inner


def _einsum_flops(op) -> float:
    # Keras's EinsumDense and MultiHeadAttention: 2 x the product of the
    # sizes of every index of the equation, e.g. "abc,cd->abd": 2*a*b*c*d.
    equation = op.get_attr("equation").decode()
    sizes = {}
    operands = equation.split("->")[0].split(",")
    for letters, tensor in zip(operands, op.inputs, strict=True):
        for letter, size in zip(letters, tensor.shape.as_list(), strict=True):
            sizes[letter] = size
    return 2.0 * float(np.prod(list(sizes.values())))


def _conv_flops(op) -> float:
    # Forward: output (B, H', W', Co), filter (kh, kw, Ci, Co):
    # 2 * |output| * kh * kw * Ci. Each of the two gradients costs the same.
    if op.type == "Conv2D":
        out, filt = op.outputs[0].shape, op.inputs[1].shape
    elif op.type == "Conv2DBackpropInput":  # (input_sizes, filter, dy)
        out, filt = op.inputs[2].shape, op.inputs[1].shape
    else:  # Conv2DBackpropFilter: (x, filter_sizes, dy) -> filter grad
        out, filt = op.inputs[2].shape, op.outputs[0].shape
    kh, kw, ci, _ = filt.as_list()
    return 2.0 * out.num_elements() * kh * kw * ci


_COUNTERS = {
    "MatMul": _matmul_flops,
    "BatchMatMulV2": _matmul_flops,
    "BatchMatMulV3": _matmul_flops,
    "Einsum": _einsum_flops,
    "Conv2D": _conv_flops,
    "Conv2DBackpropInput": _conv_flops,
    "Conv2DBackpropFilter": _conv_flops,
}


def count_flops(step: tf.types.experimental.PolymorphicFunction) -> float:
    """FLOPs of one call of `step`, counted from its traced graph.

    Every matrix product (MatMul, BatchMatMul, Einsum) and convolution
    (Conv2D and both of its gradients) is counted as 2 x output elements x
    inner size, from the static shapes of the traced graph: forward,
    backward and optimizer alike. Elementwise ops, softmax and
    normalisation are left out: they are a few percent of a Transformer's
    or a ResNet's arithmetic, and not what a matmul peak measures. Loop
    bodies (while_loop) are not entered, so recurrent models are not
    counted.
    """
    graph = step.get_concrete_function().graph
    total = 0.0
    for op in graph.get_operations():
        counter = _COUNTERS.get(op.type)
        if counter is None:
            continue
        try:
            total += counter(op)
        except (TypeError, ValueError) as error:  # a dynamic shape
            raise ValueError(f"cannot count {op.type} {op.name}") from error
    return total


def matmul_peak(n: int, calls: int, reps: int) -> dict:
    """The float32 matmul rate this machine reaches, in FLOP/s.

    A compiled loop multiplies (n, n) matrices `calls` times; each product
    is 2 n^3 flops. The chain feeds each product into the next, so none
    can be skipped, and is rescaled to keep the values finite.
    """
    a = tf.random.normal((n, n), stddev=1.0 / np.sqrt(n), seed=1)
    b = tf.random.normal((n, n), stddev=1.0 / np.sqrt(n), seed=2)

    @tf.function(jit_compile=False)
    def loop():
        x = a
        for _ in range(calls):
            x = tf.matmul(x, b)
        return tf.reduce_sum(x)

    loop()  # trace and warm up
    rates = []
    for _ in range(reps):
        start = time.perf_counter()
        np.asarray(loop())
        rates.append(2.0 * n**3 * calls / (time.perf_counter() - start))
    return {
        "n": n,
        "calls": calls,
        "flop_per_s": summary(rates),
        "peak_gflop_per_s": max(rates) / 1e9,
    }
