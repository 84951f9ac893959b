"""The design report's style sheet (inline in the HTML: the report is one self-contained file)."""

from __future__ import annotations

CSS = """
:root{--ink:#1d2733;--muted:#5b6877;--line:#d9dee5;--soft:#f4f6f9;--accent:#0b6e4f;
--accent2:#76b900;--warn:#b26a00;--bad:#b3261e;--ok:#1e7d32;}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 "Segoe UI",system-ui,-apple-system,"Helvetica Neue",Arial,sans-serif;
color:var(--ink);background:#fff}
main{max-width:1180px;margin:0 auto;padding:28px 36px 48px}
header{border-bottom:3px solid var(--accent2);padding-bottom:14px;margin-bottom:8px}
h1{font-size:26px;margin:0 0 2px;letter-spacing:-.2px}
h2{font-size:18px;margin:30px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:18px 0 6px;color:var(--muted);text-transform:uppercase;letter-spacing:.5px}
.sub{color:var(--muted);font-size:15px}
.facts{display:flex;flex-wrap:wrap;gap:6px 18px;margin-top:8px;color:var(--muted);font-size:13px}
.facts b{color:var(--ink);font-weight:600}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;
color:#fff;vertical-align:middle}
.pass{background:var(--ok)}.warn{background:var(--warn)}.fail{background:var(--bad)}
.skipped,.disabled{background:#8a96a3}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;
margin:12px 0}
.tile{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:var(--soft)}
.tile .what{font-size:11px;text-transform:uppercase;letter-spacing:.6px;color:var(--muted)}
.tile .value{font-size:24px;font-weight:700;color:var(--accent);line-height:1.2}
.tile .cap{font-size:12px;color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:6px 0 12px;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;font-size:12px;color:var(--muted);text-transform:uppercase;
letter-spacing:.4px}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600;border-top:2px solid var(--line)}
.note{color:var(--muted);font-size:13px}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:24px}
.diagram{border:1px solid var(--line);border-radius:8px;padding:8px;overflow:auto;background:#fff}
.diagram svg{max-width:100%;height:auto;display:block;margin:0 auto}
ul.ess{margin:6px 0;padding-left:20px}ul.ess li{margin:3px 0}
.warnbox{border-left:4px solid var(--warn);background:#fff7ea;padding:8px 12px;margin:8px 0}
.violation{border-left:4px solid var(--bad);background:#fdf0ef;padding:6px 10px;margin:6px 0}
.violation.advisory{border-left-color:var(--warn);background:#fff7ea}
code,pre{font-family:"SFMono-Regular",Consolas,"Liberation Mono",monospace;font-size:12px}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px;
overflow:auto}
details{margin:8px 0}summary{cursor:pointer;color:var(--muted)}
footer{margin-top:36px;padding-top:10px;border-top:1px solid var(--line);color:var(--muted);
font-size:12px}
p.lead{font-size:15px;margin:14px 0 6px;max-width:980px}
nav{font-size:12.5px;margin:4px 0 0;color:var(--muted)}nav a{color:var(--accent);
text-decoration:none}
b.bad{color:var(--bad)}
@media print{main{padding:0}h2,h3{break-after:avoid}h2+*,h3+*{break-before:avoid}
.diagram,table,pre,.tile,.warnbox,.violation{break-inside:avoid}details.screen{display:none}
section{break-before:auto}}
"""
"""On paper a heading never ends a page (``break-after: avoid``, and what follows it keeps
to it); tables, the diagram and the spec listing do not split when they fit a page; the
Markdown copy of the card (a convenience for a pull request, collapsed on screen) is left
out."""


def page_css(paper: str) -> str:
    """The ``@page`` rule for ``paper`` (a CSS page size: ``A4``, ``letter``)."""
    return f"@page{{size:{paper};margin:14mm 12mm}}"
