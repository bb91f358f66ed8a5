"""Minimax polynomial coefficients for the ptx math library (offline tool).

Run with python3 and mpmath: python3 remez.py NAME DEGREE (the number of terms). It
prints the coefficients as exact hexadecimal floats rounded to the target format, for
pasting into the Go source. The erfc pieces of erf: python3 remez.py erfc_piece TERMS
A B PREC (e.g. erfc_piece 14 1.0 1.5 53, erfc_piece 10 1 2 24).
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


# ---- float64 trigonometric, inverse trigonometric and hyperbolic, pow, erf, cbrt ----

def rel_odd(F, lo, hi, d, prec):
    """F(x) = x + x^3 P(x^2): P on t = x^2 in [lo, hi], relative error of F."""
    def g(t):
        s = mp.sqrt(t)
        return (F(s) - s) / (t * s)
    def w(t):
        s = mp.sqrt(t)
        return t * s / F(s)
    return lambda name: run(name, lambda t: g(t) if t > mp.mpf(2)**-60 else g(mp.mpf(2)**-60), powers(range(d)), lo, hi,
                            lambda t: w(t) if t > mp.mpf(2)**-60 else w(mp.mpf(2)**-60), prec)

# cos(r) = 1 - r^2/2 + r^4 C(r^2), relative error of cos
P['cos2_f64'] = lambda d: run('cos2_f64', lambda t: (mp.cos(mp.sqrt(t)) - 1 + t / 2) / t**2 if t > 1e-20 else mp.mpf(1) / 24,
                              powers(range(d)), 0, (mp.pi / 4)**2, lambda t: t**2 / mp.cos(mp.sqrt(t)), 53)
P['atan_f64'] = lambda d: rel_odd(mp.atan, 0, mp.mpf(1) / 256, d, 53)('atan_f64')
P['asin_f64'] = lambda d: rel_odd(mp.asin, 0, mp.mpf(1) / 4, d, 53)('asin_f64')
# float32 asin/acos evaluate their polynomial in float64
P['asin_f32'] = lambda d: rel_odd(mp.asin, 0, mp.mpf(1) / 4, d, 53)('asin_f32')
P['atan01_f32'] = lambda d: rel_odd(mp.atan, 0, 1, d, 53)('atan01_f32')
# pow: log1p(z) = z - z^2/2 + z^3 P(z), |z| <= 2^-7, relative error of log1p
P['powlog_f64'] = lambda d: run('powlog_f64', lambda z: (mp.log1p(z) - z + z**2 / 2) / z**3 if abs(z) > 1e-30 else mp.mpf(1) / 3,
                                powers(range(d)), -mp.mpf(2)**-7, mp.mpf(2)**-7, lambda z: abs(z**3 / mp.log1p(z)) if abs(z) > 1e-30 else mp.mpf(2)**-60, 53)
# pow: e^r = 1 + r + r^2 Q(r), |r| <= ln2/256
P['powexp_f64'] = lambda d: run('powexp_f64', lambda r: (mp.expm1(r) - r) / r**2 if abs(r) > 1e-30 else mp.mpf(1) / 2,
                                powers(range(d)), -mp.log(2) / 256, mp.log(2) / 256, lambda r: r**2 / mp.exp(r), 53)
# erf(x) = x + x F(x^2) for |x| < 1, F(t) = erf(sqrt t)/sqrt t - 1; relative error of erf
def erfF(t):
    s = mp.sqrt(t)
    return mp.erf(s) / s - 1 if t > 1e-40 else 2 / mp.sqrt(mp.pi) - 1
P['erf_f64'] = lambda d: run('erf_f64', erfF, powers(range(d)), 0, 1, lambda t: 1 / (1 + erfF(t)), 53)
P['erf_f32'] = lambda d: run('erf_f32', erfF, powers(range(d)), 0, 1, lambda t: 1 / (1 + erfF(t)), 24)
# erfc(x) on [a, b] as a polynomial in x - (a+b)/2, absolute error
def erfc_piece(a, b, d, prec):
    a, b = mp.mpf(a), mp.mpf(b)
    c = (a + b) / 2
    return run('erfc[%s,%s]' % (a, b), lambda u: mp.erfc(c + u), powers(range(d)), a - c, b - c, lambda u: 1, prec)
# cbrt: f^(-1/3) on [1, 2] (a starting value for Newton's iteration)
P['rcbrt'] = lambda d: run('rcbrt', lambda f: mp.cbrt(f)**-1, powers(range(d)), 1, 2, lambda f: mp.cbrt(f), 53)

if __name__ == '__main__' and sys.argv[1] == 'erfc_piece':
    erfc_piece(sys.argv[3], sys.argv[4], int(sys.argv[2]), int(sys.argv[5]) if len(sys.argv) > 5 else 53)
    sys.exit(0)

if __name__ == '__main__':
    P[sys.argv[1]](int(sys.argv[2]))
