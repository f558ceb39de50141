"""Models and chips: the zoo, the presets, the methods and backends, and the ``Model`` and
``Chip`` inputs every command takes."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._common import DEFAULTS, _pandas, _warn


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
        optimizer_dtype: Optional[str] = None,
        kind: str = "model",
        compat: Optional[str] = None,
    ) -> None:
        self.kind = kind
        self.source = os.fspath(name)
        self.num_layers = num_layers
        self.dtype = dtype
        self.optimizer_dtype = optimizer_dtype
        self.compat = compat
        name, layers, warns = _native.check_model(json.dumps(self._keys()))
        _warn(warns)
        #: The zoo model's name, or the graph file's name.
        self.name: str = name
        #: The zoo model's layer count (``None`` for a graph file: known once built).
        self.layers: Optional[int] = layers

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
        kind = _native.model_kind(p)
        if kind == "model":
            return cls(p, kind=kind, num_layers=num_layers, dtype=dtype)
        if kind == "onnx":
            return cls(p, kind=kind, num_layers=num_layers)
        return cls(p, kind=kind, num_layers=num_layers, compat=compat)

    def _keys(self) -> Dict[str, Any]:
        """The model as the extension's requests take it (keywords given only)."""
        keys = {"kind": self.kind, "source": self.source, "dtype": self.dtype,
                "optimizer_dtype": self.optimizer_dtype, "compat": self.compat}
        return {k: v for k, v in keys.items() if v is not None}

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
    it, overrides applied; its name gains them (``sn40l-like (hbm_controllers=8)``).
    ``dram_readers`` (``--dram-readers K``) gives K of the chip's cores to streaming weights
    from DRAM, on a chip whose file has a reader rate (``wormhole-n150``, ``blackhole-p150``;
    docs/chips.md, "DRAM-reader cores"); ``dram_readers="auto"`` (``--dram-readers auto``)
    lets :func:`compare` try every count the chip offers (``spec`` is then the chip without
    readers; an instance is built on one count, so :func:`instance`, :func:`solve` and
    :func:`gap` refuse it)."""

    def __init__(
        self,
        name_or_path: Union[str, "os.PathLike[str]"] = DEFAULTS["chip"],
        hbm_tbps: Optional[float] = None,
        dram_readers: Union[int, str, None] = None,
        **overrides: Any,
    ) -> None:
        self.given = os.fspath(name_or_path)
        self.hbm_tbps = None if hbm_tbps is None else float(hbm_tbps)
        self.dram_readers: Union[int, str, None] = (
            dram_readers if dram_readers is None or dram_readers == "auto" else int(dram_readers))
        #: The keys set, as given (a key set to None keeps the chip's value).
        self.overrides: Dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
        spec, warns = _native.chip_json(json.dumps(self._keys()))
        _warn(warns)
        self.spec: Dict[str, Any] = json.loads(spec)
        self.name: str = self.spec["name"]

    def _keys(self) -> Dict[str, Any]:
        """The chip as the extension's requests take it: ``given``, ``hbm_tbps`` and the
        other ``keys`` as ``[[key, value], …]``."""
        keys: Dict[str, Any] = {"given": self.given, "keys": list(self.overrides.items())}
        if self.hbm_tbps is not None:
            keys["hbm_tbps"] = self.hbm_tbps
        if self.dram_readers is not None:
            keys["dram_readers"] = self.dram_readers
        return keys

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.overrides.items())
        hbm = "" if self.hbm_tbps is None else f", hbm_tbps={self.hbm_tbps!r}"
        readers = "" if self.dram_readers is None else f", dram_readers={self.dram_readers!r}"
        return f"Chip({self.given!r}{hbm}{readers}{extra})"


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
        return Chip(c.given, hbm_tbps, c.dram_readers, **c.overrides)
    return Chip(c, hbm_tbps)
