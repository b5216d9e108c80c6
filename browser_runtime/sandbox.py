"""One interpreter, many learners' runs: what a run may change is put back before the next one.

Every cell on a page shares one Pyodide interpreter. A learner's code can rebind anything it can
reach: ``np.allclose = …``, ``builtins.print = …``, ``sys.stdout = …``, a checker function's
``__code__``, a method of ``torch.Tensor``, the recursion limit, trace hooks, asyncio tasks. So
the worker takes a :func:`snapshot` once its trusted code is loaded, and calls :func:`restore`
after every job. ``restore`` puts back:

- ``sys.modules`` as it was (a learner's fake or new module is dropped);
- every module's namespace (names added are removed, names rebound are bound again);
- the namespace of every Python class those modules define (``Tensor.__add__``, …);
- the code, defaults and keyword defaults of every Python function in those namespaces;
- the interpreter's settings: (through ``sys``'s namespace) standard streams, ``excepthook``,
  ``displayhook``; the recursion limit, trace and profile functions, ``gc``, NumPy's error and
  print options (when NumPy is loaded), the SIGINT handler, the working directory and the
  environment; asyncio tasks started since the snapshot are cancelled (those that were already
  running, such as the worker's own, go on).

What it cannot put back it reports (:func:`restore` returns the reasons): a closed standard
stream, an audit hook added (they cannot be removed), a heap grown past ``HEAP_LIMIT``. The
worker then replaces the interpreter. Objects mutated in place (a list inside a module) are not
tracked: nothing the site relies on for a verdict is kept that way.

``restore`` must work even after a learner's code has run, so it calls nothing by name: every
callable it needs is bound as a default argument when the module loads, and the snapshot is a
tuple of tuples, which cannot be changed. The worker checks, before each call, that
``restore.__code__`` and ``restore.__defaults__`` are still the objects it saw at start-up.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import types
from typing import Any

__all__ = ["HEAP_LIMIT", "restore", "snapshot"]

HEAP_LIMIT = 1 << 30  # bytes of wasm heap after a job above which the interpreter is replaced

_audit_hooks_added: list[bool] = []


def _add_audit_hook(hook):  # the only way to add one, recorded: they cannot be removed
    _audit_hooks_added.append(True)
    return _real_addaudithook(hook)


_real_addaudithook = sys.addaudithook
sys.addaudithook = _add_audit_hook


def snapshot() -> tuple:
    """Everything :func:`restore` puts back, as it is now (call it when only trusted code ran)."""
    modules = tuple(sys.modules.items())  # every entry (some, like pyodide_js, are not modules)
    seen: set[int] = set()
    namespaces, classes, functions = [], [], []

    # type(x) rather than isinstance(x, …): the latter asks x for its __class__, which some
    # library objects answer with a warning or worse
    def function(fn: Any) -> None:
        if type(fn) in (staticmethod, classmethod):
            fn = fn.__func__
        if type(fn) is types.FunctionType and id(fn) not in seen:
            seen.add(id(fn))
            functions.append((fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__))

    for _, module in modules:
        if id(module) in seen or not issubclass(type(module), types.ModuleType):
            continue
        seen.add(id(module))
        space = vars(module)
        items = tuple(space.items())
        namespaces.append((space, items))
        for _, value in items:
            function(value)
            if issubclass(type(value), type) and id(value) not in seen and _heap_type(value):
                seen.add(id(value))
                members = tuple(value.__dict__.items())
                classes.append((value, members))
                for _, member in members:
                    function(member)
    state = (
        sys.stdout, sys.stderr, sys.getrecursionlimit(), gc.get_threshold(),
        signal.getsignal(signal.SIGINT), os.getcwd(), tuple(os.environ.items()),
        sys.get_int_max_str_digits(), _tasks(),
    )
    # settings kept inside libraries: (setter, its keyword arguments now)
    np = sys.modules.get("numpy")
    settings = () if np is None else (
        (np.seterr, tuple(np.geterr().items())),
        (np.set_printoptions, tuple(np.get_printoptions().items())),
    )
    return (modules, tuple(namespaces), tuple(classes), tuple(functions), state, settings)


def _heap_type(cls: type) -> bool:
    """A class defined in Python (Py_TPFLAGS_HEAPTYPE, not IMMUTABLETYPE): rebindable."""
    flags = cls.__flags__
    return bool(flags & (1 << 9)) and not flags & (1 << 8)


def _tasks() -> frozenset:
    """The asyncio tasks of this thread's event loop now (none if it has no loop)."""
    try:
        return frozenset(asyncio.all_tasks(asyncio.get_event_loop()))
    except RuntimeError:
        return frozenset()


def restore(
    snap: tuple,
    heap: int = 0,
    *,
    _sys_vars=sys.__dict__,
    _dict=dict,
    _list=list,
    _len=len,
    _set=object.__setattr__,
    _type_set=type.__setattr__,
    _type_del=type.__delattr__,
    _setrecursionlimit=sys.setrecursionlimit,
    _settrace=sys.settrace,
    _setprofile=sys.setprofile,
    _set_digits=sys.set_int_max_str_digits,
    _gc_enable=gc.enable,
    _gc_threshold=gc.set_threshold,
    _signal=signal.signal,
    _sigint=signal.SIGINT,
    _chdir=os.chdir,
    _environ=os.environ,
    _all_tasks=asyncio.all_tasks,
    _current_task=asyncio.current_task,
    _get_loop=asyncio.get_event_loop,
    _audit=_audit_hooks_added,
    _limit=HEAP_LIMIT,
) -> list[str]:
    """Put back what :func:`snapshot` saved; return what could not be (empty: all is well).

    ``heap`` is the wasm heap's size in bytes, which the worker passes in (JS sees it). Calls
    nothing by name: each callable is a default argument, bound when this module loaded.
    """
    modules, namespaces, classes, functions, state, settings = snap
    missing = _sys_vars  # a sentinel no namespace holds as a value

    def put_back(space: dict, items: tuple) -> None:
        saved = _dict(items)
        for name in _list(space):
            if name not in saved:
                del space[name]
        for name, value in items:
            if space.get(name, missing) is not value:
                space[name] = value

    # sys first (it holds the modules dict and the hooks), then the modules dict, then the rest
    for space, items in namespaces:
        if space is _sys_vars:
            put_back(space, items)
    put_back(_sys_vars["modules"], modules)
    for space, items in namespaces:
        put_back(space, items)
    for cls, members in classes:
        current = cls.__dict__
        saved = _dict(members)
        for name in _list(current):
            if name not in saved:
                _type_del(cls, name)
        for name, value in members:
            if current.get(name, missing) is not value:
                _type_set(cls, name, value)
    for fn, code, defaults, kwdefaults in functions:
        if fn.__code__ is not code:
            _set(fn, "__code__", code)
        if fn.__defaults__ is not defaults:
            _set(fn, "__defaults__", defaults)
        if fn.__kwdefaults__ is not kwdefaults:
            _set(fn, "__kwdefaults__", kwdefaults)
    stdout, stderr, limit, threshold, sigint, cwd, environ, digits, tasks = state
    _settrace(None)
    _setprofile(None)
    _setrecursionlimit(limit)
    _set_digits(digits)
    _gc_enable()
    _gc_threshold(*threshold)
    for setter, kwargs in settings:  # functions whose code was put back above
        setter(**_dict(kwargs))
    _signal(_sigint, sigint)
    _chdir(cwd)
    _environ.clear()
    _environ.update(environ)
    loop = _get_loop()
    try:
        this = _current_task(loop)  # the task restore itself runs in, if any, goes on
    except RuntimeError:
        this = None
    for task in _all_tasks(loop):
        if task is not this and task not in tasks:
            task.cancel()
    problems = []
    if stdout.closed or stderr.closed:
        problems.append("a standard stream was closed")
    if _audit:
        problems.append("an audit hook was added")
    if heap > _limit:
        problems.append(f"the heap grew to {heap >> 20} MB")
    return problems
