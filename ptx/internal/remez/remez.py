"""Minimax polynomial coefficients for the ptx math library (offline tool).

Run with python3 and mpmath: python3 remez.py NAME. It prints the coefficients as
exact hexadecimal floats rounded to the target format, for pasting into the Go source.
The Remez exchange algorithm (E. Remez, 1934; see J.-M. Muller, "Elementary
Functions", 3rd ed., ch. 3) on a dense grid: solve for the polynomial that equioscillates
on n+1 reference points, move the references to the extrema of the weighted error, repeat.
"""
import sys
import mpmath as mp

mp.mp.prec = 200


def remez(f, basis, a, b, w, iters=30, grid=4000):
    n = len(basis)
    # initial reference: Chebyshev nodes
    ref = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (n - i) / n) for i in range(n + 1)]
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (grid - i) / grid) for i in range(grid + 1)]
    best = None
    for it in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, x in enumerate(ref):
            for k in range(n):
                A[i, k] = basis[k](x)
            A[i, n] = (-1) ** i / max(w(x), mp.mpf(2)**-20)
            rhs[i] = f(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[k] for k in range(n)]
        err = lambda x: (f(x) - sum(c[k] * basis[k](x) for k in range(n))) * max(w(x), mp.mpf(2)**-20)
        es = [err(x) for x in xs]
        # local extrema with alternating signs
        ext = []
        for i in range(len(xs)):
            l = es[i - 1] if i > 0 else None
            r = es[i + 1] if i + 1 < len(xs) else None
            e = es[i]
            if (l is None or abs(e) >= abs(l)) and (r is None or abs(e) >= abs(r)):
                ext.append((xs[i], e))
        # merge same-sign neighbours keeping the largest
        alt = []
        for x, e in ext:
            if alt and mp.sign(alt[-1][1]) == mp.sign(e):
                if abs(e) > abs(alt[-1][1]):
                    alt[-1] = (x, e)
            else:
                alt.append((x, e))
        while len(alt) > n + 1:
            if abs(alt[0][1]) < abs(alt[-1][1]):
                alt.pop(0)
            else:
                alt.pop()
        maxe = max(abs(e) for e in es)
        best = (c, maxe)
        if len(alt) == n + 1:
            ref = [x for x, _ in alt]
    return best


def fmt(c, prec):
    if prec == 24:
        v = float(mp.mpf(c))
        import struct
        v32 = struct.unpack('f', struct.pack('f', v))[0]
        # round correctly from the mp value to float32
        x = mp.mpf(c)
        m, e = mp.frexp(x)
        r = mp.ldexp(mp.nint(mp.ldexp(m, 24)), e - 24)
        return float(r).hex()
    return float(mp.mpf(c)).hex()


def run(name, f, basis, a, b, w, prec):
    c, e = remez(f, basis, mp.mpf(a), mp.mpf(b), w)
    print("%s: max weighted error %s (2^%.1f)" % (name, mp.nstr(e, 5), float(mp.log(e, 2))))
    for i, x in enumerate(c):
        print("  c%d = %s" % (i, fmt(x, prec)))


def powers(ks):
    return [(lambda k: (lambda x: x ** k))(k) for k in ks]


def rel_odd_series(F, lead, ks):
    pass


L = mp.log(2) / 2
P = {
    # exp/expm1: expm1(r) = r + r^2 P(r), P = (e^r-1-r)/r^2, |r| <= ln2/2,
    # weight r^2/|expm1(r)| (relative error of expm1, stricter than exp's).
    'expm1_f32': lambda d: run('expm1_f32', lambda r: (mp.expm1(r) - r) / r**2 if abs(r) > 1e-15 else mp.mpf(1) / 2,
                               powers(range(d)), -L, L, lambda r: abs(r) if r == 0 else r**2 / abs(mp.expm1(r)), 24),
    'expm1_f64': lambda d: run('expm1_f64', lambda r: (mp.expm1(r) - r) / r**2 if abs(r) > 1e-15 else mp.mpf(1) / 2,
                               powers(range(d)), -L, L, lambda r: abs(r) if r == 0 else r**2 / abs(mp.expm1(r)), 53),
    # exp2: 2^r = 1 + r Q(r), |r| <= 1/2, weight r/2^r
    'exp2_f32': lambda d: run('exp2_f32', lambda r: (mp.power(2, r) - 1) / r if abs(r) > 1e-15 else mp.log(2),
                              powers(range(d)), -0.5, 0.5, lambda r: abs(r) / mp.power(2, r), 24),
    # log: log1p(f) = f + f^2 P(f), f in [sqrt(1/2)-1, sqrt(2)-1], weight f^2/|log1p f|
    'log_f32': lambda d: run('log_f32', lambda f: (mp.log1p(f) - f) / f**2 if abs(f) > 1e-15 else -mp.mpf(1) / 2,
                             powers(range(d)), mp.sqrt(0.5) - 1, mp.sqrt(2) - 1,
                             lambda f: abs(f) if f == 0 else f**2 / abs(mp.log1p(f)), 24),
    # sin(r) = r + r^3 S(r^2), t = r^2 in [0, (pi/4)^2], weight t*r/sin r
    'sin_f32': lambda d: run('sin_f32', lambda t: (mp.sin(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else -mp.mpf(1) / 6,
                             powers(range(d)), 0, (mp.pi / 4)**2, lambda t: t if t == 0 else t * mp.sqrt(t) / mp.sin(mp.sqrt(t)), 24),
    'cos_f32': lambda d: run('cos_f32', lambda t: (mp.cos(mp.sqrt(t)) - 1) / t if abs(t) > 1e-30 else -mp.mpf(1) / 2,
                             powers(range(d)), 0, (mp.pi / 4)**2, lambda t: t / mp.cos(mp.sqrt(t)), 24),
    'sin_f64': lambda d: run('sin_f64', lambda t: (mp.sin(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else -mp.mpf(1) / 6,
                             powers(range(d)), 0, (mp.pi / 4)**2, lambda t: t if t == 0 else t * mp.sqrt(t) / mp.sin(mp.sqrt(t)), 53),
    'cos_f64': lambda d: run('cos_f64', lambda t: (mp.cos(mp.sqrt(t)) - 1) / t if abs(t) > 1e-30 else -mp.mpf(1) / 2,
                             powers(range(d)), 0, (mp.pi / 4)**2, lambda t: t / mp.cos(mp.sqrt(t)), 53),
}

P['expP_f32'] = lambda d: run('expP_f32', lambda r: (mp.expm1(r) - r) / r**2 if abs(r) > 1e-15 else mp.mpf(1) / 2,
                               powers(range(d)), -L, L, lambda r: 2*r**2/mp.expm1(r)/r if abs(r) > 1e-15 else 2, 24)
P['expP_f64'] = lambda d: run('expP_f64', lambda r: (mp.expm1(r) - r) / r**2 if abs(r) > 1e-15 else mp.mpf(1) / 2,
                               powers(range(d)), -L, L, lambda r: 2*r**2/mp.expm1(r)/r if abs(r) > 1e-15 else 2, 53)

P['tan_f32'] = lambda d: run('tan_f32', lambda t: (mp.tan(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else mp.mpf(1) / 3,
                             powers(range(d)), 0, (mp.pi / 4)**2, lambda t: t if abs(t) < 1e-30 else t * mp.sqrt(t) / mp.tan(mp.sqrt(t)), 24)
P['tanh_f32'] = lambda d: run('tanh_f32', lambda t: (mp.tanh(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else -mp.mpf(1) / 3,
                             powers(range(d)), 0, mp.mpf(0.55)**2, lambda t: t if abs(t) < 1e-30 else t * mp.sqrt(t) / mp.tanh(mp.sqrt(t)), 24)

P['exp2_f64'] = lambda d: run('exp2_f64', lambda r: (mp.power(2, r) - 1) / r if abs(r) > 1e-15 else mp.log(2),
                              powers(range(d)), -0.5, 0.5, lambda r: abs(r) / mp.power(2, r) if abs(r) > 1e-15 else mp.mpf(2)**-20, 53)
P['sinh_f32'] = lambda d: run('sinh_f32', lambda t: (mp.sinh(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else mp.mpf(1) / 6,
                             powers(range(d)), 0, mp.mpf(1)**2, lambda t: t * mp.sqrt(t) / mp.sinh(mp.sqrt(t)) if abs(t) > 1e-30 else mp.mpf(2)**-20, 24)

P['tanh_f64'] = lambda d: run('tanh_f64', lambda t: (mp.tanh(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else -mp.mpf(1) / 3,
                             powers(range(d)), 0, mp.mpf(0.55)**2, lambda t: t * mp.sqrt(t) / mp.tanh(mp.sqrt(t)) if abs(t) > 1e-30 else mp.mpf(2)**-20, 53)
P['sinh_f64'] = lambda d: run('sinh_f64', lambda t: (mp.sinh(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else mp.mpf(1) / 6,
                             powers(range(d)), 0, mp.mpf(1)**2, lambda t: t * mp.sqrt(t) / mp.sinh(mp.sqrt(t)) if abs(t) > 1e-30 else mp.mpf(2)**-20, 53)

P['atan_f32'] = lambda d: run('atan_f32', lambda t: (mp.atan(mp.sqrt(t)) - mp.sqrt(t)) / (t * mp.sqrt(t)) if abs(t) > 1e-30 else -mp.mpf(1) / 3,
                             powers(range(d)), 0, 1, lambda t: t * mp.sqrt(t) / mp.atan(mp.sqrt(t)) if abs(t) > 1e-30 else mp.mpf(2)**-20, 24)

if __name__ == '__main__':
    P[sys.argv[1]](int(sys.argv[2]))
