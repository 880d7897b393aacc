"""The per-rank graph compile cache: ``<root>/rank_<N>/graph_cache/<cache name>.json``.

Like MindSpore's compilation cache, the second run of a script skips graph compilation. An entry is
a CompiledGraph's JSON (structure only, never weights); it is named by the graph's structure hash and
the compile options, written atomically, and a corrupt entry is dropped with a warning and rebuilt.
The JSON holds no code, so it needs none of the kernel cache's ownership checks.
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from ascendemu.cache.atomic import write_atomic
from ascendemu.cache.layout import make_private_dir, rank_dir, resolve_rank, resolve_root
from ascendemu.errors import AclError

from .plan import CompiledGraph

GRAPH_CACHE = "graph_cache"


class GraphCacheWarning(UserWarning):
    """A graph cache entry could not be read; it was removed and the graph recompiled."""


class GraphCache:
    def __init__(self, root: str | os.PathLike | None = None, rank: int | None = None):
        self.directory: Path = rank_dir(resolve_root(root), resolve_rank(rank)) / GRAPH_CACHE
        self.hits = 0
        self.misses = 0

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    def load(self, name: str) -> CompiledGraph | None:
        path = self.path(name)
        try:
            data = json.loads(path.read_bytes())
            compiled = CompiledGraph.from_json(data)
        except FileNotFoundError:
            self.misses += 1
            return None
        except (ValueError, KeyError, TypeError, AclError) as e:
            warnings.warn(GraphCacheWarning(f"graph cache entry {path} is unreadable or from another "
                                            f"version ({e}); recompiling"), stacklevel=2)
            path.unlink(missing_ok=True)
            self.misses += 1
            return None
        self.hits += 1
        return compiled

    def store(self, compiled: CompiledGraph) -> Path:
        self.directory.parent.mkdir(parents=True, exist_ok=True)
        make_private_dir(self.directory)
        path = self.path(compiled.cache_name)
        write_atomic(path, json.dumps(compiled.to_json(), sort_keys=True).encode())
        return path
