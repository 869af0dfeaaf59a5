"""Shorten the long lines (over 120 characters) of the export cells of nbs/**/*.ipynb without changing what they mean.

On each long line, in this order: a trailing comment moves onto its own line above; a comment block is re-wrapped; a
`from x import a, b, c` gets its names in parentheses; a one-line compound statement (`if test: body`) gets its body on
the next line; a docstring is re-wrapped (a one-line string docstring becomes implicitly concatenated pieces). With
`--brackets`, code is also broken inside brackets (after commas, aligned after the bracket) and long strings in code are
split; that pass reads less well and is off by default. Every changed cell must parse to the same AST as before
(positions ignored; docstrings compared with their whitespace collapsed), else it is left as it was and reported.
    python .ci/wrap120.py [--dry] [--brackets] [NOTEBOOK ...]"""
import ast, io, json, re, sys, textwrap, tokenize
from pathlib import Path

W = 120
ROOT = Path(__file__).resolve().parents[1]          # the checkout (this file is .ci/wrap120.py)
DRY = "--dry" in sys.argv

def tokens(src):
    return list(tokenize.generate_tokens(io.StringIO(src).readline))

def depth_before(toks):
    "For each token index, the bracket depth before it."
    d, out = 0, []
    for t in toks:
        out.append(d)
        if t.type == tokenize.OP and t.string in "([{": d += 1
        elif t.type == tokenize.OP and t.string in ")]}": d -= 1
    return out

def split_points(body: str, is_f: bool, is_raw: bool):
    "Indices after which the string body may be split (after a space, outside f-string braces, not after a backslash)."
    pts, depth, i = [], 0, 0
    while i < len(body):
        ch = body[i]
        if is_f and ch in "{}":
            if i + 1 < len(body) and body[i + 1] == ch and depth == 0: i += 2; continue
            depth += 1 if ch == "{" else -1
        elif ch == "\\" and not is_raw: i += 2; continue
        elif ch == " " and depth == 0 and i + 1 < len(body) and body[i + 1] != " " and (i == 0 or body[i - 1] != "\\"):
            pts.append(i + 1)
        i += 1
    return pts

STR_RE = re.compile(r"^(?P<prefix>[rRuUfF]{0,2})(?P<q>'|\")(?P<body>.*)(?P=q)$", re.S)

def fix_string(lines, t, depth):
    "Split string token `t` (one line, not triple-quoted) so that its line fits; returns new lines or None."
    (row, col), (erow, ecol) = t.start, t.end
    if row != erow: return None
    m = STR_RE.match(t.string)
    if not m or m["body"].startswith(m["q"] * 2): return None
    prefix, q, body = m["prefix"], m["q"], m["body"]
    if "b" in prefix.lower(): return None
    line = lines[row - 1]
    pts = split_points(body, "f" in prefix.lower(), "r" in prefix.lower())
    if not pts: return None
    wrap = depth == 0
    start = col + (1 if wrap else 0)
    pieces, cur = [], 0
    first_room = W - start - len(prefix) - 2 - (0 if wrap else 0)
    room = first_room
    indent = start
    cont_room = W - indent - len(prefix) - 2
    while len(body) - cur > room:
        cands = [p for p in pts if cur < p <= cur + room]
        if not cands:
            nxt = [p for p in pts if p > cur]
            if not nxt: break
            cands = [nxt[0]]
        pieces.append(body[cur:cands[-1]]); cur = cands[-1]; room = cont_room
    pieces.append(body[cur:])
    if len(pieces) < 2: return None
    tail = line[ecol:]
    lit = [f"{prefix}{q}{p}{q}" for p in pieces]
    head = line[:col] + ("(" if wrap else "") + lit[0]
    rest = [" " * indent + x for x in lit[1:]]
    rest[-1] += (")" if wrap else "") + tail
    return lines[:row - 1] + [head] + rest + lines[row:]

BREAK_BEFORE = {"and", "or", "if", "else", "for"}
MAX_ALIGN = 72
BRACKETS = "--brackets" in sys.argv
DOCSTRINGS_ONLY = not BRACKETS

def logical_end(toks, n) -> int:
    "The last physical line of the logical line holding line `n`."
    for t in toks:
        if t.type == tokenize.NEWLINE and t.start[0] >= n: return t.start[0]
    return n

def closer_row(toks, i) -> int:
    "The row of the bracket that closes the group holding token `i`."
    depth = 0
    for t in toks[i + 1:]:
        if t.type == tokenize.OP and t.string in "([{": depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            if depth == 0: return t.start[0]
            depth -= 1
    return toks[i].start[0]

def shift_following(new_lines, toks, n, moved_from: int, moved_to: int, added: int = 1, end: int | None = None):
    "After text at column `moved_from` of line `n` moved to column `moved_to` on a new line: the continuation lines of the same logical line aligned at or right of `moved_from` move with it."
    delta = moved_from - moved_to
    if delta <= 0: return new_lines
    end = logical_end(toks, n) if end is None else end
    for k in range(n + added, end + added):
        line = new_lines[k]
        ind = len(line) - len(line.lstrip())
        if line.strip() and ind >= moved_from: new_lines[k] = line[delta:]
    return new_lines

def bracket_split(lines, toks, n, depth):
    """Break long line `n` after a comma (or before `and`/`or`/`if`/`else`/`for`) inside brackets. Inside a bracket opened
    on this line (at most `MAX_ALIGN` columns in) the continuation is aligned one column after it; inside one opened on an
    earlier line, at this line's own indentation; a bracket opened further right is broken right after it, the rest one
    level deeper than the line. New lines or None."""
    line = lines[n - 1]
    ind = len(line) - len(line.lstrip())
    idx = [i for i, t in enumerate(toks) if t.start[0] == n]
    if not idx: return None
    stack, cands, opens = [], [], []
    for i in idx:
        t = toks[i]
        if t.type == tokenize.OP and t.string in "([{":
            stack.append(t.end[1]); opens.append((t.end[1], i)); continue
        if t.type == tokenize.OP and t.string in ")]}":
            if stack: stack.pop()
            continue
        col = stack[-1] if stack else (ind if depth[i] > 0 else None)
        if col is None or col > MAX_ALIGN: continue
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.type == tokenize.OP and t.string == "," and t.end[1] <= W and nxt is not None and nxt.start[0] == n \
                and nxt.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE) and nxt.string not in ")]}":
            cands.append((t.end[1], nxt.start[1], col, i, len(stack)))
        elif t.type == tokenize.NAME and t.string in BREAK_BEFORE and col < t.start[1] <= W:
            cands.append((t.start[1], t.start[1], col, i, len(stack)))
    good = [c for c in cands if c[2] < c[1] and c[2] + len(line) - c[1] < len(line)]
    if good:
        cut, nx, col, i, _ = min(good, key=lambda c: (c[4], -c[0]))     # the outermost bracket, then the latest break
        return shift_following(lines[:n - 1] + [line[:cut].rstrip(), " " * col + line[nx:]] + lines[n:], toks, n, nx, col,
                               end=closer_row(toks, i))
    # a bracket opened far right: break right after the first one whose content reaches past the limit
    for c, i in opens:
        if c > MAX_ALIGN and c < W and i + 1 < len(toks) and toks[i + 1].start[0] == n and toks[i + 1].string not in ")]}":
            rest = line[toks[i + 1].start[1]:]
            if len(rest) + ind + 4 < len(line):
                return shift_following(lines[:n - 1] + [line[:c], " " * (ind + 4) + rest] + lines[n:], toks, n,
                                       toks[i + 1].start[1], ind + 4, end=closer_row(toks, i))
    return None

def import_split(lines, n):
    "`from x import a, b, c` too long: the names in parentheses, continued under the first name."
    line = lines[n - 1]
    m = re.match(r"^(\s*from \S+ import )([^(#]+)$", line)
    if not m: return None
    head, names = m.group(1), [x.strip() for x in m.group(2).split(",")]
    out, cur = [], head + "("
    for k, name in enumerate(names):
        piece = name + (", " if k < len(names) - 1 else ")")
        if len(cur) + len(piece.rstrip()) > W and cur.strip() and not cur.endswith("("):
            out.append(cur.rstrip()); cur = " " * (len(head) + 1)
        cur += piece
    out.append(cur.rstrip())
    return lines[:n - 1] + out + lines[n:] if len(out) > 1 else None

HEADERS = ("if ", "elif ", "else:", "for ", "while ", "try:", "except", "finally:", "with ", "def ")

def compound_split(lines, toks, n, depth):
    "`if test: body` too long (a header and its body on one line): the body on the next line, one level deeper."
    line = lines[n - 1]
    ind = len(line) - len(line.lstrip())
    if not line.lstrip().startswith(HEADERS) or (n > 1 and lines[n - 2].rstrip().endswith("\\")): return None
    for i, t in enumerate(toks):
        if t.start[0] != n or t.type != tokenize.OP or t.string != ":" or depth[i] != 0: continue
        if any(u.type == tokenize.NAME and u.string == "lambda" and u.start[0] == n and u.start[1] < t.start[1] and depth[j] == 0
               for j, u in enumerate(toks)): return None
        body = line[t.end[1]:].strip()
        if not body or body.startswith("#"): return None
        start = len(line) - len(line[t.end[1]:].lstrip())
        return shift_following(lines[:n - 1] + [line[:t.end[1]], " " * (ind + 4) + body] + lines[n:], toks, n, start, ind + 4)
    return None

def one_pass(src: str):
    "One change to the first long line it can fix; (new source, kind) or (src, None)."
    lines = src.split("\n")
    try: toks = tokens(src)
    except (tokenize.TokenError, IndentationError, SyntaxError): return src, None
    depth = depth_before(toks)
    for n, line in enumerate(lines, 1):
        if len(line) <= W: continue
        on = [(i, t) for i, t in enumerate(toks) if t.start[0] <= n <= t.end[0] and t.type not in (tokenize.NL, tokenize.NEWLINE)]
        comments = [t for _, t in on if t.type == tokenize.COMMENT and t.start[0] == n]
        prev_cont = n > 1 and lines[n - 2].rstrip().endswith("\\")
        if comments and not prev_cont:
            c = comments[0]; code = line[:c.start[1]].rstrip()
            ind = len(line) - len(line.lstrip())
            if not code.strip():               # a comment line: re-wrap its block (consecutive comment lines, same indent)
                text = c.string.lstrip("#").strip()
                if text.startswith("|"): continue
                is_c = lambda k: 0 < k <= len(lines) and lines[k - 1].strip().startswith("#") \
                    and len(lines[k - 1]) - len(lines[k - 1].lstrip()) == ind and not lines[k - 1].strip().startswith("#|")
                a, b = n, n
                while is_c(a - 1): a -= 1
                while is_c(b + 1): b += 1
                words = " ".join(lines[k - 1].strip().lstrip("#").strip() for k in range(a, b + 1))
                wrapped = textwrap.wrap(words, W - ind - 2, break_long_words=False, break_on_hyphens=False)
                if len(wrapped) < 1: continue
                return "\n".join(lines[:a - 1] + [" " * ind + "# " + w for w in wrapped] + lines[b:]), "comment"
            if len(code) <= W:                 # a trailing comment: above its line, at the line's indentation
                return "\n".join(lines[:n - 1] + [" " * ind + c.string] + [code] + lines[n:]), "trailing"
        new = import_split(lines, n) or compound_split(lines, toks, n, depth) \
            or (bracket_split(lines, toks, n, depth) if BRACKETS else None)
        if new: return "\n".join(new), "bracket"
        strs = [(i, t) for i, t in on if t.type == tokenize.STRING and t.start[0] == t.end[0] == n]
        strs.sort(key=lambda it: -(len(it[1].string)))
        for i, t in strs:
            if t.start[1] > MAX_ALIGN or (t.end[1] <= W and t.end[1] - t.start[1] < 40): continue
            if DOCSTRINGS_ONLY and (t.start[0], t.start[1]) not in _docstring_tokens(src): continue
            new = fix_string(lines, t, depth[i])
            if new: return "\n".join(new), "string"
    return src, None

def _docstring_tokens(src: str) -> set:
    "Start positions of the string tokens that are docstrings."
    out = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            b = node.body[0]
            if isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str):
                out.add((b.value.lineno, b.value.col_offset))
    return out

def reflow_docstrings(src: str) -> str:
    "Re-wrap the paragraphs of triple-quoted docstrings that hold a long line (words kept, only line breaks move)."
    for _ in range(200):
        lines, toks, docs = src.split("\n"), tokens(src), _docstring_tokens(src)
        for t in toks:
            if t.type != tokenize.STRING or t.start not in docs or not t.string.endswith(('"""', "'''")): continue
            (row, col), (erow, _) = t.start, t.end
            if not any(len(lines[i]) > W for i in range(row - 1, erow)): continue
            q = t.string[-3:]; head = t.string[:t.string.index(q) + 3]
            body = t.string[len(head):-3]
            ind = " " * (len(lines[row].expandtabs()) - len(lines[row].lstrip())) if erow > row else " " * col
            paras, cur = [], []
            for l in body.split("\n"):
                if l.strip(): cur.append(l.strip())
                else: paras.append(cur); cur = []; paras.append(None)
            paras.append(cur)
            out, first = [], True
            last = max((k for k, para in enumerate(paras) if para), default=-1)
            for k, para in enumerate(paras):
                if para is None: out.append(""); continue
                if not para: continue
                if any(w.startswith(("-", "*", "|")) for w in para[1:]) and not any(len(x) > W - len(ind) for x in para):
                    out += para; first = False; continue
                width0 = W - col - len(head) if first else W - len(ind)
                words = " ".join(para).split(" ")
                if k == last: words[-1] += "\x00" * 3              # room for the closing quotes on the last line
                cur_line, lines_out, width = "", [], width0
                for w in words:
                    if cur_line and len(cur_line) + 1 + len(w) > width: lines_out.append(cur_line); cur_line, width = w, W - len(ind)
                    else: cur_line = f"{cur_line} {w}" if cur_line else w
                lines_out.append(cur_line)
                if k == last: lines_out[-1] = lines_out[-1][:-3]
                out += lines_out; first = False
            text = head + ("\n" + ind).join(out).replace("\n" + ind + "\n", "\n\n") + q
            end_tail = lines[erow - 1][t.end[1]:]
            new = lines[:row - 1] + (lines[row - 1][:col] + text + end_tail).split("\n") + lines[erow:]
            new_src = "\n".join(new)
            if new_src != src: src = new_src; break
        else: return src
    return src

def normalized(src: str) -> str:
    "The AST with docstrings' whitespace collapsed (a reflowed docstring says the same)."
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            b = node.body[0]
            if isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str):
                b.value.value = " ".join(b.value.value.split())
    return ast.dump(tree)

def fix_cell(src: str):
    before = normalized(src)
    out, kinds = src, []
    for _ in range(400):
        out2, kind = one_pass(out)
        if kind is None: break
        out, kinds = out2, kinds + [kind]
    out = reflow_docstrings(out)
    try: same = normalized(out) == before
    except SyntaxError: same = False
    return out, kinds, same

def main():
    files = [Path(a) for a in sys.argv[1:] if a.endswith(".ipynb")] or sorted((ROOT/"nbs").rglob("*.ipynb"))
    total = bad = 0
    for f in files:
        nb = json.loads(f.read_text()); dirty = False
        for c in nb["cells"]:
            s = "".join(c["source"])
            if c["cell_type"] != "code" or not s.startswith("#| export"): continue
            if not any(len(l) > W for l in s.split("\n")): continue
            new, kinds, same = fix_cell(s)
            if not same: print(f"!! {f.name}: AST changed, cell left as it was: {s[:80]!r}"); bad += 1; continue
            if new != s: c["source"] = new.splitlines(keepends=True); dirty = True; total += 1
        if dirty and not DRY: f.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print("cells changed", total, "refused", bad)

if __name__ == "__main__":
    main()
