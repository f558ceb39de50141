"""MoE models: the expert-loading policies over sampled routing steps (``elk-opt moe``)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import _native
from ._common import DEFAULTS, _pandas, _progress, _warn
from ._instance import Instance
from ._models import _chip, _model, methods

if TYPE_CHECKING:
    from ._common import Progress
    from ._models import Chip, ChipLike, ModelLike


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
        chip=json.dumps(c._keys()),
        routing=routing,
        steps=int(steps),
        seed=int(seed),
        policies=list(policies or []),
        methods=list(methods or ["elk-dyn"]),
        load_order=str(load_order),
        noc_row=noc_row,
        cache=bool(cache),
    )


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
