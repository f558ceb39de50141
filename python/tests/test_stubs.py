"""elk_opt/_native.pyi is the extension's: every public name of the built module has a stub
and every stub a name, of the same kind (function, class, constant); every function and
every method, property and static method of every class takes the parameters the Rust
declares (`#[pyfunction]`, `#[pymethods]`, `#[pyo3(signature = ...)]`), by the same names,
of the same kinds, with the same defaults. The stub file is parsed with `ast` (never
imported); the module's side is `inspect.signature`, which reads the `__text_signature__`
pyo3 writes from the Rust signature. Return types are not compared (pyo3 does not record
them)."""

import ast
import inspect
import types
from pathlib import Path

import pytest

from elk_opt import _native

STUB = Path(__file__).resolve().parents[1] / "elk_opt" / "_native.pyi"
# What `inspect` calls each kind of parameter; the stub's are named the same below.
POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY.name
POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD.name
VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL.name
KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY.name
VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD.name
# CPython's flag of a type that can be subclassed (Include/object.h).
Py_TPFLAGS_BASETYPE = 1 << 10


class NoDefault:
    """A parameter without a default (`inspect.Parameter.empty` has an unhelpful repr)."""

    def __repr__(self):
        return "<no default>"

    def __eq__(self, other):
        return isinstance(other, NoDefault)


def public(name):
    return not name.startswith("_")


# -- the stub's side ------------------------------------------------------------------------


def stub_default(node, where):
    """A stub default as its value: a literal, so that it can be compared with the Rust's
    (`...` would hide a changed default)."""
    if node is None:
        return NoDefault()
    try:
        value = ast.literal_eval(node)
    except ValueError:
        pytest.fail(f"{where}: the default {ast.unparse(node)} is not a literal")
    if value is Ellipsis:
        pytest.fail(f"{where}: give the default's value, not `...`")
    return value


def stub_params(fn, method):
    """(name, kind, default) of each parameter of a stub `def`, without `self` of a method."""
    a = fn.args
    positional = [(p, POSITIONAL_ONLY) for p in a.posonlyargs]
    positional += [(p, POSITIONAL_OR_KEYWORD) for p in a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [
        (p.arg, kind, stub_default(d, f"{fn.name}({p.arg})"))
        for (p, kind), d in zip(positional, defaults)
    ]
    if a.vararg:
        params.append((a.vararg.arg, VAR_POSITIONAL, NoDefault()))
    params += [
        (p.arg, KEYWORD_ONLY, stub_default(d, f"{fn.name}({p.arg})"))
        for p, d in zip(a.kwonlyargs, a.kw_defaults)
    ]
    if a.kwarg:
        params.append((a.kwarg.arg, VAR_KEYWORD, NoDefault()))
    if method:
        assert params and params[0][0] in ("self", "cls"), f"{fn.name}: no self"
        params = params[1:]
    return params


def stub_member_kind(fn):
    names = {ast.unparse(d) for d in fn.decorator_list}
    for kind in ("property", "staticmethod", "classmethod"):
        if kind in names:
            return kind
    return "method"


def stub_names(body):
    """Each public name a stub body defines: {name: (kind, node)}. Private names (`_Path`)
    are the stub's own aliases."""
    names = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = ("function", node)
        elif isinstance(node, ast.ClassDef):
            names[node.name] = ("class", node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = ("constant", node)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = ("constant", node)
    return {n: v for n, v in names.items() if public(n) or n in ("__init__", "__new__")}


STUBS = stub_names(ast.parse(STUB.read_text(), filename=str(STUB)).body)


def stub_members(cls_name):
    """{name: (kind, node)} of a stub class: methods as property, staticmethod, classmethod
    or method; annotated names as constants."""
    kind, node = STUBS[cls_name]
    assert kind == "class"
    members = {}
    for name, (k, n) in stub_names(node.body).items():
        members[name] = (stub_member_kind(n) if k == "function" else k, n)
    return members


# -- the module's side ----------------------------------------------------------------------


def runtime_params(obj, method):
    """(name, kind, default) of each parameter pyo3 declared, without `self` of a method."""
    params = [
        (p.name, p.kind.name, NoDefault() if p.default is p.empty else p.default)
        for p in inspect.signature(obj).parameters.values()
    ]
    if method:
        assert params and params[0][0] in ("self", "cls", "$self", "$type"), obj
        params = params[1:]
    return params


def runtime_kind(obj):
    if isinstance(obj, type):
        return "class"
    if callable(obj):
        return "function"
    return "constant"


def runtime_member_kind(raw):
    """What a class attribute is, as it sits in the class's `__dict__`."""
    if isinstance(raw, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
        return "property"
    if isinstance(raw, staticmethod):
        return "staticmethod"
    if isinstance(raw, (classmethod, types.ClassMethodDescriptorType)):
        return "classmethod"
    if callable(raw):
        return "method"
    return "constant"


def runtime_members(cls):
    """{name: raw attribute} of what the class itself defines (not what it inherits)."""
    return {n: v for n, v in vars(cls).items() if public(n)}


MODULE_NAMES = sorted(n for n in dir(_native) if public(n))
CLASSES = sorted(n for n in MODULE_NAMES if isinstance(getattr(_native, n), type))
FUNCTIONS = sorted(n for n in MODULE_NAMES if runtime_kind(getattr(_native, n)) == "function")
METHODS = [
    (c, m)
    for c in CLASSES
    for m, raw in sorted(runtime_members(getattr(_native, c)).items())
    if runtime_member_kind(raw) in ("method", "staticmethod", "classmethod")
]


# -- the tests ------------------------------------------------------------------------------


def test_the_stub_file_parses_and_covers_something():
    # A wrong path or an empty file would make every comparison below vacuous.
    assert {"NativeInstance", "NativeSchedule", "compare_reader_counts"} <= set(STUBS)
    assert len(FUNCTIONS) >= 10 and len(METHODS) >= 10


def test_every_public_name_has_a_stub_and_every_stub_a_name():
    stubbed = sorted(n for n in STUBS if public(n))
    assert [n for n in MODULE_NAMES if n not in STUBS] == [], "names without a stub"
    assert [n for n in stubbed if n not in MODULE_NAMES] == [], "stubs of no name"
    kinds = {n: runtime_kind(getattr(_native, n)) for n in MODULE_NAMES}
    assert {n: STUBS[n][0] for n in MODULE_NAMES} == kinds


def test_the_module_declares_what_it_has():
    # `from elk_opt._native import *` and the stubs agree on one list of names.
    assert sorted(_native.__all__) == MODULE_NAMES


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_parameters_match(name):
    kind, node = STUBS[name]
    assert kind == "function"
    assert stub_params(node, method=False) == runtime_params(getattr(_native, name), method=False)


@pytest.mark.parametrize("cls_name", CLASSES)
def test_class_members_and_bases_match(cls_name):
    cls = getattr(_native, cls_name)
    runtime = {n: runtime_member_kind(v) for n, v in runtime_members(cls).items()}
    stubbed = {n: k for n, (k, _) in stub_members(cls_name).items() if public(n)}
    assert stubbed == runtime
    _, node = STUBS[cls_name]
    bases = [ast.unparse(b) for b in node.bases] or ["object"]
    assert bases == [b.__name__ for b in cls.__bases__]
    # A pyclass without `subclass` cannot be subclassed: `@final` in the stub.
    final = "final" in {ast.unparse(d) for d in node.decorator_list}
    assert final == (not cls.__flags__ & Py_TPFLAGS_BASETYPE), f"{cls_name}: @final"


@pytest.mark.parametrize("cls_name", CLASSES)
def test_constructors_match(cls_name):
    # pyo3 gives a class a `__text_signature__` only with a `#[new]`; without one the class
    # cannot be made from Python (or, for an exception, takes its base's arguments) and the
    # stub declares no constructor.
    cls = getattr(_native, cls_name)
    members = stub_members(cls_name)
    ctor = [members[n][1] for n in ("__init__", "__new__") if n in members]
    if getattr(cls, "__text_signature__", None) is None:
        assert ctor == [], f"{cls_name} has no #[new]"
    else:
        assert len(ctor) == 1, f"{cls_name} has a #[new]: stub one __init__"
        assert stub_params(ctor[0], method=True) == runtime_params(cls, method=False)


@pytest.mark.parametrize("cls_name,name", METHODS)
def test_method_parameters_match(cls_name, name):
    cls = getattr(_native, cls_name)
    raw = vars(cls)[name]
    members = stub_members(cls_name)
    assert name in members, f"{cls_name}.{name} has no stub"
    kind, node = members[name]
    assert kind == runtime_member_kind(raw)
    # A static method's signature has no `self`; a class method's bound one has no `cls`.
    method = kind == "method"
    expected = runtime_params(getattr(cls, name), method=method)
    assert stub_params(node, method=kind != "staticmethod") == expected
