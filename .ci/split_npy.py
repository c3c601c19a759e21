"""Splits DIR/x.npy (n x d, C order) and DIR/y.npy (n) at the given row bounds into the
per-rank shard files DIR/x.R.npy and DIR/y.R.npy (R = 0, 1, ...), for the MPI shard tests.

Usage: python3 .ci/split_npy.py DIR BOUND..."""
import re
import struct
import sys

d = sys.argv[1]; bounds = [int(b) for b in sys.argv[2:]]
def read(p):
    raw = open(p, "rb").read()
    hl = struct.unpack("<H", raw[8:10])[0]
    hdr = raw[10:10 + hl].decode()
    return hdr, raw[10 + hl:]
def write(p, hdr_old, shape_old, shape_new, data):
    hdr = hdr_old.rstrip().replace(shape_old, shape_new)
    h = hdr + " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    open(p, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + data)
hx, dx = read(d + "/x.npy")
hy, dy = read(d + "/y.npy")
n, dd = map(int, re.search(r"\((\d+), (\d+)\)", hx).groups())
item = len(dx) // (n * dd)
edges = [0] + bounds + [n]
for r in range(len(edges) - 1):
    a, b = edges[r], edges[r + 1]
    write(f"{d}/x.{r}.npy", hx, f"({n}, {dd})", f"({b - a}, {dd})", dx[a * dd * item:b * dd * item])
    write(f"{d}/y.{r}.npy", hy, f"({n},)", f"({b - a},)", dy[a:b])
