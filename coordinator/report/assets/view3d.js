/* report.html's 3D view of the detail tiles (docs/report.md, "The 3D view"). A classic script, so
 * the page works from file://: three.js is report_assets/three.js (the vendored module turned into
 * a classic script by the bake, window.THREE), and the heights come from the reduced copy of the
 * tiles the bake writes into report_terrain/ (coordinator/report/terrain.h), one script a tile that
 * calls tbTerrain({...}).
 *
 * The ground is one mesh a tile: a vertex per sample of the copy, two triangles a square split on
 * the diagonal from its north-east to its south-west corner (s_ground interpolates on the same
 * triangles, so the walk camera stands exactly 1.7 m above what is drawn), x east, y up, z south,
 * metres, true vertical scale times the exaggeration control. Colour: the splat weights (rock,
 * grass, sediment, scree or snow) mixed from a fixed palette. Light: one fixed sun, from the
 * north-west 35 degrees up, and a dim sky light. Cameras: orbit (drag to turn, wheel to zoom) and
 * walk (eyes 1.7 m above the ground, following it; arrow keys or WASD to walk, drag to look).
 * With #selfcheck the page's check (page_assets.c) waits for window.tbView3d.check().
 */
(function () {
  'use strict';
  var EYE_M = 1.7;
  var PALETTE = [[0.46, 0.43, 0.40], [0.33, 0.47, 0.22], [0.80, 0.72, 0.52], [0.93, 0.93, 0.95]];
  var root = document.getElementById('view3d');
  var idxEl = document.getElementById('terrain-index');
  if (!root || !idxEl || !window.THREE) return;
  var THREE = window.THREE;
  var index = JSON.parse(idxEl.textContent);
  var tiles = {};
  index.tiles.forEach(function (t) { tiles[t.id] = t; });
  var loaded = {}, waiting = {};

  /* ---- the copy's scripts ---- */
  window.tbTerrain = function (d) {
    var key = d.id + ':' + d.level;
    loaded[key] = d;
    (waiting[key] || []).forEach(function (f) { f(d); });
    delete waiting[key];
  };
  function loadScript(id, level) {
    var key = id + ':' + level;
    if (loaded[key]) return Promise.resolve(loaded[key]);
    return new Promise(function (resolve, reject) {
      (waiting[key] = waiting[key] || []).push(resolve);
      if (waiting[key].length > 1) return;
      var s = document.createElement('script');
      s.src = 'report_terrain/' + id + (level === 'coarse' ? '_c' : level === 'ground' ? '_g' : '') + '.js';
      s.onerror = function () { reject(new Error('cannot load ' + s.src)); };
      document.head.appendChild(s);
    });
  }
  function inflate(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).arrayBuffer().then(function (b) { return new Uint8Array(b); });
  }
  /* A decoded level: heights in metres (row 0 north) and splat bytes. */
  function decode(d) {
    if (d.decoded) return Promise.resolve(d.decoded);
    return Promise.all([inflate(d.heights), inflate(d.splat)]).then(function (r) {
      var n = d.w * d.h, h = new Float32Array(n), span = d.max_m - d.min_m;
      for (var i = 0; i < n; i++) h[i] = d.min_m + (r[0][2 * i] | (r[0][2 * i + 1] << 8)) / 65535 * span;
      d.decoded = {w: d.w, h: d.h, spacing: d.spacing_m, x0: d.x0_m, y0: d.y0_m, height: h, splat: r[1]};
      return d.decoded;
    });
  }

  /* ---- the scene ---- */
  var canvas = document.createElement('canvas');
  canvas.width = 960; canvas.height = 540;
  canvas.id = 'view3d-canvas';
  canvas.tabIndex = 0;
  root.querySelector('.view3d-frame').appendChild(canvas);
  var renderer = new THREE.WebGLRenderer({canvas: canvas, antialias: false, preserveDrawingBuffer: true});
  renderer.setPixelRatio(1);
  renderer.setSize(canvas.width, canvas.height, false);
  var SKY = 0x9fc4e8;
  renderer.setClearColor(SKY, 1);
  var scene = new THREE.Scene();
  scene.fog = null;
  var sun = new THREE.DirectionalLight(0xffffff, 2.4);
  var sunEl = 35 * Math.PI / 180, sunAz = 315 * Math.PI / 180; /* from the north-west */
  sun.position.set(Math.sin(sunAz) * Math.cos(sunEl), Math.sin(sunEl), -Math.cos(sunAz) * Math.cos(sunEl));
  scene.add(sun);
  scene.add(new THREE.HemisphereLight(0xcfe0ff, 0x4a4030, 0.6));
  var camera = new THREE.PerspectiveCamera(55, canvas.width / canvas.height, 0.5, 200000);
  var meshes = [], grounds = [], exag = 1, mode = 'orbit', view = '';
  var orbit = {yaw: 0.6, pitch: 0.55, dist: 4000, target: new THREE.Vector3()};
  var walker = {x: 0, z: 0, yaw: 0.6, pitch: -0.05};

  function colourOf(s, k, out) {
    var t = s[4 * k] + s[4 * k + 1] + s[4 * k + 2] + s[4 * k + 3];
    out[0] = out[1] = out[2] = 0;
    if (t === 0) { out[0] = 0.5; out[1] = 0.5; out[2] = 0.5; return; }
    for (var c = 0; c < 4; c++)
      for (var j = 0; j < 3; j++) out[j] += PALETTE[c][j] * s[4 * k + c] / t;
  }
  /* The mesh of one decoded level, placed at (x0 - ox, z0 - oz) of the view's origin, without the
   * squares that lie wholly inside `hole` ({x0, z0, x1, z1} in view metres; may be absent). */
  function buildMesh(g, ox, oz, hole) {
    var n = g.w * g.h, pos = new Float32Array(3 * n), col = new Float32Array(3 * n), c = [0, 0, 0];
    for (var j = 0; j < g.h; j++)
      for (var i = 0; i < g.w; i++) {
        var k = j * g.w + i;
        pos[3 * k] = g.x0 - ox + i * g.spacing;
        pos[3 * k + 1] = g.height[k];
        pos[3 * k + 2] = g.y0 - oz + j * g.spacing;
        colourOf(g.splat, k, c);
        col[3 * k] = c[0]; col[3 * k + 1] = c[1]; col[3 * k + 2] = c[2];
      }
    var idx = new Uint32Array(6 * (g.w - 1) * (g.h - 1)), m = 0; /* m < length: a hole was cut */
    for (var jj = 0; jj + 1 < g.h; jj++)
      for (var ii = 0; ii + 1 < g.w; ii++) {
        var a = jj * g.w + ii, b = a + 1, d = a + g.w, e = d + 1;
        if (hole && pos[3 * a] >= hole.x0 && pos[3 * e] <= hole.x1 && pos[3 * a + 2] >= hole.z0 &&
            pos[3 * e + 2] <= hole.z1)
          continue;
        /* (i,j) (i,j+1) (i+1,j) and (i+1,j) (i,j+1) (i+1,j+1): counter-clockwise seen from above */
        idx[m++] = a; idx[m++] = d; idx[m++] = b;
        idx[m++] = b; idx[m++] = d; idx[m++] = e;
      }
    var geo = new THREE.BufferGeometry();
    geo.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    geo.setAttribute('color', new THREE.BufferAttribute(col, 3));
    geo.setIndex(new THREE.BufferAttribute(m < idx.length ? idx.slice(0, m) : idx, 1));
    geo.computeVertexNormals();
    var mesh = new THREE.Mesh(geo, new THREE.MeshLambertMaterial({vertexColors: true}));
    mesh.scale.y = exag;
    return mesh;
  }
  /* The drawn ground's height (metres, unexaggerated) at view position (x, z), on the mesh's own
   * triangles; NaN off every tile. */
  function ground(x, z) {
    for (var t = 0; t < grounds.length; t++) {
      var g = grounds[t], fx = (x - g.ox) / g.spacing, fz = (z - g.oz) / g.spacing;
      var i = Math.floor(fx), j = Math.floor(fz);
      if (i < 0 || j < 0 || i + 1 >= g.w || j + 1 >= g.h) continue;
      fx -= i; fz -= j;
      var H = g.height, k = j * g.w + i;
      if (fx + fz <= 1) return H[k] + fx * (H[k + 1] - H[k]) + fz * (H[k + g.w] - H[k]);
      return H[k + g.w + 1] + (1 - fx) * (H[k + g.w] - H[k + g.w + 1]) + (1 - fz) * (H[k + 1] - H[k + g.w + 1]);
    }
    return NaN;
  }

  function place() {
    if (mode === 'walk') {
      var gy = ground(walker.x, walker.z);
      camera.position.set(walker.x, (isFinite(gy) ? gy : 0) * exag + EYE_M, walker.z);
      var cp = Math.cos(walker.pitch);
      camera.lookAt(walker.x + Math.sin(walker.yaw) * cp, camera.position.y + Math.sin(walker.pitch),
                    walker.z - Math.cos(walker.yaw) * cp);
      camera.near = 0.3;
    } else {
      var t = orbit.target, cp2 = Math.cos(orbit.pitch);
      camera.position.set(t.x + orbit.dist * Math.sin(orbit.yaw) * cp2, t.y + orbit.dist * Math.sin(orbit.pitch),
                          t.z + orbit.dist * Math.cos(orbit.yaw) * cp2);
      camera.lookAt(t);
      camera.near = Math.max(1, orbit.dist / 1000);
    }
    camera.updateProjectionMatrix();
  }
  function render() { place(); renderer.render(scene, camera); }

  function clear() {
    meshes.forEach(function (m) { scene.remove(m); m.geometry.dispose(); m.material.dispose(); });
    meshes = []; grounds = [];
  }
  /* Shows tiles `ids` at `level`; the view's origin is the first tile's north-west corner, and a
   * tile across the seam is moved by the circumference so a landmass stays whole. With `patch`
   * (one tile's ground level: every 2 m sample of its centre) that is drawn too, in place of the
   * squares under it, and ground() reads it first, so the walk camera stands on the 2 m ground. */
  function show(name, ids, level, patch) {
    var status = root.querySelector('.view3d-status');
    status.textContent = 'loading ' + ids.length + ' tile' + (ids.length === 1 ? '' : 's') + '...';
    var loads = ids.map(function (id) { return loadScript(id, level).then(decode); });
    loads.push(patch ? loadScript(patch, 'ground').then(decode) : Promise.resolve(null));
    return Promise.all(loads).then(function (gs) {
      var p = gs.pop();
      clear();
      view = name;
      var circ = index.circumference_m || 0, ox = tiles[ids[0]].x0_m, oz = tiles[ids[0]].y0_m;
      var lo = Infinity, hi = -Infinity, minx = Infinity, maxx = -Infinity, minz = Infinity, maxz = -Infinity;
      var hole = p && {x0: p.x0 - ox, z0: p.y0 - oz, x1: p.x0 - ox + (p.w - 1) * p.spacing,
                       z1: p.y0 - oz + (p.h - 1) * p.spacing};
      if (p) add(p, ox, oz, 'ground');
      gs.forEach(function (g, n) {
        var t = tiles[ids[n]], dx = t.x0_m - ox;
        if (circ && dx > circ / 2) dx -= circ;
        if (circ && dx < -circ / 2) dx += circ;
        var base = t.x0_m - dx; /* world x of the view's x = 0 for this tile */
        add(g, base, oz, level, n === 0 ? hole : null); /* the patch is the first tile's */
        lo = Math.min(lo, t.min_m); hi = Math.max(hi, t.max_m);
        minx = Math.min(minx, dx); maxx = Math.max(maxx, dx + t.size_m);
        minz = Math.min(minz, t.y0_m - oz); maxz = Math.max(maxz, t.y0_m - oz + t.size_m);
      });
      var span = Math.max(maxx - minx, maxz - minz);
      orbit.target.set((minx + maxx) / 2, (lo + hi) / 2 * exag, (minz + maxz) / 2);
      orbit.dist = span * 0.9;
      camera.far = span * 6;
      walker.x = (minx + maxx) / 2; walker.z = (minz + maxz) / 2;
      status.textContent = name + ': ' + ids.length + ' tile' + (ids.length === 1 ? '' : 's') +
        ' of the reduced copy (' + gs[0].w + ' x ' + gs[0].h + ' samples a tile, every ' +
        gs[0].spacing + ' m), heights ' + lo.toFixed(1) + ' .. ' + hi.toFixed(1) + ' m' +
        (p ? '; every ' + p.spacing + ' m over the ' + ((p.w - 1) * p.spacing).toFixed(0) +
             ' m at its centre, where the walk starts' : '');
      render();
    });
  }
  /* One decoded level into the scene and the walk's ground, placed as buildMesh places it. */
  function add(g, ox, oz, level, hole) {
    var mesh = buildMesh(g, ox, oz, hole);
    meshes.push(mesh); scene.add(mesh);
    grounds.push({ox: g.x0 - ox, oz: g.y0 - oz, spacing: g.spacing, w: g.w, h: g.h, height: g.height,
                  base_x: ox, base_z: oz, level: level});
  }
  function showTile(id) {
    if (!tiles[id]) return Promise.reject(new Error('no copy of ' + id));
    return show('tile ' + id, [id], 'fine', tiles[id].ground ? id : null);
  }
  function showLandmass() {
    var ids = (index.landmass.length ? index.landmass : index.tiles.map(function (t) { return t.id; })).slice(0, 400);
    return show('the largest landmass', ids, 'coarse');
  }

  /* ---- controls ---- */
  function setMode(m) {
    mode = m;
    root.querySelectorAll('[data-mode]').forEach(function (b) { b.classList.toggle('on', b.getAttribute('data-mode') === m); });
    render();
  }
  root.querySelectorAll('[data-mode]').forEach(function (b) {
    b.addEventListener('click', function () { setMode(b.getAttribute('data-mode')); });
  });
  root.querySelector('[data-view="steepest"]').addEventListener('click', function () { showTile(index.steepest); });
  root.querySelector('[data-view="landmass"]').addEventListener('click', showLandmass);
  var ex = root.querySelector('.view3d-exag'), exOut = root.querySelector('.view3d-exag-value');
  ex.addEventListener('input', function () {
    exag = +ex.value;
    exOut.textContent = exag.toFixed(1) + 'x';
    meshes.forEach(function (m) { m.scale.y = exag; });
    render();
  });
  document.querySelectorAll('[data-tile]').forEach(function (el) {
    el.addEventListener('click', function () {
      var id = el.getAttribute('data-tile');
      if (tiles[id]) { showTile(id); root.scrollIntoView(); }
    });
  });
  var drag = null;
  canvas.addEventListener('pointerdown', function (e) { drag = {x: e.clientX, y: e.clientY}; canvas.focus(); });
  window.addEventListener('pointerup', function () { drag = null; });
  canvas.addEventListener('pointermove', function (e) {
    if (!drag) return;
    var dx = (e.clientX - drag.x) / 200, dy = (e.clientY - drag.y) / 200;
    drag = {x: e.clientX, y: e.clientY};
    if (mode === 'walk') { walker.yaw += dx; walker.pitch = Math.max(-1.4, Math.min(1.4, walker.pitch - dy)); }
    else { orbit.yaw -= dx; orbit.pitch = Math.max(0.05, Math.min(1.5, orbit.pitch + dy)); }
    render();
  });
  canvas.addEventListener('wheel', function (e) {
    if (mode !== 'orbit') return;
    e.preventDefault();
    orbit.dist *= Math.exp(e.deltaY / 500);
    render();
  }, {passive: false});
  canvas.addEventListener('keydown', function (e) {
    if (mode !== 'walk') return;
    var step = e.shiftKey ? 20 : 4, f = 0, s = 0;
    if (e.key === 'ArrowUp' || e.key === 'w') f = 1;
    else if (e.key === 'ArrowDown' || e.key === 's') f = -1;
    else if (e.key === 'ArrowLeft' || e.key === 'a') s = -1;
    else if (e.key === 'ArrowRight' || e.key === 'd') s = 1;
    else return;
    e.preventDefault();
    walk(f * step, s * step);
  });
  /* Moves the walker f metres ahead and s to the right, never off the ground. */
  function walk(f, s) {
    var nx = walker.x + Math.sin(walker.yaw) * f + Math.cos(walker.yaw) * s;
    var nz = walker.z - Math.cos(walker.yaw) * f + Math.sin(walker.yaw) * s;
    if (isFinite(ground(nx, nz))) { walker.x = nx; walker.z = nz; }
    render();
  }

  /* ---- the self-check (tests/test_report_browser.sh) ---- */
  /* The canvas's pixels through a 2D canvas (drawImage of the kept drawing buffer): a readPixels
   * on the WebGL context makes Chromium log a "GPU stall" message, and the page logs nothing. */
  var copy2d = null;
  function pixels() {
    render();
    if (!copy2d) { copy2d = document.createElement('canvas'); copy2d.width = canvas.width; copy2d.height = canvas.height; }
    var ctx = copy2d.getContext('2d', {willReadFrequently: true});
    ctx.drawImage(canvas, 0, 0);
    return ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  }
  function stats(px) {
    var sky = [(SKY >> 16) & 255, (SKY >> 8) & 255, SKY & 255], n = px.length / 4, ground = 0, sum = 0, sum2 = 0;
    for (var i = 0; i < n; i++) {
      var r = px[4 * i], g = px[4 * i + 1], b = px[4 * i + 2], l = 0.3 * r + 0.59 * g + 0.11 * b;
      if (Math.abs(r - sky[0]) + Math.abs(g - sky[1]) + Math.abs(b - sky[2]) > 12) ground++;
      sum += l; sum2 += l * l;
    }
    var mean = sum / n;
    return {ground_share: ground / n, luma_mean: mean, luma_sd: Math.sqrt(Math.max(0, sum2 / n - mean * mean))};
  }
  function differ(a, b) {
    var d = 0;
    for (var i = 0; i < a.length; i += 4)
      if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) > 12) d++;
    return d / (a.length / 4);
  }
  function check() {
    var r = {view: '', tile: index.steepest, errors: []};
    return showTile(index.steepest).then(function () {
      setMode('orbit');
      var a = pixels();
      r.orbit = stats(a);
      orbit.yaw += 0.7;
      var b = pixels();
      r.orbit_turned = stats(b);
      r.changed_share = differ(a, b);
      orbit.yaw -= 0.7;
      setMode('walk');
      r.walk = [];
      for (var k = 0; k < 6; k++) {
        if (k) walk(37, 11);
        r.walk.push({x: walker.x, z: walker.z, camera_y: camera.position.y, ground_m: ground(walker.x, walker.z),
                     first_x: grounds[0].ox, first_z: grounds[0].oz, level: grounds[0].level,
                     spacing_m: grounds[0].spacing, world_x0: grounds[0].base_x, world_z0: grounds[0].base_z});
      }
      r.walk_view = stats(pixels());
      r.view = view;
      var hash = location.hash;
      if (/v3d=orbit/.test(hash)) setMode('orbit');
      if (/v3d=landmass/.test(hash)) return showLandmass().then(function () { setMode('orbit'); r.landmass = stats(pixels()); return r; });
      return r;
    }).catch(function (e) { r.errors.push(String(e && e.message || e)); return r; });
  }
  window.tbView3d = {check: check, show: showTile, landmass: showLandmass, ground: ground};
  if (!/selfcheck/.test(location.hash)) {
    var m = /v3d-tile=([a-z0-9]+)/.exec(location.hash);
    var first = /v3d=landmass/.test(location.hash) ? showLandmass() : showTile(m ? m[1] : index.steepest);
    first.then(function () { if (/v3d=walk/.test(location.hash)) setMode('walk'); }, function (e) {
      root.querySelector('.view3d-status').textContent = 'the 3D view failed: ' + e.message;
    });
  }
})();
