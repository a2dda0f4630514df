#!/usr/bin/env python3
"""Checks a report.html as a browser rendered it (tests/test_report_browser.sh, docs/report.md).

usage: report_check.py MODE DOM CONSOLE META [NOW_MS]
  MODE     finished | running | killed
  DOM      chromium --dump-dom of the page opened at #selfcheck: holds <pre id="selfcheck-result">,
           the JSON the page's own script wrote (images, charts, every data-meta number)
  CONSOLE  chromium's stderr (--enable-logging=stderr --v=0): the page logs nothing, so any CONSOLE
           line is an error (chromium logs console.error, uncaught exceptions and console.log alike)
  META     the bake's meta.json: every number on the page tagged data-meta="path" must equal the value
           at that path, within the precision printed (running/killed pages: plan.* paths only, the
           rest being the live document's)
Prints what it checked and exits 1 with every failure listed.
"""
import html
import json
import math
import re
import sys

mode, dom_path, console_path, meta_path = sys.argv[1:5]
fails = []


def fail(msg):
    fails.append(msg)


dom = open(dom_path, encoding="utf-8", errors="replace").read()
m = re.search(r'<pre id="selfcheck-result">(.*?)</pre>', dom, re.S)
if not m:
    print("FAIL: the page wrote no selfcheck result (its script did not run)")
    sys.exit(1)
r = json.loads(html.unescape(m.group(1)))
meta = json.load(open(meta_path))

# Chromium's own WebGL notice when the 3D view's check reads its pixels back (not the page's
# logging; it appears only at #selfcheck, which reads them): "GL Driver Message (OpenGL,
# Performance, ...): GPU stall due to ReadPixels".
console = [l for l in open(console_path, errors="replace")
           if "CONSOLE" in l and "GPU stall due to ReadPixels" not in l]
for l in console:
    fail("console message: " + l.strip())
for e in r["errors"]:
    fail("page error: " + e)

want_state = {"finished": "finished", "running": "running", "killed": "running"}[mode]
if r["state"] != want_state:
    fail(f"state {r['state']!r}, expected {want_state!r}")

if r["broken"]:
    fail(f"images not loaded (natural width 0): {r['broken']}")
if mode == "finished" and r["images"] < 10:
    fail(f"only {r['images']} images on a finished page")


def lookup(path):
    node = meta
    for key in path.split("."):
        if isinstance(node, list):
            node = node[int(key)] if key.isdigit() and int(key) < len(node) else KeyError
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            return KeyError
        if node is KeyError:
            return KeyError
    return node


checked = 0
for path, text, scale in r["meta"]:
    if mode != "finished" and not path.startswith("plan."):
        continue
    value = lookup(path)
    if value is KeyError:
        fail(f"{path}: on the page ({text!r}) but not in meta.json")
        continue
    text = text.strip()
    checked += 1
    if text == "n/a":
        if value is not None:
            fail(f"{path}: page says n/a, meta.json {value!r}")
        continue
    if value is None or isinstance(value, (bool, str, list, dict)):
        fail(f"{path}: page {text!r}, meta.json {value!r} is not a number")
        continue
    mm = re.fullmatch(r"-?\d+(\.(\d+))?([eE]([+-]?\d+))?", text)
    if not mm:
        fail(f"{path}: {text!r} is not a number")
        continue
    decimals = len(mm.group(2) or "")
    exp = int(mm.group(4) or 0)
    tol = 0.5 * 10 ** (exp - decimals) * (1 + 1e-9) + 1e-12
    shown = float(text)
    if not abs(shown - value * scale) <= tol:
        fail(f"{path}: page {text} (x{scale}), meta.json {value} -> {value * scale}")

# The coast block (docs/coast.md): a finished page of a bake that ran the pass tags every number of
# meta.json's "coast" (so the equality check above covers them all); with --no-coast (null) it says
# the pass was skipped and tags none.
if mode == "finished" and "coast" in meta:
    tagged = {path for path, _, _ in r["meta"]}
    if isinstance(meta["coast"], dict):
        for key, value in meta["coast"].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if f"coast.{key}" not in tagged:
                    fail(f"coast.{key}: in meta.json but no number on the page is tagged with it")
    elif any(p.startswith("coast.") for p in tagged):
        fail("meta.json's coast is null but the page tags coast numbers")

minimum = {"finished": 150, "running": 20, "killed": 20}[mode]
if checked < minimum:
    fail(f"only {checked} numbers tagged with their meta.json path, expected at least {minimum}")

charts = r["charts"]
if mode == "finished":
    kinds = {}
    for c in charts:
        kinds.setdefault(c["chart"], []).append(c)
        if c["chart"] in ("slope_deg", "relief_m", "elevation_m"):
            src = lookup(c["source"])
            n = len(src) if isinstance(src, list) else -1
            if not (c["bars"] == c["bars_attr"] == n and n > 0):
                fail(f"chart {c['source']}: {c['bars']} bars drawn, {c['bars_attr']} claimed, "
                     f"{n} in meta.json")
    nslope = len(meta["histograms"]["slope_deg"]["classes"])
    if len(kinds.get("slope_deg", [])) != nslope:
        fail(f"{len(kinds.get('slope_deg', []))} slope histograms, meta.json has {nslope} classes")
    for k in ("elevation_m", "relief_m", "slope_area", "timeline"):
        if len(kinds.get(k, [])) != 1:
            fail(f"{len(kinds.get(k, []))} {k} charts, expected 1")
    for c in kinds.get("slope_area", []):
        n = len(meta["statistics"]["slope_area"]["points"])
        if not (c["points"] == c["points_attr"] == n and c["lines"] == 2):
            fail(f"slope-area: {c['points']} points and {c['lines']} lines, meta.json {n} points")
    def record(path):
        node = meta
        for key in path.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        return node
    dispatches = meta.get("timeline", {}).get("dispatches") or [{"record": "dispatch"}]
    for c in kinds.get("timeline", []):
        n = sum(len(j["attempts"]) for d in dispatches for j in (record(d["record"]) or {})["jobs"])
        if c["attempts"] != n:
            fail(f"timeline: {c['attempts']} attempts drawn, meta.json has {n}")
if mode == "running":
    if r["running_jobs"] < 1:
        fail("a page caught mid-run shows no running job")
    if r["phase"] != "solve":
        fail(f"phase {r['phase']!r}, expected 'solve'")
if mode == "killed":
    if len(sys.argv) > 5:
        if "no update for 10 minutes - the coordinator may have died" not in r["stale"]:
            fail(f"ten minutes after its last write the page says {r['stale']!r}")
    elif r["stale"]:
        fail(f"a fresh page already says {r['stale']!r}")

print(f"{mode}: {checked} numbers equal meta.json, {len(charts)} charts, {r['images']} images, "
      f"{r['running_jobs']} running jobs, phase {r['phase']!r}, state {r['state']!r}")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
