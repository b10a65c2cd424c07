#!/usr/bin/python3
"""Check `wafer tlrmvm`'s files against numpy, independently of wafer's code.

usage: tlr_numpy.py COMPRESSED.h5 OUTPUT.h5 NX NY DEPTH_REC NB ACC [INPUT.h5]

Builds the survey's Green's functions exp(-i k r) / (4 pi r) (sources on an
NX x NY grid at depth 0, receivers at DEPTH_REC, 20 m apart, 2000 m/s),
numbered along a Hilbert curve computed here, or reads the dense operators
of INPUT.h5; rebuilds every tile from the compressed file's bases and
checks ||A - A_tlr||_F <= sqrt(tiles) acc ||A||_F, and that the output's
y = A_tlr x agrees with numpy's A x within that bound; with an MDD in the
output, that the residuals ||A x - d|| / ||d|| of its two recovered
wavefields (d = A x_true, all frequencies) are the ones LSQR reported.
Exit 1 on failure.
"""
import sys

import h5py
import numpy as np


def hilbert_index(n, x, y):
    d, s = 0, n // 2
    while s > 0:
        rx, ry = int(x & s > 0), int(y & s > 0)
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x, y = n - 1 - x, n - 1 - y
            x, y = y, x
        s //= 2
    return d


def points(nx, ny, z):
    n = 1
    while n < max(nx, ny):
        n *= 2
    cells = sorted(((ix, iy) for iy in range(ny) for ix in range(nx)),
                   key=lambda p: hilbert_index(n, p[0], p[1]))
    return np.array([(20.0 * ix, 20.0 * iy, z) for ix, iy in cells])


def main():
    comp, out, nx, ny, zr, nb, acc = sys.argv[1:8]
    nx, ny, zr, nb, acc = int(nx), int(ny), float(zr), int(nb), float(acc)
    dense_input = sys.argv[8] if len(sys.argv) > 8 else None
    c, o = h5py.File(comp, "r"), h5py.File(out, "r")
    failures = 0
    f = 0
    mdd = {"tlr": [0.0, 0.0], "dense": [0.0, 0.0]}
    while "ranks_%d" % f in c:
        hz = o.attrs["hz_%d" % f]
        if dense_input:
            A = h5py.File(dense_input, "r")["A_%d" % f][...].astype(np.complex128)
        else:
            src, rec = points(nx, ny, 0.0), points(nx, ny, zr)
            # The file records the same ordering.
            if not (np.allclose(c["sources"][...], src) and np.allclose(c["receivers"][...], rec)):
                print("the compressed file's ordering differs from the Hilbert curve's")
                failures += 1
            r = np.sqrt(((rec[:, None, :] - src[None, :, :]) ** 2).sum(-1))
            A = np.exp(-1j * 2 * np.pi * hz / 2000.0 * r) / (4 * np.pi * r)
        m, n = A.shape
        ranks = c["ranks_%d" % f][...]
        U = c["U_%d" % f][...].view(np.complex64)[:, 0]
        W = c["W_%d" % f][...].view(np.complex64)[:, 0]
        mt, nt = ranks.shape
        approx = np.zeros_like(A)
        # U in tile-row order, W in tile-column order (tl_io.h).
        u_at, w_at = {}, {}
        at = 0
        for i in range(mt):
            for j in range(nt):
                u_at[i, j] = at
                at += min(nb, m - i * nb) * ranks[i, j]
        at = 0
        for j in range(nt):
            for i in range(mt):
                w_at[i, j] = at
                at += min(nb, n - j * nb) * ranks[i, j]
        for i in range(mt):
            for j in range(nt):
                k, mi, nj = ranks[i, j], min(nb, m - i * nb), min(nb, n - j * nb)
                Ut = U[u_at[i, j]:u_at[i, j] + mi * k].reshape(k, mi).T
                Wt = W[w_at[i, j]:w_at[i, j] + nj * k].reshape(k, nj).T
                approx[i * nb:i * nb + mi, j * nb:j * nb + nj] = Ut @ Wt.conj().T
        fro = np.linalg.norm(A)
        bound = np.sqrt(mt * nt) * acc + 1e-5
        err = np.linalg.norm(A - approx) / fro
        x = o["x_%d" % f][...].view(np.complex64)[:, 0]
        y = o["y_%d" % f][...].view(np.complex64)[:, 0]
        ey = np.linalg.norm(y - A @ x) / (fro * np.linalg.norm(x))
        print("frequency %g Hz: %d x %d, R = %d, ||A - A_tlr||_F / ||A||_F = %.2e, "
              "||y - A x|| / (||A||_F ||x||) = %.2e, bound %.2e" % (hz, m, n, ranks.sum(), err, ey, bound))
        if not (err <= bound and ey <= bound):
            failures += 1
        if "mdd_true_%d" % f in o:
            truth = o["mdd_true_%d" % f][...].view(np.complex64)[:, 0].astype(np.complex128)
            d = A @ truth
            for kind in mdd:
                xr = o["mdd_%s_%d" % (kind, f)][...].view(np.complex64)[:, 0]
                mdd[kind][0] += np.linalg.norm(A @ xr - d) ** 2
                mdd[kind][1] += np.linalg.norm(d) ** 2
        f += 1
    for kind in mdd:
        if mdd[kind][1] > 0:
            res = np.sqrt(mdd[kind][0] / mdd[kind][1])
            reported = o["mdd_residual_%s" % kind][-1, 0]
            print("MDD %s: residual %.4e, LSQR reported %.4e" % (kind, res, reported))
            if abs(res - reported) > 1e-2 * reported + 1e-6:
                failures += 1
    if f == 0:
        print("no compressed matrices in", comp)
        failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
