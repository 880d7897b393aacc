"""``ModelCheckpoint`` and ``CheckpointConfig``: checkpoints of the training network while it trains.

Files are named as MindSpore names them: ``<prefix>-<epoch>_<step in epoch>.ckpt`` (``.safetensors``
with ``format="safetensors"``), in ``directory`` (default: the current directory). A prefix that
already has checkpoints in the directory becomes ``<prefix>_<N>`` (one more than the largest suffix
there), so two runs never overwrite each other. Before each save, the oldest file of the prefix (by
modification time) is removed once ``keep_checkpoint_max`` are there. Saves go through
``save_checkpoint`` (atomic: a crash never leaves a torn file).

Not written: MindSpore's ``<prefix>-graph.meta`` (its FuncGraph protobuf, which nothing here could
read back).
"""
from __future__ import annotations

import math
import os
import time
from typing import Any

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, check_int

from ...nn import Cell
from ..serialization import FORMATS, save_checkpoint
from ...common.tensor import Tensor
from ._callback import Callback, RunContext


def _counter(value: Any) -> Tensor:
    """An append_info counter as ModelCheckpoint saves it: an Int32 scalar (what real MindSpore 2.10
    wrote for epoch_num/step_num, tests/fixtures/zoo/resnet18_imagenet.mindspore-2.10-cpu.txt; a plain
    ``save_checkpoint(append_dict={"n": 1})`` writes Int64)."""
    return Tensor(np.int32(int(value.asnumpy()) if isinstance(value, Tensor) else value))

__all__ = ["CheckpointConfig", "ModelCheckpoint", "CheckpointManager", "chg_ckpt_file_name_if_same_exist"]

APPEND_INFO = ("epoch_num", "step_num")
BREAKPOINT_SUFFIX = "_breakpoint.ckpt"


def _count(name: str, value: Any) -> int | None:
    return None if value is None else check_int(value, f"CheckpointConfig: {name}", minimum=0)


class CheckpointConfig:
    """When to save and how many files to keep. Steps take precedence over seconds
    (``save_checkpoint_steps`` > 0 switches seconds off) and ``keep_checkpoint_max`` over
    ``keep_checkpoint_per_n_minutes``; all four 0/None is refused; with neither keep policy, one file
    is kept. ``append_info``: ``"epoch_num"``, ``"step_num"`` and at most one dict of extra entries
    (str -> int/float/bool/str/Tensor). ``saved_network``: save this cell instead of the training
    network. ``integrated_save``/``async_save`` are accepted (saves are synchronous and whole)."""

    def __init__(self, save_checkpoint_steps: int | None = 1, save_checkpoint_seconds: int | None = 0,
                 keep_checkpoint_max: int | None = 5, keep_checkpoint_per_n_minutes: int | None = 0,
                 integrated_save: bool = True, async_save: bool = False, saved_network: Cell | None = None,
                 append_info: list | None = None, enc_key: bytes | None = None, enc_mode: str = "AES-GCM",
                 exception_save: bool = False, crc_check: bool = False, remove_redundancy: bool = False,
                 format: str = "ckpt", **kwargs: Any):
        steps = _count("save_checkpoint_steps", save_checkpoint_steps)
        seconds = _count("save_checkpoint_seconds", save_checkpoint_seconds)
        keep_max = _count("keep_checkpoint_max", keep_checkpoint_max)
        per_minutes = _count("keep_checkpoint_per_n_minutes", keep_checkpoint_per_n_minutes)
        if saved_network is not None and not isinstance(saved_network, Cell):
            raise InvalidParamError(f"CheckpointConfig: saved_network must be None or a Cell, got "
                                    f"{type(saved_network).__name__}")
        if not steps and not seconds and not keep_max and not per_minutes:
            raise InvalidParamError("CheckpointConfig: save_checkpoint_steps, save_checkpoint_seconds, "
                                    "keep_checkpoint_max and keep_checkpoint_per_n_minutes can't be all None or 0")
        for name, flag in (("integrated_save", integrated_save), ("async_save", async_save),
                           ("exception_save", exception_save), ("crc_check", crc_check),
                           ("remove_redundancy", remove_redundancy)):
            if not isinstance(flag, bool):
                raise InvalidParamError(f"CheckpointConfig: {name} must be a bool, got {flag!r}")
        if enc_key is not None:
            raise FeatureNotSupportedError("CheckpointConfig: enc_key (encrypted checkpoints) is not supported by "
                                           "the emulator, because MindSpore's cipher framing is undocumented; "
                                           "leave enc_key=None")
        if format not in FORMATS:
            raise InvalidParamError(f"CheckpointConfig: format must be one of {FORMATS}, got {format!r}")
        self._save_checkpoint_steps = steps
        self._save_checkpoint_seconds = None if steps else seconds
        self._keep_checkpoint_max = keep_max
        self._keep_checkpoint_per_n_minutes = per_minutes
        if keep_max:
            self._keep_checkpoint_per_n_minutes = None
        elif not per_minutes:
            self._keep_checkpoint_max = 1
        self._integrated_save = integrated_save
        self._async_save = async_save
        self._saved_network = saved_network
        self._append_dict = self._handle_append_info(append_info)
        self._enc_key, self._enc_mode = enc_key, enc_mode
        self.exception_save = exception_save
        self.crc_check = crc_check
        self.remove_redundancy = remove_redundancy
        self.format = format

    save_checkpoint_steps = property(lambda self: self._save_checkpoint_steps)
    save_checkpoint_seconds = property(lambda self: self._save_checkpoint_seconds)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_per_n_minutes = property(lambda self: self._keep_checkpoint_per_n_minutes)
    integrated_save = property(lambda self: self._integrated_save)
    async_save = property(lambda self: self._async_save)
    saved_network = property(lambda self: self._saved_network)
    enc_key = property(lambda self: self._enc_key)
    enc_mode = property(lambda self: self._enc_mode)
    append_dict = property(lambda self: self._append_dict)

    def get_checkpoint_policy(self) -> dict:
        return {"save_checkpoint_steps": self.save_checkpoint_steps,
                "save_checkpoint_seconds": self.save_checkpoint_seconds,
                "keep_checkpoint_max": self.keep_checkpoint_max,
                "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
                "saved_network": self.saved_network}

    @staticmethod
    def _handle_append_info(append_info: Any) -> dict | None:
        if append_info is None or append_info == []:
            return None
        if not isinstance(append_info, list):
            raise InvalidParamError(f"CheckpointConfig: append_info must be a list, got {type(append_info).__name__}")
        out = {name: 0 for name in APPEND_INFO if name in append_info}
        dicts = 0
        for element in append_info:
            if isinstance(element, str):
                if element not in APPEND_INFO:
                    raise InvalidParamError(f"CheckpointConfig: append_info element {element!r} must be one of "
                                            f"{list(APPEND_INFO)} or a dict")
            elif isinstance(element, dict):
                dicts += 1
                if dicts > 1:
                    raise InvalidParamError("CheckpointConfig: append_info may hold only one dict")
                for key, value in element.items():
                    if not isinstance(key, str) or not isinstance(value, (int, float, bool, str, Tensor)):
                        raise InvalidParamError(f"CheckpointConfig: append_info entry {key!r}: the key must be a "
                                                f"str and the value an int, float, bool, str, Tensor or Parameter, "
                                                f"got {type(value).__name__}")
                    out[key] = value
            else:
                raise InvalidParamError(f"CheckpointConfig: append_info elements must be str or dict, got "
                                        f"{type(element).__name__}")
        return out


def chg_ckpt_file_name_if_same_exist(directory: str, prefix: str, exception: bool = False) -> str:
    """``prefix``, or ``prefix_N`` when checkpoints of ``prefix`` exist in ``directory`` (N: one more
    than the largest suffix found, 1 for files of the bare prefix); ``exception`` looks at the
    ``_breakpoint.ckpt`` files instead (MindSpore's rule)."""
    suffix_num = 0
    for filename in os.listdir(directory):
        is_breakpoint = filename.endswith(BREAKPOINT_SUFFIX)
        if exception != is_breakpoint or (not exception and os.path.splitext(filename)[1] not in (".ckpt",
                                                                                                  ".safetensors")):
            continue
        if filename.startswith(prefix) and len(filename) > len(prefix) and not filename[len(prefix)].isalpha():
            index = filename[len(prefix):].find("-")
            if index == 0:
                suffix_num = max(suffix_num, 1)
            elif index != -1:
                num = filename[len(prefix) + 1:len(prefix) + index]
                if num.isdigit():
                    suffix_num = max(suffix_num, int(num) + 1)
    return f"{prefix}_{suffix_num}" if suffix_num else prefix


class CheckpointManager:
    """The checkpoint files of one prefix in one directory."""

    def __init__(self, extension: str = ".ckpt"):
        self.extension = extension
        self._ckpoint_filelist: list[str] = []

    @property
    def ckpoint_filelist(self) -> list[str]:
        return self._ckpoint_filelist

    @property
    def ckpoint_num(self) -> int:
        return len(self._ckpoint_filelist)

    def update_ckpoint_filelist(self, directory: str, prefix: str) -> None:
        """The files ``<prefix>-<digits and separators><extension>`` in ``directory``."""
        self._ckpoint_filelist = []
        for filename in os.listdir(directory):
            if filename.endswith(self.extension) and filename.startswith(prefix + "-"):
                middle = filename[len(prefix):-len(self.extension)]
                if not any(ch.isalpha() for ch in middle):
                    self._ckpoint_filelist.append(os.path.join(directory, filename))

    def remove_ckpoint_file(self, file_name: str) -> None:
        """Remove ``file_name``; one that another writer (a rank saving to the same directory) removed
        already is not an error."""
        try:
            os.remove(file_name)
        except FileNotFoundError:
            pass
        self._ckpoint_filelist.remove(file_name)

    def remove_oldest_ckpoint_file(self) -> None:
        self.remove_ckpoint_file(min(self._ckpoint_filelist, key=_mtime))

    def keep_one_ckpoint_per_minutes(self, minutes: int, cur_time: float) -> None:
        """Of the files written in the last ``minutes``, keep only the oldest."""
        recent = [f for f in self._ckpoint_filelist if cur_time - _mtime(f) < 60 * minutes]
        oldest = min(recent, key=_mtime, default=None)
        for f in recent:
            if f != oldest:
                self.remove_ckpoint_file(f)


class ModelCheckpoint(Callback):
    """Save the training network (parameters, then optimizer state, as ``save_checkpoint`` orders a
    Cell) every ``save_checkpoint_steps`` steps (or seconds) and at the end of training; see the
    module docstring for names and retention. ``prefix`` may be a str without '/'."""

    def __init__(self, prefix: str = "CKP", directory: str | None = None, config: CheckpointConfig | None = None):
        super().__init__()
        if not isinstance(prefix, str) or "/" in prefix:
            raise InvalidParamError(f"ModelCheckpoint: prefix must be a str without '/', got {prefix!r}")
        if directory is not None and not isinstance(directory, str):
            raise InvalidParamError(f"ModelCheckpoint: directory must be a str, got {type(directory).__name__}")
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise InvalidParamError(f"ModelCheckpoint: config must be a CheckpointConfig, got "
                                    f"{type(config).__name__}")
        self._config = config
        self._directory = _make_directory(directory) if directory is not None else os.getcwd()
        self._exception_prefix = prefix
        self._prefix = chg_ckpt_file_name_if_same_exist(self._directory, prefix)
        self._extension = f".{config.format}"
        self._manager = CheckpointManager(self._extension)
        self._append_dict = dict(config.append_dict or {})
        self._append_epoch_num = self._append_dict.get("epoch_num", 0)
        self._append_step_num = self._append_dict.get("step_num", 0)
        self._latest_ckpt_file_name = ""
        self._last_triggered_step = 0
        self._last_time = self._last_time_for_keep = time.time()

    @property
    def latest_ckpt_file_name(self) -> str:
        """Path of the last checkpoint saved."""
        return self._latest_ckpt_file_name

    def step_end(self, run_context: RunContext) -> None:
        _make_directory(self._directory)
        self._save_ckpt(run_context.original_args())

    def end(self, run_context: RunContext) -> None:
        """The last step is always saved."""
        self._save_ckpt(run_context.original_args(), force_to_save=True)

    def _check_save_ckpt(self, cb_params: dict, force_to_save: bool) -> bool:
        config = self._config
        if config.save_checkpoint_steps:
            due = self._last_triggered_step + config.save_checkpoint_steps
            return force_to_save or cb_params["cur_step_num"] >= due
        if config.save_checkpoint_seconds:
            now = time.time()
            if force_to_save or now - self._last_time > config.save_checkpoint_seconds:
                self._last_time = now
                return True
        return False

    def _save_ckpt(self, cb_params: dict, force_to_save: bool = False) -> None:
        if cb_params["cur_step_num"] == self._last_triggered_step or not self._check_save_ckpt(cb_params,
                                                                                               force_to_save):
            return
        config = self._config
        step_in_epoch = (cb_params["cur_step_num"] - 1) % cb_params["batch_num"] + 1
        self._manager.update_ckpoint_filelist(self._directory, self._prefix)
        if config.keep_checkpoint_max and config.keep_checkpoint_max <= self._manager.ckpoint_num:
            self._manager.remove_oldest_ckpoint_file()
        elif config.keep_checkpoint_per_n_minutes:
            now = time.time()
            if now - self._last_time_for_keep < config.keep_checkpoint_per_n_minutes * 60:
                self._manager.keep_one_ckpoint_per_minutes(config.keep_checkpoint_per_n_minutes, now)
        self._last_time_for_keep = time.time()
        self._last_triggered_step = cb_params["cur_step_num"]
        if "epoch_num" in self._append_dict:
            self._append_dict["epoch_num"] = _counter(self._append_epoch_num + cb_params["cur_epoch_num"])
        if "step_num" in self._append_dict:
            self._append_dict["step_num"] = _counter(self._append_step_num + cb_params["cur_step_num"])
        name = f"{self._prefix}-{cb_params['cur_epoch_num']}_{step_in_epoch}{self._extension}"
        path = os.path.join(self._directory, name)
        network = config.saved_network if config.saved_network is not None else cb_params["train_network"]
        save_checkpoint(network, path, config.integrated_save, config.async_save, self._append_dict or None,
                        crc_check=config.crc_check, format=config.format)
        self._latest_ckpt_file_name = path

    def save_breakpoint(self, network: Cell, epoch: int, step: int) -> str:
        """``exception_save``: the network as it was when training raised, as
        ``<prefix>-<epoch>_<step>_breakpoint.ckpt``; returns the path."""
        prefix = chg_ckpt_file_name_if_same_exist(self._directory, self._exception_prefix, exception=True)
        path = os.path.join(self._directory, f"{prefix}-{epoch}_{step}{BREAKPOINT_SUFFIX}")
        if "epoch_num" in self._append_dict:
            self._append_dict["epoch_num"] = _counter(self._append_epoch_num + epoch)
        if "step_num" in self._append_dict:
            self._append_dict["step_num"] = _counter(self._append_step_num + step)
        save_checkpoint(network, path, self._config.integrated_save, self._config.async_save,
                        self._append_dict or None)
        return path


def _mtime(path: str) -> float:
    """The modification time of ``path``; -inf once another writer removed it (the oldest of all)."""
    try:
        return os.path.getmtime(path)
    except FileNotFoundError:
        return -math.inf


def _make_directory(path: str) -> str:
    """``path`` made absolute and created (mode 0o700, as MindSpore's) if it does not exist."""
    path = os.path.realpath(os.path.expanduser(path))
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path
