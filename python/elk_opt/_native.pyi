"""Type stubs of the Rust extension elk_opt._native (python/src/*.rs). Use the functions
and classes of `elk_opt` instead: these take dicts of the CLI's flags and return JSON."""

from typing import Any, Callable, Dict, List, Optional, Tuple

TOOL_VERSION: str
AUTO_OF_ONE_CHIP: str

class SolverError(RuntimeError):
    """A run failed: what the CLI exits 1 for."""

def models_json() -> str: ...
def chips_json() -> str: ...
def chip_json(
    given: str, hbm_tbps: Optional[float] = None, overrides: Optional[str] = None
) -> Tuple[str, List[str]]: ...
def check_model(name: str) -> Tuple[str, int, List[str]]: ...
def method_names() -> List[str]: ...
def build_instance(graph: Dict[str, Any], build: Dict[str, Any]) -> Tuple[NativeInstance, List[str]]: ...
def compare_reader_counts(
    keys_json: str,
    cache: bool,
    no_timings: bool = False,
    progress: Optional[Callable[[int, int, str], Any]] = None,
    bound: str = "roofline",
    layer_exact: Optional[float] = None,
    work_limit: Optional[int] = None,
) -> Tuple[str, str, NativeInstance, List[str]]: ...

def moe_json(
    choice: Dict[str, Any],
    progress: Optional[Callable[[int, int, str], Any]] = None,
    section: bool = False,
) -> Tuple[str, List[str]]: ...

def exact_worker() -> None:
    """The CLI's hidden `exact-worker`: one exact solve from stdin (the worker process of
    `gap` and `solve(exact=True)`, run as `python -c ...`)."""

def backends() -> List[Tuple[str, str, Optional[str]]]: ...

def study_json(
    name: str, output: str, progress: Optional[Callable[[int, int, str], Any]] = None
) -> str: ...

def sweep_json(
    grid: str,
    output: str,
    is_toml: bool = False,
    shard: Optional[str] = None,
    progress: Optional[Callable[[int, int, str], Any]] = None,
) -> Tuple[str, str, List[str]]: ...

class NativeInstance:
    @property
    def name(self) -> str: ...
    @property
    def operators(self) -> int: ...
    @property
    def build_s(self) -> float: ...
    def ms(self, cycles: float) -> float: ...
    def compare(
        self,
        no_timings: bool = False,
        progress: Optional[Callable[[int, int, str], Any]] = None,
        segment: bool = False,
        layer_exact: Optional[float] = None,
        python: Optional[str] = None,
        without: Optional[NativeInstance] = None,
        work_limit: Optional[int] = None,
    ) -> str: ...
    def gap(
        self,
        choice: Dict[str, Any],
        no_timings: bool = False,
        progress: Optional[Callable[[int, int, str], Any]] = None,
        without: Optional[NativeInstance] = None,
    ) -> Tuple[str, Optional[NativeSchedule]]: ...
    def solve_exact(
        self,
        choice: Dict[str, Any],
        no_timings: bool = False,
        progress: Optional[Callable[[int, int, str], Any]] = None,
        without: Optional[NativeInstance] = None,
    ) -> Tuple[str, Optional[NativeSchedule]]: ...
    def solve(
        self, method: str, no_timings: bool = False, without: Optional[NativeInstance] = None
    ) -> Tuple[str, Optional[NativeSchedule]]: ...
    def to_json(self) -> str: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> NativeInstance: ...

class NativeSchedule:
    @property
    def method(self) -> str: ...
    def to_json(self, inst: NativeInstance) -> str: ...
    def save(self, path: str, inst: NativeInstance) -> None: ...
    @staticmethod
    def load(path: str) -> NativeSchedule: ...
    def simulate(self, inst: NativeInstance) -> str: ...
    def simulate_detailed(self, inst: NativeInstance) -> str: ...
    def trace(self, path: str, inst: NativeInstance) -> None: ...
