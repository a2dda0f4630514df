#!/usr/bin/env python3
"""Drives `terrain studio` in Debian's headless chromium over the DevTools protocol
(tests/test_studio_browser.sh, docs/studio.md), with python3-websocket as the only library.

usage: studio_drive.py STUDIO_URL PLANET_DIR OUT_DIR BEFORE_PNG PLAN_BEFORE_JSON SHOTS CHROME_PORT
       studio_drive.py --overlay STUDIO_URL PLANET_DIR OUT_DIR BEFORE_OVERLAY_PNG SHOTS CHROME_PORT

With --overlay, the planet has an overlay (template.overlay, docs/plan.md): the session switches the
page to the overlay sheet, paints a stroke of the `town` mark across the X seam, erases a pixel of
it, types a new coast_jitter_px for `rugged` and presses Plan. Checked: the saved overlay's pixels
(the stroke on both sides of the seam with alpha 255, the erased pixel and the rest of the sheet
blank, a mark painted before kept; the negative control: the same check fails on the overlay from
before), the marks on disk, the painting untouched, the plan's overlay.json (the stroke one piece
across the seam), no script error.

The session: paints a stroke of the `range` brush across the X seam, types a new uplift for
`range`, changes legend.json behind the page (the page must stop and ask, overwriting nothing),
answers Overwrite, waits for the plan, picks the region holding the stroke, bakes it and waits
for the preview and the verdict. Then it checks the files: the saved painting's pixels on both
sides of the seam (and, as a negative control, that the same check fails on the painting from
before the stroke), the plan's class counts against the plan of the painting before the stroke
plus the pixels the stroke changed, the legend on disk, and the baked region's files. It also
sends the hostile requests (no token, a wrong method, an oversized body, a painting of the wrong
size, a legend the manifest's parser refuses, a second child while one runs). Prints one line per
check; exits 1 on the first FAIL.
"""
import json, os, struct, sys, time, urllib.error, urllib.request, zlib

import websocket

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_read import png_read  # noqa: E402

OVERLAY = len(sys.argv) > 1 and sys.argv[1] == "--overlay"
if OVERLAY:  # studio_drive.py --overlay STUDIO_URL PLANET_DIR OUT_DIR BEFORE_OVERLAY_PNG SHOTS CHROME_PORT
    STUDIO, PLANET, OUT, BEFORE, SHOTS, CHROME_PORT = sys.argv[2:8]
    PLAN_BEFORE = None
else:
    STUDIO, PLANET, OUT, BEFORE, PLAN_BEFORE, SHOTS, CHROME_PORT = sys.argv[1:8]
TOKEN = STUDIO.split("token=")[1]
BASE = STUDIO.split("?")[0].rstrip("/")
RANGE_HEX = None  # the range class's colour, from legend.json
UPLIFT = 1.7
STEPS = 1000


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ok(msg):
    print("ok: " + msg)


# ---- PNG: tests/support/png_read.py (RGB or RGBA here) ----


def pixel(img, x, y):
    w, h, bpp, d = img
    k = (y * w + x) * bpp
    return "#%02x%02x%02x" % (d[k], d[k + 1], d[k + 2])


# ---- HTTP to the studio ----
def http(method, path, token=TOKEN, body=None, query="", headers=None):
    q = (f"token={token}&" if token is not None else "") + query
    req = urllib.request.Request(f"{BASE}{path}?{q}", data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null") if "json" in r.headers.get("Content-Type", "") else r.read()
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


# ---- the DevTools protocol ----
class Page:
    def __init__(self, port):
        for _ in range(100):
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
                pages = [t for t in targets if t["type"] == "page" and t["url"].startswith(BASE)]
                if pages:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            fail("no chromium page on the studio's URL")
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60)
        self.n, self.errors = 0, []
        self.call("Runtime.enable")
        self.call("Page.enable")

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("method") == "Runtime.exceptionThrown":
                self.errors.append(m["params"]["exceptionDetails"].get("exception", {}).get("description", str(m)))
            elif m.get("method") == "Runtime.consoleAPICalled" and m["params"]["type"] == "error":
                self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in m["params"]["args"]))
            if m.get("id") == self.n:
                if "error" in m:
                    fail(f"{method}: {m['error']}")
                return m["result"]

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            fail(f"page script {expr!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_state(self, want, timeout=60):
        t0 = time.time()
        seen = set()
        while time.time() - t0 < timeout:
            # (null-safe: a new chromium's page can be the studio's URL before its body is parsed)
            st = self.js("document.body ? document.body.dataset.state : 'loading'")
            prog = self.js("(document.getElementById('progress') || {}).textContent || ''")
            if prog:
                seen.add(prog)
            if st == want:
                return seen
            if st in ("error", "plan-failed", "bake-failed") and want != st:
                said = self.js("document.getElementById('status').textContent")
                shown = self.js("document.getElementById('results').innerText")[:2000]
                fail(f"the page is in state {st} waiting for {want}: {said} {shown}")
            time.sleep(0.2)
        fail(f"the page did not reach state {want} in {timeout} s (it is {self.js('document.body.dataset.state')})")

    def mouse(self, kind, x, y, button="left", buttons=1):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button=button, buttons=buttons, clickCount=1)

    def click(self, selector):
        r = self.js(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                    " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        self.js(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})")
        r = self.js(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                    " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        self.mouse("mousePressed", r[0], r[1])
        self.mouse("mouseReleased", r[0], r[1], buttons=0)
        self.js("window.scrollTo(0, 0)")  # the canvas where the strokes' coordinates put it

    def shot(self, name):
        import base64
        self.js("window.scrollTo(0, 0)")
        d = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        open(os.path.join(SHOTS, name + ".png"), "wb").write(base64.b64decode(d))


def stroke_check(img, y, xs, want, label):
    """The stroke's pixels: every x of xs on row y has the colour want. Returns the failures."""
    return [f"{label}: ({x}, {y}) is {pixel(img, x, y)}, not {want}" for x in xs if pixel(img, x, y) != want]


def main():
    global RANGE_HEX
    legend0 = json.load(open(f"{PLANET}/legend.json"))
    RANGE_HEX = [c for c in legend0["classes"] if c["name"] == "range"][0]["colour"]
    before = png_read(BEFORE)
    w, h = before[0], before[1]

    # 1. Hostile requests, answered 4xx with a message naming what was wrong.
    st, r = http("GET", "/api/state", token=None)
    if st != 403 or "token" not in r["error"]: fail(f"no token: {st} {r}")
    st, r = http("GET", "/", token="0" * 32)
    if st != 403: fail(f"a wrong token: {st} {r}")
    ok(f"requests without the token or with a wrong one are refused 403: {r['error']}")
    st, r = http("DELETE", "/api/state")
    if st != 405: fail(f"DELETE: {st} {r}")
    st, r = http("POST", "/api/save", body=b"x" * 10, headers={"Content-Length": str(1 << 40)})
    if st != 413 or "at most" not in r["error"]: fail(f"an oversized body: {st} {r}")
    ok(f"an oversized declared body is refused before it is read: {r['error']}")
    st, r = http("GET", "/files/plan/../../legend.json")
    if st != 404: fail(f"a path outside the served files: {st} {r}")
    st0, state = http("GET", "/api/state")
    small = zlib.compress(b"")  # a 1 x 1 PNG is no painting of this planet
    def png_bytes(pw, ph):
        raw = b"".join(b"\x00" + b"\x10\x20\x30" * pw for _ in range(ph))
        chunk = lambda k, b: struct.pack(">I", len(b)) + k + b + struct.pack(">I", zlib.crc32(k + b))
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", pw, ph, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    import base64
    def save_body(png, legend):
        return json.dumps({"painting_png_base64": base64.b64encode(png).decode(), "legend": legend,
                           "painting_stamp": state["painting"]["stamp"],
                           "legend_stamp": state["legend"]["stamp"]}).encode()
    st, r = http("POST", "/api/save", body=save_body(png_bytes(w // 2, h), legend0))
    if st != 422 or f"{w} x {h}" not in r["error"]: fail(f"a painting of the wrong size: {st} {r}")
    ok(f"a painting of the wrong size is refused: {r['error']}")
    bad = json.loads(json.dumps(legend0))
    del [c for c in bad["classes"] if c["name"] == "range"][0]["uplift_mm_yr"]
    st, r = http("POST", "/api/save", body=save_body(png_bytes(w, h), bad))
    if st != 422 or "uplift" not in r["error"]: fail(f"a legend without an uplift: {st} {r}")
    ok(f"a legend the manifest's parser refuses is refused: {r['error']}")
    broken = png_bytes(w, h)
    broken = broken[:60] + bytes(len(broken) - 72) + broken[-12:]  # the right header, no image
    st, r = http("POST", "/api/save", body=save_body(broken, legend0))
    if st != 422: fail(f"a PNG broken past its header: {st} {r}")
    ok(f"a PNG broken past its header is refused: {r['error']}")
    st, r = http("POST", "/api/save", body=b"{not json")
    if st != 400: fail(f"a body that is not JSON: {st} {r}")
    if open(f"{PLANET}/painting.png", "rb").read() != open(BEFORE, "rb").read():
        fail("a refused save changed painting.png")
    if json.load(open(f"{PLANET}/legend.json")) != legend0:
        fail("a refused save changed legend.json")
    ok("the refused saves left painting.png and legend.json as they were")

    # 2. The page.
    page = Page(CHROME_PORT)
    page.wait_state("ready", 30)
    page.shot("1-loaded")
    geo = page.js("(() => { const r = document.getElementById('view').getBoundingClientRect();"
                  " return {left: r.left, top: r.top, width: r.width, cw: document.getElementById('view').width,"
                  " v: window.studio.view, w: window.studio.w, h: window.studio.h}; })()")
    if (geo["w"], geo["h"]) != (w, h): fail(f"the page holds a {geo['w']} x {geo['h']} painting, not {w} x {h}")
    # A row where both sides of the seam are land and not range: range painted there stays in a
    # kept landmass, so the plan's range count grows by exactly the pixels the stroke changed.
    land = {c["colour"] for c in legend0["classes"] if c["kind"] == "land"} - {RANGE_HEX}
    rows = [y for y in range(30, h - 30) if all(pixel(before, x % w, y + dy) in land
                                                for x in range(w - 14, w + 14) for dy in (-6, 0, 6))]
    if not rows: fail("no row with land across the seam in the test planet")
    y = rows[len(rows) // 2]
    v, k = geo["v"], geo["width"] / geo["cw"]  # CSS pixels per canvas pixel
    to_screen = lambda px, py: (geo["left"] + (px - v["ox"]) * v["scale"] * k, geo["top"] + (py - v["oy"]) * v["scale"] * k)
    page.click('.brush[data-brush="range"] .name')
    if page.js("window.studio.legend.classes[window.studio.brush].name") != "range": fail("the range brush is not selected")
    x0, x1 = w - 10, w + 10  # unwrapped: from 10 pixels left of the seam to 10 right of it
    sx, sy = to_screen(x0 + 0.5, y + 0.5)
    page.mouse("mousePressed", sx, sy)
    for i in range(1, 11):
        sx, sy = to_screen(x0 + 0.5 + (x1 - x0) * i / 10, y + 0.5)
        page.mouse("mouseMoved", sx, sy)
    page.mouse("mouseReleased", sx, sy, buttons=0)
    page.shot("2-stroke")
    # A second stroke with the deep brush, undone: none of its pixels may reach the file (the
    # check below that every changed pixel became range would see them).
    page.click('.brush[data-brush="deep"] .name')
    deep = [c for c in legend0["classes"] if c["name"] == "deep"][0]["colour"]
    uy = y  # a place in view (unwrapped x between the seam in the middle and the right edge) not deep already
    ux = next(x for x in range(int(v["ox"]) + 20, w - 30) if pixel(before, x + 7, uy) != deep)
    page.mouse("mousePressed", *to_screen(ux, uy))
    page.mouse("mouseMoved", *to_screen(ux + 15, uy))
    page.mouse("mouseReleased", *to_screen(ux + 15, uy), buttons=0)
    got = page.js(f"(() => {{ const d = window.studio.img.data, k = ({uy} * {w} + {ux + 7}) * 4;"
                  " return '#' + [d[k], d[k + 1], d[k + 2]].map(v => v.toString(16).padStart(2, '0')).join(''); })()")
    if got != deep: fail(f"the deep stroke did not paint: {got}")
    page.click("#undo")
    got = page.js(f"(() => {{ const d = window.studio.img.data, k = ({uy} * {w} + {ux + 7}) * 4;"
                  " return '#' + [d[k], d[k + 1], d[k + 2]].map(v => v.toString(16).padStart(2, '0')).join(''); })()")
    if got != pixel(before, ux + 7, uy): fail(f"Undo left {got} at ({ux + 7}, {uy}), before it was {pixel(before, ux + 7, uy)}")
    ok(f"a second stroke (deep) painted {deep} at ({ux + 7}, {uy}) and Undo gave back {got}")
    # Zoom (the wheel, about the pointer) and pan (right drag, wrapping in X), then Fit.
    s0 = page.js("window.studio.view.scale")
    cx, cy = geo["left"] + geo["width"] / 2, geo["top"] + 100
    page.call("Input.dispatchMouseEvent", type="mouseWheel", x=cx, y=cy, deltaX=0, deltaY=-100)
    s1 = page.js("window.studio.view.scale")
    if abs(s1 / s0 - 1.25) > 1e-9: fail(f"the wheel zoomed {s0} -> {s1}, not by 1.25")
    ox1 = page.js("window.studio.view.ox")
    page.mouse("mousePressed", cx, cy, button="right", buttons=2)
    page.mouse("mouseMoved", cx + 200, cy, button="right", buttons=2)
    page.mouse("mouseReleased", cx + 200, cy, button="right", buttons=0)
    ox2 = page.js("window.studio.view.ox")
    want = (ox1 - 200 / k / s1) % w
    if abs(ox2 - want) > 1e-6: fail(f"a 200 px right drag panned ox {ox1} -> {ox2}, expected {want}")
    page.shot("2b-zoomed-panned")
    page.click("#zoom-fit")
    if abs(page.js("window.studio.view.scale") - s0) > 1e-9 or page.js("window.studio.view.ox") != w / 2:
        fail("Fit did not restore the view")
    ok(f"the wheel zoomed x1.25 about the pointer, a right drag panned 200 px (ox {ox1:.1f} -> {ox2:.1f}, as computed mod w), Fit restored the view")
    # the uplift typed into the range brush's field
    page.js("(() => { const e = document.querySelector('input[data-class=\"range\"][data-key=\"uplift_mm_yr\"]');"
            " e.scrollIntoView(); e.focus(); e.value = ''; })()")
    page.call("Input.insertText", text=str(UPLIFT))
    if page.js("window.studio.legend.classes.find(c => c.name === 'range').uplift_mm_yr") != UPLIFT:
        fail("typing the uplift did not reach the page's legend")

    # 3. A file changed behind the page: Plan must stop and ask, overwriting nothing.
    behind = json.dumps(legend0, indent=1) + "\n"
    open(f"{PLANET}/legend.json", "w").write(behind)
    page.click("#plan")
    page.wait_state("conflict", 20)
    msg = page.js("document.getElementById('conflict-msg').textContent")
    if "legend.json" not in msg or "changed on disk" not in msg: fail(f"the conflict says: {msg!r}")
    if open(f"{PLANET}/legend.json").read() != behind: fail("the legend changed behind the page was overwritten")
    if open(f"{PLANET}/painting.png", "rb").read() != open(BEFORE, "rb").read(): fail("the painting was written despite the conflict")
    if os.path.exists(f"{OUT}/plan/plan.json"): fail("a plan ran despite the conflict")
    ok(f"a legend changed on disk behind the page stops the save and asks: {msg}")
    page.shot("3-conflict")
    page.click("#conflict-overwrite")
    page.wait_state("planned", 60)
    page.shot("4-planned")

    # 4. The files: painting, legend, plan.
    after = png_read(f"{PLANET}/painting.png")
    xs = [w - 9, w - 5, w - 1, 0, 4, 9]
    bad = stroke_check(after, y, xs, RANGE_HEX, "the saved painting")
    if bad: fail("; ".join(bad))
    ok(f"the saved painting has the range colour {RANGE_HEX} at x = {xs} on row {y}, both sides of the seam")
    control = stroke_check(before, y, xs, RANGE_HEX, "before")
    if len(control) != len(xs): fail(f"negative control: the painting before the stroke passed the stroke check at {len(xs) - len(control)} pixels")
    ok(f"negative control: the same check on the painting before the stroke fails at all {len(xs)} pixels ({control[0]})")
    far = [(x, yy) for x, yy in [(w // 2, y), (w - 30, y), (30, y), (w - 1, y - 20), (0, y + 20)]
           if pixel(after, x, yy) != pixel(before, x, yy)]
    if far: fail(f"pixels far from the stroke changed: {far}")
    changed = sum(1 for k in range(w * h) if after[3][k * 3:k * 3 + 3] != before[3][k * 3:k * 3 + 3])
    to_range = sum(1 for k in range(w * h) if after[3][k * 3:k * 3 + 3] != before[3][k * 3:k * 3 + 3]
                   and pixel(after, k % w, k // w) == RANGE_HEX)
    if changed != to_range or changed == 0: fail(f"{changed} pixels changed, {to_range} of them to range")
    legend = json.load(open(f"{PLANET}/legend.json"))
    rng = [c for c in legend["classes"] if c["name"] == "range"][0]
    if rng["uplift_mm_yr"] != UPLIFT: fail(f"legend.json: range uplift_mm_yr {rng['uplift_mm_yr']}, not {UPLIFT}")
    others = [(a, b) for a, b in zip(legend["classes"], legend0["classes"]) if a["name"] != "range" and a != b]
    if others or len(legend["classes"]) != len(legend0["classes"]): fail(f"other classes changed: {others}")
    ok(f"legend.json on disk: range uplift_mm_yr {UPLIFT} (was {[c for c in legend0['classes'] if c['name'] == 'range'][0]['uplift_mm_yr']}), every other class as it was")
    plan = json.load(open(f"{OUT}/plan/plan.json"))
    plan0 = json.load(open(PLAN_BEFORE))
    cells = {c["name"]: c["cells"] for c in plan["classes"]}
    cells0 = {c["name"]: c["cells"] for c in plan0["classes"]}
    if cells["range"] - cells0["range"] != changed:
        fail(f"plan: range {cells0['range']} -> {cells['range']} cells, the stroke changed {changed} pixels")
    if sum(cells.values()) != sum(cells0.values()): fail(f"plan: land cells {sum(cells0.values())} -> {sum(cells.values())}")
    ok(f"the plan's class counts: range {cells0['range']} -> {cells['range']} (+{changed}, the pixels the stroke "
       f"changed), land in all {sum(cells.values())} as before; {cells}")
    prow = [c for c in plan["classes"] if c["name"] == "range"][0]
    if prow["uplift_mm_yr"] != UPLIFT: fail(f"the plan's range uplift is {prow['uplift_mm_yr']}")
    table = page.js("[...document.querySelectorAll('#class-table tr[data-class]')].map(r => [r.dataset.class, +r.dataset.cells])")
    if dict(table) != cells: fail(f"the page's class table {table} is not plan.json's {cells}")
    seam = page.js("document.getElementById('seam-rows').textContent")
    seam_rows = plan["summary"]["seam_disagreement"]["rows"]
    if int(seam) != seam_rows: fail(f"the page's seam disagreement {seam} is not plan.json's {seam_rows}")
    for img in ("map-class", "map-regions"):
        if not page.js(f"document.getElementById('{img}').complete && document.getElementById('{img}').naturalWidth > 0"):
            fail(f"{img} did not load on the page")
    ok(f"the page shows plan.json's class table, seam disagreement ({seam} rows) and both maps")

    # 5. Bake the region holding the stroke.
    region = [r for r in plan["regions"] if any(
        (x - r["box"]["x0"]) % plan["summary"]["planet_w"] < r["box"]["w"] for x in (0, w - 1)) and
        r["box"]["y0"] <= y < r["box"]["y0"] + r["box"]["h"]]
    if not region: fail(f"no region holds row {y} at the seam: {plan['regions']}")
    rid = region[0]["id"]
    page.js(f"document.getElementById('region').value = '{rid}'")
    # 1000 steps: the solve runs a few seconds, so its progress lines (one a second) reach the page
    page.js(f"document.getElementById('steps').value = '{STEPS}'")
    page.click("#bake")
    progress = page.wait_state("baked", 120)
    page.shot("5-baked")
    meta = json.load(open(f"{OUT}/bake/meta.json"))
    if meta["bake"]["only"] != [rid] or meta["bake"]["steps"] != STEPS:
        fail(f"meta.json's bake: {meta['bake']}")
    for f in ("preview.png", "planet_height.png", "summary.txt", "meta.json"):
        if not os.path.getsize(f"{OUT}/bake/{f}"): fail(f"{OUT}/bake/{f} is empty")
    if meta["manifest"]["legend"]["classes"][[c["name"] for c in legend["classes"]].index("range")]["uplift_mm_yr"] != UPLIFT:
        fail("the bake did not use the saved legend")
    verdict = page.js("document.getElementById('verdict').textContent")
    if verdict != open(f"{OUT}/bake/summary.txt").read(): fail("the page's verdict is not summary.txt")
    if not page.js("document.getElementById('preview').complete && document.getElementById('preview').naturalWidth > 0"):
        fail("the preview did not load")
    for _ in range(50):
        if page.js("document.getElementById('preview-region').dataset.drawn") == "1": break
        time.sleep(0.1)
    else: fail("the region's box was not drawn from the preview")
    lines = [p for p in progress if "progress: " in p]
    print(f"progress shown on the page while baking: {len(progress)} distinct lines, {len(lines)} bake progress lines"
          + (f", e.g. {sorted(lines)[-1]!r}" if lines else ""))
    if not lines: fail("the page showed no progress line of the bake")
    ok(f"baked region {rid} at {STEPS} steps: meta.json names --only [{rid}], the saved legend's uplift; preview and verdict shown")

    # 6. One child at a time; a finished one releases the slot.
    st, r = http("POST", "/api/bake", query=f"region={rid}&steps={STEPS}")
    st2, r2 = http("POST", "/api/plan")
    if st != 202 or st2 != 409 or "one plan or bake at a time" not in r2["error"]:
        fail(f"a plan while a bake runs: {st} then {st2} {r2}")
    ok(f"a plan asked while a bake runs is refused 409: {r2['error']}")
    for _ in range(300):
        st, j = http("GET", "/api/job")
        if not j["running"]: break
        time.sleep(0.2)
    st, r = http("POST", "/api/plan")
    if st != 202: fail(f"a plan after the bake finished: {st} {r}")
    ok("after the bake finished, the next plan starts (202)")
    for _ in range(300):
        st, j = http("GET", "/api/job")
        if not j["running"]: break
        time.sleep(0.2)
    # 7. A file changed behind the page, answered Reload: the file stays, the page takes it.
    open(f"{PLANET}/painting.png", "wb").write(open(BEFORE, "rb").read())
    page.click('.brush[data-brush="deep"] .name')
    page.mouse("mousePressed", *to_screen(ux, uy))
    page.mouse("mouseReleased", *to_screen(ux, uy), buttons=0)
    page.click("#save")
    page.wait_state("conflict", 20)
    page.click("#conflict-reload")
    page.wait_state("ready", 20)
    if open(f"{PLANET}/painting.png", "rb").read() != open(BEFORE, "rb").read():
        fail("Reload: the painting changed behind the page was overwritten")
    got = page.js(f"(() => {{ const d = window.studio.img.data, k = ({y} * {w} + 0) * 4;"
                  " return '#' + [d[k], d[k + 1], d[k + 2]].map(v => v.toString(16).padStart(2, '0')).join(''); })()")
    if got != pixel(before, 0, y): fail(f"Reload: the page holds {got} at (0, {y}), the file {pixel(before, 0, y)}")
    ok(f"a painting changed behind the page, answered Reload: the file kept, the page shows it ((0, {y}) is {got} again)")
    if page.errors: fail(f"the page logged errors: {page.errors}")
    # 8. A long bake left running for the shell to stop the studio under it.
    st, r = http("POST", "/api/bake", query=f"region={rid}&steps=200000")
    if st != 202 or not r["pid"]: fail(f"the long bake: {st} {r}")
    open(os.path.join(OUT, "long-bake.pid"), "w").write(str(r["pid"]))
    ok("no script error or console error on the page")


def alpha_at(img, x, y):
    w, h, bpp, d = img
    return d[(y * w + x) * bpp + 3]


def overlay_check(img, y, xs, erased, kept):
    """The overlay's stroke: every x of xs on row y is town (#ff0000) with alpha 255 but the last
    two, the erased one blank; `kept` (x, y, hex) a mark from before; the corners blank."""
    bad = [f"({x}, {y}) is {pixel(img, x, y)} alpha {alpha_at(img, x, y)}" for x in xs[:-2]
           if pixel(img, x, y) != "#ff0000" or alpha_at(img, x, y) != 255]
    if alpha_at(img, erased, y) != 0: bad.append(f"the erased ({erased}, {y}) has alpha {alpha_at(img, erased, y)}")
    kx, ky, khex = kept
    if pixel(img, kx, ky) != khex or alpha_at(img, kx, ky) != 255: bad.append(f"the earlier mark at ({kx}, {ky}) is gone")
    for cx, cy in ((1, 1), (img[0] - 2, img[1] - 2)):
        if alpha_at(img, cx, cy) != 0: bad.append(f"({cx}, {cy}) is not blank")
    return bad


def overlay_main():
    before = png_read(BEFORE)
    w, h = before[0], before[1]
    painting0 = open(f"{PLANET}/painting.png", "rb").read()
    page = Page(CHROME_PORT)
    page.wait_state("ready", 30)
    if page.js("document.getElementById('sheet-box').style.display") == "none": fail("no sheet selector for a planet with an overlay")
    page.js("(() => { const s = document.getElementById('sheet'); s.value = 'overlay'; s.dispatchEvent(new Event('change')); })()")
    marks = page.js("[...document.querySelectorAll('.brush')].map(b => b.dataset.mark)")
    if marks != ["town", "ferry", "rugged", "erase"]: fail(f"the overlay sheet's brushes are {marks}")
    geo = page.js("(() => { const r = document.getElementById('view').getBoundingClientRect();"
                  " return {left: r.left, top: r.top, width: r.width, cw: document.getElementById('view').width,"
                  " v: window.studio.view}; })()")
    v, k = geo["v"], geo["width"] / geo["cw"]
    to_screen = lambda px, py: (geo["left"] + (px - v["ox"]) * v["scale"] * k, geo["top"] + (py - v["oy"]) * v["scale"] * k)
    page.js("document.getElementById('radius').value = 1")  # a 3 x 3 stamp: the stroke is 3 rows
    page.click('.brush[data-mark="town"] .name')
    y, x0, x1 = 250, w - 10, w + 10  # unwrapped across the seam
    sx, sy = to_screen(x0 + 0.5, y + 0.5)
    page.mouse("mousePressed", sx, sy)
    for i in range(1, 21):
        sx, sy = to_screen(x0 + 0.5 + (x1 - x0) * i / 20, y + 0.5)
        page.mouse("mouseMoved", sx, sy)
    page.mouse("mouseReleased", sx, sy, buttons=0)
    got = page.js(f"(() => {{ const d = window.studio.ov.data, k = ({y} * {w} + {w - 5}) * 4;"
                  " return [d[k], d[k + 1], d[k + 2], d[k + 3], window.studio.sheet, window.studio.ovBrush]; })()")
    if got[:4] != [255, 0, 0, 255]: fail(f"the town stroke did not paint the overlay sheet: ({w - 5}, {y}) holds {got}; errors {page.errors}")
    page.click('.brush[data-mark="erase"] .name')
    erased = x1 % w  # the stroke's last pixel: the rest stays one piece
    sx, sy = to_screen(w + erased + 0.5, y + 0.5)
    page.mouse("mousePressed", sx, sy)
    page.mouse("mouseReleased", sx, sy, buttons=0)
    page.js("(() => { const e = document.querySelector('input[data-mark=\"rugged\"][data-key=\"coast_jitter_px\"]');"
            " e.value = '9'; e.dispatchEvent(new Event('input')); })()")
    page.shot("6-overlay")
    page.click("#plan")
    page.wait_state("planned", 60)
    page.shot("7-overlay-planned")
    saved = png_read(f"{PLANET}/overlay.png")
    xs = [x % w for x in range(x0, x1 + 1)]
    kept = (420, 330, "#ff0000")  # the town disc painted before the session
    bad = overlay_check(saved, y, xs, erased, kept)
    if bad: fail("the saved overlay: " + "; ".join(bad[:6]))
    if not overlay_check(before, y, xs, erased, kept): fail("the negative control: the overlay from before passes the stroke check")
    ok(f"the overlay stroke saved on both sides of the seam (x {x0 % w}..{w - 1} and 0..{x1 % w}, row {y}), the erased pixel and the sheet's blank kept blank (the check fails on the overlay from before)")
    m = json.load(open(f"{PLANET}/marks.json"))
    if [mk.get("coast_jitter_px") for mk in m["marks"] if mk["name"] == "rugged"] != [9]: fail(f"marks.json on disk: {m}")
    if open(f"{PLANET}/painting.png", "rb").read() != painting0: fail("painting.png changed, though only the overlay was painted")
    ov = json.load(open(f"{OUT}/plan/overlay.json"))
    towns = [f for f in ov["features"] if f["mark"] == "town" and f["crosses_seam"]]
    if len(towns) != 1 or towns[0]["pixels"] < 2 * len(xs): fail(f"the plan's town pieces across the seam: {towns}")
    ok(f"marks.json holds coast_jitter_px 9, painting.png untouched, the plan's overlay.json has the stroke as one piece across the seam ({towns[0]['pixels']} pixels)")
    if page.errors: fail(f"script errors on the page: {page.errors}")
    ok("no script or console error on the overlay page")


overlay_main() if OVERLAY else main()
