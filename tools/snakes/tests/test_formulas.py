"""Unit tests of mcc_formulas.py and mcc_ltl.py (standard library only: python3 -B -m unittest).

- LTL: the automaton of mcc_ltl against the semantics of LTL on ultimately periodic words u v^w,
  evaluated directly, for random formulas and words; small graphs with a deadlock by hand.
- CTL: the Checker against naive fixpoint iteration on random graphs (maximal paths: a deadlock
  has no successor).
- The formula reader on hand-written XML.
"""
import os
import random
import sys
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mcc_formulas as mf  # noqa: E402
import mcc_ltl  # noqa: E402


def atom(i):
    """Atom i: place i holds a token (markings below give 0 or 1 token per place)."""
    return ("le", ("const", 1), ("tokens", (i,)))


def random_ltl(r, depth, natoms):
    if depth == 0 or r.random() < 0.2:
        if r.random() < 0.1:
            return (r.choice(["true", "false"]),)
        return atom(r.randrange(natoms))
    x = random_ltl(r, depth - 1, natoms)
    k = r.randrange(8)
    if k == 0:
        return ("not", x)
    if k == 1:
        return ("and", (x, random_ltl(r, depth - 1, natoms)))
    if k == 2:
        return ("or", (x, random_ltl(r, depth - 1, natoms)))
    if k in (3, 4, 5):
        return ("XFG"[k - 3], x)
    return ("U", x, random_ltl(r, depth - 1, natoms))


def eval_lasso(f, marks, nxt):
    """Truth of an LTL formula at every position of a lasso (marks: per position; nxt: the
    position after each one)."""
    n = len(marks)
    op = f[0]
    if mf.is_state_formula(f):
        return [mf.holds_in_marking(f, m, frozenset()) for m in marks]
    if op == "not":
        return [not v for v in eval_lasso(f[1], marks, nxt)]
    if op in ("and", "or"):
        vs = [eval_lasso(g, marks, nxt) for g in f[1]]
        agg = all if op == "and" else any
        return [agg(v[i] for v in vs) for i in range(n)]
    if op == "X":
        a = eval_lasso(f[1], marks, nxt)
        return [a[nxt[i]] for i in range(n)]
    if op in ("F", "U"):
        a = [True] * n if op == "F" else eval_lasso(f[1], marks, nxt)
        b = eval_lasso(f[1] if op == "F" else f[2], marks, nxt)
        r = [False] * n
        for _ in range(n + 1):  # least fixpoint of r = b or (a and X r)
            r = [b[i] or (a[i] and r[nxt[i]]) for i in range(n)]
        return r
    if op == "G":
        a = eval_lasso(f[1], marks, nxt)
        r = [True] * n
        for _ in range(n + 1):  # greatest fixpoint of r = a and X r
            r = [a[i] and r[nxt[i]] for i in range(n)]
        return r
    raise ValueError(op)


class Ltl(unittest.TestCase):
    def test_automata_agree_with_the_semantics_on_lassos(self):
        r = random.Random(20261124)
        checked = holds = 0
        for _ in range(1200):
            f = random_ltl(r, 4, 3)
            for _ in range(4):
                n = r.randint(1, 5)
                loop = r.randrange(n)
                marks = [dict((p, 1) for p in range(3) if r.random() < 0.5) for _ in range(n)]
                nxt = [i + 1 if i + 1 < n else loop for i in range(n)]
                want = eval_lasso(f, marks, nxt)[0]
                succ = [[(0, nxt[i])] for i in range(n)]  # a graph whose only run is the lasso
                self.assertEqual(mcc_ltl.Runs(marks, succ).holds(f), want, (f, marks, loop))
                checked += 1
                holds += want
        self.assertTrue(checked / 5 < holds < checked * 4 / 5, (holds, checked))

    def test_a_deadlock_repeats_forever(self):
        # s0 -> d (deadlock), s0 -> c1 <-> c2: places 0 s0, 1 d, 2 c1, 3 c2
        marks = [{0: 1}, {1: 1}, {2: 1}, {3: 1}]
        succ = [[(0, 1), (1, 2)], [], [(2, 3)], [(3, 2)]]
        runs = mcc_ltl.Runs(marks, succ)
        d, c1 = atom(1), atom(2)
        self.assertFalse(runs.holds(("G", ("F", c1))))           # S0 D D D ...
        self.assertTrue(runs.holds(("G", ("or", (("not", d), ("X", d))))))  # X at D is D
        self.assertTrue(runs.holds(("X", ("X", ("or", (d, atom(3)))))))
        self.assertFalse(runs.holds(("F", ("G", d))))            # S0 C1 C2 C1 ...
        self.assertTrue(runs.holds(("F", ("or", (d, c1)))))

    def test_the_tableau_postpones_untils_and_releases(self):
        a = ("lit", 0, True)
        u = ("U", ("tt",), a)
        terms = mcc_ltl.expand(frozenset([u]))
        self.assertEqual(len(terms), 2)  # a now, or postpone
        self.assertIn((frozenset([0]), frozenset(), frozenset(), frozenset()), terms)
        self.assertIn((frozenset(), frozenset(), frozenset([u]), frozenset([u])), terms)
        contradiction = ("and", a, ("lit", 0, False))
        self.assertEqual(mcc_ltl.expand(frozenset([contradiction])), [])


def random_graph(r, n):
    return [[(r.randrange(3), r.randrange(n)) for _ in range(r.randrange(3))] for _ in range(n)]


def random_ctl(r, depth):
    if depth == 0 or r.random() < 0.25:
        return atom(r.randrange(3)) if r.random() < 0.7 else ("fire", frozenset([r.randrange(3)]))
    x = random_ctl(r, depth - 1)
    k = r.randrange(11)
    if k == 0:
        return ("not", x)
    if k == 1:
        return ("and", (x, random_ctl(r, depth - 1)))
    if k == 2:
        return ("or", (x, random_ctl(r, depth - 1)))
    if k < 9:
        return (["EX", "AX", "EF", "AF", "EG", "AG"][k - 3], x)
    return (["EU", "AU"][k - 9], x, random_ctl(r, depth - 1))


def naive(f, marks, succ):
    n = len(marks)
    nx = [sorted(set(t for _, t in e)) for e in succ]
    en = [frozenset(t for t, _ in e) for e in succ]
    op = f[0]
    if mf.is_state_formula(f):
        return [mf.holds_in_marking(f, marks[s], en[s]) for s in range(n)]
    if op == "not":
        return [not v for v in naive(f[1], marks, succ)]
    if op in ("and", "or"):
        vs = [naive(g, marks, succ) for g in f[1]]
        agg = all if op == "and" else any
        return [agg(v[s] for v in vs) for s in range(n)]

    def fix(step, start):
        z = [start] * n
        while True:
            nz = step(z)
            if nz == z:
                return z
            z = nz

    if op == "EX":
        a = naive(f[1], marks, succ)
        return [any(a[t] for t in nx[s]) for s in range(n)]
    if op == "AX":
        a = naive(f[1], marks, succ)
        return [all(a[t] for t in nx[s]) for s in range(n)]
    a = naive(f[1], marks, succ)
    if op in ("EU", "AU"):
        b = naive(f[2], marks, succ)
    elif op in ("EF", "AF"):
        a, b = [True] * n, a
    if op in ("EF", "EU"):
        return fix(lambda z: [b[s] or (a[s] and any(z[t] for t in nx[s])) for s in range(n)], False)
    if op in ("AF", "AU"):
        return fix(lambda z: [b[s] or (a[s] and bool(nx[s]) and all(z[t] for t in nx[s]))
                              for s in range(n)], False)
    if op == "EG":
        return fix(lambda z: [a[s] and (not nx[s] or any(z[t] for t in nx[s])) for s in range(n)],
                   True)
    if op == "AG":
        return fix(lambda z: [a[s] and all(z[t] for t in nx[s]) for s in range(n)], True)
    raise ValueError(op)


class Ctl(unittest.TestCase):
    def test_checker_agrees_with_naive_fixpoints(self):
        r = random.Random(11)
        for _ in range(1500):
            n = r.randint(1, 7)
            marks = [dict((p, 1) for p in range(3) if r.random() < 0.5) for _ in range(n)]
            succ = random_graph(r, n)
            f = random_ctl(r, 4)
            got = mf.Checker(marks, succ).sat(f)
            self.assertEqual(list(got), [1 if v else 0 for v in naive(f, marks, succ)], f)


class Reader(unittest.TestCase):
    XML = """<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>L-00</id><description>x</description><formula><all-paths><until>
    <before><next><is-fireable><transition>t1</transition></is-fireable></next></before>
    <reach><globally><integer-le><integer-constant>1</integer-constant>
      <tokens-count><place>p1</place><place>p2</place></tokens-count></integer-le></globally></reach>
  </until></all-paths></formula></property>
  <property><id>L-01</id><formula><all-paths><finally><exists-path><finally><true/></finally>
    </exists-path></finally></all-paths></formula></property>
  <property><id>L-02</id><formula><exists-path><finally><true/></finally></exists-path></formula></property>
  <property><id>L-03</id><formula><all-paths><finally><is-fireable><transition>nope</transition>
    </is-fireable></finally></all-paths></formula></property>
</property-set>"""

    def read(self, ltl):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write(self.XML)
        logged = []
        try:
            return mf.read_formulas(f.name, ["p1", "p2"], ["t1"], logged.append, ltl=ltl), logged
        finally:
            os.unlink(f.name)

    def test_ltl_files(self):
        props, logged = self.read(True)
        self.assertEqual([p for p, _ in props], ["L-00", "L-01", "L-02", "L-03"])
        self.assertEqual(props[0][1], ("U", ("X", ("fire", ["t1"])),
                                       ("G", ("le", ("const", 1), ("tokens", ["p1", "p2"])))))
        self.assertEqual([f for _, f in props[1:]], [None, None, None])
        self.assertTrue(any("path quantifier" in m for m in logged), logged)
        self.assertTrue(any("unknown transition" in m for m in logged), logged)

    def test_the_same_file_read_as_ctl(self):
        props, _ = self.read(False)
        self.assertIsNone(props[0][1])  # <next> without a path quantifier is not CTL
        self.assertEqual(props[2][1], ("EF", ("true",)))

    def test_broken_files_are_errors(self):
        self.assertRaises(ET.ParseError, mf.read_formulas, os.devnull, [], [], print)


if __name__ == "__main__":
    unittest.main()
