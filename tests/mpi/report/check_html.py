"""critpath — tests/mpi/report/check_html.py: report.html (docs/report.md) is complete,
self-contained and loads in a browser without errors.

usage: check_html.py OUTDIR            the page exists and passes the checks below
       check_html.py OUTDIR --absent   CRITPATH_HTML=0: no report.html, report.json present

  charts      <svg class="cp-profile|impact|rank-bars|parallelism"> each present once with at
              least MIN_CHILDREN child elements (bars, labels)
  bars        rank-bars has a computation + waiting column per rank (2 rects per rank at least);
              parallelism one bar per k = 0..P (report.json's histogram length)
  tables      wait-states and callpaths tables (class "sortable"); callpaths has one body row
              per call path of metrics.time.by_callpath; whatif one per report.json whatif[]
              entry, pop the five POP metrics
  findings    the page opens with summary.txt's findings: <ol class="findings"> before every other
              section, one <li value="k"> per finding with k as summary.txt numbers it and its
              text exactly, each with a link (a.backing) to the section that backs it; every
              in-page link target (href="#id") exists
  offline     no src=, no <link> other than the data: icon, no http(s):// URL in an attribute:
              the page must open without network
  browser     `chromium --headless --dump-dom` and `--screenshot` of the file: the DOM comes
              back with the charts, and stderr has no console message from the page. The page
              logs nothing on purpose, so any CONSOLE line naming it (an uncaught exception,
              console.error, a resource that failed to load) is a failure. This Chromium logs
              console.error at INFO level, hence not only lines at level ERROR are taken.
              The findings check runs again on the DOM Chromium rendered.
              OUTDIR/report.png is kept as an artefact. No Chromium is a failure, not a skip:
              it is a declared dependency (tools/install-deps.sh).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, check, fail, load_report  # noqa: E402

CHARTS = ("cp-profile", "impact", "rank-bars", "parallelism")
MIN_CHILDREN = 4
BROWSER_TIMEOUT_S = 120
# Chromium's stderr line for a page console message: "[pid:tid:date:INFO:CONSOLE:12] "msg",
# source: file:///.../report.html (12)" (older builds: "INFO:CONSOLE(12)").
CONSOLE_RE = re.compile(r":(INFO|WARNING|ERROR|FATAL|VERBOSE\d*):CONSOLE[:(]")


class Page(HTMLParser):
    """Collects the SVG charts (direct children, rects), tables (body rows) and attributes
    that would reach outside the file."""

    def __init__(self):
        super().__init__()
        self.svgs = {}      # class -> {"count": n, "children": direct children, "rects": n}
        self.tables = {}    # first class -> body rows
        self.external = []  # offending (tag, attribute, value)
        self._svg = None    # (class, depth inside it)
        self._table = None
        self._in_body = False
        self.sortable = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name, value in attrs:
            v = value or ""
            remote = re.match(r"\s*(https?:)?//", v)
            if name == "src" or (name in ("href", "xlink:href") and remote):
                self.external.append((tag, name, v))
        if tag == "link" and a.get("href") != "data:,":
            self.external.append((tag, "href", a.get("href")))
        if tag == "svg":
            cls = a.get("class", "")
            entry = self.svgs.setdefault(cls, {"count": 0, "children": 0, "rects": 0})
            entry["count"] += 1
            self._svg = [cls, 0]
            return
        if self._svg is not None:
            if self._svg[1] == 0:
                self.svgs[self._svg[0]]["children"] += 1
            if tag == "rect":
                self.svgs[self._svg[0]]["rects"] += 1
            self._svg[1] += 1
        if tag == "table":
            self._table = (a.get("class") or "").split(" ")[0]
            self.tables[self._table] = 0
            if "sortable" in (a.get("class") or "").split():
                self.sortable.add(self._table)
        if tag == "tbody":
            self._in_body = True
        if tag == "tr" and self._in_body and self._table is not None:
            self.tables[self._table] += 1

    def handle_startendtag(self, tag, attrs):
        # <rect .../>, <line .../> (self-closed): children without a depth change.
        if self._svg is not None:
            if self._svg[1] == 0:
                self.svgs[self._svg[0]]["children"] += 1
            if tag == "rect":
                self.svgs[self._svg[0]]["rects"] += 1
        for name, value in attrs:
            if name == "src":
                self.external.append((tag, name, value))

    def handle_endtag(self, tag):
        if tag == "svg":
            self._svg = None
        elif self._svg is not None:
            self._svg[1] -= 1
        if tag == "tbody":
            self._in_body = False
        if tag == "table":
            self._table = None


class Findings(HTMLParser):
    """The page's findings (<ol class="findings">: value, text, link targets), every element id,
    every in-page link target, and the order of the section headings."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.hrefs = []      # every href="#..." target
        self.findings = []   # [value, text, [targets]]
        self.headings = []   # <h2> ids in page order
        self.list_at = None  # how many <h2> preceded <ol class="findings">
        self._in_list = False
        self._in_text = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        href = a.get("href") or ""
        if tag == "a" and href.startswith("#"):
            self.hrefs.append(href[1:])
            if self._in_list and self.findings:
                self.findings[-1][2].append(href[1:])
        if tag == "h2":
            self.headings.append(a.get("id"))
        if tag == "ol" and "findings" in (a.get("class") or "").split():
            self._in_list = True
            self.list_at = len(self.headings)
        if tag == "li" and self._in_list:
            self.findings.append([a.get("value"), "", []])
        if tag == "span" and self._in_list and a.get("class") == "finding-text":
            self._in_text = True

    def handle_endtag(self, tag):
        if tag == "ol":
            self._in_list = False
        if tag == "span":
            self._in_text = False

    def handle_data(self, data):
        if self._in_text and self.findings:
            self.findings[-1][1] += data


def summary_findings(out):
    """summary.txt's Findings section: [(number, text)]."""
    with open(os.path.join(out, "summary.txt"), encoding="utf-8") as f:
        text = f.read()
    check("@--- Findings" in text, "summary.txt has no Findings section")
    section = text.split("@--- Findings", 1)[1].split("\n\n", 1)[0].split("\n")[1:]
    found = []
    for line in section:
        m = re.match(r"\s*(\d+)\. (.*)$", line)
        check(m is not None, f"summary.txt: a Findings line not numbered: {line!r}")
        found.append((m.group(1), m.group(2)))
    return found


def check_findings(out, html, where):
    page = Findings()
    page.feed(html)
    page.close()
    want = summary_findings(out)
    check(page.list_at is not None, f"{where}: no <ol class=\"findings\">")
    # Only the Findings heading itself may come before the list: the page opens with it.
    check(page.headings[:page.list_at] in ([], ["findings"]),
          f"{where}: sections before the findings: {page.headings[:page.list_at]}")
    got = [(v, t) for v, t, _ in page.findings]
    check(got == want, f"{where}: the findings differ from summary.txt's:\n  page    {got[:3]}\n  summary {want[:3]}")
    for v, _, targets in page.findings:
        check(targets, f"{where}: finding {v} links to no section")
    missing = sorted({t for t in page.hrefs if t not in page.ids})
    check(not missing, f"{where}: links to targets the page lacks: {missing}")
    return len(want)


def check_structure(out, rep):
    path = os.path.join(out, "report.html")
    check(os.path.isfile(path), f"{path} missing (CRITPATH_HTML defaults to true)")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    page = Page()
    page.feed(text)
    page.close()
    for cls in CHARTS:
        svg = page.svgs.get(cls)
        check(svg is not None, f"no <svg class={cls!r}>; charts found: {sorted(page.svgs)}")
        check(svg["count"] == 1, f"<svg class={cls!r}> appears {svg['count']} times")
        check(svg["children"] >= MIN_CHILDREN,
              f"<svg class={cls!r}> has {svg['children']} child elements, "
              f"expected >= {MIN_CHILDREN}")
    P = rep["run"]["ranks"]
    # Cartesian topologies in report.json: one heatmap each, a cell per rank and map (3 maps).
    for topo in rep.get("topologies", []):
        hm = page.svgs.get("heatmap")
        check(hm is not None, f"report.json has topology {topo.get('dims')} but the page no heatmap")
        check(hm["rects"] >= 3 * len(topo["members"]),
              f"heatmap has {hm['rects']} cells, expected >= {3 * len(topo['members'])}")
    check(page.svgs["rank-bars"]["rects"] >= 2 * P,
          f"rank-bars has {page.svgs['rank-bars']['rects']} rects, expected >= {2 * P} "
          f"(computation and waiting for each of {P} ranks)")
    nk = len(rep["critical_path"]["parallelism_histogram"]["fraction"])
    check(page.svgs["parallelism"]["rects"] == nk,
          f"parallelism has {page.svgs['parallelism']['rects']} bars, expected {nk} (k = 0..P)")
    for table in ("wait-states", "callpaths"):
        check(table in page.tables, f"no <table class={table!r}>; tables: {sorted(page.tables)}")
        check(table in page.sortable, f"table {table!r} is not sortable")
    ncp = len(rep["metrics"]["time"]["by_callpath"])
    check(page.tables["callpaths"] == ncp,
          f"callpaths table has {page.tables['callpaths']} rows, expected {ncp}")
    check(page.tables["wait-states"] >= 1, "wait-states table has no rows")
    if "whatif" in rep:  # the simulation's hypotheses, one row each, and the POP metrics
        check(page.tables.get("whatif") == len(rep["whatif"]),
              f"whatif table has {page.tables.get('whatif')} rows, expected {len(rep['whatif'])}")
        check(page.tables.get("pop") == 5, f"pop table has {page.tables.get('pop')} rows, expected 5")
    check(not page.external, f"references outside the file: {page.external[:5]}")
    check_findings(out, text, "report.html")
    return path


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        exe = shutil.which(name)
        if exe:
            return exe
    fail("chromium not found on PATH: it is a declared dependency for the headless HTML "
         "test; install it with tools/install-deps.sh (Debian package `chromium`)")


def run_chromium(exe, url, extra, profile):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
           "--v=0", f"--user-data-dir={profile}", "--no-first-run"] + extra + [url]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=BROWSER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        fail(f"chromium did not finish within {BROWSER_TIMEOUT_S} s: {' '.join(cmd)}")
    console = [line for line in r.stderr.splitlines()
               if CONSOLE_RE.search(line) or "Uncaught" in line]
    check(not console, "console messages from report.html (the page logs none): "
          + " | ".join(console[:5]))
    check(r.returncode == 0, f"chromium exited {r.returncode}: {' '.join(cmd)}\n"
          + r.stderr[-2000:])
    return r.stdout


def check_browser(out, path):
    exe = find_chromium()
    url = "file://" + os.path.abspath(path)
    png = os.path.join(out, "report.png")
    with tempfile.TemporaryDirectory(prefix="critpath-chromium-") as profile:
        dom = run_chromium(exe, url, ["--dump-dom"], profile)
        for cls in CHARTS:
            check(f'class="{cls}"' in dom,
                  f"the DOM Chromium rendered lacks <svg class={cls!r}> ({len(dom)} chars)")
        n = check_findings(out, dom, "the DOM Chromium rendered")
        if os.path.exists(png):
            os.remove(png)
        run_chromium(exe, url, [f"--screenshot={png}", "--window-size=1200,2000",
                                "--hide-scrollbars"], profile)
    check(os.path.isfile(png), f"chromium wrote no screenshot {png}")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG")
    return n


def main():
    out = sys.argv[1]
    rep = load_report(out)
    if "--absent" in sys.argv[2:]:
        check(not os.path.exists(os.path.join(out, "report.html")),
              "CRITPATH_HTML=0 but report.html was written")
        print("check_html: ok (no report.html with CRITPATH_HTML=0)")
        return
    path = check_structure(out, rep)
    n = check_browser(out, path)
    print(f"check_html: ok ({n} findings as in summary.txt, links resolved; "
          f"{os.path.join(out, 'report.png')} kept)")


if __name__ == "__main__":
    try:
        main()
    except CheckError as e:
        print(f"check_html: FAIL: {e}", file=sys.stderr)
        sys.exit(1)
