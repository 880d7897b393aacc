"""The pytest plugin: hardware-free tests on the emulated device (``pytest11`` entry point ``ascendemu``).

Installed with the package, so pytest loads it in every session (``-p ascendemu`` loads it where
plugin autoloading is off, ``-p no:ascendemu`` keeps it out). Loading it only adds options, fixtures
and a marker: ascendemu itself is imported when a test first asks for the device.

Options:

* ``--ascendemu-device PRESET``: the device preset of every node the fixtures create (default: the
  default preset, Ascend910A; ``ascendemu info`` lists them);
* ``--ascendemu-cache DIR``: one kernel cache for every xdist worker and every session (kept between
  runs, e.g. restored by CI). Without it each worker builds into a private cache in its own temporary
  directory, so no worker waits on another's build locks and a test never sees kernels another
  worker built;
* ``--ascendemu-mindspore``: ``import mindspore`` in the tests loads the emulator's front end, as it
  does under ``ascendemu run``, so a MindSpore test suite runs unchanged.

Fixtures: ``ascendemu_preset`` and ``ascendemu_kernel_cache`` (session); ``ascendemu_runtime``, the
process-wide ACL runtime on a fresh node with device 0 set; ``ascendemu_device``, a DeviceExecutor on a
fresh node, installed as the front end's backend, with the front end's process-wide settings (context,
seeds, auto-parallel, communication) reset before and after (``ascendemu.frontend.state.reset``). A
test marked ``@pytest.mark.ascendemu`` gets ``ascendemu_device`` without naming it; the marker's
keywords (``device``, ``dry_run``, ``strict``, ``trace``, ``jit_level``, ``exec_order``) configure its node.
Each test's node is finalised after it, so tests never see each other's memory, streams or clocks.
:func:`fresh_runtime` and :func:`emulated_device` are the same as context managers, for fixtures of
other scopes.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

if TYPE_CHECKING:
    from ascendemu.graph.executor import DeviceExecutor
    from ascendemu.hal.runtime import Runtime

__all__ = ["MARKER", "emulated_device", "fresh_runtime"]

MARKER = "ascendemu"
MARKER_OPTIONS = ("device", "dry_run", "strict", "trace", "jit_level", "exec_order")


@contextlib.contextmanager
def fresh_runtime() -> Iterator[Runtime]:
    """The process-wide runtime with no node, finalised before (whatever ran earlier left) and after."""
    from ascendemu.hal.runtime import get_runtime

    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    try:
        yield rt
    finally:
        if rt.node is not None:
            rt.finalize()


@contextlib.contextmanager
def emulated_device(cache_root: str | os.PathLike, *, device: str | None = None, strict: bool = False,
                    trace: bool = False, dry_run: bool = False, **options: Any) -> Iterator[DeviceExecutor]:
    """A DeviceExecutor on a fresh node of preset ``device`` (``strict``: races raise, ``trace``: a Chrome
    trace, ``dry_run``: DryRun), the front end's backend while inside, kernels from ``cache_root``;
    ``options`` go to the executor (``jit_level``, ``exec_order``). The front end's settings are reset
    on entry and exit; the previous backend is put back and the node finalised."""
    from ascendemu.frontend import state
    from ascendemu.frontend.backend import set_backend
    from ascendemu.graph.executor import DeviceExecutor

    with fresh_runtime() as rt:
        state.reset()
        rt.init(spec=device, strict=strict, trace=trace, backing=not dry_run)
        executor = DeviceExecutor(cache_root=str(cache_root), progress=False, dry_run=dry_run, device=device,
                                  **options)
        previous = set_backend(executor)
        try:
            yield executor
        finally:
            set_backend(previous)
            state.reset()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ascendemu", "tests on the emulated Ascend device (ascendemu)")
    group.addoption("--ascendemu-device", metavar="PRESET", default=None,
                    help="device preset of the nodes the ascendemu fixtures create (default Ascend910A; "
                         "`ascendemu info` lists them)")
    group.addoption("--ascendemu-cache", metavar="DIR", default=None,
                    help="one kernel cache shared by every worker and kept between sessions (default: a private "
                         "cache per xdist worker in its temporary directory)")
    group.addoption("--ascendemu-mindspore", action="store_true", default=False,
                    help="serve `import mindspore` from ascendemu's front end, as `ascendemu run` does")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}({', '.join(f'{o}=...' for o in MARKER_OPTIONS)}): the test runs on a fresh emulated "
                   "device, the front end's backend (the ascendemu_device fixture)")
    preset = config.getoption("ascendemu_device")
    if preset is not None:
        from ascendemu.device.spec import PRESETS
        if preset not in PRESETS:
            raise pytest.UsageError(f"--ascendemu-device {preset}: unknown device preset; choose one of "
                                    f"{', '.join(PRESETS)}")
    if config.getoption("ascendemu_mindspore"):
        from ascendemu.cli.run import install_mindspore_alias
        install_mindspore_alias()


@pytest.fixture(scope="session")
def ascendemu_preset(pytestconfig: pytest.Config) -> str:
    """The device preset of this session's nodes (``--ascendemu-device``)."""
    from ascendemu.device.spec import get_spec
    return pytestconfig.getoption("ascendemu_device") or get_spec().name


@pytest.fixture(scope="session")
def ascendemu_kernel_cache(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kernel cache root (kernels live in ``<root>/rank_N/kernel_meta``): ``--ascendemu-cache``, else a
    private one per xdist worker."""
    shared = pytestconfig.getoption("ascendemu_cache")
    if shared:
        root = Path(shared).expanduser().absolute()
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        return root
    return tmp_path_factory.mktemp(f"ascendemu-kernel-cache-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}")


@pytest.fixture
def ascendemu_runtime(ascendemu_preset: str) -> Iterator[Runtime]:
    """The process-wide ACL runtime on a fresh node of the session's preset, device 0 set."""
    with fresh_runtime() as rt:
        rt.init(spec=ascendemu_preset)
        rt.set_device(0)
        yield rt


@pytest.fixture
def ascendemu_device(request: pytest.FixtureRequest, ascendemu_preset: str,
                     ascendemu_kernel_cache: Path) -> Iterator[DeviceExecutor]:
    """A DeviceExecutor on a fresh node, the front end's backend, front end settings reset (see the module)."""
    marker = request.node.get_closest_marker(MARKER)
    options = dict(marker.kwargs) if marker is not None else {}
    unknown = sorted(set(options) - set(MARKER_OPTIONS))
    if unknown or (marker is not None and marker.args):
        pytest.fail(f"@pytest.mark.{MARKER}: unknown option(s) {unknown or list(marker.args)}; it takes the keywords "
                    f"{', '.join(MARKER_OPTIONS)}", pytrace=False)
    options.setdefault("device", ascendemu_preset)
    with emulated_device(ascendemu_kernel_cache, **options) as executor:
        yield executor


@pytest.fixture(autouse=True)
def _ascendemu_marked(request: pytest.FixtureRequest) -> None:
    """A test marked ``@pytest.mark.ascendemu`` gets the ``ascendemu_device`` fixture."""
    if request.node.get_closest_marker(MARKER) is not None:
        request.getfixturevalue("ascendemu_device")
