"""LTL on a complete reachability graph (LTLCardinality, LTLFireability), for the BenchKit
wrappers (identical copy in tools/pm4py and tools/snakes; used by mcc_formulas.py).

Written independently of tools/explorer, with another construction and another emptiness check:
  - the negation of the formula, in negation normal form over atoms (the maximal subformulas
    without temporal operator), is unfolded by the tableau rules
        a U b  =  b  or  (a and X(a U b))        a R b  =  b and (a or X(a R b))
    into terms "literals now, obligations next"; the sets of obligations are the states of a
    generalised Buchi automaton with acceptance on transitions: one set per until subformula,
    holding the transitions that do not postpone it;
  - the product with the graph is built whole, breadth first, then cut into strongly connected
    components (Tarjan); the formula is false iff a component reachable from the initial state
    has an internal transition of every acceptance set.

Runs: a run that reaches a marking without successor stays in it forever (the marking repeats),
as in the MCC's LTL examinations (the reading of ITS-Tools' -stutter-deadlock, and the one the
2025 consensus agrees with, see README.md).
"""
import time
from array import array

import mcc_formulas as mf


def _is_state(f):
    return mf.is_state_formula(f)


class _Nnf(object):
    """Negation normal form: ("tt",) ("ff",) ("lit", k, positive) ("and"|"or", a, b) ("X", a)
    ("U", a, b) ("R", a, b), with atoms numbered in self.atoms."""

    def __init__(self):
        self.atoms = []
        self.index = {}

    def atom(self, p):
        if p not in self.index:
            self.index[p] = len(self.atoms)
            self.atoms.append(p)
        return self.index[p]

    def conv(self, f, neg):
        op = f[0]
        if op in ("true", "false"):
            return ("tt",) if (op == "true") != neg else ("ff",)
        if op == "not":
            return self.conv(f[1], not neg)
        if _is_state(f):
            return ("lit", self.atom(f), not neg)
        if op in ("and", "or"):
            conj = (op == "and") != neg
            parts = [self.conv(g, neg) for g in f[1]]
            out = ("tt",) if conj else ("ff",)
            for g in parts:
                out = _and(out, g) if conj else _or(out, g)
            return out
        if op == "X":
            return _next(self.conv(f[1], neg))
        if op == "F":
            return _release(("ff",), self.conv(f[1], neg)) if neg else _until(("tt",), self.conv(f[1], neg))
        if op == "G":
            return _until(("tt",), self.conv(f[1], neg)) if neg else _release(("ff",), self.conv(f[1], neg))
        if op == "U":
            a, b = self.conv(f[1], neg), self.conv(f[2], neg)
            return _release(a, b) if neg else _until(a, b)
        raise ValueError("unexpected operator %r in an LTL formula" % (op,))


def _and(a, b):
    if a == ("ff",) or b == ("ff",):
        return ("ff",)
    if a == ("tt",):
        return b
    if b == ("tt",) or a == b:
        return a
    return ("and", a, b)


def _or(a, b):
    if a == ("tt",) or b == ("tt",):
        return ("tt",)
    if a == ("ff",):
        return b
    if b == ("ff",) or a == b:
        return a
    return ("or", a, b)


def _next(a):
    return a if a in (("tt",), ("ff",)) else ("X", a)


def _until(a, b):
    if b in (("tt",), ("ff",)) or a == ("ff",):
        return b
    return ("U", a, b)


def _release(a, b):
    if b in (("tt",), ("ff",)) or a == ("tt",):
        return b
    return ("R", a, b)


def _untils(f, out):
    if f[0] == "U":
        out.add(f)
    for g in f[1:]:
        if isinstance(g, tuple):
            _untils(g, out)
    return out


def expand(obligations):
    """The terms of a conjunction of NNF formulas: [(positive atoms, negative atoms, next
    obligations, postponed untils)] (all frozensets, no term twice), by the tableau rules. A
    formula already unfolded in a branch is not unfolded again there."""
    terms = set()
    stack = [(tuple(obligations), frozenset(), frozenset(), frozenset(), frozenset(), frozenset())]
    while stack:
        todo, seen, pos, neg, nxt, post = stack.pop()
        while todo:
            f, todo = todo[0], todo[1:]
            if f in seen:
                continue
            seen = seen | {f}
            op = f[0]
            if op == "tt":
                continue
            if op == "ff":
                break
            if op == "lit":
                if (f[1] in neg) if f[2] else (f[1] in pos):
                    break  # p and not p
                if f[2]:
                    pos = pos | {f[1]}
                else:
                    neg = neg | {f[1]}
            elif op == "and":
                todo = (f[1], f[2]) + todo
            elif op == "X":
                nxt = nxt | {f[1]}
            elif op == "or":
                stack.append(((f[2],) + todo, seen, pos, neg, nxt, post))
                todo = (f[1],) + todo
            elif op == "U":  # b now, or a now and a U b next (postponed)
                stack.append(((f[1],) + todo, seen, pos, neg, nxt | {f}, post | {f}))
                todo = (f[2],) + todo
            elif op == "R":  # a and b now, or b now and a R b next
                stack.append(((f[2],) + todo, seen, pos, neg, nxt | {f}, post))
                todo = (f[1], f[2]) + todo
            else:
                raise ValueError("not in NNF: %r" % (f,))
        else:
            terms.add((pos, neg, nxt, post))
    return sorted(terms, key=repr)


class Automaton(object):
    """The generalised Buchi automaton of an NNF formula, built lazily: states are frozensets of
    obligations, numbered in order of discovery; transitions are the terms of expand()."""

    def __init__(self, nnf):
        untils = sorted(_untils(nnf, set()), key=repr)
        self.bit = dict((u, 1 << i) for i, u in enumerate(untils))
        self.all = (1 << len(untils)) - 1
        self.states = []
        self.number = {}
        self.cache = {}
        self.init = self.state(frozenset([nnf]) if nnf != ("tt",) else frozenset())

    def state(self, obligations):
        q = self.number.get(obligations)
        if q is None:
            q = self.number[obligations] = len(self.states)
            self.states.append(obligations)
        return q

    def transitions(self, q):
        """[(positive atom mask, negative atom mask, next state number, acceptance mask)]"""
        t = self.cache.get(q)
        if t is None:
            t = []
            for pos, neg, nxt, post in expand(self.states[q]):
                pm = 0
                for k in pos:
                    pm |= 1 << k
                nm = 0
                for k in neg:
                    nm |= 1 << k
                acc = self.all
                for u in post:
                    acc &= ~self.bit[u]
                t.append((pm, nm, self.state(frozenset(nxt)), acc))
            self.cache[q] = t
        return t


def _check(deadline):
    if deadline is not None and time.process_time() > deadline:
        raise TimeoutError("time budget spent in the LTL check")


def accepting_run(succ, vals, automaton, deadline=None):
    """Is there an infinite run from state 0 of the graph (succ: successor lists, every state has
    one) whose word (vals: atom bit mask per state) the automaton accepts?"""
    # product states (s, q) numbered in breadth-first order; edges in flat arrays (CSR)
    index = {}
    keys = array("q")
    start = array("q", [0])
    target = array("q")
    accs = array("q")
    width = len(succ)

    def visit(s, q):
        key = q * width + s
        i = index.get(key)
        if i is None:
            i = index[key] = len(keys)
            keys.append(key)
        return i

    # the automaton reads the state it leaves: (s, q) --term, s -> t--> (t, next(term))
    visit(0, automaton.init)
    i = 0
    while i < len(keys):
        if i & 1023 == 0:
            _check(deadline)
        q, s = divmod(keys[i], width)
        v = vals[s]
        for pm, nm, nxt, acc in automaton.transitions(q):
            if v & pm == pm and not v & nm:
                for t in succ[s]:
                    target.append(visit(t, nxt))
                    accs.append(acc)
        start.append(len(target))
        i += 1
    del index
    # Tarjan's SCCs, iterative; a component accepts when its internal transitions carry every set
    n = len(keys)
    low = array("q", [0]) * n
    num = array("q", [-1]) * n
    comp = array("q", [-1]) * n
    on = bytearray(n)
    stack = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if num[root] != -1:
            continue
        num[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on[root] = 1
        work = [(root, start[root])]
        while work:
            v, k = work[-1]
            if k < start[v + 1]:
                work[-1] = (v, k + 1)
                w = target[k]
                if num[w] == -1:
                    if counter & 4095 == 0:
                        _check(deadline)
                    num[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = 1
                    work.append((w, start[w]))
                elif on[w] and num[w] < low[v]:
                    low[v] = num[w]
            else:
                work.pop()
                if work and low[v] < low[work[-1][0]]:
                    low[work[-1][0]] = low[v]
                if low[v] == num[v]:
                    while True:
                        w = stack.pop()
                        on[w] = 0
                        comp[w] = ncomp
                        if w == v:
                            break
                    ncomp += 1
    carried = [0] * ncomp
    cyclic = bytearray(ncomp)
    for v in range(n):
        c = comp[v]
        for k in range(start[v], start[v + 1]):
            if comp[target[k]] == c:
                cyclic[c] = 1
                carried[c] |= accs[k]
    return any(cyclic[c] and carried[c] & automaton.all == automaton.all for c in range(ncomp))


class Runs(object):
    """The maximal runs of a complete reachability graph, a deadlock repeating forever.
    marks[i]: {place index: count}; succ[i]: [(transition index, target)]."""

    def __init__(self, marks, succ):
        self.marks = marks
        self.enabled = [frozenset(t for t, _ in e) for e in succ]
        self.succ = [sorted(set(t for _, t in e)) or [i] for i, e in enumerate(succ)]

    def holds(self, f, deadline=None):
        """Does every run from the initial marking satisfy the bound path formula f?"""
        nnf = _Nnf()
        neg = nnf.conv(f, True)
        vals = []
        for m, en in zip(self.marks, self.enabled):
            if len(vals) & 4095 == 0:
                _check(deadline)
            v = 0
            for k, p in enumerate(nnf.atoms):
                if mf.holds_in_marking(p, m, en):
                    v |= 1 << k
            vals.append(v)
        if neg == ("ff",):
            return True
        return not accepting_run(self.succ, vals, Automaton(neg), deadline)
