# loopbench's pristine entry point for a known test runner (unittest, pytest).
#
# A check that runs `python -m unittest ARGS` (or pytest) runs `python THIS unittest
# ARGS` instead; this file and `check.json` beside it are the harness's, outside the
# tree and read-only to the check. Before any module of the tree can be imported, it
# notes the runner's assertion and result machinery (every function, class and method
# of the runner's modules, and for pytest the hook implementations and the import
# hooks of the session); it runs the runner as `-m` would, with a sentinel test that
# must fail added last; after the run it compares the machinery and writes one line to
# file descriptor 2:
#
#     loopbench-entry TOKEN sentinel=STATE tests=ok|failed changed=NAME,...|-
#
# The line is evidence only as far as the code under test, which runs in this same
# process, leaves this file's own code alone: the harness's documentation says what
# remains possible.

import os
import sys

_write = os.write
_exit = os._exit
_here = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _here:
    del sys.path[0]

import builtins  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import types  # noqa: E402

with open(os.path.join(_here, "check.json"), encoding="utf-8") as _f:
    _CHECK = json.load(_f)
_TOKEN = _CHECK["token"]
_SENTINEL = _CHECK["sentinel"]
_ROOT = os.path.abspath(_CHECK["root"])


class _RunnerFromOutsideTheTree:
    """While it is entered, the import path holds no directory of the tree, so that the
    runner imported is the one installed, never a module of the tree named like it."""

    def __enter__(self):
        self.saved = sys.path[:]
        sys.path[:] = [p for p in sys.path if not _in_tree(p)]

    def __exit__(self, *exc):
        sys.path[:] = self.saved


def _in_tree(path):
    where = os.path.abspath(path or ".")
    return where == _ROOT or where.startswith(_ROOT.rstrip(os.sep) + os.sep)

_FUNCTION = types.FunctionType
_DESCRIPTORS = (staticmethod, classmethod, property, types.FunctionType)


def _parts(value, depth=0):
    """The objects of `value` a patch could replace in place: a function's code,
    defaults and closure, a descriptor's functions."""
    out = [value]
    if isinstance(value, (staticmethod, classmethod)):
        out += _parts(value.__func__, depth)
    elif isinstance(value, property):
        for f in (value.fget, value.fset, value.fdel):
            out += _parts(f, depth) if f is not None else [None]
    elif isinstance(value, _FUNCTION):
        out += [value.__code__, value.__defaults__, value.__kwdefaults__]
        for cell in value.__closure__ or ():
            try:
                inner = cell.cell_contents
            except ValueError:
                out.append(None)
                continue
            out += _parts(inner, depth + 1) if depth < 2 else [inner]
    return out


def _watched(value):
    """Whether a value of a runner's class is machinery (not data such as `maxDiff`)."""
    return callable(value) or isinstance(value, _DESCRIPTORS)


def _snapshot(prefixes, skipped):
    """Every function, class, method and module of the loaded modules named by
    `prefixes`, each with what a patch could replace."""
    snap = {}
    for name, module in list(sys.modules.items()):
        root = name.split(".")[0]
        if root not in prefixes or name in skipped or module is None:
            continue
        snap["sys.modules['%s']" % name] = [module]
        for key, value in list(vars(module).items()):
            if not _watched(value) and not isinstance(value, types.ModuleType):
                continue
            here = "%s.%s" % (name, key)
            snap[here] = _parts(value)
            if isinstance(value, type) and value.__module__ == name:
                snap[here + ".__bases__"] = list(value.__bases__)
                for attr, member in list(vars(value).items()):
                    if _watched(member):
                        snap["%s.%s" % (here, attr)] = _parts(member)
                snap[here + ".*"] = sorted(
                    a for a, m in vars(value).items() if _watched(m)
                )
    return snap


def _changed(before, after):
    """The names whose objects differ between two snapshots (new module attributes,
    such as a submodule imported later, are no change; a new method of a class is)."""
    out = []
    for key, old in before.items():
        new = after.get(key)
        if key.endswith(".*"):
            if new != old:
                added = sorted(set(new or ()) - set(old))
                out += [key[:-1] + a for a in added] or [key[:-2]]
        elif new is None or len(new) != len(old) or any(a is not b for a, b in zip(old, new)):
            out.append(key)
    return out


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def _printable(name):
    """A name as one field of the report: ASCII, no control character, no comma."""
    return name.encode("unicode_escape").decode("ascii").replace(",", "\\x2c")


def _report(sentinel, tests_ok, changed):
    _flush()
    line = "loopbench-entry %s sentinel=%s tests=%s changed=%s\n" % (
        _TOKEN,
        sentinel,
        "ok" if tests_ok else "failed",
        ",".join(sorted(set(map(_printable, changed)))) or "-",
    )
    _write(2, line.encode("utf-8", "replace"))


def _load_sentinel(loader_class):
    path = _SENTINEL["path"]
    spec = importlib.util.spec_from_file_location(_SENTINEL["module"], path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_SENTINEL["module"]] = module
    spec.loader.exec_module(module)
    return loader_class().loadTestsFromModule(module)


def _is_sentinel(test):
    """Whether a unittest test is the sentinel: its method, of a class of the sentinel's
    file, whatever name the module was imported under."""
    try:
        if getattr(test, "_testMethodName", None) != _SENTINEL["test"]:
            return False
        module = sys.modules.get(type(test).__module__)
        where = getattr(module, "__file__", None) or ""
        return os.path.abspath(where) == os.path.abspath(_SENTINEL["path"])
    except BaseException:
        return False


def _unittest(argv):
    # (unittest.async_case, which imports asyncio, is left to the tests that use it:
    # a module first imported after the run began has nothing to be compared with.)
    with _RunnerFromOutsideTheTree():
        import unittest
        import unittest.main
        import unittest.runner

    watched = {"unittest"}
    before = _snapshot(watched, {"unittest.mock"})

    def without_sentinel(suite):
        if isinstance(suite, unittest.TestSuite):
            return suite.__class__([t for t in map(without_sentinel, suite) if t is not None])
        return None if _is_sentinel(suite) else suite

    class Program(unittest.main):
        def createTests(self, *args, **kwargs):
            super().createTests(*args, **kwargs)
            sentinel = _load_sentinel(unittest.TestLoader)
            self.test = unittest.TestSuite([without_sentinel(self.test), sentinel])

    if not getattr(sys.flags, "safe_path", False):
        sys.path.insert(0, os.getcwd())
    sys.argv[:] = [os.path.basename(sys.executable) + " -m unittest"] + argv
    code = 0
    result = None
    try:
        result = Program(module=None, argv=sys.argv, exit=False).result
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    changed = _changed(before, _snapshot(watched, {"unittest.mock"}))
    if result is None:
        _report("missing", False, changed)
        return code or 1

    def sentinel_in(pairs, mark=""):
        return any(_is_sentinel(t) and mark in tb for t, tb in pairs)

    if sentinel_in(result.failures, _SENTINEL["marker"]):
        state = "failed"
    elif sentinel_in(result.errors):
        state = "errored"
    elif sentinel_in(result.skipped):
        state = "skipped"
    elif sentinel_in(result.expectedFailures):
        state = "expected-failure"
    else:
        state = "not-failed"
    others = [t for t, _ in result.failures + result.errors if not _is_sentinel(t)]
    others += [t for t in result.unexpectedSuccesses if not _is_sentinel(t)]
    tests_ok = not others
    _report(state, tests_ok, changed)
    return 0 if state == "failed" and tests_ok and not changed else 1


def _pytest(argv):
    with _RunnerFromOutsideTheTree():
        import pytest
        import pluggy  # noqa: F401
        from _pytest.config import default_plugins, essential_plugins

        for name in essential_plugins + default_plugins:
            try:
                importlib.import_module("_pytest." + name)
            except ImportError:
                pass
        import unittest  # noqa: F401  (pytest runs TestCase classes through it)

    watched = {"pytest", "_pytest", "pluggy", "unittest"}
    before = _snapshot(watched, {"unittest.mock"})
    path = os.path.abspath(_SENTINEL["path"])
    mark = _SENTINEL["marker"]

    def hooks(pm):
        """Per hook: its caller, then per implementation the plugin, the function and
        what of the function a patch could replace; and the import hooks."""
        out = {"sys.meta_path": [(f,) for f in sys.meta_path]}
        for name, caller in list(vars(pm.hook).items()):
            impls = caller.get_hookimpls() if hasattr(caller, "get_hookimpls") else []
            out["hook " + name] = [(caller,)] + [
                tuple([i.plugin] + _parts(i.function)) for i in impls
            ]
        return out

    def conftest(plugin):
        return isinstance(plugin, types.ModuleType) and os.path.basename(
            getattr(plugin, "__file__", None) or ""
        ) == "conftest.py"

    def covers(start, arg):
        where = os.path.abspath(os.path.join(str(start), arg.split("::")[0]))
        return path == where or path.startswith(where.rstrip(os.sep) + os.sep)

    class Plugin:
        def __init__(self):
            self.pm = None
            self.at_start = None
            self.changed = []
            self.nodeid = None
            self.reports = []
            self.others_failed = False

        @pytest.hookimpl(trylast=True)
        def pytest_sessionstart(self, session):
            # Named on its own unless a directory pytest walks holds it (then
            # pytest_collect_file takes it, whatever `python_files` says): pytest
            # collects a file named beside its own directory alone.
            config = session.config
            if config.option.pyargs or not any(
                covers(config.invocation_params.dir, arg) for arg in config.args
            ):
                config.args.append(path)
            self.pm = session.config.pluginmanager
            self.at_start = hooks(self.pm)
            self.plugins = set(map(id, self.pm.get_plugins()))

        def pytest_collect_file(self, file_path, parent):
            if str(file_path) == path:
                return pytest.Module.from_parent(parent, path=file_path)
            return None

        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, session, config, items):
            ours = [i for i in items if str(getattr(i, "path", "")) == path]
            if ours:
                self.nodeid = ours[-1].nodeid
                items[:] = [i for i in items if str(getattr(i, "path", "")) != path] + ours[-1:]

        def pytest_collectreport(self, report):
            if report.failed:
                self.others_failed = True

        def pytest_runtest_logreport(self, report):
            if report.nodeid == self.nodeid:
                self.reports.append(report)
            elif report.failed:
                self.others_failed = True

        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionfinish(self, session):
            if self.at_start is None:
                return
            # conftest files found while collecting join the session as plugins: they
            # are the tree's or the pristine tests' files, which the harness judges
            # as files (a conftest.py outside the pristine tests counts as a hook).
            new = [p for p in self.pm.get_plugins() if id(p) not in self.plugins]
            allowed = {id(p) for p in new if conftest(p)}
            now = hooks(self.pm)
            for key in set(self.at_start) | set(now):
                old = self.at_start.get(key, [])
                cur = [x for x in now.get(key, []) if id(x[0]) not in allowed]
                if key not in self.at_start:
                    cur = cur[1:]  # a hook a conftest file declared: its caller is new
                if len(cur) != len(old) or any(
                    len(a) != len(b) or any(p is not q for p, q in zip(a, b))
                    for a, b in zip(old, cur)
                ):
                    self.changed.append(key)

    plugin = Plugin()
    if not getattr(sys.flags, "safe_path", False):
        sys.path.insert(0, os.getcwd())
    sys.argv[:] = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + argv
    try:
        code = int(pytest.main(plugins=[plugin]))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    changed = plugin.changed + _changed(before, _snapshot(watched, {"unittest.mock"}))
    if plugin.at_start is None:
        changed.append("the session did not start")
    calls = [r for r in plugin.reports if r.when == "call"]
    if any(r.failed and mark in (r.longreprtext or "") for r in calls):
        state = "failed"
    elif any(r.failed for r in plugin.reports):
        state = "errored"
    elif any(r.skipped for r in plugin.reports):
        state = "skipped"
    elif calls:
        state = "not-failed"
    else:
        state = "missing"
    tests_ok = not plugin.others_failed
    _report(state, tests_ok, changed)
    if code == 1 and state == "failed" and tests_ok and not changed:
        return 0
    return code if code not in (0, 1) else 1


def _main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("unittest", "pytest"):
        _write(2, b"loopbench entry point: usage: ENTRY unittest|pytest ARGS...\n")
        return 2
    runner, argv = sys.argv[1], sys.argv[2:]
    try:
        return _unittest(argv) if runner == "unittest" else _pytest(argv)
    except BaseException as e:  # the entry point must report, whatever happened
        _report("missing", False, ["the entry point failed: %s" % type(e).__name__])
        return 1


if __name__ == "__main__":
    _code = _main()
    _flush()
    sys.exit(_code)
