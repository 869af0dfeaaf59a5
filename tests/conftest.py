"""Shared helpers for the tests that cannot live in a notebook (CLI subprocesses, packaging, templates, a browser)."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"
# The report templates that the bundled example's site executes (tests/test_report_site.py checks that it does; the others are
# executed on their own in tests/test_reports.py)
EXAMPLE_SITE_TEMPLATES = {"overview", "input", "model", "condition", "representation", "comparison", "provenance", "tripod"}


def run_cli(*args, env=None, cwd=None):
    """Run the installed `carebench` console script as a user would; return the CompletedProcess."""
    exe = Path(sys.executable).with_name("carebench")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "carebench.cli"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd or ROOT, timeout=300)


@pytest.fixture(scope="session")
def root():
    return ROOT


BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
NO_BROWSER = ("Chromium is not installed: `sudo apt-get install chromium` (Debian; `.ci/run` does it as root) enables the browser "
              "checks of the report site")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]

# Injected into a copy of a page: after layout, what a reader would stumble on, measured in the browser: elements of <main>
# that reach past its right edge (clipped or scrolled away; what scrolls inside its own box is not cut), a page that
# scrolls sideways (wide tables and figures scroll inside themselves instead), table cells whose text was cut with an
# ellipsis, text smaller than 10 px (a figure's text too, as shown: 10 px at a desktop width, 8 on a phone), a phone's
# page pushed down by the navigation, two text boxes (one line of one text node each) that overlap, and a word of up to 24
# letters broken across two lines (`faile d`).
_MEASURE = r"""<script>window.addEventListener('load', () => {
  const m = document.querySelector('main').getBoundingClientRect(), out = [], doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) out.push('the page scrolls sideways +' + (doc.scrollWidth - doc.clientWidth) + 'px');
  const scrolls = e => { for (let a = e.parentElement; a && a.tagName !== 'MAIN'; a = a.parentElement)   // inside a box that
    if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) return true; return false; };             // scrolls: not cut
  document.querySelectorAll('main table, main img, main figure, main pre').forEach(e => {
    const r = e.getBoundingClientRect(); if (r.width && r.right > m.right + 1 && !scrolls(e)) out.push(e.tagName + ' +' + Math.round(r.right - m.right) + 'px'); });
  if (window.innerWidth < 700 && m.top > 160) out.push('the navigation pushes the page ' + Math.round(m.top) + 'px down');
  document.querySelectorAll('main td, main th').forEach(e => { if (e.textContent.trim().endsWith('\u2026')) out.push('cut: ' + e.textContent.slice(0, 40)); });
  document.querySelectorAll('main img[data-min-font-px]').forEach(e => {   // a figure's text as shown: 10 px, 8 on a phone
    const px = parseFloat(e.dataset.minFontPx) * e.getBoundingClientRect().width / e.naturalWidth;
    if (px < (window.innerWidth >= 1000 ? 10 : 8)) out.push('figure text of ' + px.toFixed(1) + 'px: ' + e.alt.slice(0, 40)); });
  document.querySelectorAll('main img[data-overlaps]').forEach(e => {                               // labels hiding labels
    if (e.dataset.overlaps !== '[]') out.push('figure labels overlap ' + e.dataset.overlaps + ': ' + e.alt.slice(0, 40)); });
  const boxes = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const t = walk.currentNode, el = t.parentElement, text = t.textContent.trim().slice(0, 30);
    if (!text || ['SCRIPT', 'STYLE'].includes(el.tagName)) continue;
    const cs = getComputedStyle(el); if (cs.visibility === 'hidden' || cs.display === 'none') continue;
    if (el.closest('details:not([open])') && !el.closest('summary')) continue;           // folded away: not shown
    if (parseFloat(cs.fontSize) < 10) out.push('text of ' + cs.fontSize + ': ' + text);
    const range = document.createRange(); range.selectNodeContents(t);
    for (const r of range.getClientRects()) if (r.width > 1 && r.height > 1) boxes.push([r, text]);
    const re = /[^\s\u200b\-\u2013\/]+/g; let w;     // a word (hyphens and slashes break) of up to 24 letters: one line
    while ((w = re.exec(t.textContent)) !== null) {
      if (w[0].length > 24) continue;
      const wr = document.createRange(); wr.setStart(t, w.index); wr.setEnd(t, w.index + w[0].length);
      const tops = new Set([...wr.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) out.push('a word broken across lines: ' + w[0]); } }
  document.querySelectorAll('main wbr').forEach(w => {           // a name broken where a break was allowed after its _
    const a = w.previousSibling, b = w.nextSibling;
    if (!a || !b || a.nodeType !== 3 || b.nodeType !== 3 || !a.textContent.endsWith('_') || !b.textContent) return;
    const ra = document.createRange(), rb = document.createRange();
    ra.setStart(a, a.textContent.length - 1); ra.setEnd(a, a.textContent.length); rb.setStart(b, 0); rb.setEnd(b, 1);
    const ta = ra.getClientRects()[0], tb = rb.getClientRects()[0];
    const side = (n, back) => { let s = '';                    // the whole name, across the other <wbr> in it
      for (let x = n; x; x = back ? x.previousSibling : x.nextSibling) {
        if (x.nodeType === 1 && x.tagName === 'WBR') continue; if (x.nodeType !== 3) break;
        const parts = x.textContent.split(/[\s+\/.:=,-]/);
        s = back ? parts[parts.length - 1] + s : s + parts[0]; if (parts.length > 1) break; }
      return s; };
    const word = side(a, true) + side(b, false);             // a name longer than 24 letters may break at its _
    if (word.length <= 24 && ta && tb && Math.round(ta.top) !== Math.round(tb.top))
      out.push('a word broken across lines: ' + word); });
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i][0], b = boxes[j][0];
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 2 && h > 2) out.push('overlap: ' + boxes[i][1] + ' / ' + boxes[j][1]); }
  document.body.setAttribute('data-clipped', JSON.stringify(out.slice(0, 30))); });</script>"""

WIDTHS = (1300, 390)                                   # a desktop browser and a phone


def look(page, shot, width=1300):
    """Screenshot of a site page at `width` px (none when `shot` is None), and what of it is clipped, cut, too small or
    overlapping (measured in the browser)."""
    profile = tempfile.mkdtemp(prefix="chromium-")
    base = [BROWSER, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},5000", "--hide-scrollbars", "--virtual-time-budget=5000"]
    probe = page.with_name(f".measure-{page.name}")      # the page and the measuring script, which only sets an attribute:
    probe.write_text(page.read_text().replace("</body>", _MEASURE + "</body>"))   # one browser start both shoots and measures
    r = subprocess.run(base + ([f"--screenshot={shot}"] if shot is not None else []) + ["--dump-dom", probe.as_uri()],
                       capture_output=True, text=True, timeout=120)
    dom = r.stdout
    probe.unlink(); shutil.rmtree(profile, ignore_errors=True)
    if shot is not None: assert shot.is_file() and shot.stat().st_size > 10_000, r.stderr[-500:]
    m = re.search(r'data-clipped="([^"]*)"', dom)
    assert m, "the measuring script did not run"
    return json.loads(html.unescape(m.group(1)))


def look_both(page, shots, name):
    "`look` at both `WIDTHS`: {width: problems}, the screenshots as shots/<name>-<width>.png."
    return {w: look(page, shots / f"{name}-{w}.png", w) for w in WIDTHS}


# The longest test files first, so that the two workers of `pytest -n 2 --dist loadfile` finish together instead of one waiting
# for the other's last long file; the order within a file is unchanged.
# (The order follows the files' measured totals on 2 cores: longest processing time first.)
FIRST = ("test_report_site.py", "test_real_model.py", "test_tracks.py", "test_reasoning.py", "test_hostile.py",
         "test_cli.py", "test_requests.py")


def pytest_collection_modifyitems(items):
    rank = lambda item: FIRST.index(item.path.name) if item.path.name in FIRST else len(FIRST)
    items.sort(key=rank)                               # a stable sort: each file's own order is kept
