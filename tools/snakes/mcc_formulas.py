"""Reachability, CTL and LTL formulas of the MCC, read and (Reachability, CTL) evaluated on a
reachability graph (identical copy in tools/pm4py and tools/snakes; used by mcc_common.py; LTL is
checked by mcc_ltl.py).

Written for these wrappers, independently of tools/explorer: its own reader of the formula XML and
its own CTL algorithms (sets of states, backward searches, dualities), so that a mistake in one
implementation shows up as a disagreement in the contest.

Semantics (the MCC's, checked against the 2025 consensus in tests/compare_oracle.py): a formula
holds when it holds in the initial marking. CTL paths are maximal: a path ending in a marking
without successor (a deadlock) is a path, so at a deadlock EX f is false, AX f is true, EG f is f
and AF f is f. is-fireable holds when at least one of the listed transitions is enabled;
integer-le compares sums of tokens (tokens-count) and constants.

Formulas are nested tuples:
    ("true",) ("false",) ("le", x, y) ("fire", [transition ids])
    ("not", f) ("and", [f, ...]) ("or", [f, ...])
    ("EX"|"AX"|"EF"|"AF"|"EG"|"AG", f) ("EU"|"AU", f, g)
with integer expressions ("const", n) and ("tokens", [place ids]); an LTL formula (the body of
<all-paths>) uses ("X"|"F"|"G", f) ("U", f, g) instead of the CTL operators.
"""
import xml.etree.ElementTree as ET

FORMULA_EXAMS = ("ReachabilityCardinality", "ReachabilityFireability",
                 "CTLCardinality", "CTLFireability", "LTLCardinality", "LTLFireability")
LTL_EXAMS = ("LTLCardinality", "LTLFireability")


class Unsupported(Exception):
    """A formula this reader does not handle (the property gets no answer)."""


def _local(tag):
    return tag.rsplit("}", 1)[-1]


def _kids(el):
    return [c for c in el if isinstance(c.tag, str)]


def _only(el):
    k = _kids(el)
    if len(k) != 1:
        raise Unsupported("<%s> with %d children" % (_local(el.tag), len(k)))
    return k[0]


def _names(el, tag, known):
    out = []
    for c in _kids(el):
        if _local(c.tag) != tag:
            raise Unsupported("<%s> inside <%s>" % (_local(c.tag), _local(el.tag)))
        name = (c.text or "").strip()
        if name not in known:
            raise Unsupported("unknown %s %r" % (tag, name))
        out.append(name)
    return out


def _int_expr(el, places):
    tag = _local(el.tag)
    if tag == "integer-constant":
        try:
            return ("const", int((el.text or "").strip()))
        except ValueError:
            raise Unsupported("integer constant %r" % el.text)
    if tag == "tokens-count":
        return ("tokens", _names(el, "place", places))
    raise Unsupported("integer expression <%s>" % tag)


PATH_OPS = {"next": "X", "finally": "F", "globally": "G"}


def parse_formula(el, places, transitions):
    """The state formula of one XML element (the child of <formula>)."""
    tag = _local(el.tag)
    if tag == "true":
        return ("true",)
    if tag == "false":
        return ("false",)
    if tag == "negation":
        return ("not", parse_formula(_only(el), places, transitions))
    if tag in ("conjunction", "disjunction"):
        parts = [parse_formula(c, places, transitions) for c in _kids(el)]
        return ("and" if tag == "conjunction" else "or", parts)
    if tag == "integer-le":
        k = _kids(el)
        if len(k) != 2:
            raise Unsupported("<integer-le> with %d operands" % len(k))
        return ("le", _int_expr(k[0], places), _int_expr(k[1], places))
    if tag == "is-fireable":
        return ("fire", _names(el, "transition", transitions))
    if tag in ("exists-path", "all-paths"):
        q = "E" if tag == "exists-path" else "A"
        op = _only(el)
        otag = _local(op.tag)
        if otag in PATH_OPS:
            return (q + PATH_OPS[otag], parse_formula(_only(op), places, transitions))
        if otag == "until":
            before = [c for c in _kids(op) if _local(c.tag) == "before"]
            reach = [c for c in _kids(op) if _local(c.tag) == "reach"]
            if len(before) != 1 or len(reach) != 1 or len(_kids(op)) != 2:
                raise Unsupported("<until> without one <before> and one <reach>")
            return (q + "U", parse_formula(_only(before[0]), places, transitions),
                    parse_formula(_only(reach[0]), places, transitions))
        raise Unsupported("path formula <%s><%s>" % (tag, otag))
    raise Unsupported("element <%s>" % tag)


def parse_path(el, places, transitions):
    """An LTL path formula: temporal operators without path quantifier over state formulas."""
    tag = _local(el.tag)
    if tag == "negation":
        return ("not", parse_path(_only(el), places, transitions))
    if tag in ("conjunction", "disjunction"):
        parts = [parse_path(c, places, transitions) for c in _kids(el)]
        return ("and" if tag == "conjunction" else "or", parts)
    if tag in PATH_OPS:
        return (PATH_OPS[tag], parse_path(_only(el), places, transitions))
    if tag == "until":
        before = [c for c in _kids(el) if _local(c.tag) == "before"]
        reach = [c for c in _kids(el) if _local(c.tag) == "reach"]
        if len(before) != 1 or len(reach) != 1 or len(_kids(el)) != 2:
            raise Unsupported("<until> without one <before> and one <reach>")
        return ("U", parse_path(_only(before[0]), places, transitions),
                parse_path(_only(reach[0]), places, transitions))
    if tag in ("exists-path", "all-paths"):
        raise Unsupported("path quantifier <%s> inside an LTL formula" % tag)
    return parse_formula(el, places, transitions)


def read_formulas(path, place_ids, transition_ids, log, ltl=False):
    """[(formula id, formula or None if it cannot be handled)], in file order. With ltl, each
    formula must be <all-paths> over an LTL path formula, which is returned.
    Raises ValueError when the file itself is unreadable."""
    root = ET.parse(path).getroot()
    if _local(root.tag) != "property-set":
        raise ValueError("root element <%s>, expected <property-set>" % _local(root.tag))
    places, transitions = set(place_ids), set(transition_ids)
    res = []
    for prop in _kids(root):
        if _local(prop.tag) != "property":
            continue
        fid = None
        body = None
        for c in _kids(prop):
            if _local(c.tag) == "id":
                fid = (c.text or "").strip()
            elif _local(c.tag) == "formula":
                body = c
        if not fid:
            raise ValueError("a <property> without <id>")
        f = None
        try:
            if body is None:
                raise Unsupported("no <formula>")
            top = _only(body)
            if not ltl:
                f = parse_formula(top, places, transitions)
            elif _local(top.tag) == "all-paths":
                f = parse_path(_only(top), places, transitions)
            else:
                raise Unsupported("an LTL formula is <all-paths> over a path formula, not <%s>"
                                  % _local(top.tag))
        except Unsupported as e:
            log("formula %s not handled: %s" % (fid, e))
        res.append((fid, f))
    return res


def reachability_goal(f):
    """(True, p) for EF p, (False, p) for AG p with p temporal-free; None otherwise."""
    if f[0] in ("EF", "AG") and is_state_formula(f[1]):
        return (f[0] == "EF", f[1])
    return None


def is_state_formula(f):
    op = f[0]
    if op in ("true", "false", "le", "fire"):
        return True
    if op == "not":
        return is_state_formula(f[1])
    if op in ("and", "or"):
        return all(is_state_formula(g) for g in f[1])
    return False


class Bound(object):
    """A state formula bound to the place and transition indices of one net."""

    def __init__(self, f, pidx, tidx):
        self.f = self._bind(f, pidx, tidx)

    def _bind(self, f, pidx, tidx):
        """The same tuples, with indices instead of ids; hashable (tuples, frozensets)."""
        op = f[0]
        if op == "le":
            return ("le", self._int(f[1], pidx), self._int(f[2], pidx))
        if op == "fire":
            return ("fire", frozenset(tidx[t] for t in f[1]))
        if op == "not" or op in ("EX", "AX", "EF", "AF", "EG", "AG", "X", "F", "G"):
            return (op, self._bind(f[1], pidx, tidx))
        if op in ("and", "or"):
            return (op, tuple(self._bind(g, pidx, tidx) for g in f[1]))
        if op in ("EU", "AU", "U"):
            return (op, self._bind(f[1], pidx, tidx), self._bind(f[2], pidx, tidx))
        return f

    @staticmethod
    def _int(e, pidx):
        if e[0] == "const":
            return e
        return ("tokens", tuple(pidx[p] for p in e[1]))


def holds_in_marking(f, marking, enabled):
    """A bound state formula in one marking ({place index: count}) where the transitions of the
    set `enabled` are enabled."""
    op = f[0]
    if op == "true":
        return True
    if op == "false":
        return False
    if op == "le":
        return _value(f[1], marking) <= _value(f[2], marking)
    if op == "fire":
        return not f[1].isdisjoint(enabled)
    if op == "not":
        return not holds_in_marking(f[1], marking, enabled)
    if op == "and":
        return all(holds_in_marking(g, marking, enabled) for g in f[1])
    if op == "or":
        return any(holds_in_marking(g, marking, enabled) for g in f[1])
    raise ValueError("temporal operator %s in a state formula" % op)


def _value(e, marking):
    if e[0] == "const":
        return e[1]
    return sum(marking.get(p, 0) for p in e[1])


class Checker(object):
    """CTL on a complete reachability graph. A set of states is a bytearray of 0/1 indexed by
    state. marks[i]: {place index: count}; succ[i]: [(transition index, target)]."""

    def __init__(self, marks, succ):
        self.n = len(marks)
        self.marks = marks
        self.succ = [sorted(set(t for _, t in e)) for e in succ]
        self.enabled = [frozenset(tr for tr, _ in e) for e in succ]
        self.pred = [[] for _ in range(self.n)]
        for s, ts in enumerate(self.succ):
            for t in ts:
                self.pred[t].append(s)

    def holds(self, f, deadline=None):
        """Truth of the bound formula f in the initial state (state 0)."""
        return self.sat(f)[0] == 1

    def full(self):
        return bytearray(b"\x01") * self.n

    @staticmethod
    def neg(v):
        return bytearray(1 - x for x in v)

    def sat(self, f):
        op = f[0]
        if is_state_formula(f):
            return bytearray(1 if holds_in_marking(f, self.marks[s], self.enabled[s]) else 0
                             for s in range(self.n))
        if op == "not":
            return self.neg(self.sat(f[1]))
        if op in ("and", "or"):
            v = self.full() if op == "and" else bytearray(self.n)
            for g in f[1]:
                w = self.sat(g)
                if op == "and":
                    v = bytearray(x & y for x, y in zip(v, w))
                else:
                    v = bytearray(x | y for x, y in zip(v, w))
            return v
        if op == "EX":
            return self.ex(self.sat(f[1]))
        if op == "AX":  # every successor; true at a deadlock
            return self.neg(self.ex(self.neg(self.sat(f[1]))))
        if op == "EF":
            return self.eu(self.full(), self.sat(f[1]))
        if op == "AG":
            return self.neg(self.eu(self.full(), self.neg(self.sat(f[1]))))
        if op == "EG":
            return self.eg(self.sat(f[1]))
        if op == "AF":
            return self.neg(self.eg(self.neg(self.sat(f[1]))))
        if op == "EU":
            return self.eu(self.sat(f[1]), self.sat(f[2]))
        if op == "AU":
            # A[a U b] = not (E[not b U (not a and not b)] or EG not b)
            a, b = self.sat(f[1]), self.sat(f[2])
            nb = self.neg(b)
            stop = bytearray(x & (1 - y) for x, y in zip(nb, a))
            bad = bytearray(x | y for x, y in zip(self.eu(nb, stop), self.eg(nb)))
            return self.neg(bad)
        raise ValueError("unknown operator %r" % (op,))

    def ex(self, v):
        """States with a successor in v."""
        out = bytearray(self.n)
        for t in range(self.n):
            if v[t]:
                for s in self.pred[t]:
                    out[s] = 1
        return out

    def eu(self, a, b):
        """E[a U b]: backward search from the b-states through a-states."""
        res = bytearray(b)
        stack = [s for s in range(self.n) if b[s]]
        while stack:
            t = stack.pop()
            for s in self.pred[t]:
                if not res[s] and a[s]:
                    res[s] = 1
                    stack.append(s)
        return res

    def eg(self, a):
        """EG a on maximal paths: the largest set of a-states each of which is a deadlock or has
        a successor in the set. A state leaves once none of its successors is left in it."""
        keep = bytearray(a)
        count = [0] * self.n
        stack = []
        for s in range(self.n):
            if a[s]:
                count[s] = sum(a[t] for t in self.succ[s])
                if count[s] == 0 and self.succ[s]:
                    keep[s] = 0
                    stack.append(s)
        while stack:
            t = stack.pop()
            for s in self.pred[t]:
                if keep[s]:
                    count[s] -= 1
                    if count[s] == 0:
                        keep[s] = 0
                        stack.append(s)
        return keep


def formula_lines(exam, props, marks, succ, place_ids, transition_ids, tech, deadline=None):
    """Answer lines of a formula examination on a complete graph. deadline: a
    time.process_time() value; formulas not checked by then get no answer."""
    import time
    pidx = dict((p, i) for i, p in enumerate(place_ids))
    tidx = dict((t, i) for i, t in enumerate(transition_ids))
    if exam in LTL_EXAMS:
        import mcc_ltl
        checker = mcc_ltl.Runs(marks, succ)
    else:
        checker = Checker(marks, succ)
    lines = []
    for fid, f in props:
        if f is None:
            continue
        if deadline is not None and time.process_time() > deadline:
            break
        try:
            v = checker.holds(Bound(f, pidx, tidx).f, deadline)
        except TimeoutError:
            break
        lines.append("FORMULA %s %s %s" % (fid, "TRUE" if v else "FALSE", tech))
    return lines


class Witnesses(object):
    """EF p / AG p decided from the markings seen so far (sound on a partial graph): a marking
    satisfying p proves EF p true; one violating p proves AG p false. Other formulas need the
    complete graph."""

    def __init__(self, props, place_ids, transition_ids):
        pidx = dict((p, i) for i, p in enumerate(place_ids))
        tidx = dict((t, i) for i, t in enumerate(transition_ids))
        self.goals = []
        for fid, f in props:
            g = reachability_goal(f) if f is not None else None
            if g is not None:
                self.goals.append((fid, g[0], Bound(g[1], pidx, tidx).f))
        # every formula that can be answered is a goal: deciding them all settles the file
        self.only_goals = len(self.goals) == sum(1 for _, f in props if f is not None)
        self.decided = {}

    def observe(self, marking, enabled):
        """marking: {place index: count}; enabled: set of transition indices. True when every
        formula of the file is decided."""
        for fid, is_ef, p in self.goals:
            if fid not in self.decided and holds_in_marking(p, marking, enabled) == is_ef:
                self.decided[fid] = is_ef
        return self.only_goals and self.goals_decided()

    def goals_decided(self):
        return len(self.decided) == len(self.goals)

    def lines(self, tech):
        return ["FORMULA %s %s %s" % (fid, "TRUE" if v else "FALSE", tech)
                for fid, v in sorted(self.decided.items())]
