"""The shape of the package and its notebooks (issue 27's table): what a reader meets. Not a test: it prints figures.

- files and lines of `carebench/tracks/`; modules and lines of the package; the largest module (and its prose words per
  code line, from its notebook's markdown);
- track names spelled as string literals in the shared layers (core, stats, adapters, evaluation, report, cli);
- functions over 40 lines; code lines over 120 characters;
- export cells: median length, how many are over 25 lines, and the share followed (before the next export cell) by a
  cell with an example (`test_eq`, `test_fail`, `test_close`, `assert`, or a shown value).

    python bench/house.py
"""
import ast
import json
import re
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG, NBS = ROOT / "carebench", ROOT / "nbs"
TRACK_NAMES = ("representation", "adaptation", "reasoning")
SHARED = ("core", "stats", "adapters", "evaluation", "report", "cli.py")


def sources():
    return [f for f in sorted(PKG.rglob("*.py")) if f.name != "_modidx.py"]


def lines(f: Path) -> int: return len(f.read_text(encoding="utf-8").splitlines())


def track_literals() -> list:
    out = []
    for f in sources():
        rel = f.relative_to(PKG).as_posix()
        if not rel.startswith(SHARED): continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in TRACK_NAMES:
                out.append(f"{rel}:{node.lineno} {node.value!r}")
    return out


def long_functions(limit: int = 40) -> list:
    out = []
    for f in sources():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > limit:
                out.append((node.end_lineno - node.lineno + 1, f"{f.relative_to(PKG).as_posix()}:{node.name}"))
    return sorted(out, reverse=True)


def _defines(src: str) -> bool:
    "Whether an export cell defines something (a function, class or name), not only imports."
    try: body = ast.parse(src).body
    except SyntaxError: return True
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)) for n in body)


def export_cells() -> tuple:
    "Sizes of the export cells; how many are followed by an example, of all and of those that define something."
    sizes, with_example, total, defining, defining_ex = [], 0, 0, 0, 0
    example = re.compile(r"\b(test_eq|test_fail|test_close|test_ne|assert)\b")
    for nb in sorted(NBS.rglob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for i, c in enumerate(cells):
            src = "".join(c["source"])
            if c["cell_type"] != "code" or not src.startswith("#| export"): continue
            total += 1; sizes.append(len(src.splitlines()) - 1)
            defines = _defines(src); defining += defines
            for d in cells[i + 1:]:
                s = "".join(d["source"])
                if d["cell_type"] != "code": continue
                if s.startswith("#| export"): break
                if example.search(s) or (s.strip() and not s.lstrip().startswith("#|")):
                    with_example += 1; defining_ex += defines; break
    return sizes, with_example, total, defining, defining_ex


def prose_per_code(module: Path) -> float:
    head = module.read_text(encoding="utf-8").splitlines()[:6]
    m = next((re.search(r"nbs/([^ ]+\.ipynb)", l) for l in head if "File to edit" in l), None)
    if not m: return float("nan")
    cells = json.loads((NBS / m.group(1)).read_text(encoding="utf-8"))["cells"]
    words = sum(len("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    code = sum(1 for c in cells if c["cell_type"] == "code" for l in "".join(c["source"]).splitlines() if l.strip())
    return words / max(code, 1)


def main():
    src = sources()
    tracks = [f for f in src if f.relative_to(PKG).parts[0] == "tracks"]
    largest = max(src, key=lines)
    long_lines = sum(1 for f in src for l in f.read_text(encoding="utf-8").splitlines() if len(l) > 120)
    lits, funcs = track_literals(), long_functions()
    sizes, ex, total, defining, defining_ex = export_cells()
    print(f"package: {len(src)} modules, {sum(map(lines, src)):,} lines")
    rooms = sorted({f.relative_to(PKG).parts[1] for f in tracks if len(f.relative_to(PKG).parts) > 2})
    print(f"carebench/tracks/: {len(tracks)} files, {sum(map(lines, tracks)):,} lines, "
          f"{len({f.parent for f in tracks})} folder(s); rooms: {', '.join(rooms) or 'none'}")
    for room in rooms:
        files = [f for f in tracks if f.relative_to(PKG).parts[1] == room]
        print(f"   {room}/: {len(files)} modules, {sum(map(lines, files)):,} lines")
    print(f"track names as string literals in shared layers: {len(lits)}")
    for l in lits[:30]: print(f"   {l}")
    print(f"largest module: {largest.relative_to(PKG).as_posix()} {lines(largest):,} lines "
          f"({prose_per_code(largest):.2f} prose words per code line)")
    print(f"modules over 600 lines: {sum(lines(f) > 600 for f in src)}")
    print(f"functions over 40 lines: {len(funcs)}: " + ", ".join(f"{n} {l}" for l, n in funcs[:12]))
    print(f"code lines over 120 characters: {long_lines:,}")
    print(f"export cells: {total}, median {statistics.median(sizes):.0f} lines, {sum(s > 25 for s in sizes)} over 25 lines; "
          f"followed by an example: {ex / total:.0%}; of the {defining} that define something (not only imports): "
          f"{defining_ex / defining:.0%}")


if __name__ == "__main__":
    main()
