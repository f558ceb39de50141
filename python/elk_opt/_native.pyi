"""Type stubs of the Rust extension elk_opt._native (python/src/*.rs). Use the functions
and classes of `elk_opt` instead: these take the keywords as JSON (the `*Keys` objects of
elk_app::request::keys) and return the CLI's `--json` as JSON text.

Kept in line with the Rust by python/tests/test_stubs.py: every name, parameter and default
here is the `#[pyfunction]`'s, `#[pymethods]`' and `#[pyo3(signature = ...)]`'s."""

import os
from typing import Any, Callable, List, Optional, Tuple, Union, final

# A path argument (a Rust `PathBuf`): a str or an os.PathLike.
_Path = Union[str, "os.PathLike[str]"]
# `progress(done, total, what)`, called with the GIL re-acquired; what it returns, or raises,
# is ignored.
_Progress = Optional[Callable[[int, int, str], Any]]

TOOL_VERSION: str
AUTO_OF_ONE_CHIP: str

class SolverError(RuntimeError):
    """A run failed (a solver backend, an I/O error, a method that broke its contract): what
    the CLI exits 1 for."""

def models_json() -> str: ...
def chips_json() -> str: ...
def chip_json(keys_json: str) -> Tuple[str, List[str]]:
    """The chip (`ChipKeys` as JSON) as `chips show --json` prints it, and its warnings."""

def check_model(keys_json: str) -> Tuple[str, Optional[int], List[str]]:
    """A model's name and layer count (`None` for an import) from `ModelKeys` as JSON, and
    its warnings."""

def request_defaults() -> str:
    """Every keyword default (the instance's, the exact solver's and `moe`'s) as JSON."""

def model_kind(path: _Path) -> str:
    """`model`, `import` or `onnx`: what kind of model the file holds."""

def method_names() -> List[str]: ...
def build_instance(keys_json: str, cache: bool) -> Tuple[NativeInstance, List[str]]: ...
def compare_reader_counts(
    keys_json: str,
    cache: bool,
    no_timings: bool = False,
    progress: _Progress = None,
    bound: str = "stage",
    layer_exact: Optional[float] = None,
    work_limit: Optional[int] = None,
) -> Tuple[str, str, NativeInstance, List[str]]:
    """`compare --dram-readers auto --json`: results and config as JSON, the fastest count's
    instance, every count's warnings (each once); `progress` runs over every count's rows."""

def moe_json(
    keys_json: str, progress: _Progress = None, cache: bool = True
) -> Tuple[str, str, List[str]]:
    """`moe --json`'s results and config as JSON (`MoeKeys` as JSON), and the warnings."""

def check_compare_moe(keys_json: str) -> None:
    """Checks `compare(routing=...)`'s MoE part (`CompareMoeKeys` as JSON) before any work."""

def moe_section_json(
    keys_json: str, progress: _Progress = None, cache: bool = True
) -> Tuple[str, List[str]]:
    """`compare --routing`'s `moe` section as JSON, and the warnings."""

def exact_worker() -> None:
    """The CLI's hidden `exact-worker`: one exact solve from stdin (the worker process of
    `gap` and `solve(exact=True)`, run as `python -c ...`)."""

def backends() -> List[Tuple[str, str, Optional[str]]]: ...
def study_json(name: str, output: _Path, progress: _Progress = None) -> str: ...
def sweep_json(
    grid: str,
    output: Optional[_Path] = None,
    shard: Optional[str] = None,
    progress: _Progress = None,
) -> Tuple[str, str, str, List[str], Optional[str]]:
    """`sweep --json`'s results and config, every cell's line (JSON), the chips' warnings,
    and why the run failed when cells failed (`None`: none did)."""

@final
class NativeInstance:
    @property
    def name(self) -> str: ...
    @property
    def operators(self) -> int: ...
    @property
    def config(self) -> str: ...
    @property
    def build_s(self) -> float: ...
    def ms(self, cycles: float) -> float: ...
    def compare(
        self,
        no_timings: bool = False,
        progress: _Progress = None,
        bound: str = "stage",
        layer_exact: Optional[float] = None,
        python: Optional[_Path] = None,
        without: Optional[NativeInstance] = None,
        work_limit: Optional[int] = None,
    ) -> Tuple[str, str]:
        """`compare --json`'s results (without `moe`) and config, as JSON."""
    def gap(
        self,
        exact_keys: str,
        python: _Path,
        no_timings: bool = False,
        progress: _Progress = None,
        without: Optional[NativeInstance] = None,
    ) -> Tuple[str, Optional[NativeSchedule], str]:
        """`gap --json`'s results, the last row's schedule, and the config as JSON."""
    def solve_exact(
        self,
        exact_keys: str,
        python: _Path,
        no_timings: bool = False,
        progress: _Progress = None,
        without: Optional[NativeInstance] = None,
    ) -> Tuple[str, Optional[NativeSchedule], str]:
        """`solve --exact --json`'s results, the schedule found, and the config as JSON."""
    def solve(
        self, method: str, no_timings: bool = False, without: Optional[NativeInstance] = None
    ) -> Tuple[str, Optional[NativeSchedule], str]:
        """`solve --method M --json`'s row, its schedule, and the config as JSON."""
    def to_json(self) -> str: ...
    def save(self, path: _Path) -> None: ...
    @staticmethod
    def load(path: _Path) -> NativeInstance: ...

@final
class NativeSchedule:
    @property
    def method(self) -> str: ...
    def to_json(self, inst: NativeInstance) -> str: ...
    def save(self, path: _Path, inst: NativeInstance) -> None: ...
    @staticmethod
    def load(path: _Path) -> NativeSchedule: ...
    def simulate(self, inst: NativeInstance) -> str: ...
    def simulate_detailed(self, inst: NativeInstance) -> str: ...
    def trace(self, path: _Path, inst: NativeInstance) -> None: ...
