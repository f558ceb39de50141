"""The pieces every command shares: the CLI's defaults, warnings, progress, the exact flags,
DataFrames of rows and the results base class."""

from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Union

from . import _native

if TYPE_CHECKING:
    from ._instance import Instance


__version__: str = _native.TOOL_VERSION


#: The CLI's defaults, the same in every function: the request layer's own (``model``,
#: ``chip``, ``mode``, ``batch``, ``kv``, ``load_order``, ``noc_row``, the exact solver's
#: ``backend``, ``time_limit``, …, ``moe``'s ``moe_model``, ``routing``, ``steps``, ``seed``,
#: ``methods``), read from it.
DEFAULTS: Dict[str, Any] = json.loads(_native.request_defaults())


Progress = Union[bool, Callable[[int, int, str], Any], None]


def _warn(lines: Iterable[str]) -> None:
    """The warnings the CLI prints on stderr, as Python warnings."""
    for line in lines:
        warnings.warn(line, stacklevel=3)


def _pandas() -> Any:
    import pandas  # type: ignore[import-untyped]  # imported late: `import elk_opt` stays quick

    return pandas


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
        # A union's or `dram_readers="auto"`'s total is known better as its rows run.
        bar.total = n
        bar.n = min(k - 1, n) if k > 0 else 0
        bar.set_postfix_str(name)
        bar.refresh()

    def close() -> None:
        if bar is not None:
            bar.n = bar.total
            bar.refresh()
            bar.close()

    return cb, close


#: The exact solver's keywords (``gap``, ``solve(exact=True)``), defaults in ``DEFAULTS``.
EXACT_KEYS = ("backend", "time_limit", "linearisation", "warm_start", "lp_bound", "whole_model_bound",
              "window_search", "work_limit")


def _exact_keys(flags: Dict[str, Any]) -> str:
    """The exact keywords given, as the extension's request takes them (JSON): a keyword it
    does not know is refused there, naming it."""
    return json.dumps(flags)


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
