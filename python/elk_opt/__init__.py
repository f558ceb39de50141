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

The package is split by concept, each module private (the public names are the ones below):
``_models`` (models, chips, methods, backends), ``_instance`` (instances, ``solve`` and
schedules), ``_compare`` (``compare`` and ``gap``), ``_moe``, ``_sweeps`` (``sweep`` and
``study``) and ``_common`` (what they share).
"""

from __future__ import annotations

from ._common import DEFAULTS, __version__
from ._compare import CompareResult, GapResult, compare, gap
from ._instance import Instance, Schedule, instance, solve
from ._models import Chip, Model, backends, chips, methods, models
from ._moe import MoeResult, moe
from ._native import SolverError
from ._sweeps import StudyResult, SweepResult, study, sweep

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
