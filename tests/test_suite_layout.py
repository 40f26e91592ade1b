"""How the test suite is laid out: fixtures live in conftest.py files and reach tests through pytest, never
through an import; shared helpers live in tests/support/ (plain modules, no fixtures); and there is one
fake clock, one recording surface and one way to build a tool context."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
SUPPORT = TESTS / "support"
CLOCK = SUPPORT / "clock.py"
SURFACE = SUPPORT / "surface.py"
CONTEXT = SUPPORT / "context.py"
CONTRACTS = TESTS / "test_design_contracts.py"
"""It checks the `ToolContext` contract of DESIGN.md itself, so it builds one by hand."""


def _modules() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(TESTS.rglob("*.py"))}


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(TESTS.parent)}:{getattr(node, 'lineno', 0)}"


def _imported_modules(path: Path, tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """(node, dotted module) for every import in the file, relative imports resolved."""
    package = ".".join(path.relative_to(TESTS.parent).with_suffix("").parts[:-1])
    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
                if not node.module:
                    found += [(node, f"{module}.{alias.name}") for alias in node.names]
                    continue
            else:
                module = node.module or ""
            found.append((node, module))
    return found


def _is_fixture(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
        "fixture" in ast.unparse(d) for d in node.decorator_list
    )


def test_no_test_imports_a_conftest_or_a_test_module() -> None:
    wrong = [
        f"{_where(path, node)} imports {module}"
        for path, tree in _modules().items()
        for node, module in _imported_modules(path, tree)
        if module.startswith("tests.")
        and (module.rsplit(".", 1)[-1] == "conftest" or module.rsplit(".", 1)[-1].startswith("test_"))
    ]
    assert not wrong, (
        "fixtures reach a test through a conftest.py, helpers through tests/support/, never by importing "
        "a conftest or a test module:\n" + "\n".join(wrong)
    )


def test_fixtures_are_defined_in_conftest_files_or_the_test_module_that_uses_them() -> None:
    wrong = [
        _where(path, node)
        for path, tree in _modules().items()
        if path.is_relative_to(SUPPORT)
        for node in tree.body
        if _is_fixture(node)
    ]
    assert not wrong, (
        "tests/support/ holds plain helpers; a shared fixture goes in a conftest.py:\n" + "\n".join(wrong)
    )


def test_there_is_one_fake_clock() -> None:
    clocks = [
        f"{_where(path, node)} {node.name}"
        for path, tree in _modules().items()
        if path != CLOCK
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name.endswith("Clock")
    ]
    assert not clocks, (
        "use tests/support/clock.py's FakeClock (and `clock` from tests/conftest.py):\n" + "\n".join(clocks)
    )


def test_there_is_one_recording_surface() -> None:
    """A class that sends and edits messages is a channel surface; the tests have one, which a test may
    subclass to slow it down."""
    surfaces = []
    for path, tree in _modules().items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or path == SURFACE:
                continue
            methods = {m.name for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}
            bases = {ast.unparse(b) for b in node.bases}
            if {"send", "edit"} <= methods and "RecordingSurface" not in bases:
                surfaces.append(f"{_where(path, node)} {node.name}")
    assert not surfaces, "use tests/support/surface.py's RecordingSurface:\n" + "\n".join(surfaces)


def test_there_is_one_make_ctx() -> None:
    wrong = []
    for path, tree in _modules().items():
        if path in (CONTEXT, CONTRACTS):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "make_ctx":
                wrong.append(f"{_where(path, node)} defines make_ctx")
            elif isinstance(node, ast.Call) and ast.unparse(node.func) == "ToolContext":
                wrong.append(f"{_where(path, node)} builds a ToolContext by hand")
    assert not wrong, (
        "build tool contexts with tests/support/context.py's make_ctx (or `ctx_for`):\n" + "\n".join(wrong)
    )


def test_the_layout_checks_can_fail(tmp_path: Path) -> None:
    """Each check above finds what it refuses (so an empty result means something)."""
    bad = ast.parse(
        "from tests.web.conftest import SECRET\n"
        "from tests.web.test_browser import shot\n"
        "class WallClock: ...\n"
        "class Surface:\n    async def send(self, t): ...\n    async def edit(self, h, t): ...\n"
        "def make_ctx(): return ToolContext()\n"
    )
    path = TESTS / "web" / "test_example.py"
    imported = [m for _, m in _imported_modules(path, bad)]
    assert imported == ["tests.web.conftest", "tests.web.test_browser"]
    classes = [n.name for n in ast.walk(bad) if isinstance(n, ast.ClassDef)]
    assert classes == ["WallClock", "Surface"]
    relative = ast.parse("from .conftest import NOW\nfrom . import test_tool\n")
    assert [m for _, m in _imported_modules(TESTS / "knowledge" / "test_x.py", relative)] == [
        "tests.knowledge.conftest",
        "tests.knowledge.test_tool",
    ]
