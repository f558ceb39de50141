"""Instances and schedules: building a stage-model instance (``elk-opt instance``), solving
it with one method (``elk-opt solve``) and the schedule that comes back."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from . import _native
from ._common import DEFAULTS, EXACT_KEYS, _exact_keys, _progress, _warn
from ._native import SolverError
from ._models import _chip, _model

if TYPE_CHECKING:
    from ._compare import CompareResult, GapResult
    from ._common import Progress
    from ._models import ChipLike, ModelLike


class Instance:
    """A stage-model instance (elk-instance/1): a graph's plans on a chip, what every
    method schedules. Build one with :func:`instance`, read one with :meth:`load`."""

    def __init__(self, native: Any) -> None:
        self._native = native
        #: The inputs as ``--json`` prints them in ``config``: what it was built from, or
        #: ``{"instance": path}`` for a file read.
        self.config: Dict[str, Any] = json.loads(native.config)

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
        return cls(_native.NativeInstance.load(os.fspath(path)))

    def compare(
        self,
        *,
        no_timings: bool = False,
        progress: Progress = None,
        bound: str = "roofline",
        layer_exact: Optional[float] = None,
        work_limit: Optional[int] = None,
        _without: Optional["Instance"] = None,
    ) -> "CompareResult":
        """Every method on this instance: :func:`compare`. ``_without`` (set by
        :func:`compare` with ``expert_parallel=True``): the same instance without parallel
        sets, whose union with this one is compared (docs/core-groups.md, CG-5)."""
        from ._compare import CompareResult  # here, not at the top: _compare imports this module
        cb, close = _progress(progress, "methods")
        try:
            out, config = self._native.compare(
                no_timings,
                cb,
                bound,
                None if layer_exact is None else float(layer_exact),
                sys.executable,
                None if _without is None else _without._native,
                work_limit=work_limit,
            )
        finally:
            close()
        return CompareResult(json.loads(out), json.loads(config), self)

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
        from ._compare import GapResult  # here, not at the top: _compare imports this module
        cb, close = _progress(progress, "gap")
        try:
            results_json, native, config = self._native.gap(
                _exact_keys(exact_flags), sys.executable, no_timings, cb,
                None if _without is None else _without._native,
            )
        finally:
            close()
        results = json.loads(results_json)
        r = GapResult(results, json.loads(config), self)
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
            row_json, native, config = self._native.solve(
                method, no_timings, None if _without is None else _without._native
            )
            if cb is not None:
                cb(1, 1, "")
        finally:
            close()
        row = json.loads(row_json)
        if native is None:
            why = row["notes"][-1] if row["notes"] else row["status"]
            raise SolverError(f"{row['method']} found no schedule for {self.name}: {why}")
        union = None if row.get("parallel_sets") is None else {"parallel_sets": row["parallel_sets"]}
        s = Schedule(native, self._kept(union, _without), row)
        s.config = json.loads(config)
        return s

    def _solve_exact(
        self,
        *,
        no_timings: bool = False,
        progress: Progress = None,
        _without: Optional["Instance"] = None,
        **exact_flags: Any,
    ) -> "Schedule":
        cb, close = _progress(progress, "exact")
        try:
            summary_json, native, config = self._native.solve_exact(
                _exact_keys(exact_flags), sys.executable, no_timings, cb,
                None if _without is None else _without._native,
            )
        finally:
            close()
        summary = json.loads(summary_json)
        if native is None:
            raise SolverError(
                f"exact {summary['backend']} found no schedule for {self.name}: {summary['ran']}"
            )
        s = Schedule(native, self._kept(summary.get("union"), _without), summary)
        s.config = json.loads(config)
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
    build = {k: v for k, v in locals().items() if k not in ("model", "chip", "batch", "kv")}
    keys = _instance_keys(model, chip, batch, kv, build)
    native, warns = _native.build_instance(json.dumps(keys), bool(cache))
    _warn(warns)
    return Instance(native)


def _instance_keys(model: ModelLike, chip: ChipLike, batch: int, kv: int, build: Dict[str, Any]) -> Dict[str, Any]:
    """:func:`instance`'s arguments as the extension's instance request takes them: the
    keywords given in ``build`` (``cache`` is not part of the request; a keyword the request
    does not know is refused there, naming it)."""
    m = _model(model)
    keys = {k: v for k, v in build.items() if k not in ("cache", "hbm_tbps")}
    if keys.get("num_layers") is None:
        keys["num_layers"] = m.num_layers
    if "expert_parallel" in keys:
        keys["expert_parallel"] = bool(keys["expert_parallel"])
    keys.update(model=m._keys(), chip=_chip(chip, build.get("hbm_tbps"))._keys(), batch=int(batch), kv=int(kv))
    return {k: v for k, v in keys.items() if v is not None}


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


def solve(
    model: Union[ModelLike, Instance] = DEFAULTS["model"],
    chip: ChipLike = DEFAULTS["chip"],
    batch: int = DEFAULTS["batch"],
    kv: int = DEFAULTS["kv"],
    *,
    method: Optional[str] = None,
    exact: bool = False,
    backend: str = DEFAULTS["backend"],
    time_limit: float = DEFAULTS["time_limit"],
    linearisation: str = DEFAULTS["linearisation"],
    warm_start: bool = DEFAULTS["warm_start"],
    lp_bound: bool = DEFAULTS["lp_bound"],
    whole_model_bound: str = DEFAULTS["whole_model_bound"],
    window_search: bool = DEFAULTS["window_search"],
    work_limit: Optional[int] = DEFAULTS["work_limit"],
    no_timings: bool = False,
    progress: Progress = None,
    **build: Any,
) -> "Schedule":
    """One method (``elk-opt solve --method M``, default ``elk-full``): its schedule, judged
    by the simulator. ``exact=True`` is ``solve --exact``: the heuristics, then the exact
    backend (``backend`` ``milp`` or ``smt``) warm-started from the best of them within
    ``time_limit`` seconds (hard: it runs in a worker process, killed 1 s after), and the
    schedule's :attr:`Schedule.row` is ``solve --exact --json``'s results (``status``,
    ``lower_bound_cycles``, ``gap_pct``, ``ran``, ``bounds``, …). ``work_limit=N``
    (``--work-limit``) stops the exact solve after N units of solver work instead of
    seconds, so the same call gives the same result on any machine (docs/exact.md,
    "Reproducible certificates"); ``time_limit`` stays a hard stop on top. Raises
    :class:`SolverError` when no schedule is found (the CLI exits 1 for a method; for
    ``--exact`` it prints the report). With ``expert_parallel=True`` (``--expert-parallel``)
    both instances, with and without parallel sets, are solved and the faster schedule is
    kept, bound to its own instance (:attr:`Schedule.instance`; the row's
    ``parallel_sets``, or ``union`` with ``exact=True``, says which: docs/core-groups.md,
    CG-5)."""
    inst, without = _instances(model, chip, batch, kv, build)
    if not exact:
        values = (backend, time_limit, linearisation, warm_start, lp_bound, whole_model_bound, window_search,
                  work_limit)
        given = {k: v for k, v in zip(EXACT_KEYS, values) if v != DEFAULTS[k]}
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
        work_limit=work_limit,
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
        #: ``solve --json``'s ``config`` (``None`` for a loaded schedule).
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
