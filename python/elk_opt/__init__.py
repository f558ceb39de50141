"""elk-opt from Python: the CLI's commands as functions, results as dicts and DataFrames.

The computations are the Rust library crates the ``elk-opt`` binary calls (no subprocess),
with the CLI's defaults (batch 32, KV 2048, decode, chip ipu-pod4, load order free, the
phased NoC row, the plan cache), its errors (bad input raises ``ValueError`` with the CLI's
one-line message, a failed run raises :class:`SolverError`) and its determinism.

>>> import elk_opt
>>> r = elk_opt.compare("llama2-7b", num_layers=1)          # elk-opt compare --json
>>> r.df[["method", "makespan_ms", "gap_le_pct"]]            # doctest: +SKIP
>>> s = elk_opt.solve("llama2-7b", method="elk-full", num_layers=1)
>>> s.save("s.json", instance_path="i.json")                 # solve -o / --emit-instance

See docs/python.md for every function and the CLI command it maps to.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Union

from . import _native
from ._native import SolverError

__all__ = [
    "SolverError",
    "Model",
    "Chip",
    "Instance",
    "Schedule",
    "CompareResult",
    "models",
    "chips",
    "methods",
    "backends",
    "instance",
    "compare",
    "solve",
    "moe",
    "MoeResult",
    "sweep",
    "SweepResult",
    "gap",
    "GapResult",
    "study",
    "StudyResult",
    "__version__",
    "DEFAULTS",
]

__version__: str = _native.TOOL_VERSION

#: The CLI's defaults, the same in every function.
DEFAULTS: Dict[str, Any] = {
    "model": "llama2-13b",
    "chip": "ipu-pod4",
    "mode": "decode",
    "batch": 32,
    "kv": 2048,
    "load_order": "free",
    "noc_row": "phased",
}

Progress = Union[bool, Callable[[int, int, str], Any], None]


def _warn(lines: Iterable[str]) -> None:
    """The warnings the CLI prints on stderr, as Python warnings."""
    for line in lines:
        warnings.warn(line, stacklevel=3)


def _pandas() -> Any:
    import pandas  # type: ignore[import-untyped]  # imported late: `import elk_opt` stays quick

    return pandas


def models() -> Any:
    """The zoo, as ``elk-opt models list --json``: one row per model (a DataFrame).

    An MoE model's ``experts`` object becomes two columns, ``experts`` and
    ``experts_per_token`` (empty for dense models).
    """
    rows = json.loads(_native.models_json())
    flat = []
    for r in rows:
        r = dict(r)
        e = r.pop("experts", None) or {}
        r["experts"] = e.get("experts")
        r["experts_per_token"] = e.get("experts_per_token")
        flat.append(r)
    return _pandas().DataFrame(flat)


def chips() -> Any:
    """The chip presets, as ``elk-opt chips list --json``: one row per chip (a DataFrame);
    nested keys are joined with dots (``hbm.bandwidth_bytes_per_s``)."""
    return _pandas().json_normalize(json.loads(_native.chips_json()))


def methods() -> List[str]:
    """Every method :func:`solve` accepts (``solve --method``): the heuristics, ``ideal``,
    then each heuristic re-timed (``NAME+retime``)."""
    return list(_native.method_names())


def backends() -> Dict[str, Dict[str, Any]]:
    """The exact backends (``gap``'s and ``solve(exact=True)``'s ``backend``) and whether this
    build has them: ``{"milp": {"solver": "HiGHS", "available": True, "missing": None},
    "smt": {"solver": "z3", "available": False, "missing": "not in this build: …"}}``.

    The wheel (``make wheel``) leaves z3 out so that it installs without libz3: ``smt`` is
    then refused with the ``missing`` reason, and the CLI (which has both) runs it."""
    return {
        name: {"solver": solver, "available": missing is None, "missing": missing}
        for name, solver, missing in _native.backends()
    }


class Model:
    """A model: a zoo name, a model file (TOML), a Hugging Face config.json (``--model``),
    a graph in the reference JSON format (``--import``) or an ONNX file (``--onnx``).

    ``Model("llama2-7b")`` is a zoo model or model file; :meth:`from_file` tells the kinds
    of file apart. ``num_layers``, ``dtype`` (zoo models) and ``compat`` (imports) are the
    CLI's ``--num-layers``, ``--dtype`` and ``--compat``.
    """

    def __init__(
        self,
        name: str = DEFAULTS["model"],
        *,
        num_layers: Optional[int] = None,
        dtype: Optional[str] = None,
        kind: str = "model",
        compat: Optional[str] = None,
    ) -> None:
        self.kind = kind
        self.source = os.fspath(name)
        self.num_layers = num_layers
        self.dtype = dtype
        self.compat = compat
        if kind == "model":
            canonical, layers, warns = _native.check_model(self.source)
            _warn(warns)
            self.name: str = canonical
            self.layers: Optional[int] = layers
        elif kind in ("import", "onnx"):
            if not os.path.exists(self.source):
                raise ValueError(f"{self.source}: cannot read: No such file or directory (os error 2)")
            self.name = os.path.basename(self.source)
            self.layers = None
        else:
            raise ValueError(f"model kind '{kind}': one of model, import, onnx")

    @classmethod
    def from_file(
        cls,
        path: Union[str, "os.PathLike[str]"],
        *,
        num_layers: Optional[int] = None,
        dtype: Optional[str] = None,
        compat: Optional[str] = None,
    ) -> "Model":
        """A model from a file: ``.toml`` (a model file) and a Hugging Face config.json
        (a JSON object with ``model_type`` or ``architectures``) as ``--model``, ``.onnx`` as
        ``--onnx``, any other JSON (the reference format) as ``--import``."""
        p = os.fspath(path)
        if p.endswith(".onnx"):
            return cls(p, kind="onnx", num_layers=num_layers)
        if p.endswith(".json"):
            try:
                with open(p, encoding="utf-8") as f:
                    head = json.load(f)
            except (OSError, ValueError):
                head = None
            if isinstance(head, dict) and ("model_type" in head or "architectures" in head):
                return cls(p, kind="model", num_layers=num_layers, dtype=dtype)
            return cls(p, kind="import", num_layers=num_layers, compat=compat)
        return cls(p, kind="model", num_layers=num_layers, dtype=dtype)

    def _choice(self, mode: str, batch: int, kv: int, num_layers: Optional[int]) -> Dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "mode": mode,
            "batch": int(batch),
            "kv": int(kv),
            "num_layers": num_layers if num_layers is not None else self.num_layers,
            "dtype": self.dtype,
            "compat": self.compat,
        }

    def __repr__(self) -> str:
        return f"Model({self.source!r}, kind={self.kind!r})"


class Chip:
    """A chip preset or chip TOML file (``--chip``), with ``hbm_tbps`` (``--hbm-tbps``) and
    any key of a chip file set by keyword (docs/chips.md): ``sram_bytes_per_core``,
    ``clock_hz``, ``link_bytes_per_s``, ``cost_model_sync_latency_cycles``, ``topology``, …
    A key is named by its last part (``link_bytes_per_s``), or with its table
    (``noc_link_bytes_per_s``, ``hbm_controllers``; ``**{"noc.link_bytes_per_s": …}``).
    The chip is read as its TOML file with those lines changed would be: a bad key or value
    raises ``ValueError`` naming it. ``spec`` is the chip as ``chips show --json`` prints
    it, overrides applied; its name gains them (``sn40l-like (hbm_controllers=8)``)."""

    def __init__(
        self,
        name_or_path: Union[str, "os.PathLike[str]"] = DEFAULTS["chip"],
        hbm_tbps: Optional[float] = None,
        **overrides: Any,
    ) -> None:
        self.given = os.fspath(name_or_path)
        self.hbm_tbps = None if hbm_tbps is None else float(hbm_tbps)
        #: The keys set, as given (a key set to None keeps the chip's value).
        self.overrides: Dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
        spec, warns = _native.chip_json(self.given, self.hbm_tbps, self._keys())
        _warn(warns)
        self.spec: Dict[str, Any] = json.loads(spec)
        self.name: str = self.spec["name"]

    def _keys(self) -> Optional[str]:
        """The overrides as the extension takes them: ``[[key, value], …]`` as JSON."""
        return json.dumps(list(self.overrides.items())) if self.overrides else None

    def _choice(self) -> Dict[str, Any]:
        return {"chip": self.given, "hbm_tbps": self.hbm_tbps, "overrides": self._keys()}

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.overrides.items())
        hbm = "" if self.hbm_tbps is None else f", hbm_tbps={self.hbm_tbps!r}"
        return f"Chip({self.given!r}{hbm}{extra})"


ModelLike = Union[Model, str, "os.PathLike[str]"]
ChipLike = Union[Chip, str, "os.PathLike[str]"]


def _model(m: ModelLike) -> Model:
    if isinstance(m, Model):
        return m
    p = os.fspath(m)
    if p.endswith((".json", ".onnx")):
        return Model.from_file(p)
    return Model(p)


def _chip(c: ChipLike, hbm_tbps: Optional[float]) -> Chip:
    if isinstance(c, Chip):
        if hbm_tbps is None or hbm_tbps == c.hbm_tbps:
            return c
        return Chip(c.given, hbm_tbps, **c.overrides)
    return Chip(c, hbm_tbps)


class Instance:
    """A stage-model instance (elk-instance/1): a graph's plans on a chip, what every
    method schedules. Build one with :func:`instance`, read one with :meth:`load`."""

    def __init__(self, native: Any, config: Dict[str, Any]) -> None:
        self._native = native
        #: The inputs as ``--json`` prints them in ``config``.
        self.config = config

    @property
    def name(self) -> str:
        """``llama2-13b decode b32 kv2048 on ipu-pod4``."""
        return str(self._native.name)

    @property
    def operators(self) -> int:
        return int(self._native.operators)

    @property
    def build_s(self) -> float:
        """Seconds spent building it (plan tables) or reading it."""
        return float(self._native.build_s)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the instance file (``instance -o FILE``, ``--emit-instance FILE``)."""
        self._native.save(os.fspath(path))

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Instance":
        """Reads an instance file (``--instance FILE``)."""
        p = os.fspath(path)
        return cls(_native.NativeInstance.load(p), {"instance": p})

    def compare(
        self,
        *,
        no_timings: bool = False,
        progress: Progress = None,
        bound: str = "roofline",
        layer_exact: Optional[float] = None,
        _without: Optional["Instance"] = None,
    ) -> "CompareResult":
        """Every method on this instance: :func:`compare`. ``_without`` (set by
        :func:`compare` with ``expert_parallel=True``): the same instance without parallel
        sets, whose union with this one is compared (docs/core-groups.md, CG-5)."""
        if bound not in ("roofline", "segment"):
            raise ValueError(f"bound '{bound}': one of roofline, segment")
        cb, close = _progress(progress, "methods")
        try:
            out = self._native.compare(
                no_timings,
                cb,
                bound == "segment",
                None if layer_exact is None else float(layer_exact),
                sys.executable,
                None if _without is None else _without._native,
            )
        finally:
            close()
        results = json.loads(out)
        config = dict(
            self.config,
            bound=bound,
            layer_exact_s=None if layer_exact is None else float(layer_exact),
            no_timings=no_timings,
        )
        return CompareResult(results, config, self)

    def gap(
        self,
        *,
        no_timings: bool = False,
        progress: Progress = None,
        _without: Optional["Instance"] = None,
        **exact_flags: Any,
    ) -> "GapResult":
        """Every heuristic's gap to the exact optimum or the certified bound: :func:`gap`
        (``exact_flags``: its ``backend``, ``time_limit``, …). ``_without``: as in
        :meth:`compare`, the union's other instance."""
        choice = _exact_choice(**exact_flags)
        cb, close = _progress(progress, "gap")
        try:
            results_json, native = self._native.gap(
                choice, no_timings, cb, None if _without is None else _without._native
            )
        finally:
            close()
        results = json.loads(results_json)
        config = dict(self.config, **_exact_config(choice, union=_without is not None), no_timings=no_timings)
        r = GapResult(results, config, self)
        if native is not None:
            r.schedule = Schedule(native, self._kept(results.get("union"), _without), r.to_dict()["rows"][-1])
        return r

    def _kept(self, union: Optional[Dict[str, Any]], without: Optional["Instance"]) -> "Instance":
        """The instance a union's kept schedule is of: this one (with parallel sets), or
        ``without`` when ``union["parallel_sets"]`` is false; this one outside a union."""
        if union is None or without is None or union["parallel_sets"]:
            return self
        return without

    def solve(
        self,
        method: Optional[str] = None,
        *,
        exact: bool = False,
        no_timings: bool = False,
        progress: Progress = None,
        _without: Optional["Instance"] = None,
        **exact_flags: Any,
    ) -> "Schedule":
        """One method on this instance, or the exact solver (``exact=True``): :func:`solve`.
        ``_without``: as in :meth:`compare`, the union's other instance."""
        if exact:
            if method is not None:
                raise ValueError("method with exact=True: the exact solver is the method (--method conflicts with --exact)")
            return self._solve_exact(no_timings=no_timings, progress=progress, _without=_without, **exact_flags)
        if exact_flags:
            raise ValueError(
                f"{', '.join(sorted(exact_flags))}: the exact solver's flags, only with exact=True"
            )
        method = method or "elk-full"
        if method == "ideal":
            raise ValueError("--method ideal gives a figure, not a schedule: use compare()")
        cb, close = _progress(progress, "solve")
        try:
            if cb is not None:
                cb(0, 1, method)
            row_json, native = self._native.solve(method, no_timings, None if _without is None else _without._native)
            if cb is not None:
                cb(1, 1, "")
        finally:
            close()
        row = json.loads(row_json)
        if native is None:
            why = row["notes"][-1] if row["notes"] else row["status"]
            raise SolverError(f"{row['method']} found no schedule for {self.name}: {why}")
        union = None if row.get("parallel_sets") is None else {"parallel_sets": row["parallel_sets"]}
        return Schedule(native, self._kept(union, _without), row)

    def _solve_exact(
        self,
        *,
        no_timings: bool = False,
        progress: Progress = None,
        _without: Optional["Instance"] = None,
        **exact_flags: Any,
    ) -> "Schedule":
        choice = _exact_choice(**exact_flags)
        cb, close = _progress(progress, "exact")
        try:
            summary_json, native = self._native.solve_exact(
                choice, no_timings, cb, None if _without is None else _without._native
            )
        finally:
            close()
        summary = json.loads(summary_json)
        if native is None:
            raise SolverError(
                f"exact {summary['backend']} found no schedule for {self.name}: {summary['ran']}"
            )
        s = Schedule(native, self._kept(summary.get("union"), _without), summary)
        s.config = dict(self.config, **_exact_config(choice, union=_without is not None), no_timings=no_timings)
        return s

    def __repr__(self) -> str:
        return f"Instance({self.name!r}, operators={self.operators})"


def instance(
    model: ModelLike = DEFAULTS["model"],
    chip: ChipLike = DEFAULTS["chip"],
    batch: int = DEFAULTS["batch"],
    kv: int = DEFAULTS["kv"],
    *,
    mode: str = DEFAULTS["mode"],
    num_layers: Optional[int] = None,
    hbm_tbps: Optional[float] = None,
    load_order: Union[str, int] = DEFAULTS["load_order"],
    layers: Optional[str] = None,
    ops: Optional[str] = None,
    window: Optional[int] = None,
    noc_row: str = DEFAULTS["noc_row"],
    expert_parallel: bool = False,
    cache: bool = True,
) -> Instance:
    """Builds the instance of ``model`` on ``chip`` (``elk-opt instance``): the plan tables
    of every operator (read from the plan cache when they are there; ``cache=False`` is
    ``--no-cache``). ``layers``/``ops`` cut a sub-instance (``"0..1"``, half-open);
    ``load_order`` is ``free``, ``fixed`` or a maximum displacement. ``expert_parallel``
    (``--expert-parallel``) builds parallel sets: independent chains of operators on
    disjoint groups of cores (docs/core-groups.md)."""
    m = _model(model)
    c = _chip(chip, hbm_tbps)
    graph = m._choice(mode, batch, kv, num_layers)
    build = dict(
        c._choice(),
        load_order=str(load_order),
        layers=layers,
        ops=ops,
        window=window,
        noc_row=noc_row,
        expert_parallel=bool(expert_parallel),
        cache=bool(cache),
    )
    native, warns = _native.build_instance(graph, build)
    _warn(warns)
    config: Dict[str, Any] = {}
    key = {"model": "model", "import": "import", "onnx": "onnx"}[m.kind]
    config[key] = m.source
    config.update(
        mode=mode,
        batch=int(batch),
        kv_tokens=int(kv),
        num_layers=graph["num_layers"],
    )
    if m.kind == "import":
        config["compat"] = m.compat or "clean"
    # The planning rules in force (docs/plans.md, "Rules"): the artifact's only with
    # compat="reference".
    reference = m.kind == "import" and m.compat == "reference"
    config["plan_rules"] = "reference" if reference else "clean"
    if m.dtype is not None and m.dtype != "fp16":
        config["dtype"] = m.dtype
    config.update(
        chip=c.given,
        hbm_tbps=c.hbm_tbps,
        load_order=str(load_order),
        layers=layers,
        ops=ops,
        preload_window_stages=window,
        noc_row=noc_row,
        expert_parallel=bool(expert_parallel),
    )
    return Instance(native, config)


def _instances(
    model: Union[ModelLike, Instance], chip: ChipLike, batch: int, kv: int, build: Dict[str, Any]
) -> "tuple[Instance, Optional[Instance]]":
    """The instance of the inputs (``model`` itself when it is one), and with
    ``expert_parallel=True`` the same without parallel sets: the other side of the union
    ``compare``, ``gap`` and ``solve`` work on (docs/core-groups.md, CG-5)."""
    if isinstance(model, Instance):
        return model, None
    inst = instance(model, chip, batch, kv, **build)
    if not build.get("expert_parallel"):
        return inst, None
    return inst, instance(model, chip, batch, kv, **dict(build, expert_parallel=False))


def _progress(progress: Progress, what: str) -> "tuple[Optional[Callable[[int, int, str], Any]], Callable[[], None]]":
    """The callback handed to Rust, and what closes it. ``True``: a tqdm bar (notebook-aware)
    when tqdm is installed, else nothing; a callable: called as ``progress(k, n, name)``
    before step ``k`` of ``n`` and once with ``k = n + 1`` at the end."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None, lambda: None
    bar: Any = None

    def cb(k: int, n: int, name: str) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=n, desc=what)
        bar.n = min(k - 1, n) if k > 0 else 0
        bar.set_postfix_str(name)
        bar.refresh()

    def close() -> None:
        if bar is not None:
            bar.n = bar.total
            bar.refresh()
            bar.close()

    return cb, close


def _exact_choice(
    *,
    backend: str = "milp",
    time_limit: float = 60.0,
    linearisation: str = "big-m",
    warm_start: bool = True,
    lp_bound: bool = True,
    whole_model_bound: str = "lp",
    window_search: bool = True,
) -> Dict[str, Any]:
    """The exact flags as the extension takes them, with the interpreter that runs the
    worker process (the CLI runs its own executable's ``exact-worker``)."""
    return {
        "backend": backend,
        "time_limit": float(time_limit),
        "linearisation": linearisation,
        "warm_start": bool(warm_start),
        "lp_bound": bool(lp_bound),
        "whole_model_bound": whole_model_bound,
        "window_search": bool(window_search),
        "python": sys.executable,
    }


def _exact_config(choice: Dict[str, Any], union: bool = False) -> Dict[str, Any]:
    """The exact flags as ``--json`` prints them in ``config``; ``union``
    (``--expert-parallel``): with ``time_limit_total_s``, what the two exact solves may take
    together (each gets ``time_limit``)."""
    extra = {"time_limit_total_s": 2 * choice["time_limit"]} if union else {}
    return {
        **extra,
        "backend": choice["backend"],
        "time_limit_s": choice["time_limit"],
        "linearisation": choice["linearisation"],
        "warm_start": choice["warm_start"],
        "lp_bound": choice["lp_bound"],
        "whole_model_bound": choice["whole_model_bound"],
        "window_search": choice["window_search"],
    }


def _rows_frame(head: Dict[str, Any], rows: List[Dict[str, Any]]) -> Any:
    """A DataFrame of ``rows`` (JSON objects; every key any row has, in first-seen order),
    each led by the ``head`` columns, so the frames of a loop concatenate."""
    keys: List[str] = []
    for row in rows:
        for k in row:
            if k not in keys:
                keys.append(k)
    frame = [dict(head, **{k: row.get(k) for k in keys}) for row in rows]
    return _pandas().DataFrame(frame, columns=list(head) + keys)


class _Result:
    """What a command's ``--json`` prints: :meth:`to_dict` is its ``results``, ``config`` its
    ``config``; :meth:`row` one of its rows (under ``_ROWS``)."""

    _SCHEMA = ""
    _ROWS = ""

    def __init__(self, results: Dict[str, Any], config: Dict[str, Any], inst: Instance) -> None:
        self._results = results
        self.config = config
        self.instance = inst

    def to_dict(self) -> Dict[str, Any]:
        """The ``results`` of the CLI's ``--json`` for the same inputs."""
        return dict(json.loads(json.dumps(self._results)))

    def to_json(self) -> str:
        """The whole ``--json`` envelope (schema, tool version, config, results)."""
        return json.dumps(
            {"schema": self._SCHEMA, "tool_version": __version__, "config": self.config, "results": self._results},
            indent=2,
        )

    def row(self, method: str) -> Dict[str, Any]:
        """The row of one method."""
        for r in self._results[self._ROWS]:
            if r["method"] == method:
                return dict(r)
        raise KeyError(method)

    @property
    def df(self) -> Any:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return str(self.df._repr_html_())


class CompareResult(_Result):
    """What ``elk-opt compare --json`` prints: :meth:`to_dict` is its ``results``, ``config``
    its ``config``, and :attr:`df` the method rows as a DataFrame whose columns are the JSON
    keys (units in the names: ``makespan_ms``, ``gap_le_pct``, ``hbm_util_pct``, …), led by
    the instance's ``instance``, ``chip``, ``hbm_tbps`` and ``bound_ms``."""

    _SCHEMA = "elk-opt/compare/1"
    _ROWS = "methods"

    @property
    def methods(self) -> List[Dict[str, Any]]:
        return list(self._results["methods"])

    @property
    def bound_ms(self) -> float:
        return float(self._results["bound_ms"])

    @property
    def warnings(self) -> List[str]:
        return list(self._results["warnings"])

    @property
    def df(self) -> Any:
        head = {k: self._results[k] for k in ("instance", "chip", "hbm_tbps", "bound_ms")}
        return _rows_frame(head, self._results["methods"])

    @property
    def layer(self) -> Optional[Dict[str, Any]]:
        """``layer_exact``'s section (``layer``, ``operators``, ``status``, ``reference_ms``,
        ``gap``: what :func:`gap` gives for the layer); ``None`` without it."""
        section = self._results.get("layer")
        return None if section is None else dict(section)

    @property
    def moe(self) -> Optional[Dict[str, Any]]:
        """``routing``'s section (``title``, ``routing``, ``steps``, ``seed``, ``experts``,
        ``experts_per_token``, ``steps``' rows, ``summary``); ``None`` without it."""
        section = self._results.get("moe")
        return None if section is None else dict(section)

    @property
    def layer_df(self) -> Any:
        """The layer section's rows as :attr:`GapResult.df` has them (``None`` without it)."""
        section = self._results.get("layer")
        if section is None:
            return None
        g = section["gap"]
        head = {
            "instance": g["instance"],
            "reference": g["reference"],
            "reference_ms": section["reference_ms"],
            "bound_source": g["exact"]["bound_source"],
        }
        return _rows_frame(head, g["rows"])

    def __repr__(self) -> str:
        return f"CompareResult({self._results['instance']!r}, {len(self._results['methods'])} methods)"


def compare(
    model: Union[ModelLike, Instance] = DEFAULTS["model"],
    chip: ChipLike = DEFAULTS["chip"],
    batch: int = DEFAULTS["batch"],
    kv: int = DEFAULTS["kv"],
    *,
    bound: str = "roofline",
    layer_exact: Optional[float] = None,
    routing: Optional[str] = None,
    steps: int = 100,
    seed: int = 1,
    policies: Optional[List[str]] = None,
    no_timings: bool = False,
    progress: Progress = None,
    **build: Any,
) -> CompareResult:
    """Every method side by side (``elk-opt compare --json``): every heuristic, the
    re-timed rows, Elk's Ideal, each with its gap to the certified bound: the roofline's, or
    with ``bound="segment"`` the coupled segment LP's where it is stronger (``--bound
    segment``; the bound :func:`gap` and the CLI's sweeps use, the same bits). ``layer_exact=SECONDS`` (``--layer-exact``) adds the ``layer`` section: layer
    0 of the same model solved by the MILP within SECONDS, every heuristic's gap there
    (:attr:`CompareResult.layer`). ``routing`` (``--routing``, with ``steps``, ``seed``,
    ``policies``) adds the ``moe`` section: an MoE model's load policies over sampled routing
    steps, as :func:`moe` runs them (:attr:`CompareResult.moe`). ``model`` may be an
    :class:`Instance` (``--instance``; not with ``layer_exact`` or ``routing``); otherwise
    the keyword arguments of :func:`instance` apply (``mode``, ``num_layers``, ``hbm_tbps``,
    ``load_order``, ``layers``, ``ops``, ``window``, ``noc_row``, ``cache``,
    ``expert_parallel``). With ``expert_parallel=True`` (``--expert-parallel``) it compares
    the union of the instances with and without parallel sets, as the CLI does: each
    method's faster schedule (its row's ``parallel_sets`` says which), the lower of the two
    bounds (docs/core-groups.md, CG-5); an :class:`Instance` built with
    ``expert_parallel=True`` compares that instance alone."""
    moe_choice = None
    if routing is not None:
        moe_choice = _routing_choice(model, chip, batch, kv, build, routing, steps, seed, policies)
    inst, without = _instances(model, chip, batch, kv, build)
    r = inst.compare(no_timings=no_timings, progress=progress, bound=bound, layer_exact=layer_exact, _without=without)
    if moe_choice is not None:
        cb, close = _progress(progress, "routing steps")
        try:
            section, warns = _native.moe_json(moe_choice, cb, True)
        finally:
            close()
        _warn(warns)
        r._results["moe"] = json.loads(section)
    return r


def _routing_choice(
    model: Union[ModelLike, Instance],
    chip: ChipLike,
    batch: int,
    kv: int,
    build: Dict[str, Any],
    routing: str,
    steps: int,
    seed: int,
    policies: Optional[List[str]],
) -> Dict[str, Any]:
    """``compare --routing``'s run of the MoE load policies (as ``moe``'s), checked as the
    CLI checks it, before any work."""

    def refuse(what: str) -> ValueError:
        return ValueError(
            f"--routing runs the MoE load policies of a whole model (--model) in decode: not with {what}"
        )

    if isinstance(model, Instance):
        raise refuse("--instance, --import or --onnx")
    m = _model(model)
    if m.kind != "model":
        raise refuse("--instance, --import or --onnx")
    if any(build.get(k) is not None for k in ("layers", "ops", "window")):
        raise refuse("--layers, --ops or --window")
    mode = build.get("mode", DEFAULTS["mode"])
    if mode != "decode":
        raise refuse(f"--mode {mode}")
    return _moe_choice(
        m.source,
        _chip(chip, build.get("hbm_tbps")),
        batch,
        kv,
        num_layers=build.get("num_layers", m.num_layers),
        dtype=m.dtype,
        routing=routing,
        steps=steps,
        seed=seed,
        policies=policies,
        methods=None,
        load_order=build.get("load_order", DEFAULTS["load_order"]),
        noc_row=build.get("noc_row", DEFAULTS["noc_row"]),
        cache=build.get("cache", True),
        expert_parallel=bool(build.get("expert_parallel", False)),
    )


def _moe_choice(
    model: str,
    c: Chip,
    batch: int,
    kv: int,
    *,
    num_layers: Optional[int],
    dtype: Optional[str],
    routing: str,
    steps: int,
    seed: int,
    policies: Optional[List[str]],
    methods: Optional[List[str]],
    load_order: Union[str, int],
    noc_row: str,
    cache: bool,
    expert_parallel: bool = False,
) -> Dict[str, Any]:
    """``moe``'s flags as the extension takes them (``methods`` defaults to Elk-Dyn)."""
    return dict(
        expert_parallel=bool(expert_parallel),
        model=model,
        batch=int(batch),
        kv=int(kv),
        num_layers=num_layers,
        dtype=dtype,
        chip=c.given,
        hbm_tbps=c.hbm_tbps,
        overrides=c._keys(),
        routing=routing,
        steps=int(steps),
        seed=int(seed),
        policies=list(policies or []),
        methods=list(methods or ["elk-dyn"]),
        load_order=str(load_order),
        noc_row=noc_row,
        cache=bool(cache),
    )


def solve(
    model: Union[ModelLike, Instance] = DEFAULTS["model"],
    chip: ChipLike = DEFAULTS["chip"],
    batch: int = DEFAULTS["batch"],
    kv: int = DEFAULTS["kv"],
    *,
    method: Optional[str] = None,
    exact: bool = False,
    backend: str = "milp",
    time_limit: float = 60.0,
    linearisation: str = "big-m",
    warm_start: bool = True,
    lp_bound: bool = True,
    whole_model_bound: str = "lp",
    window_search: bool = True,
    no_timings: bool = False,
    progress: Progress = None,
    **build: Any,
) -> "Schedule":
    """One method (``elk-opt solve --method M``, default ``elk-full``): its schedule, judged
    by the simulator. ``exact=True`` is ``solve --exact``: the heuristics, then the exact
    backend (``backend`` ``milp`` or ``smt``) warm-started from the best of them within
    ``time_limit`` seconds (hard: it runs in a worker process, killed 1 s after), and the
    schedule's :attr:`Schedule.row` is ``solve --exact --json``'s results (``status``,
    ``lower_bound_cycles``, ``gap_pct``, ``ran``, ``bounds``, …). Raises
    :class:`SolverError` when no schedule is found (the CLI exits 1 for a method; for
    ``--exact`` it prints the report). With ``expert_parallel=True`` (``--expert-parallel``)
    both instances, with and without parallel sets, are solved and the faster schedule is
    kept, bound to its own instance (:attr:`Schedule.instance`; the row's
    ``parallel_sets``, or ``union`` with ``exact=True``, says which: docs/core-groups.md,
    CG-5)."""
    inst, without = _instances(model, chip, batch, kv, build)
    if not exact:
        given = {
            k: v
            for k, v, default in [
                ("backend", backend, "milp"),
                ("time_limit", time_limit, 60.0),
                ("linearisation", linearisation, "big-m"),
                ("warm_start", warm_start, True),
                ("lp_bound", lp_bound, True),
                ("whole_model_bound", whole_model_bound, "lp"),
                ("window_search", window_search, True),
            ]
            if v != default
        }
        return inst.solve(method, no_timings=no_timings, progress=progress, _without=without, **given)
    return inst.solve(
        method,
        exact=True,
        backend=backend,
        time_limit=time_limit,
        linearisation=linearisation,
        warm_start=warm_start,
        lp_bound=lp_bound,
        whole_model_bound=whole_model_bound,
        window_search=window_search,
        no_timings=no_timings,
        progress=progress,
        _without=without,
    )


class GapResult(_Result):
    """What ``elk-opt gap --json`` prints: :meth:`to_dict` is its ``results``, ``config`` its
    ``config``, and :attr:`df` one row per method (every heuristic, then the exact part's
    best schedule: ``exact-milp``, ``window-search`` or ``warm-start``, with its ``status``)
    whose columns are the JSON keys of a row (``method``, ``makespan_cycles``,
    ``makespan_ms``, ``gap_pct``, ``reference_is_optimum``, ``compile_s``, ``status``), led
    by ``instance``, ``reference`` (``optimum`` or ``lower bound``), ``reference_ms``,
    ``bound_source`` and ``bound_ms``."""

    _SCHEMA = "elk-opt/gap/1"
    _ROWS = "rows"

    #: The schedule of the last row, the exact part's (what ``gap -o`` writes: its optimum,
    #: the window search's result or the warm start); ``None`` when it found none.
    schedule: Optional["Schedule"] = None

    @property
    def exact(self) -> Dict[str, Any]:
        """The exact solve's summary (``status``, ``stop``, ``ran``, ``bounds``, …)."""
        return dict(self._results["exact"])

    @property
    def reference(self) -> str:
        """``optimum`` (the gaps are exact) or ``lower bound`` (they are upper bounds)."""
        return str(self._results["reference"])

    @property
    def reference_ms(self) -> float:
        """The proven optimum or best proven lower bound the gaps are measured against."""
        return float(self.instance._native.ms(self._results["reference_cycles"]))

    @property
    def bound_ms(self) -> float:
        """The best proven lower bound (the exact solve's ``lower_bound_cycles``; with
        ``expert_parallel=True`` the union's, ``union.lower_bound_cycles``), ms."""
        union = self._results.get("union")
        bound = union["lower_bound_cycles"] if union else self._results["exact"]["lower_bound_cycles"]
        return float(self.instance._native.ms(bound))

    @property
    def bound_source(self) -> str:
        """What proved the reference (the exact solve's ``bound_source``, or in a union the
        other instance's when the reference is its)."""
        union = self._results.get("union")
        if union and union["bound_parallel_sets"] != union["parallel_sets"]:
            return str(union["other"]["bound_source"])
        return str(self._results["exact"]["bound_source"])

    @property
    def df(self) -> Any:
        head = {
            "instance": self._results["instance"],
            "reference": self.reference,
            "reference_ms": self.reference_ms,
            "bound_source": self.bound_source,
            "bound_ms": self.bound_ms,
        }
        return _rows_frame(head, self._results["rows"])

    def __repr__(self) -> str:
        return f"GapResult({self._results['instance']!r}, reference {self.reference})"


def gap(
    model: Union[ModelLike, Instance] = DEFAULTS["model"],
    chip: ChipLike = DEFAULTS["chip"],
    batch: int = DEFAULTS["batch"],
    kv: int = DEFAULTS["kv"],
    *,
    backend: str = "milp",
    time_limit: float = 60.0,
    linearisation: str = "big-m",
    warm_start: bool = True,
    lp_bound: bool = True,
    whole_model_bound: str = "lp",
    window_search: bool = True,
    no_timings: bool = False,
    progress: Progress = None,
    **build: Any,
) -> GapResult:
    """Every heuristic's gap to the exact optimum, or to the certified lower bound
    (``elk-opt gap --json``): the heuristics, then the exact backend warm-started from the
    best of them within ``time_limit`` seconds (hard: a worker process, killed 1 s after),
    its schedule a row too. On a chain of two layers or more the coupled segment LP
    (``compare(bound="segment")``'s bound, the same bits) is solved first with up to 90 % of
    ``time_limit`` on a model too large for the backend (25 % beside it) and bounds every gap beside what the exact part proves; on a model too
    large for the backend the window search then improves the warm start
    (``window_search``; ``whole_model_bound``: ``lp``, ``milp``, ``off``). The keyword arguments of :func:`instance`
    apply, or ``model`` is an :class:`Instance`. With ``expert_parallel=True``
    (``--expert-parallel``) the gap runs on the instances with and without parallel sets,
    each within the whole ``time_limit`` (so up to twice it in all: ``config``'s
    ``time_limit_total_s``), and reports their union as the CLI does: each row's faster
    schedule (``parallel_sets``), the exact part's faster result (``union.parallel_sets``;
    :attr:`GapResult.schedule` is bound to its instance), the lower of the two references
    (docs/core-groups.md, CG-5)."""
    inst, without = _instances(model, chip, batch, kv, build)
    return inst.gap(
        backend=backend,
        time_limit=time_limit,
        linearisation=linearisation,
        warm_start=warm_start,
        lp_bound=lp_bound,
        whole_model_bound=whole_model_bound,
        window_search=window_search,
        no_timings=no_timings,
        progress=progress,
        _without=without,
    )


class Schedule:
    """A schedule (elk-schedule/1) of an :class:`Instance`: what ``solve -o`` writes."""

    def __init__(self, native: Any, inst: Instance, row: Optional[Dict[str, Any]] = None) -> None:
        self._native = native
        self.instance = inst
        #: ``solve --json``'s results (the method's row), or with ``exact=True`` ``solve
        #: --exact --json``'s (the exact solve's summary); ``None`` for a loaded schedule.
        self.row = row
        #: ``solve --exact --json``'s ``config`` (``None`` for a heuristic's schedule).
        self.config: Optional[Dict[str, Any]] = None

    @property
    def method(self) -> str:
        return str(self._native.method)

    @property
    def makespan_cycles(self) -> float:
        """The simulator's makespan (the stage model)."""
        return float(self.simulate()["makespan_cycles"])

    @property
    def makespan_ms(self) -> float:
        return float(self.simulate()["makespan_ms"])

    def save(
        self,
        path: Union[str, "os.PathLike[str]"],
        instance_path: Union[str, "os.PathLike[str]", None] = None,
    ) -> None:
        """Writes the schedule file (``solve -o``), and its instance to ``instance_path``
        (``--emit-instance``) when given: ``simulate`` needs both."""
        self._native.save(os.fspath(path), self.instance._native)
        if instance_path is not None:
            self.instance.save(instance_path)

    @classmethod
    def load(
        cls,
        path: Union[str, "os.PathLike[str]"],
        instance: Union[Instance, str, "os.PathLike[str]"],
    ) -> "Schedule":
        """Reads a schedule file for ``instance`` (an :class:`Instance` or its file)."""
        inst = instance if isinstance(instance, Instance) else Instance.load(instance)
        return cls(_native.NativeSchedule.load(os.fspath(path)), inst)

    def to_json(self) -> str:
        """The schedule file's text, stamped with its instance."""
        return str(self._native.to_json(self.instance._native))

    def simulate(self) -> Dict[str, Any]:
        """``elk-opt simulate --json``'s results: ``valid``, ``violations`` and the stage
        model's evaluation (``makespan_cycles``, ``makespan_ms``, ``stages``,
        ``hbm_util_pct``, …). A schedule of another instance raises ``ValueError``."""
        return dict(json.loads(self._native.simulate(self.instance._native)))

    def simulate_detailed(self) -> Dict[str, Any]:
        """The detailed replay on the instance's chip (``simulate --detailed``, paced loads):
        the simulator's report (``makespan_cycles``, ``makespan_ms``, ``breakdown``,
        ``link_utilisation_mean``, ``hottest_links``, ``controller_utilisation``, …)."""
        return dict(json.loads(self._native.simulate_detailed(self.instance._native)))

    def trace(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes a Chrome trace of the stage model's evaluation (``solve --trace``; open
        it in Perfetto)."""
        self._native.trace(os.fspath(path), self.instance._native)

    def __repr__(self) -> str:
        return f"Schedule({self.method!r} on {self.instance.name!r})"


class MoeResult:
    """What ``elk-opt moe --json`` prints: :meth:`to_dict` is its ``results``, :attr:`df` the
    policies over the steps (``summary``: ``mean_ms``, ``p50_ms``, ``p99_ms``,
    ``mean_vs_oracle_pct``, ``mean_gap_pct``, …), :attr:`steps_df` one row per step and
    policy (``step``, ``experts_touched``, ``bound_ms``, ``policy``, ``makespan_ms``, …)."""

    def __init__(self, results: Dict[str, Any], config: Dict[str, Any]) -> None:
        self._results = results
        self.config = config

    def to_dict(self) -> Dict[str, Any]:
        """The ``results`` of ``elk-opt moe --json`` for the same inputs."""
        return dict(json.loads(json.dumps(self._results)))

    @property
    def df(self) -> Any:
        return _pandas().DataFrame(self._results["summary"])

    @property
    def steps_df(self) -> Any:
        rows = []
        for st in self._results["steps"]:
            head = {k: v for k, v in st.items() if k != "policies"}
            for p in st["policies"]:
                rows.append(dict(head, **p))
        return _pandas().DataFrame(rows)

    def __repr__(self) -> str:
        return f"MoeResult({self._results['instance']!r})"

    def _repr_html_(self) -> str:
        return str(self.df._repr_html_())


def moe(
    model: str = "mixtral-8x7b",
    chip: ChipLike = DEFAULTS["chip"],
    batch: int = DEFAULTS["batch"],
    kv: int = DEFAULTS["kv"],
    *,
    routing: str = "uniform",
    steps: int = 100,
    seed: int = 1,
    policies: Optional[List[str]] = None,
    methods: Optional[List[str]] = None,
    num_layers: Optional[int] = None,
    dtype: Optional[str] = None,
    hbm_tbps: Optional[float] = None,
    load_order: Union[str, int] = DEFAULTS["load_order"],
    noc_row: str = DEFAULTS["noc_row"],
    cache: bool = True,
    expert_parallel: bool = False,
    progress: Progress = None,
) -> MoeResult:
    """An MoE model's expert-loading policies over sampled routing steps (``elk-opt moe
    --json``; docs/moe.md): load-all, on-demand, predicted-k and the oracle by default, each
    step's schedules judged, against the oracle and its certified bound. ``routing`` is
    ``uniform``, ``zipf:S``, …; ``policies`` and ``methods`` are ``--policies`` and
    ``--methods`` (default: ``["elk-dyn"]``). ``expert_parallel=True`` (``--expert-parallel``)
    runs every step again with the experts with tokens side by side on groups of cores: the
    results' ``expert_parallel`` is that run's report (docs/core-groups.md)."""
    c = _chip(chip, hbm_tbps)
    choice = _moe_choice(
        os.fspath(model),
        c,
        batch,
        kv,
        num_layers=num_layers,
        dtype=dtype,
        routing=routing,
        steps=steps,
        seed=seed,
        policies=policies,
        methods=methods,
        load_order=load_order,
        noc_row=noc_row,
        cache=cache,
        expert_parallel=expert_parallel,
    )
    cb, close = _progress(progress, "routing steps")
    try:
        out, warns = _native.moe_json(choice, cb)
    finally:
        close()
    _warn(warns)
    results = json.loads(out)
    config = {
        "model": choice["model"],
        "mode": "decode",
        "batch": choice["batch"],
        "kv_tokens": choice["kv"],
        "num_layers": num_layers,
        "chip": c.given,
        "hbm_tbps": c.hbm_tbps,
        "routing": routing,
        "steps": choice["steps"],
        "seed": choice["seed"],
        "policies": [p["policy"] for p in results["summary"]],
        "methods": choice["methods"],
        "load_order": choice["load_order"],
        "noc_row": noc_row,
        "expert_parallel": choice["expert_parallel"],
    }
    return MoeResult(results, config)


class SweepResult:
    """What ``elk-opt sweep GRID -o FILE`` did: :attr:`summary` is ``sweep --json``'s
    ``results`` (``cells``, ``ran_cells``, ``failed_cells``, …, ``output``), :attr:`cells`
    the results file's lines (in cell order) and :attr:`df` one row per cell and method:
    the cell's keys (``index``, ``model``, ``mode``, ``batch``, ``kv``, ``chip``,
    ``hbm_tbps``, …, ``ops``, ``ideal_ms``, ``error``) then the method's (``method``,
    ``status``, ``makespan_ms``, ``hbm_util``, ``noc_util`` as fractions, ``tflops``)."""

    def __init__(self, summary: Dict[str, Any], cells: List[Dict[str, Any]]) -> None:
        self.summary = summary
        self.cells = cells

    @property
    def df(self) -> Any:
        rows = []
        for line in self.cells:
            head = dict(line["cell"])
            head.update(
                figure=line["figure"],
                ops=line["ops"],
                ideal_ms=line.get("ideal_ms"),
                error=line.get("error"),
                does_not_fit=line.get("does_not_fit", False),
            )
            for m in line["methods"] or [{}]:
                m = {k: v for k, v in m.items() if k != "breakdown"}
                rows.append(dict(head, **m))
        return _pandas().DataFrame(rows)

    def __repr__(self) -> str:
        return f"SweepResult({self.summary['cells']} cells -> {self.summary['output']!r})"


def sweep(
    grid: str,
    output: Union[str, "os.PathLike[str]", None] = None,
    *,
    shard: Optional[str] = None,
    progress: Progress = None,
) -> SweepResult:
    """Runs a grid of configurations × methods (``elk-opt sweep GRID -o OUTPUT``): a preset
    (``fig17`` … ``fig24``), a grid TOML file, or the TOML text itself (docs/sweeps.md).
    Resumable: cells already in ``output`` are not run again. ``output`` defaults to
    ``<grid>.jsonl`` (``grid.jsonl`` for TOML text) in the current directory, as the CLI's;
    ``shard="K/N"`` runs one shard. Raises :class:`SolverError` when cells failed (their
    errors are their lines, as the CLI exits 1)."""
    is_toml = "\n" in grid
    if output is None:
        stem = "grid" if is_toml else os.path.splitext(os.path.basename(grid))[0]
        output = f"{stem}.jsonl"
    out = os.fspath(output)
    cb, close = _progress(progress, "cells")
    try:
        summary, lines, warns = _native.sweep_json(grid, out, is_toml, shard, cb)
    finally:
        close()
    _warn(warns)
    result = SweepResult(json.loads(summary), json.loads(lines))
    failed = result.summary["failed_cells"]
    if failed:
        raise SolverError(
            f"{failed} cell{'' if failed == 1 else 's'} failed (of {result.summary['cells']}): "
            f"each failed cell's error is its line in {out}; rerunning the same command retries them"
        )
    return result


class StudyResult:
    """What ``elk-opt study NAME -o DIR`` wrote: :attr:`summary` is ``study --json``'s
    ``results`` (``output``, ``files``), :attr:`finding` the headline the study wrote to
    ``DIR/finding.json`` (``question``, ``finding``, ``number``) and :attr:`df` that as a
    one-row DataFrame (led by ``study``, so the frames of several studies concatenate)."""

    def __init__(self, name: str, summary: Dict[str, Any]) -> None:
        self.name = name
        self.summary = summary
        path = os.path.join(summary["output"], "finding.json")
        with open(path, encoding="utf-8") as f:
            self.finding: Dict[str, Any] = json.load(f)

    @property
    def output(self) -> str:
        return str(self.summary["output"])

    @property
    def files(self) -> List[str]:
        return list(self.summary["files"])

    @property
    def readme(self) -> str:
        """The report's Markdown (``DIR/README.md``)."""
        with open(os.path.join(self.output, "README.md"), encoding="utf-8") as f:
            return f.read()

    @property
    def df(self) -> Any:
        return _pandas().DataFrame([dict({"study": self.name}, **self.finding)])

    def __repr__(self) -> str:
        return f"StudyResult({self.name!r} -> {self.output!r})"


def study(
    name: str,
    output: Union[str, "os.PathLike[str]", None] = None,
    *,
    progress: Progress = None,
) -> StudyResult:
    """Answers one reviewer question (``elk-opt study NAME -o OUTPUT``): ``gap``,
    ``gap-whole``, ``ideal``, ``hbm-emulation``, ``order-pruning``, ``cost-noise``,
    ``ablation``, ``replay-fidelity`` or ``moe``. Writes the CLI's files (README.md, the
    SVG plots and CSV tables, finding.json) into ``output`` (default ``results/NAME``, as
    the CLI's) and returns them with the finding. An unknown name raises ``ValueError``
    listing the studies."""
    out = os.fspath(output) if output is not None else os.path.join("results", name)
    cb, close = _progress(progress, f"study {name}")
    try:
        summary = json.loads(_native.study_json(name, out, cb))
    finally:
        close()
    return StudyResult(name, summary)
