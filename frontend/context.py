"""``mindspore.context``: execution mode, device and jit level, process-wide.

Defaults follow MindSpore 2.x on an Atlas training product (the emulated 910A): PyNative mode, and
jit_level O2 for graphs (the seed: "The default Atlas training product is O2, the rest are O0").
"""
from __future__ import annotations

import warnings
from typing import Any

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError, check_int
from ascendemu.graph.plan import JIT_LEVELS

GRAPH_MODE = 0
PYNATIVE_MODE = 1
DEFAULT_JIT_LEVEL = "O2"
# What an Ascend install of MindSpore accepts: its own device and the host CPU backend.
DEVICE_TARGETS = ("Ascend", "CPU")

# Keys accepted for compatibility and stored, but not acted on by the emulator.
PASSIVE_KEYS = ("save_graphs", "save_graphs_path", "max_call_depth", "enable_graph_kernel",
                "max_device_memory", "memory_optimize_level", "pynative_synchronize", "deterministic",
                "ascend_config", "op_timeout")

_DEFAULTS: dict[str, Any] = {
    "mode": PYNATIVE_MODE, "device_target": "Ascend", "device_id": 0,
    "jit_config": {"jit_level": DEFAULT_JIT_LEVEL},
}
_context: dict[str, Any] = {}


def _reset() -> None:
    """Every key back to how a fresh process starts (``ascendemu.frontend.state.reset``)."""
    _context.clear()
    _context.update({k: dict(v) if isinstance(v, dict) else v for k, v in _DEFAULTS.items()})


_reset()


def _check_mode(mode: Any) -> int:
    if mode not in (GRAPH_MODE, PYNATIVE_MODE) or isinstance(mode, bool):
        raise InvalidParamError(f"mode must be context.GRAPH_MODE (0) or context.PYNATIVE_MODE (1), got {mode!r}")
    return mode


def _check_target(target: Any) -> str:
    """MindSpore's rule for a process: a target its package does not support is an error. The
    emulator has no CPU backend of its own, so work a script sends to "CPU" (zoo helpers that set it
    at import time, CPU configs) runs on the emulated Ascend device, as the warning says."""
    if target not in DEVICE_TARGETS:
        raise InvalidParamError(f"Unsupported device target {target}. This process only supports one of the "
                                f"{list(DEVICE_TARGETS)} (the emulated Ascend package); use "
                                f"device_target='Ascend'")
    if target == "CPU":
        warnings.warn("device_target 'CPU': ascendemu has no CPU backend; the ops run on the emulated "
                      "Ascend device", stacklevel=3)
    return target


def _check_device_id(device_id: Any) -> int:
    return check_int(device_id, "device_id", minimum=0)


def _check_jit_config(config: Any) -> dict:
    if not isinstance(config, dict) or set(config) - {"jit_level"}:
        raise InvalidParamError(f"jit_config must be a dict like {{'jit_level': 'O0'}}, got {config!r}")
    level = config.get("jit_level", _context["jit_config"]["jit_level"])
    if level not in JIT_LEVELS:
        raise InvalidParamError(f"jit_level must be one of {JIT_LEVELS}, got {level!r}")
    return {"jit_level": level}


_CHECKS = {"mode": _check_mode, "device_target": _check_target, "device_id": _check_device_id,
           "jit_config": _check_jit_config}


def set_context(**kwargs: Any) -> None:
    """Validate every key first, then apply them all (a bad call changes nothing)."""
    updates = {}
    for key, value in kwargs.items():
        if key in _CHECKS:
            updates[key] = _CHECKS[key](value)
        elif key in PASSIVE_KEYS:
            updates[key] = value
        else:
            raise InvalidParamError(f"set_context: unknown key {key!r}; supported keys are "
                                    f"{tuple(_CHECKS) + PASSIVE_KEYS}")
    _context.update(updates)


def get_context(key: str) -> Any:
    if key == "jit_level":
        return _context["jit_config"]["jit_level"]
    if key not in _context and key not in PASSIVE_KEYS:
        raise InvalidParamError(f"get_context: unknown key {key!r}; known keys are {tuple(_context)}")
    value = _context.get(key)
    return dict(value) if isinstance(value, dict) else value


def set_device(device_target: str, device_id: int | None = None) -> None:
    """MindSpore 2.5's ``mindspore.set_device``."""
    set_context(device_target=device_target, **({} if device_id is None else {"device_id": device_id}))


class ParallelMode:
    """The parallel modes of ``set_auto_parallel_context(parallel_mode=...)`` (MindSpore's strings)."""
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


# MindSpore's defaults of the auto-parallel context. DATA_PARALLEL is the mode that acts here: training
# wrappers then reduce gradients across the ranks (nn.DistributedGradReducer); the sharding modes are
# recorded and read back. ``device_num`` unset means the world's size (see ``parallel._utils``).
_AUTO_PARALLEL_DEFAULTS: dict[str, Any] = {
    "device_num": 1, "global_rank": 0, "gradients_mean": False, "gradient_fp32_sync": True,
    "parallel_mode": ParallelMode.STAND_ALONE, "search_mode": "recursive_programming",
    "auto_parallel_search_mode": "recursive_programming", "parameter_broadcast": False,
    "strategy_ckpt_load_file": "", "strategy_ckpt_save_file": "", "full_batch": False,
    "enable_parallel_optimizer": False, "all_reduce_fusion_config": [], "pipeline_stages": 1,
    "grad_accumulation_step": 1, "dataset_strategy": "data_parallel", "enable_alltoall": False,
    "comm_fusion": {}, "parallel_optimizer_config": {}, "strategy_ckpt_config": {},
}
_auto_parallel: dict[str, Any] = dict(_AUTO_PARALLEL_DEFAULTS)
_device_num_set = [False]          # whether the script set device_num (MindSpore's get_device_num_is_set)


class ParallelOptimizerTypeError(InvalidTypeError):
    """A parallel optimizer setting of the wrong type (MindSpore raises TypeError)."""


class ParallelOptimizerValueError(InvalidValueError):
    """An unknown or out-of-range parallel optimizer setting (MindSpore raises ValueError)."""


_PARALLEL_OPTIMIZER_KEYS = ("gradient_accumulation_shard", "parallel_optimizer_threshold",
                            "optimizer_weight_shard_size", "optimizer_level")


def _check_int_setting(name: str, value: Any, minimum: int) -> None:
    """MindSpore's Validator.check_non_negative_int / check_positive_int, with its messages."""
    bound = ">= 0" if minimum == 0 else "> 0"
    if not isinstance(value, int) or isinstance(value, bool) and minimum == 0:
        raise ParallelOptimizerTypeError(f"For '{name}', the input value must be int, but got "
                                         f"'{type(value).__name__}'")
    if isinstance(value, bool):
        raise ParallelOptimizerTypeError(f"For '{name}', the input value must be int and must {bound}, but got "
                                         f"'{value}' with type 'bool'.")
    if value < minimum:
        raise ParallelOptimizerValueError(f"For '{name}', the input value must be int and must {bound}, but got "
                                          f"'{value}' with type 'int'.")


def _parallel_optimizer_config(value: Any) -> dict[str, Any]:
    """``parallel_optimizer_config`` checked as MindSpore checks it, merged into the current one (MindSpore keeps
    the keys a later call leaves out); optimizer_weight_shard_size 1 is ignored, as MindSpore ignores it."""
    if not isinstance(value, dict):
        raise ParallelOptimizerTypeError(f"The parameter 'parallel_optimizer_config' must be <class 'dict'>, but "
                                         f"got {type(value)}")
    unknown = [k for k in value if k not in _PARALLEL_OPTIMIZER_KEYS]
    if unknown:
        raise ParallelOptimizerValueError(f"Unknown config: {unknown[:1]}; the keys are {_PARALLEL_OPTIMIZER_KEYS}")
    merged = dict(_auto_parallel["parallel_optimizer_config"])
    if "gradient_accumulation_shard" in value:
        flag = value["gradient_accumulation_shard"]
        if not isinstance(flag, bool):
            raise ParallelOptimizerTypeError(f"For 'gradient_accumulation_shard', the 'gradient_accumulation_shard' "
                                             f"must be a bool, but got {type(flag).__name__}.")
        merged["gradient_accumulation_shard"] = flag
    if "parallel_optimizer_threshold" in value:
        _check_int_setting("parallel_optimizer_threshold", value["parallel_optimizer_threshold"], 0)
        merged["parallel_optimizer_threshold"] = value["parallel_optimizer_threshold"]
    size = value.get("optimizer_weight_shard_size", -1)
    if size != -1:
        _check_int_setting("optimizer_weight_shard_size", size, 1)
        if size > 1:
            merged["optimizer_weight_shard_size"] = size
    if "optimizer_level" in value:
        if value["optimizer_level"] not in ("level1", "level2", "level3"):
            raise ParallelOptimizerValueError(f"Optimizer level should in ['level1', 'level2', 'level3'], but got "
                                              f"{value['optimizer_level']}")
        merged["optimizer_level"] = value["optimizer_level"]
    return merged


def _check_auto_parallel(key: str, value: Any) -> Any:
    if key not in _AUTO_PARALLEL_DEFAULTS:
        raise InvalidParamError(f"set_auto_parallel_context: unknown key {key!r}; known keys are "
                                f"{tuple(_AUTO_PARALLEL_DEFAULTS)}")
    if key == "parallel_mode" and value not in ParallelMode.MODE_LIST:
        raise InvalidParamError(f"parallel_mode must be one of {ParallelMode.MODE_LIST}, got {value!r}")
    if key == "device_num":
        check_int(value, "device_num", minimum=1, maximum=4096)
    if key == "global_rank":
        check_int(value, "global_rank", minimum=0, maximum=4095)
    if key == "all_reduce_fusion_config":
        if not isinstance(value, (list, tuple)) or any(isinstance(i, bool) or not isinstance(i, int) or i < 0
                                                       for i in value):
            raise InvalidParamError(f"all_reduce_fusion_config must be a list of parameter indices (ints >= 0) "
                                    f"that split the gradients into fusion groups, got {value!r}")
        if list(value) != sorted(set(value)):
            raise InvalidParamError(f"all_reduce_fusion_config must be strictly increasing, got {list(value)}")
        return list(value)
    if key in ("gradients_mean", "parameter_broadcast") and not isinstance(value, bool):
        raise InvalidParamError(f"set_auto_parallel_context: {key} must be a bool, got {value!r}")
    if key == "enable_parallel_optimizer" and not isinstance(value, bool):
        raise ParallelOptimizerTypeError(f"The parameter 'enable_parallel_optimizer' must be <class 'bool'>, but got "
                                         f"{type(value)}")
    if key == "parallel_optimizer_config":
        return _parallel_optimizer_config(value)
    return value


def set_auto_parallel_context(**kwargs: Any) -> None:
    """Record the auto-parallel settings (all keys checked before any is applied)."""
    updates = {key: _check_auto_parallel(key, value) for key, value in kwargs.items()}
    _auto_parallel.update(updates)
    if "device_num" in updates:
        _device_num_set[0] = True


def get_auto_parallel_context(attr_key: str) -> Any:
    if attr_key not in _auto_parallel:
        raise InvalidParamError(f"get_auto_parallel_context: unknown key {attr_key!r}; known keys are "
                                f"{tuple(_auto_parallel)}")
    value = _auto_parallel[attr_key]
    return value.copy() if isinstance(value, (list, dict)) else value


def reset_auto_parallel_context() -> None:
    _auto_parallel.clear()
    _auto_parallel.update(_AUTO_PARALLEL_DEFAULTS)
    _device_num_set[0] = False
