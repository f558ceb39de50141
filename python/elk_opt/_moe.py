"""MoE models: the expert-loading policies over sampled routing steps (``elk-opt moe``)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import _native
from ._common import DEFAULTS, _pandas, _progress, _warn
from ._models import _chip

if TYPE_CHECKING:
    from ._common import Progress
    from ._models import ChipLike


class MoeResult:
    """What ``elk-opt moe --json`` prints: :meth:`to_dict` is its ``results``, :attr:`df` the
    policies over the steps (``summary``: ``mean_ms``, ``p50_ms``, ``p99_ms``,
    ``mean_vs_oracle_pct``, ``mean_gap_pct``, …), :attr:`steps_df` one row per step and
    policy (``step``, ``experts_touched``, ``bound_ms``, ``policy``, ``makespan_ms``, …),
    :attr:`resident_df` one row per resident policy (``resident-N``, ``resident-auto``: the
    experts it keeps in SRAM, their SRAM per core, the bytes they save; docs/moe.md)."""

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

    @property
    def resident_df(self) -> Any:
        """One row per resident policy: ``policy``, ``rest``, ``experts``, ``of_experts``,
        ``sram_bytes_per_core``, ``sram_pct``, ``expected_bytes_saved_per_step``,
        ``knapsack_gap_pct`` and, for resident-auto, ``chosen_mean_ms`` and
        ``without_resident_ms`` (its calibration); empty without a resident policy. The
        experts themselves are in :meth:`to_dict`'s ``resident``."""
        rows = []
        for r in self._results.get("resident", []):
            row = {
                k: v
                for k, v in r.items()
                if k not in ("resident", "experts_per_layer", "calibration")
            }
            c = r.get("calibration")
            if c is not None:
                row["chosen_mean_ms"] = c["chosen_mean_ms"]
                row["without_resident_ms"] = c["without_resident_ms"]
            rows.append(row)
        return _pandas().DataFrame(rows)

    def __repr__(self) -> str:
        return f"MoeResult({self._results['instance']!r})"

    def _repr_html_(self) -> str:
        return str(self.df._repr_html_())


def moe(
    model: str = DEFAULTS["moe_model"],
    chip: ChipLike = DEFAULTS["chip"],
    batch: int = DEFAULTS["batch"],
    kv: int = DEFAULTS["kv"],
    *,
    routing: str = DEFAULTS["routing"],
    steps: int = DEFAULTS["steps"],
    seed: int = DEFAULTS["seed"],
    policies: Optional[List[str]] = None,
    methods: Optional[List[str]] = None,
    num_layers: Optional[int] = None,
    dtype: Optional[str] = None,
    hbm_tbps: Optional[float] = None,
    load_order: Union[str, int] = DEFAULTS["load_order"],
    noc_row: str = DEFAULTS["noc_row"],
    cache: bool = True,
    expert_parallel: bool = False,
    bound: str = DEFAULTS["moe_bound"],
    progress: Progress = None,
) -> MoeResult:
    """An MoE model's expert-loading policies over sampled routing steps (``elk-opt moe
    --json``; docs/moe.md): load-all, on-demand, predicted-k and the oracle by default, each
    step's schedules judged, against the oracle and its certified bound. ``routing`` is
    ``uniform``, ``zipf:S``, …; ``policies`` and ``methods`` are ``--policies`` and
    ``--methods`` (default: ``["elk-dyn"]``). ``expert_parallel=True`` (``--expert-parallel``)
    runs every step again with the experts with tokens side by side on groups of cores: the
    results' ``expert_parallel`` is that run's report (docs/core-groups.md). ``bound`` is
    ``--bound``: each step's certified bound, ``"roofline"`` (instant, the default),
    ``"stage"`` (the stage relaxation LP, seconds a step) or ``"segment"`` (also the coupled
    segment LP where the step's layers repeat); each step's ``bound_source`` says which it
    is."""
    keys = dict(
        model=os.fspath(model),
        chip=_chip(chip, hbm_tbps)._keys(),
        batch=int(batch),
        kv=int(kv),
        num_layers=num_layers,
        dtype=dtype,
        routing=routing,
        steps=int(steps),
        seed=int(seed),
        policies=policies,
        methods=methods,
        load_order=load_order,
        noc_row=noc_row,
        expert_parallel=bool(expert_parallel),
        bound=bound,
    )
    cb, close = _progress(progress, "routing steps")
    try:
        out, config, warns = _native.moe_json(
            json.dumps({k: v for k, v in keys.items() if v is not None}), cb, bool(cache)
        )
    finally:
        close()
    _warn(warns)
    return MoeResult(json.loads(out), json.loads(config))

