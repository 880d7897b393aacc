"""Record what real MindSpore 2.10 accepts, returns and raises for optimizer parallel's settings, for
tests/test_optimizer_parallel.py: ``set_auto_parallel_context(enable_parallel_optimizer=...,
parallel_optimizer_config=...)``, its read-back, ``Parameter.parallel_optimizer``, ``Cell.set_comm_fusion``, and an optimizer built
with it enabled in the modes that refuse it. Run it with real MindSpore (CI never needs it)::

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_optimizer_parallel.py
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "optimizer_parallel.json"
STACK_SEPARATOR = "\n\n----"
# (case, keyword arguments of set_auto_parallel_context)
CONTEXT_CASES: list[tuple[str, dict[str, Any]]] = [
    ("enable_not_bool", {"enable_parallel_optimizer": 1}),
    ("config_not_dict", {"parallel_optimizer_config": [("parallel_optimizer_threshold", 1)]}),
    ("config_unknown_key", {"parallel_optimizer_config": {"threshold": 1}}),
    ("grad_shard_not_bool", {"parallel_optimizer_config": {"gradient_accumulation_shard": 1}}),
    ("threshold_negative", {"parallel_optimizer_config": {"parallel_optimizer_threshold": -1}}),
    ("threshold_float", {"parallel_optimizer_config": {"parallel_optimizer_threshold": 1.5}}),
    ("shard_size_zero", {"parallel_optimizer_config": {"optimizer_weight_shard_size": 0}}),
    ("shard_size_bool", {"parallel_optimizer_config": {"optimizer_weight_shard_size": True}}),
    ("shard_size_float", {"parallel_optimizer_config": {"optimizer_weight_shard_size": 2.0}}),
]


def _outcome(call: Callable[[], Any]) -> dict[str, Any]:
    try:
        value = call()
    except (TypeError, ValueError, RuntimeError) as exc:
        return {"type": type(exc).__name__, "message": str(exc).split(STACK_SEPARATOR)[0]}
    return {"value": value}


def main() -> None:
    import mindspore as ms
    import numpy as np
    from mindspore import Parameter, Tensor, nn

    doc: dict[str, Any] = {"mindspore": ms.__version__, "context": {}, "read_back": {}}
    for case, kwargs in CONTEXT_CASES:
        ms.reset_auto_parallel_context()
        doc["context"][case] = _outcome(lambda: ms.set_auto_parallel_context(**kwargs))
    ms.reset_auto_parallel_context()
    from mindspore.parallel._auto_parallel_context import auto_parallel_context

    def settings() -> dict[str, Any]:
        ctx = auto_parallel_context()
        return {"enable_parallel_optimizer": ms.get_auto_parallel_context("enable_parallel_optimizer"),
                "gradient_accumulation_shard": ctx.get_grad_accumulation_shard(),
                "parallel_optimizer_threshold": ctx.get_parallel_optimizer_threshold(),
                "optimizer_weight_shard_size": ctx.get_optimizer_weight_shard_size()}
    doc["read_back"]["default"] = settings()
    doc["read_back"]["get_config"] = _outcome(lambda: ms.get_auto_parallel_context("parallel_optimizer_config"))
    config = {"gradient_accumulation_shard": False, "parallel_optimizer_threshold": 16,
              "optimizer_weight_shard_size": 2}
    ms.set_auto_parallel_context(enable_parallel_optimizer=True, parallel_optimizer_config=config)
    doc["read_back"]["set"] = settings()
    ms.set_auto_parallel_context(parallel_optimizer_config={"parallel_optimizer_threshold": 8})
    doc["read_back"]["after_partial"] = settings()
    ms.reset_auto_parallel_context()
    doc["read_back"]["after_reset"] = settings()

    w = Parameter(Tensor(np.ones((4, 4), np.float32)), name="w")
    doc["parameter"] = {"default": w.parallel_optimizer,
                        "init_false": Parameter(Tensor(np.ones(2, np.float32)), name="v",
                                                parallel_optimizer=False).parallel_optimizer}

    def set_attr() -> None:
        w.parallel_optimizer = 1
    doc["parameter"]["set_not_bool"] = _outcome(set_attr)

    net = nn.Dense(4, 4)
    returned = net.set_comm_fusion(3) is net
    doc["set_comm_fusion"] = {"returns_cell": returned, "fusions": [p.comm_fusion for p in net.trainable_params()],
                              "negative": _outcome(lambda: net.set_comm_fusion(-1) and None),
                              "float": _outcome(lambda: net.set_comm_fusion(1.0) and None)}
    ms.set_auto_parallel_context(parallel_mode="stand_alone", enable_parallel_optimizer=True)
    doc["optimizer_stand_alone"] = _outcome(lambda: bool(nn.Momentum(net.trainable_params(), 0.1, 0.9)) and None)
    ms.reset_auto_parallel_context()
    FIXTURE.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    main()
