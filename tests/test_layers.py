"""The package's layers: imports run one way, from the top floor down, and
framework and driver imports stay where they belong. Read from the source with
ast (nothing is imported), so a violation anywhere fails here."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "autotrans"

# Lowest first: a module may import its own layer and those before it.
LAYERS = ["core", "families", "kernels", "build", "emulate", "results", "backend", "tuning", "api",
          "tools", "cli", "autotrans"]
FRAMEWORKS = {"torch", "cupy", "jax", "jaxlib", "numba"}


def modules() -> dict[str, Path]:
    """{dotted module name: file} for the package and the family modules
    (cuda_templates/*.py, imported as autotrans.families.*)."""
    out = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in (REPO / "cuda_templates").glob("*.py"):
        if path.stem != "__init__":
            out[f"autotrans.families.{path.stem}"] = path
    return out


def imports(name: str, path: Path) -> list[tuple[str, bool]]:
    """(absolute module imported, at module level?) for each import statement."""
    tree = ast.parse(path.read_text())
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if node.module:   # "from .. import x" names modules, not its package
                out.append((base, id(node) in top))
            out += [(f"{base}.{a.name}", id(node) in top) for a in node.names]
    return out


def layer(name: str) -> int:
    parts = name.split(".")
    if parts[0] != "autotrans":
        raise ValueError(name)
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS) - 1


MODULES = modules()
GRAPH = {n: sorted({m for m, _ in imports(n, p) if m in MODULES and m != n}) for n, p in MODULES.items()}


def test_every_module_has_a_layer():
    for name in MODULES:
        parts = name.split(".")
        assert len(parts) < 3 or parts[1] in LAYERS, f"{name} is in no layer of {LAYERS}"
    assert len(MODULES) > 30


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_down_the_layers(name):
    up = [m for m in GRAPH[name] if layer(m) > layer(name)]
    assert not up, f"{name} (layer {LAYERS[layer(name)]}) imports higher layers: {up}"


def test_no_import_cycles():
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in GRAPH[n]:
            if state.get(m) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(m):] + [m]))
            if m not in state:
                visit(m)
        stack.pop()
        state[n] = "done"

    for n in sorted(MODULES):
        if n not in state:
            visit(n)


def test_the_core_imports_nothing_of_autotrans():
    for name in MODULES:
        if name.startswith("autotrans.core"):
            assert all(m.startswith("autotrans.core") for m in GRAPH[name]), (name, GRAPH[name])


def test_pycuda_is_imported_in_one_module():
    users = {n for n, p in MODULES.items() for m, _ in imports(n, p) if m.split(".")[0] == "pycuda"}
    assert users == {"autotrans.backend.cuda"}


def test_frameworks_are_never_imported_at_module_level():
    for name, path in MODULES.items():
        eager = [m for m, top in imports(name, path) if top and m.split(".")[0] in FRAMEWORKS]
        assert not eager, f"{name} imports {eager} at import time"


def test_the_layer_checker_sees_a_violation():
    """The checker itself: an upward and a relative import are resolved."""
    assert layer("autotrans.api.launch") > layer("autotrans.backend.cuda") > layer("autotrans.core.problem")
    got = {m for m, _ in imports("autotrans.tuning.runner", MODULES["autotrans.tuning.runner"])}
    assert "autotrans.results.store" in got and "autotrans.backend.cuda" in got
