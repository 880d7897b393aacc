"""``mindspore.nn.Cell``: the base of every network.

Calling a Cell runs ``construct``: directly in PyNative mode, or captured as one graph in GRAPH_MODE.
Sub-cells called inside a capture add a name scope ``<attr>-<Class>`` to the ops they record, so
full names read like MindSpore's ``Default/fc1-Dense/MatMul-op1``.

Mixed precision is a property of a cell (``to_float``, the ``amp`` levels): an :class:`AmpScope` that
``__call__`` makes current while ``construct`` runs, casting the cell's float inputs and, in the ops
it calls, the float Parameters they read (the Parameters stay float32 master weights).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator, Protocol, Sequence, runtime_checkable

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, InvalidTypeError, InvalidValueError
from ascendemu.graph.capture import current_tracer
from ascendemu.graph.parallel.pipeline import stage_scope

from .. import log, ops
from ..common import dtype as mstype
from ..common.api import run_graph
from ..common.jit_config import jit_level_of
from ..common.parse import convert_method
from ..common.phase import jit_phase_key
from ..common.recompute import RecomputeConfig, cell_config, recomputed_call, unknown_keywords
from ..context import GRAPH_MODE, get_context
from ..parallel._cell_shard import shard_cell, shard_cell_inputs
from ..common.parameter import ParameterTuple
from ..common.parameter import Parameter
from ..common.tensor import Tensor

__all__ = ["Cell", "ParameterTuple", "GraphCell"]   # ParameterTuple: common.parameter's, re-exported as MindSpore does


class PipelineStageTypeError(InvalidTypeError):
    """A pipeline_stage that is not an int (MindSpore raises TypeError)."""


class PipelineStageValueError(InvalidValueError):
    """A negative pipeline_stage (MindSpore raises ValueError)."""


class ConstructNotDefinedError(InvalidParamError, AttributeError):
    """A Cell subclass called without defining ``construct`` (MindSpore raises AttributeError)."""


class Cell:
    """Base of every network: register Parameters and sub-cells as attributes, define ``construct``."""

    _amp: ops.AmpScope | None = None      # None: the caller's mixed precision applies
    _amp_level = ""                       # set by amp.auto_mixed_precision
    _recompute_config: RecomputeConfig | None = None   # set by recompute()
    _pipeline_stage: int | None = None    # None: the enclosing cell's stage (pipeline parallel)

    def __init__(self, auto_prefix: bool = True, flags: dict | None = None):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_attr_name", None)
        object.__setattr__(self, "_auto_prefix", auto_prefix)
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "_jit_config_dict", {})
        if flags:
            self.add_flags(**flags)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name: str, value: Any) -> None:
        registry = self.__dict__.get("_params")
        if registry is None:
            if isinstance(value, (Parameter, Cell)):
                raise InvalidParamError(f"{type(self).__name__}: call super().__init__() in __init__ before "
                                        f"assigning parameters or cells (assigning {name!r})")
            object.__setattr__(self, name, value)
            return
        self._params.pop(name, None)
        self._cells.pop(name, None)
        if isinstance(value, Parameter):
            if value.name == Parameter.DEFAULT_NAME:
                value.name = name
            self._params[name] = value
        elif isinstance(value, ParameterTuple):
            # a ParameterTuple's members belong to this cell too, keyed by their own names (as in
            # MindSpore, where TrainOneStepCell's weights come first in its checkpoint, and an adopting
            # cell's prefix goes before an optimizer's "moments.<name>"); as there, a replaced tuple's
            # members stay (LARS keeps its "fake_param" after taking the wrapped optimizer's parameters)
            for p in value:
                self._params.setdefault(p.name, p)
        elif isinstance(value, Cell):
            self._adopt(name, value)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._params.pop(name, None)
        self._cells.pop(name, None)
        object.__delattr__(self, name)

    def _adopt(self, name: str, cell: "Cell") -> None:
        """Assign ``cell`` as the attribute ``name``: with auto_prefix its parameters are renamed
        ``name.<their path in cell>`` (MindSpore's ``_set_attr_for_cell``), then it is a child."""
        if self._auto_prefix:
            cell.update_parameters_name(f"{name}.")
        self.insert_child_to_cell(name, cell)

    def update_parameters_name(self, prefix: str = "", recurse: bool = True) -> None:
        """Name every parameter ``prefix`` + its path in this cell (attribute names, not the names the
        parameters had): the one naming rule, applied when a cell is assigned, appended or inserted."""
        if not isinstance(prefix, str):
            raise TypeError(f"For 'update_parameters_name', 'prefix' must be a str, but got {type(prefix).__name__}.")
        for path, p in self.parameters_and_names(expand=recurse):
            p.name = prefix + path

    def insert_child_to_cell(self, child_name: str, child_cell: "Cell") -> None:
        if not isinstance(child_cell, Cell):
            raise InvalidParamError(f"insert_child_to_cell: {child_name!r} must be a Cell, "
                                    f"got {type(child_cell).__name__}")
        object.__setattr__(child_cell, "_attr_name", child_name)
        self._cells[child_name] = child_cell
        object.__setattr__(self, child_name, child_cell)

    # ------------------------------------------------------------------ queries
    def parameters_and_names(self, name_prefix: str = "", expand: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(path, parameter) pairs, each parameter once: the path is by attribute names from this cell
        (``name_prefix`` before it), as MindSpore's; ``Parameter.name`` may differ (``parameters_dict``
        and checkpoints use the names)."""
        seen: set[int] = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        for cell_name, cell in cells:
            for key, p in cell._params.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{cell_name}.{key}" if cell_name else key), p

    def get_parameters(self, expand: bool = True) -> Iterator[Parameter]:
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def parameters_dict(self, recurse: bool = True) -> "OrderedDict[str, Parameter]":
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def trainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(recurse) if p.requires_grad]

    def set_comm_fusion(self, fusion_type: int, recurse: bool = True) -> "Cell":
        """MindSpore's: every trainable weight's ``comm_fusion`` (checked by the Parameter, as MindSpore checks it)."""
        for param in self.trainable_params(recurse):
            param.comm_fusion = fusion_type
        return self

    def untrainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(recurse) if not p.requires_grad]

    def init_parameters_data(self, auto_parallel_mode: bool = False) -> dict[Parameter, Parameter]:
        """MindSpore initialises lazily created Parameters here and returns {original: initialised}.
        The emulator's Parameters hold their data from creation, so each one maps to itself."""
        return {p: p.init_data() for p in self.get_parameters()}

    def cells_and_names(self, cells: set | None = None, name_prefix: str = "") -> Iterator[tuple[str, "Cell"]]:
        seen = cells if cells is not None else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            yield from cell.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix else name)

    def name_cells(self) -> "OrderedDict[str, Cell]":
        return OrderedDict(self._cells)

    def cells(self) -> Iterable["Cell"]:
        return self._cells.values()

    def set_grad(self, requires_grad: bool = True) -> "Cell":
        """Accepted for compatibility: gradients are built on demand by GradOperation / grad."""
        return self

    def to_float(self, dst_type: mstype.Type) -> "Cell":
        """Run this cell and all its sub-cells in ``dst_type`` (float16 or float32): float inputs and
        the float Parameters its ops read are cast to it where they are used; Parameters keep their
        own dtype (float32 master weights receive float32 gradients through the Cast). As in
        MindSpore, this is ``add_flags_recursive(fp16=..., fp32=...)``."""
        if dst_type not in (mstype.float16, mstype.float32):
            raise InvalidParamError(f"{type(self).__name__}.to_float: dst_type must be mstype.float16 or "
                                    f"mstype.float32, got {dst_type!r}")
        return self.add_flags_recursive(fp16=dst_type == mstype.float16, fp32=dst_type == mstype.float32)

    def add_flags(self, **flags: Any) -> "Cell":
        """MindSpore's ``add_flags``: each flag becomes an attribute of the cell and an entry of
        :meth:`get_flags`; a true ``fp16``/``fp32`` flag is this cell's mixed precision (its own
        construct, as ``to_float`` sets it for a whole tree)."""
        if flags.get("bf16"):
            raise InvalidParamError(f"{type(self).__name__}.add_flags: bf16 mixed precision is not supported "
                                    f"(the emulator has no bfloat16); use fp16=True or fp32=True")
        self.get_flags().update(flags)
        for name, value in flags.items():
            object.__setattr__(self, name, value)
        for flag, dtype in (("fp16", "float16"), ("fp32", "float32")):
            if flags.get(flag):
                object.__setattr__(self, "_amp", ops.AmpScope(dtype=dtype))
        return self

    def add_flags_recursive(self, **flags: Any) -> "Cell":
        """:meth:`add_flags` on this cell and every sub-cell."""
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self) -> dict:
        """The flags given to :meth:`add_flags` (and ``Cell(flags=...)``), by name."""
        return self.__dict__.setdefault("_func_graph_flags", {})

    def set_train(self, mode: bool = True) -> "Cell":
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        return self

    # ------------------------------------------------------------------ compile options
    @property
    def jit_config_dict(self) -> dict:
        return self._jit_config_dict

    def set_jit_config(self, jit_config: Any) -> None:
        """Compile this cell's graphs with ``jit_config`` (a JitConfig; its jit_level is used). As in
        MindSpore it can be set once; a second call is ignored with a warning."""
        jit_level_of(jit_config, f"{type(self).__name__}.set_jit_config")
        if self._jit_config_dict:
            log.warning("For Cell, jit config can only be set once, ignore this setting.")
            return
        object.__setattr__(self, "_jit_config_dict", jit_config.jit_config_dict)

    def _get_attr_from_cell(self, network: Any) -> None:
        """A wrapper cell (WithLossCell, TrainOneStepCell, ...) compiles like the network it wraps."""
        if isinstance(network, Cell) and network._jit_config_dict:
            object.__setattr__(self, "_jit_config_dict", network._jit_config_dict)

    def _jit_level(self) -> str | None:
        """The jit level of this cell's graphs; None: the context's."""
        return self._jit_config_dict.get("jit_level") or None

    @property
    def pipeline_stage(self) -> int:
        """The pipeline stage of this cell's ops (``pipeline_stages`` > 1 under SEMI_AUTO_PARALLEL); its
        sub-cells' unless they set their own. Unset, it is missing, as in MindSpore 2.10 (AttributeError)."""
        if self._pipeline_stage is None:
            raise AttributeError(f"The '{type(self).__name__}' object has no attribute 'pipeline_stage'.")
        return self._pipeline_stage

    @pipeline_stage.setter
    def pipeline_stage(self, value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise PipelineStageTypeError(f"For 'Cell', the property 'pipeline_stage' must be int type, but got "
                                         f"type : {type(value)}")
        if value < 0:
            raise PipelineStageValueError(f"For 'Cell', the property 'pipeline_stage' can not be less than 0, but "
                                          f"got {value}")
        object.__setattr__(self, "_pipeline_stage", value)

    # ------------------------------------------------------------------ running
    def construct(self, *args: Any, **kwargs: Any) -> Any:
        raise ConstructNotDefinedError(f"For 'Cell', the method 'construct' is not defined: {type(self).__name__} "
                                       f"does not define construct(); every Cell must")

    def scope_label(self) -> str:
        name = self._attr_name
        return f"{name}-{type(self).__name__}" if name is not None else type(self).__name__

    def _run_construct(self, *args: Any, **kwargs: Any) -> Any:
        """``construct`` under this cell's mixed precision, if it has one."""
        scope = self._amp
        # GRAPH_MODE compiles tensor control flow: the capture runs construct rewritten by the parser
        construct = self.construct if current_tracer() is None else convert_method(self.construct)
        if scope is None:
            return construct(*args, **kwargs)
        with ops._amp_scope(scope):
            if scope.dtype is not None:
                args = ops.mixed_precision_cast(scope.dtype, args)
                kwargs = {k: ops.mixed_precision_cast(scope.dtype, v) for k, v in kwargs.items()}
            out = construct(*args, **kwargs)
        return out if scope.output is None else ops.mixed_precision_cast(scope.output, out)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is not None:
            with tracer.scope(self.scope_label()), stage_scope(self._pipeline_stage):
                args = shard_cell_inputs(self, args, tracer)
                if self._recompute_config is not None:
                    return recomputed_call(self._run_construct, args, kwargs, self._recompute_config)
                return self._run_construct(*args, **kwargs)
        if get_context("mode") == GRAPH_MODE:
            if any(isinstance(v, Tensor) for v in kwargs.values()):
                raise InvalidParamError(f"{type(self).__name__}: pass tensors positionally in GRAPH_MODE")
            construct = self._run_construct
            if kwargs:
                def construct(*a: Any) -> Any:
                    return self._run_construct(*a, **kwargs)
            return run_graph(construct, args, type(self).__name__, self._jit_level(), owner=self,
                             static=tuple(sorted(kwargs.items())) + jit_phase_key(self.construct),
                             signature=self.get_inputs())
        return self._run_construct(*args, **kwargs)

    def recompute(self, *, use_reentrant: bool = True, output_recompute: bool = False, early_stop: bool = True,
                  context_fn: Any = None, **kwargs: Any) -> None:
        """MindSpore's ``Cell.recompute``: the backward recomputes this cell's forward from its inputs instead
        of keeping its intermediate results; its outputs are kept (``graph.recompute``). ``mp_comm_recompute``
        (default True) recomputes its model-parallel collectives too; ``parallel_optimizer_comm_recompute``
        and ``recompute_slice_activation`` are accepted as MindSpore accepts them."""
        config = cell_config(self._recompute_config, output_recompute, kwargs)
        object.__setattr__(self, "_recompute_config", config)
        unknown_keywords(kwargs)

    def shard(self, in_strategy: tuple, out_strategy: tuple | None = None, parameter_plan: dict | None = None) -> None:
        """MindSpore's ``Cell.shard``: the layouts of this cell's inputs in a sharded GRAPH_MODE capture; the
        search propagates the rest from them (``parallel._cell_shard.shard_cell``)."""
        shard_cell(self, in_strategy, out_strategy, parameter_plan)

    def set_inputs(self, *inputs: Any, **kwargs: Any) -> None:
        """Declare the GRAPH_MODE input signature: ``Tensor(shape=[None, 3], dtype=...)`` per input, a
        None dim open; every matching call shares one phase (``graph.dynamic``), others are refused."""
        if kwargs:
            raise FeatureNotSupportedError(f"{type(self).__name__}.set_inputs: keyword inputs (incremental mode) "
                                           f"are not supported by the emulator; give every input positionally")
        for i, t in enumerate(inputs, start=1):
            if not isinstance(t, (Tensor, tuple, list, type(None), int, float, bool)):
                raise TypeError(f"For 'set_inputs', the {i}th input must be a Tensor, but got {type(t)}.")
        object.__setattr__(self, "_dynamic_shape_inputs", inputs)

    def get_inputs(self) -> tuple | None:
        """The inputs given to :meth:`set_inputs`, or None."""
        return self.__dict__.get("_dynamic_shape_inputs")

    # ------------------------------------------------------------------ printing
    def extend_repr(self) -> str:
        """This cell's own settings for ``print(cell)`` (one line, or several), without its children."""
        return ""

    def __repr__(self) -> str:
        """MindSpore 2.x's layout (``nn.Cell.__repr__``): ``Dense(input_channels=3, ...)`` on one line for a
        cell with one line of settings and no children; else the settings' lines and one
        ``(name): child`` line per sub-cell, indented by two, and ``)`` on a line of its own."""
        extra = self.extend_repr().split("\n") if self.extend_repr() else []
        children = [f"({n}): " + repr(c).replace("\n", "\n  ") for n, c in self._cells.items()]
        text = f"{type(self).__name__}("
        if len(extra) == 1 and not children:
            text += extra[0]
        elif extra or children:
            text += "\n  " + "\n  ".join(extra + children) + "\n"
        return text + ")"


# ---------------------------------------------------------------------------------- GraphCell

@runtime_checkable
class LoadedGraph(Protocol):
    """What ``mindspore.load`` returns (``train.mindir.MindIRGraph``), as GraphCell uses it: its
    parameters (name -> array) and ``run(args, params)``, which applies the graph's ops."""

    name: str
    parameters: dict

    def run(self, args: Sequence[Any], params: dict) -> Any: ...


class GraphCell(Cell):
    """``mindspore.nn.GraphCell``: a graph loaded from a MindIR file (``mindspore.load``) as a Cell.

    Its parameters are the file's, under the network's parameter names, so ``params_init`` (a dict
    name -> Parameter or Tensor) and ``load_param_into_net`` replace their values. As in MindSpore, a
    GraphCell always runs as one GRAPH_MODE graph, whatever the context's mode.
    """

    def __init__(self, graph: Any, params_init: dict | None = None, obf_random_seed: int | None = None):
        super().__init__()
        if not isinstance(graph, LoadedGraph):
            raise TypeError(f"For 'GraphCell', the argument 'graph' must be a FuncGraph loaded from MindIR, but got "
                            f"type {type(graph)}.")
        if obf_random_seed is not None:
            raise FeatureNotSupportedError("GraphCell: obf_random_seed (dynamically obfuscated MindIR) is not "
                                           "supported by the emulator")
        params_init = {} if params_init is None else params_init
        if not isinstance(params_init, dict):
            raise InvalidTypeError(f"For 'GraphCell', the argument 'params_init' must be a dict, but got "
                                   f"{type(params_init)}.")
        for name, value in params_init.items():
            if not isinstance(name, str) or not isinstance(value, Tensor):
                raise InvalidTypeError("For 'GraphCell', the key of the 'params_init' must be str, and the value must "
                                       f"be Tensor or Parameter, but got the key type: {type(name)}, and the value "
                                       f"type: {type(value)}")
        object.__setattr__(self, "graph", graph)
        for name, array in graph.parameters.items():
            self._params[name] = Parameter(Tensor(array), name=name)
        for name, value in params_init.items():
            if name in self._params:       # a name the graph does not have is ignored (MindSpore's docs)
                self._params[name].set_data(value)

    def construct(self, *inputs: Any) -> Any:
        return self.graph.run(inputs, self._params)

    def __call__(self, *args: Any) -> Any:
        if current_tracer() is not None:
            return super().__call__(*args)
        return run_graph(self._run_construct, args, type(self).__name__, self._jit_level(), owner=self)
