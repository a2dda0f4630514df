"""Paints an overlay sheet for the tests: overlay_paint.py OUT.png W H SPEC, SPEC a JSON list of
["disc", cx, cy, r, rgb] (pixels whose centres lie within r of (cx, cy)), ["line", [[x, y], ...],
half, rgb] (a polyline drawn with a square brush of half-width `half`), ["rect", x0, y0, x1, y1,
rgb] and ["pixel", x, y, rgb], in painting pixels, X wrapping; everything else is blank (alpha 0).
Writes an 8-bit RGBA PNG."""
import struct, sys, zlib, math, json
W, H = int(sys.argv[2]), int(sys.argv[3])
px = bytearray(W * H * 4)
def put(x, y, rgb):
    x %= W
    if 0 <= y < H:
        i = 4 * (y * W + x); px[i:i+3] = bytes(rgb); px[i+3] = 255
def disc(cx, cy, r, rgb):
    for y in range(int(cy - r) - 1, int(cy + r) + 2):
        for x in range(int(cx - r) - 1, int(cx + r) + 2):
            if (x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= r * r: put(x, y, rgb)
def seg(a, b, half, rgb):
    n = int(max(abs(b[0]-a[0]), abs(b[1]-a[1])) * 2) + 1
    for k in range(n + 1):
        t = k / n; x = a[0] + (b[0]-a[0]) * t; y = a[1] + (b[1]-a[1]) * t
        for dy in range(-half, half + 1):
            for dx in range(-half, half + 1):
                put(int(math.floor(x)) + dx, int(math.floor(y)) + dy, rgb)
spec = json.loads(sys.argv[4])
for s in spec:
    if s[0] == 'disc': disc(s[1], s[2], s[3], s[4])
    elif s[0] == 'line':
        pts = s[1]
        for a, b in zip(pts, pts[1:]): seg(a, b, s[2], s[3])
    elif s[0] == 'rect':
        for y in range(s[2], s[4]):
            for x in range(s[1], s[3]): put(x, y, s[5])
    elif s[0] == 'pixel': put(s[1], s[2], s[3])
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
raw = b''.join(b'\x00' + bytes(px[y*W*4:(y+1)*W*4]) for y in range(H))
open(sys.argv[1], 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', W, H, 8, 6, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
