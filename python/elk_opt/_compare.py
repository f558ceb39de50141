"""Every method side by side (``elk-opt compare``) and their gaps to the exact optimum or
certified bound (``elk-opt gap``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import _native
from ._common import DEFAULTS, _Result, _progress, _rows_frame, _warn
from ._instance import Instance, _instance_keys, _instances
from ._models import Chip

if TYPE_CHECKING:
    from ._common import Progress
    from ._instance import Schedule
    from ._models import ChipLike, ModelLike


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
    bound: str = "stage",
    layer_exact: Optional[float] = None,
    work_limit: Optional[int] = None,
    routing: Optional[str] = None,
    steps: int = 100,
    seed: int = 1,
    policies: Optional[List[str]] = None,
    no_timings: bool = False,
    progress: Progress = None,
    **build: Any,
) -> CompareResult:
    """Every method side by side (``elk-opt compare --json``): every heuristic, the
    re-timed rows, Elk's Ideal, each with its gap to the certified bound: by default the
    stage relaxation LP's where it beats the roofline (``--bound stage``, under a second on a
    dense model), with ``bound="roofline"`` the roofline's, with ``bound="segment"`` also the
    coupled segment LP's where it is stronger (``--bound segment``; the bound :func:`gap`
    and the CLI's sweeps use, the same bits). ``layer_exact=SECONDS`` (``--layer-exact``) adds the ``layer`` section: layer
    0 of the same model solved by the MILP within SECONDS, every heuristic's gap there
    (:attr:`CompareResult.layer`); ``work_limit=N`` (``--work-limit``) buys that solve with N
    branch-and-bound nodes instead of seconds, so it is the same on any machine. ``routing`` (``--routing``, with ``steps``, ``seed``,
    ``policies``) adds the ``moe`` section: an MoE model's load policies over sampled routing
    steps, as :func:`moe` runs them (:attr:`CompareResult.moe`). ``model`` may be an
    :class:`Instance` (``--instance``; not with ``layer_exact`` or ``routing``); otherwise
    the keyword arguments of :func:`instance` apply (``mode``, ``num_layers``, ``hbm_tbps``,
    ``load_order``, ``layers``, ``ops``, ``window``, ``noc_row``, ``cache``,
    ``expert_parallel``). With ``expert_parallel=True`` (``--expert-parallel``) it compares
    the union of the instances with and without parallel sets, as the CLI does: each
    method's faster schedule (its row's ``parallel_sets`` says which), the lower of the two
    bounds (docs/core-groups.md, CG-5); an :class:`Instance` built with
    ``expert_parallel=True`` compares that instance alone. On a chip with
    ``dram_readers="auto"`` (``--dram-readers auto``) the model is compared on the chip with
    each count of DRAM-reader cores it offers, as the CLI does: each method's fastest row
    (its ``dram_readers`` says which count), the lowest bound, each count's summary in
    ``dram_reader_counts`` (docs/chips.md, "DRAM-reader cores"); :attr:`CompareResult.instance`
    is the fastest count's. Not with ``layer_exact`` or ``routing`` (they are of one chip)."""
    if isinstance(chip, Chip) and chip.dram_readers == "auto" and not isinstance(model, Instance):
        if routing is not None:
            raise ValueError(_native.AUTO_OF_ONE_CHIP)
        return _compare_reader_counts(model, chip, batch, kv, bound, layer_exact, work_limit, no_timings,
                                      progress, build)
    moe_keys = None
    if routing is not None:
        # Checked before any work, as the CLI checks --routing.
        instance_keys = None if isinstance(model, Instance) else _instance_keys(model, chip, batch, kv, build)
        moe_keys = json.dumps(dict(instance=instance_keys, routing=routing, steps=steps, seed=seed,
                                   policies=policies))
        _native.check_compare_moe(moe_keys)
    inst, without = _instances(model, chip, batch, kv, build)
    r = inst.compare(no_timings=no_timings, progress=progress, bound=bound, layer_exact=layer_exact,
                     work_limit=work_limit, _without=without)
    if moe_keys is not None:
        cb, close = _progress(progress, "routing steps")
        try:
            section, warns = _native.moe_section_json(moe_keys, cb, build.get("cache", True))
        finally:
            close()
        _warn(warns)
        r._results["moe"] = json.loads(section)
    return r


def _compare_reader_counts(
    model: ModelLike, chip: ChipLike, batch: int, kv: int, bound: str, layer_exact: Optional[float],
    work_limit: Optional[int], no_timings: bool, progress: Progress, build: Dict[str, Any],
) -> CompareResult:
    """:func:`compare` with ``dram_readers="auto"``: every count, merged in the extension
    (which refuses ``layer_exact`` and so ``work_limit``)."""
    keys = _instance_keys(model, chip, batch, kv, build)
    cb, close = _progress(progress, "methods")
    try:
        out, config, native, warns = _native.compare_reader_counts(
            json.dumps(keys), bool(build.get("cache", True)), no_timings, cb, bound,
            None if layer_exact is None else float(layer_exact), work_limit)
    finally:
        close()
    _warn(warns)
    return CompareResult(json.loads(out), json.loads(config), Instance(native))


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
) -> GapResult:
    """Every heuristic's gap to the exact optimum, or to the certified lower bound
    (``elk-opt gap --json``): the heuristics, then the exact backend warm-started from the
    best of them within ``time_limit`` seconds (hard: a worker process, killed 1 s after),
    its schedule a row too. On a chain of two layers or more the coupled segment LP
    (``compare(bound="segment")``'s bound, the same bits) is solved first with up to 90 % of
    ``time_limit`` on a model too large for the backend (25 % beside it) and bounds every gap beside what the exact part proves; on a model too
    large for the backend the window search then improves the warm start
    (``window_search``; ``whole_model_bound``: ``lp``, ``milp``, ``off``). ``work_limit=N``
    (``--work-limit``): a budget in solver work (branch-and-bound nodes, or window MILPs on
    a model too large for the MILP) instead of seconds, so the same call gives the same
    result on any machine; ``time_limit`` stays a hard stop on top. The keyword arguments of :func:`instance`
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
        work_limit=work_limit,
        no_timings=no_timings,
        progress=progress,
        _without=without,
    )
