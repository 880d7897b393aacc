"""The per-rank graph compile cache: ``<root>/rank_<N>/graph_cache/<cache name>.json``.

Like MindSpore's compilation cache, the second run of a script skips graph compilation. An entry is
a CompiledGraph's JSON (structure only, never weights) plus ``hmacSha256``, the MAC of this user's
cache key over it (``ascendemu.cache.auth``); it is named by the graph's structure hash and the compile
options and written atomically. The executor trusts a compiled graph for memory addresses and launch
order, so an entry is used only when it is authentic *and* :func:`check_compiled` finds it safe to run;
anything else (unreadable, foreign, inconsistent) is removed with a GraphCacheWarning naming the file
and the reason, and the graph is recompiled. Files are read as the kernel cache reads its own: lstat
first, O_NOFOLLOW|O_NONBLOCK, a regular file of this user, at most MAX_ENTRY_BYTES. Something that is
not a file where an entry goes (a directory, say) is moved aside under a hidden name, so the entry can
be written again; an entry that cannot be written (a full disk) is a warning: the graph runs uncached.
"""
from __future__ import annotations

import json
import os
import stat
import time
import warnings
from pathlib import Path

from ascendemu.cache.atomic import write_atomic
from ascendemu.cache.auth import MAC_FIELD, load_key
from ascendemu.cache.layout import (CacheSecurityError, make_private_dir, rank_dir, read_private, resolve_rank,
                                    resolve_root)
from ascendemu.errors import AclError, InvalidParamError
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.registry import communication

from .memory_plan import ALIGN
from .plan import JIT_LEVELS, CompiledGraph
from .schedule import RunCollective, RecordAfter, Run, Wait

GRAPH_CACHE = "graph_cache"
# Largest entry read: the compiled JSON of a large network is a few MiB.
MAX_ENTRY_BYTES = 64 << 20
# What a malformed entry can raise while it is parsed and checked (besides AclError).
MALFORMED = (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError)


class GraphCacheWarning(UserWarning):
    """A graph cache entry was unreadable, foreign or unsafe to run; it was removed and the graph recompiled."""


class GraphCache:
    """Compiled graphs for one rank, signed and checked with this user's cache key (read once here)."""

    def __init__(self, root: str | os.PathLike | None = None, rank: int | None = None):
        self.directory: Path = rank_dir(resolve_root(root), resolve_rank(rank)) / GRAPH_CACHE
        self.key = load_key()
        self.hits = 0
        self.misses = 0

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    def load(self, name: str) -> CompiledGraph | None:
        """The checked entry ``name``, or None (a miss; a bad entry is removed with a warning)."""
        if self.directory.is_symlink():
            raise CacheSecurityError(f"{self.directory} is a symbolic link; the graph cache reads and writes only "
                                     f"real directories: remove the link")
        path = self.path(name)
        try:
            data, _ = read_private(path, MAX_ENTRY_BYTES)
            doc = json.loads(data)
            if not isinstance(doc, dict):
                raise InvalidParamError(f"it holds a {type(doc).__name__}, not an object")
            problem = self.key.check(doc.get(MAC_FIELD), self.key.graph_mac(name, doc), path.name)
            if problem:
                raise InvalidParamError(problem)
            compiled = CompiledGraph.from_json(doc)
            check_compiled(compiled, name)
        except FileNotFoundError:
            self.misses += 1
            return None
        except (AclError, OSError, *MALFORMED) as e:     # OSError: e.g. no permission to read it
            reason = e.message if isinstance(e, AclError) else f"{type(e).__name__}: {e}"
            warnings.warn(GraphCacheWarning(f"graph cache entry {path} is unreadable or unsafe to use "
                                            f"({reason[:400]}); {_discard(path)}, recompiling the graph"),
                          stacklevel=2)
            self.misses += 1
            return None
        self.hits += 1
        return compiled

    def store(self, compiled: CompiledGraph) -> Path | None:
        """Write ``compiled`` as its entry; the path, or None (with a GraphCacheWarning) when it could not
        be written: the cache only saves compile time, so a run never fails for it."""
        self.directory.parent.mkdir(parents=True, exist_ok=True)
        make_private_dir(self.directory)
        name = compiled.cache_name
        doc = json.loads(json.dumps(compiled.to_json()))     # as a reader will parse it: the MAC covers that
        doc[MAC_FIELD] = self.key.graph_mac(name, doc)
        path = self.path(name)
        try:
            write_atomic(path, json.dumps(doc, sort_keys=True).encode())
        except OSError as exc:      # a directory planted since the load, no space left, ...
            warnings.warn(GraphCacheWarning(f"cannot write graph cache entry {path} ({exc.strerror or exc}); "
                                            f"the graph runs uncached"), stacklevel=2)
            return None
        return path


def _discard(path: Path) -> str:
    """Remove a bad entry and say what became of it: a file (or symlink, FIFO, ...) is unlinked; a
    directory is renamed to a hidden ``.<name>.<ns>.bad`` next to it (its contents are not ours to
    delete), so the entry can be written again."""
    try:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(path)
            return "removed"
        aside = path.with_name(f".{path.name}.{time.time_ns()}.bad")
        os.rename(path, aside)
        return f"the directory in its place moved to {aside}"
    except FileNotFoundError:
        return "removed"
    except OSError as exc:
        return f"could not be removed ({exc.strerror or exc})"


def check_compiled(c: CompiledGraph, name: str) -> None:
    """Raise InvalidParamError unless executing ``c`` (cache entry ``name``) is safe and computes the
    graph: it is the entry the name promises; every value has a shape; every kernel reads only values
    that exist when it runs (graph inputs, constants, outputs of earlier kernels: so every value the
    graph needs has a kernel) with the input descs of its signature, and writes what its signature
    infers; the schedule runs the kernels in order and orders each data edge between streams by an
    event recorded before it is waited for; the static memory plan gives every kernel output room in
    the workspace and never lets two values that may be alive together share bytes; the dynamic plan
    frees a value only after its last reader. This re-derives facts; it never recompiles.
    """
    def fail(why: str) -> None:
        raise InvalidParamError(why)

    if c.cache_name != name:
        fail(f"it holds the entry {c.cache_name}")
    if c.jit_level not in JIT_LEVELS or c.memory != ("static" if c.jit_level == "O2" else "dynamic"):
        fail(f"jit level {c.jit_level!r} with {c.memory!r} memory is no plan this compiler makes")
    limit = c.max_streams + any(communication(k.signature.op) is not None for k in c.kernels)   # + comm stream
    if not 1 <= c.num_streams <= limit:
        fail(f"it uses {c.num_streams} streams, allowed 1..{limit}")
    shaped = set(c.values)
    ends = [*c.outputs, *c.updates.values()]      # read after the graph has run
    named = [*c.inputs, *c.constants, *c.aliases, *c.aliases.values(), *ends, *c.updates, *c.view_offsets]
    unknown = [v for v in named + [v for k in c.kernels for v in (*k.inputs, *k.outputs)] if v not in shaped]
    if unknown:
        fail(f"values {sorted(set(map(str, unknown)))[:5]} have no shape")
    if any(r in c.aliases for r in c.aliases.values()):
        fail("an alias points at another alias")
    for param, value in c.updates.items():
        if param not in c.constants or c.values[c.root(value)].nbytes != c.values[param].nbytes:
            fail(f"update of value {param} by value {value} is not a parameter update of the same size")

    if any(v not in c.aliases for v in c.view_offsets):
        fail("a value has an offset in no block")
    # Data flow: bit i of users[v] = kernel i writes or reads root value v; writers[v]: the kernels writing it
    # (one, or the writers of a contiguous block's parts).
    defined = set(c.inputs) | set(c.constants)
    writers: dict[int, list[int]] = {}
    parts: dict[int, list[tuple[int, int]]] = {}   # block -> (start, end) of the parts written so far
    users: dict[int, int] = {}
    position: dict[int, int] = {}
    in_place: list[tuple[int, int]] = []           # (kernel, parameter it writes in place)
    for i, k in enumerate(c.kernels):
        if k.node_id in position:
            fail(f"node {k.node_id} has two kernels")
        position[k.node_id] = i
        for v in k.inputs:
            if c.root(v) not in defined:
                fail(f"kernel {k.full_name} reads value {v}, which no earlier kernel computes")
            users[c.root(v)] = users.get(c.root(v), 0) | 1 << i
        if k.signature.inputs != tuple(c.values[v] for v in k.inputs):
            fail(f"kernel {k.full_name}'s signature does not match the shapes of the values it reads")
        if infer_outputs(k.signature) != tuple(c.values[v] for v in k.outputs):
            fail(f"kernel {k.full_name} writes values whose shapes are not what its signature infers")
        for v in k.outputs:
            if v in c.aliases and c.updates.get(c.aliases[v]) == v:     # an update written in place
                in_place.append((i, c.aliases[v]))
                users[c.aliases[v]] = users.get(c.aliases[v], 0) | 1 << i
                continue
            if v in defined:
                fail(f"value {v} is defined twice (kernel {k.full_name})")
            if v in c.view_offsets:                                     # a part of a contiguous block
                r, start = c.aliases[v], c.view_offsets[v]
                end = start + c.values[v].nbytes
                if (r in c.inputs or r in c.constants or (r in writers and r not in parts)
                        or not 0 <= start <= end <= c.values[r].nbytes) or any(
                        s < end and start < e for s, e in parts.get(r, ())):
                    fail(f"kernel {k.full_name} writes value {v} outside block {r} or over another part")
                parts.setdefault(r, []).append((start, end))
                defined |= {v, r}
                writers.setdefault(r, []).append(i)
                users[r] = users.get(r, 0) | 1 << i
                continue
            if v in c.aliases:
                fail(f"value {v} is defined twice (kernel {k.full_name})")
            defined.add(v)
            writers[v], users[v] = [i], 1 << i
    for v in ends:
        if c.root(v) not in defined:
            fail(f"graph output {v} is computed by no kernel")

    # Happens-before as the schedule guarantees it: bit j of before[i] = kernel j finished before kernel i starts.
    if [s.node for s in c.schedule if isinstance(s, Run)] != [k.node_id for k in c.kernels]:
        fail("the schedule does not run the kernels once each, in order")
    before = [0] * len(c.kernels)
    on_stream: dict[int, int] = {}
    recorded: dict[int, int] = {}
    for step in c.schedule:
        if not (isinstance(step.stream, int) and 0 <= step.stream < c.num_streams):
            fail(f"schedule step {step.to_json()} names no stream of the plan")
        done = on_stream.get(step.stream, 0)
        if isinstance(step, Run):
            i = position[step.node]
            if c.kernels[i].stream != step.stream:
                fail(f"kernel {c.kernels[i].full_name} runs on stream {step.stream}, its task names "
                     f"stream {c.kernels[i].stream}")
            if isinstance(step, RunCollective) != (communication(c.kernels[i].signature.op) is not None):
                fail(f"{c.kernels[i].full_name} ({c.kernels[i].signature.op}) is scheduled as a {step.kind} step")
            before[i], on_stream[step.stream] = done, done | 1 << i
        elif not (isinstance(step.event, int) and 0 <= step.event < len(c.events)):
            fail(f"schedule step {step.to_json()} names no event of the plan")
        elif isinstance(step, RecordAfter):
            recorded[step.event] = done
        elif isinstance(step, Wait):
            if step.event not in recorded:
                fail(f"stream {step.stream} waits for event {step.event} before anything records it")
            on_stream[step.stream] = done | recorded[step.event]
    for i, k in enumerate(c.kernels):
        for v in k.inputs:
            for p in writers.get(c.root(v), ()):
                if p != i and not before[i] >> p & 1:
                    fail(f"kernel {k.full_name} may start before kernel {c.kernels[p].full_name}, whose output it "
                         f"reads")

    for i, param in in_place:
        for j in range(len(c.kernels)):
            if j != i and users.get(param, 0) >> j & 1 and not (before[i] >> j & 1 or before[j] >> i & 1):
                fail(f"kernel {c.kernels[i].full_name} writes parameter value {param} in place while "
                     f"kernel {c.kernels[j].full_name} may still read it")

    to_end = {c.root(v) for v in ends}
    if c.memory == "static":
        _check_static(c, writers, users, before, to_end)
    else:
        _check_release(c, writers, users, position, to_end)


def _check_static(c: CompiledGraph, writers: dict[int, list[int]], users: dict[int, int], before: list[int],
                  to_end: set[int]) -> None:
    """Every kernel output has aligned room in the workspace; two values share bytes only when every
    user of one finishes before each writer of the other starts (static_plan's rule, under the schedule)."""
    if set(c.offsets) != set(writers):
        raise InvalidParamError(f"the memory plan places {len(c.offsets)} values, the kernels write {len(writers)}")
    size = {v: -(-max(c.values[v].nbytes, 1) // ALIGN) * ALIGN for v in writers}
    for v, offset in c.offsets.items():
        if not (isinstance(offset, int) and offset >= 0 and offset % ALIGN == 0
                and offset + size[v] <= c.workspace_size):
            raise InvalidParamError(f"value {v} at offset {offset} ({size[v]} bytes) is not inside the "
                                    f"{c.workspace_size}-byte workspace on a {ALIGN}-byte boundary")
    if c.workspace_size > sum(size.values()):
        raise InvalidParamError(f"workspace_size {c.workspace_size} exceeds all values together")

    def done_before(a: int, b: int) -> bool:
        return a not in to_end and all(users[a] & ~before[w] == 0 for w in writers[b])

    placed = sorted(writers, key=c.offsets.__getitem__)
    for i, a in enumerate(placed):
        end = c.offsets[a] + size[a]
        for b in placed[i + 1:]:
            if c.offsets[b] >= end:
                break
            if not (done_before(a, b) or done_before(b, a)):
                raise InvalidParamError(f"values {a} and {b} may be alive together but overlap in the "
                                        f"workspace (offsets {c.offsets[a]} and {c.offsets[b]})")


def _check_release(c: CompiledGraph, writers: dict[int, list[int]], users: dict[int, int],
                   position: dict[int, int], to_end: set[int]) -> None:
    """Each freed value is a kernel output or a graph input copy, freed once, never one the host still
    reads, and only after its last reader."""
    freed: set[int] = set()
    for node, values in c.release_after.items():
        if node not in position:
            raise InvalidParamError(f"the plan frees memory after node {node}, which has no kernel")
        for v in values:
            if v in freed or v in to_end or not (v in writers or v in c.inputs):
                raise InvalidParamError(f"the plan frees value {v} after node {node}, which it must not free there")
            if users.get(v, 0).bit_length() - 1 > position[node]:
                raise InvalidParamError(f"the plan frees value {v} after node {node}, before its last reader")
            freed.add(v)
