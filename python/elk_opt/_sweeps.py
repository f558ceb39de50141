"""Grids and studies: ``elk-opt sweep`` and ``elk-opt study``."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import _native
from ._common import _pandas, _progress, _warn
from ._native import SolverError

if TYPE_CHECKING:
    from ._common import Progress


class SweepResult:
    """What ``elk-opt sweep GRID -o FILE`` did: :attr:`summary` is ``sweep --json``'s
    ``results`` (``cells``, ``ran_cells``, ``failed_cells``, …, ``output``), :attr:`cells`
    the results file's lines (in cell order) and :attr:`df` one row per cell and method:
    the cell's keys (``index``, ``model``, ``mode``, ``batch``, ``kv``, ``chip``,
    ``hbm_tbps``, …, ``ops``, ``ideal_ms``, ``error``) then the method's (``method``,
    ``status``, ``makespan_ms``, ``hbm_util``, ``noc_util`` as fractions, ``tflops``)."""

    def __init__(self, summary: Dict[str, Any], cells: List[Dict[str, Any]], config: Dict[str, Any]) -> None:
        self.summary = summary
        self.cells = cells
        #: ``sweep --json``'s ``config`` (``grid``, ``output``, ``shard``, ``report``).
        self.config = config

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
    cb, close = _progress(progress, "cells")
    try:
        summary, config, lines, warns, failure = _native.sweep_json(
            grid, None if output is None else os.fspath(output), shard, cb
        )
    finally:
        close()
    _warn(warns)
    result = SweepResult(json.loads(summary), json.loads(lines), json.loads(config))
    if failure is not None:
        raise SolverError(failure)
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
    ``ablation``, ``replay-fidelity``, ``moe``, ``resident`` or ``measured``. Writes the CLI's files (README.md, the
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
