"""_shapes.py: a kernel's size parameters from its tensors' shapes.

txc --signature gives each tensor extent as an expression tree over the
size parameters: a number, a parameter's name, or [op, operands...] with
the IR's operations ("add", "div" rounding toward negative infinity...).
infer() binds the sizes the shapes of the given tensors determine, then
every extent is evaluated and compared, so inconsistent shapes are
reported with where each size came from.
"""

from ._errors import Error


def _div(a, b):
    return a // b if b else 0


def _mod(a, b):
    return a % b if b else 0


_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": _div,
    "mod": _mod,
    "min": min,
    "max": max,
    "neg": lambda a: -a,
    "bitand": lambda a, b: a & b,
    "bitor": lambda a, b: a | b,
    "bitxor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "lt": lambda a, b: int(a < b),
    "le": lambda a, b: int(a <= b),
    "gt": lambda a, b: int(a > b),
    "ge": lambda a, b: int(a >= b),
    "and": lambda a, b: int(bool(a) and bool(b)),
    "or": lambda a, b: int(bool(a) or bool(b)),
    "not": lambda a: int(not a),
    "select": lambda c, a, b: a if c else b,
}


def evaluate(e, env):
    """The value of extent e with the sizes in env (KeyError: a size not
    in env)."""
    if isinstance(e, bool) or e is None:
        raise Error("txc gave an extent txc cannot evaluate: %r" % (e,))
    if isinstance(e, int):
        return e
    if isinstance(e, str):
        return env[e]
    op = _OPS.get(e[0])
    if op is None:
        raise Error("an extent uses the operation '%s', which this package cannot "
                    "evaluate" % e[0])
    return op(*(evaluate(x, env) for x in e[1:]))


def names(e):
    """The size parameters extent e uses."""
    if isinstance(e, str):
        return {e}
    if isinstance(e, list):
        out = set()
        for x in e[1:]:
            out |= names(x)
        return out
    return set()


def show(e):
    """Extent e as tx source would write it."""
    if isinstance(e, (int, str)):
        return str(e)
    sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%"}
    if e[0] in sym and len(e) == 3:
        return "(%s %s %s)" % (show(e[1]), sym[e[0]], show(e[2]))
    if e[0] == "neg":
        return "-%s" % show(e[1])
    return "%s(%s)" % (e[0], ", ".join(show(x) for x in e[1:]))


def _solve(e, x, want, env):
    """A non-negative value of size x that gives extent e the value want,
    when e is linear in x (a * x + b), else None."""
    def at(v):
        env2 = dict(env)
        env2[x] = v
        return evaluate(e, env2)
    try:
        f0, f1, f2, f3 = at(0), at(1), at(2), at(3)
    except (KeyError, Error):
        return None
    a = f1 - f0
    if a == 0 or f2 - f1 != a or f3 - f2 != a or (want - f0) % a:
        return None
    v = (want - f0) // a
    if v < 0 or at(v) != want:
        return None
    return v


def infer(kernel, shapes, known, sources):
    """Binds in known (name -> value) the sizes that shapes determine.

    shapes: {tensor index: shape tuple} of the tensors given; sources
    (name -> where its value came from) is filled in alongside.
    kernel.dim_names[t][d] is names() of tensor t's extent d."""
    groups = [(d, plain) for d in ("in", "out") for plain in (True, False)]
    progress = True
    while progress:
        progress = False
        # inputs before outputs, and in each a dimension that is a size
        # itself before linear ones (N + 2)
        for direction, plain in groups:
            for ti, shape in shapes.items():
                t = kernel.tensors[ti]
                if t["dir"] != direction:
                    continue
                for d, (e, used) in enumerate(zip(t["shape"], kernel.dim_names[ti])):
                    if plain != isinstance(e, str):
                        continue
                    free = [n for n in used if n not in known]
                    if len(free) != 1:
                        continue
                    x = free[0]
                    v = shape[d] if plain else _solve(e, x, shape[d], known)
                    if v is None:
                        continue
                    known[x] = v
                    sources[x] = "from dimension %d of '%s'" % (d, t["name"])
                    progress = True
            if progress:
                break
