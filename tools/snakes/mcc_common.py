"""Library-independent part of the BenchKit wrappers (identical copy in tools/pm4py and tools/snakes).

It does NOT explore anything: the reachability graph comes from the wrapped library. This module
  - reads the BenchKit environment and the instance folder (model.pnml, UpperBounds.xml, the
    Reachability, CTL and LTL formula files, read and evaluated by mcc_formulas.py and
    mcc_ltl.py),
  - scans model.pnml independently (net type, places, transitions, arcs, weights, initial marking) so
    that the wrapper can check that the library loaded exactly the same net,
  - derives the examination answers from a complete reachability graph handed over by the wrapper,
  - derives the few answers that a partial graph already proves (witnesses) when the exploration
    stops at the state cap or the time budget,
  - prints the answers in the MCC format (stdout), everything else goes to stderr.
"""
import os
import sys
import time
import xml.etree.ElementTree as ET

import mcc_formulas as mf

TECH = "TECHNIQUES EXPLICIT"
GLOBAL_EXAMS = ("ReachabilityDeadlock", "OneSafe", "QuasiLiveness", "StableMarking", "Liveness")
SUPPORTED = ("StateSpace", "UpperBounds") + GLOBAL_EXAMS + mf.FORMULA_EXAMS
# global properties that a single reachable marking (and its enabled transitions) can decide
WITNESS_EXAMS = ("ReachabilityDeadlock", "OneSafe", "QuasiLiveness", "StableMarking")
# examinations that only a complete graph answers (StateSpace: or the proof that it is infinite)
COMPLETE_GRAPH_EXAMS = ("StateSpace", "Liveness")
PTNET = "http://www.pnml.org/version-2009/grammar/ptnet"


class CannotCompute(Exception):
    """The wrapper takes part but has no (sure) answer."""


class StateCap(CannotCompute):
    pass


class TimeBudget(CannotCompute):
    pass


class Decided(Exception):
    """Raised from inside the library's exploration once a witness decided the examination."""


def log(*args):
    print("[mcc]", *args, file=sys.stderr, flush=True)


def local(tag):
    return tag.rsplit("}", 1)[-1]


def state_limit():
    raw = os.environ.get("MCC_STATE_LIMIT", "").strip()
    if not raw:
        return 200000
    try:
        v = int(raw)
    except ValueError:
        log("ignoring MCC_STATE_LIMIT=%r" % raw)
        return 200000
    return v if v > 0 else 200000


def deadline(start):
    """time.process_time() value after which the exploration gives up (None: no limit).

    BK_TIME_CONFINEMENT is a limit on CPU time, so the budget is CPU time of this process
    (imports included), not wall-clock time: a loaded machine must not make the tool give up.
    `start` is kept for the callers' signature."""
    raw = os.environ.get("BK_TIME_CONFINEMENT", "").strip()
    try:
        t = float(raw)
    except ValueError:
        return None
    if t <= 0:
        return None
    # keep a margin for the analysis of the graph and the printing of the answers
    return max(1.0, 0.85 * t - 1.0)


# --------------------------------------------------------------------------------------------
# Independent PNML scan (used to validate what the library loaded, never to explore)
# --------------------------------------------------------------------------------------------
class NetScan(object):
    def __init__(self):
        self.net_type = None
        self.places = {}        # id -> initial marking (int)
        self.place_order = []   # ids in document order
        self.transitions = []   # ids in document order
        self.arcs = []          # (source id, target id, weight)
        self.pages = 0
        self.nested_pages = False
        self.references = 0
        self.nets = 0

    @property
    def needs_flattening(self):
        return self.pages != 1 or self.nested_pages

    def arc_multiset(self):
        d = {}
        for a in self.arcs:
            d[a] = d.get(a, 0) + 1
        return d


def _text_child(el):
    for c in el:
        if local(c.tag) == "text":
            return c.text or ""
    return None


def scan_pnml(path):
    try:
        tree = ET.parse(path)
    except Exception as e:  # noqa: BLE001
        raise CannotCompute("model.pnml is not well-formed XML: %s" % e)
    root = tree.getroot()
    s = NetScan()
    nets = [c for c in root if local(c.tag) == "net"]
    s.nets = len(nets)
    if len(nets) != 1:
        raise CannotCompute("expected exactly one <net>, found %d" % len(nets))
    net = nets[0]
    s.net_type = net.get("type")
    if s.net_type != PTNET:
        raise CannotCompute("not a P/T net (type %r)" % s.net_type)

    def walk(container, depth):
        for el in container:
            tag = local(el.tag)
            if tag == "page":
                s.pages += 1
                if depth > 0:
                    s.nested_pages = True
                walk(el, depth + 1)
            elif tag == "place":
                pid = el.get("id")
                m = 0
                for c in el:
                    if local(c.tag) == "initialMarking":
                        t = _text_child(c)
                        if t is None:
                            raise CannotCompute("place %s: initialMarking without <text>" % pid)
                        m = int(t.strip())
                if pid is None or pid in s.places:
                    raise CannotCompute("place without id or duplicate id %r" % pid)
                if m < 0:
                    raise CannotCompute("negative initial marking")
                s.places[pid] = m
                s.place_order.append(pid)
            elif tag == "transition":
                s.transitions.append(el.get("id"))
            elif tag == "arc":
                w = 1
                for c in el:
                    if local(c.tag) == "inscription":
                        t = _text_child(c)
                        if t is None:
                            raise CannotCompute("arc %s: inscription without <text>" % el.get("id"))
                        w = int(t.strip())
                s.arcs.append((el.get("source"), el.get("target"), w))
            elif tag in ("referencePlace", "referenceTransition"):
                s.references += 1

    try:
        walk(net, 0)  # a <page> directly under <net> has depth 0, a page inside a page is nested
    except ValueError as e:
        raise CannotCompute("bad integer in model.pnml: %s" % e)
    if s.references:
        raise CannotCompute("reference nodes are not supported")
    tset = set(s.transitions)
    if len(tset) != len(s.transitions) or tset & set(s.places):
        raise CannotCompute("duplicate node ids")
    for (src, dst, w) in s.arcs:
        if not ((src in s.places and dst in tset) or (src in tset and dst in s.places)):
            raise CannotCompute("arc %s -> %s does not join a place and a transition" % (src, dst))
        if w < 1:
            raise CannotCompute("arc weight %d < 1" % w)
    if len(set((a, b) for (a, b, _) in s.arcs)) != len(s.arcs):
        raise CannotCompute("two arcs with the same source and target")
    return s


def flattened_pnml(path, scan):
    """The same net as one <page> (for libraries that read a single or a non-nested page only)."""
    root = ET.parse(path).getroot()
    net = [c for c in root if local(c.tag) == "net"][0]
    ns = net.tag[: -len("net")]
    if ns.startswith("{"):
        ET.register_namespace("", ns[1:-1])  # default namespace, no "ns0:" prefixes
    out_root = ET.Element(root.tag)
    out_net = ET.SubElement(out_root, net.tag, dict(net.attrib))
    page = ET.SubElement(out_net, ns + "page", {"id": "mcc-flattened-page"})

    def walk(container):
        for el in container:
            tag = local(el.tag)
            if tag == "page":
                walk(el)
            elif tag in ("place", "transition", "arc"):
                page.append(el)

    walk(net)
    return ET.tostring(out_root, encoding="utf-8", xml_declaration=True)


def check_same_net(scan, places, transitions, arcs, marking):
    """places: ids; transitions: ids; arcs: iterable of (src, dst, weight); marking: {place id: n>0}"""
    problems = []
    if sorted(places) != sorted(scan.place_order):
        problems.append("places differ (%d loaded, %d in the file)" % (len(places), len(scan.place_order)))
    if sorted(transitions) != sorted(scan.transitions):
        problems.append("transitions differ (%d loaded, %d in the file)"
                        % (len(transitions), len(scan.transitions)))
    loaded = {}
    for a in arcs:
        loaded[a] = loaded.get(a, 0) + 1
    if loaded != scan.arc_multiset():
        problems.append("arcs or arc weights differ (%d loaded, %d in the file)"
                        % (sum(loaded.values()), len(scan.arcs)))
    expected_m0 = dict((p, n) for p, n in scan.places.items() if n > 0)
    if dict(marking) != expected_m0:
        problems.append("initial marking differs")
    if problems:
        raise CannotCompute("the library did not load the net of model.pnml: " + "; ".join(problems))


# --------------------------------------------------------------------------------------------
# UpperBounds.xml
# --------------------------------------------------------------------------------------------
def read_upper_bounds(path, place_ids):
    """[(formula id, [place ids] or None if this formula cannot be handled)]"""
    try:
        root = ET.parse(path).getroot()
    except Exception as e:  # noqa: BLE001
        raise CannotCompute("cannot read %s: %s" % (path, e))
    known = set(place_ids)
    res = []
    for prop in root:
        if local(prop.tag) != "property":
            continue
        fid = None
        formula = None
        for c in prop:
            if local(c.tag) == "id":
                fid = (c.text or "").strip()
            elif local(c.tag) == "formula":
                formula = c
        if not fid:
            continue
        places = None
        kids = list(formula) if formula is not None else []
        if len(kids) == 1 and local(kids[0].tag) == "place-bound":
            refs = [(p.text or "").strip() for p in kids[0] if local(p.tag) == "place"]
            if refs and len(refs) == len(list(kids[0])) and all(r in known for r in refs):
                places = refs
        if places is None:
            log("UpperBounds formula %s not handled (unexpected shape or unknown place)" % fid)
        res.append((fid, places))
    return res


# --------------------------------------------------------------------------------------------
# Witnesses collected while the library explores (sound on a partial graph)
# --------------------------------------------------------------------------------------------
class Observer(object):
    """Fed with every expanded state: its marking (place index -> count, non-zero entries only)
    and the indices of the transitions enabled there (each of them fires on an edge).
    place_ids, transition_ids: the id of each index; props: what prepare() read.

    It also notices an unbounded net: a reachable marking M >= M0 with M != M0 proves it (the
    firings from M0 to M can be repeated from M, forever). Then an examination that only a
    complete graph can answer stops at once: StateSpace answers +inf (the four values, as the
    MCC writes them for unbounded nets), Liveness and the formulas a witness cannot decide get no
    answer."""

    def __init__(self, exam, place_ids, transition_ids, m0, props):
        self.exam = exam
        self.ntrans = len(transition_ids)
        self.m0 = dict(m0)
        self.unvaried = set(range(len(place_ids)))
        self.fired = set()
        self.answer = None
        # formula examinations: EF p / AG p decided by a marking seen; the others need the
        # complete graph, which an unbounded net does not have
        self.formulas = None
        if exam in mf.FORMULA_EXAMS and props and props.get(exam) is not None:
            self.formulas = mf.Witnesses(props[exam], place_ids, transition_ids)
        self.unbounded = False
        self.active = (exam in WITNESS_EXAMS or exam in COMPLETE_GRAPH_EXAMS
                       or self.formulas is not None)
        self.why = None  # why observe() asked to stop

    def observe(self, items, enabled):
        e = self.exam
        m = dict(items)
        if not self.unbounded and m != self.m0 and all(
                m.get(p, 0) >= c for p, c in self.m0.items()):
            self.unbounded = True
            log("unbounded: a reachable marking strictly covers the initial one")
        if self.formulas is not None:
            if self.formulas.observe(m, set(enabled)):
                self.why = "every formula decided by a witness"
                return True
            # with the graph infinite, only the witnesses still to come can decide anything
            if self.unbounded and self.formulas.goals_decided():
                self.why = "unbounded net, and no formula left that a witness could decide"
                return True
            return False
        if e in COMPLETE_GRAPH_EXAMS:
            if self.unbounded:
                self.why = "unbounded net"
            return self.unbounded
        if e == "ReachabilityDeadlock":
            if not enabled:
                self.answer = True
        elif e == "OneSafe":
            for _, c in items:
                if c > 1:
                    self.answer = False
                    break
        elif e == "QuasiLiveness":
            self.fired.update(enabled)
            if len(self.fired) == self.ntrans:
                self.answer = True
        elif e == "StableMarking":
            m0 = self.m0
            self.unvaried = set(p for p in self.unvaried if m.get(p, 0) == m0.get(p, 0))
            if not self.unvaried:
                self.answer = False
        if self.answer is not None:
            self.why = "decided by a witness"
        return self.answer is not None


# --------------------------------------------------------------------------------------------
# Answers from a complete graph
# --------------------------------------------------------------------------------------------
class Graph(object):
    """Complete reachability graph handed over by a wrapper.
    place_ids, transition_ids: the PNML id of each place index, of each transition index.
    marks[i]: {place index: count > 0}; succ[i]: [(transition index, target state)], one entry per
    firing (two transitions between the same two markings are two entries). State 0 is initial."""

    def __init__(self, place_ids, transition_ids, marks, succ):
        self.place_ids = list(place_ids)  # place id of each place index
        self.nplaces = len(self.place_ids)
        self.transition_ids = list(transition_ids)
        self.ntrans = len(self.transition_ids)
        self.marks = marks
        self.succ = succ
        assert len(marks) == len(succ)


def _sccs(n, succ):
    index = [-1] * n
    low = [0] * n
    onstack = [False] * n
    comp = [-1] * n
    stack = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        onstack[root] = True
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            edges = succ[v]
            if i < len(edges):
                work[-1] = (v, i + 1)
                w = edges[i][1]
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    onstack[w] = True
                    work.append((w, 0))
                elif onstack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == index[v]:
                    while True:
                        w = stack.pop()
                        onstack[w] = False
                        comp[w] = ncomp
                        if w == v:
                            break
                    ncomp += 1
    return comp, ncomp


def live(g):
    """Every transition can fire again from every reachable marking <=> every terminal SCC has
    an edge labelled by every transition."""
    comp, ncomp = _sccs(len(g.succ), g.succ)
    bottom = [True] * ncomp
    labels = [set() for _ in range(ncomp)]
    for v, edges in enumerate(g.succ):
        c = comp[v]
        for (t, w) in edges:
            if comp[w] != c:
                bottom[c] = False
            else:
                labels[c].add(t)
    for c in range(ncomp):
        if bottom[c] and len(labels[c]) != g.ntrans:
            return False
    return True


def answer_lines(exam, g, props=None, deadline=None):
    """The answer lines of an examination from the complete graph g. deadline: a
    time.process_time() value after which formulas are left without answer."""
    tf = lambda b: "TRUE" if b else "FALSE"  # noqa: E731
    if exam == "StateSpace":
        states = len(g.marks)
        edges = sum(len(e) for e in g.succ)
        max_place = 0
        max_marking = 0
        for m in g.marks:
            if m:
                v = max(m.values())
                if v > max_place:
                    max_place = v
                s = sum(m.values())
                if s > max_marking:
                    max_marking = s
        return ["STATE_SPACE STATES %d %s" % (states, TECH),
                "STATE_SPACE TRANSITIONS %d %s" % (edges, TECH),
                "STATE_SPACE MAX_TOKEN_IN_PLACE %d %s" % (max_place, TECH),
                "STATE_SPACE MAX_TOKEN_PER_MARKING %d %s" % (max_marking, TECH)]
    if exam == "ReachabilityDeadlock":
        v = any(len(e) == 0 for e in g.succ)
    elif exam == "OneSafe":
        v = all(c <= 1 for m in g.marks for c in m.values())
    elif exam == "QuasiLiveness":
        fired = set(t for e in g.succ for (t, _) in e)
        v = len(fired) == g.ntrans
    elif exam == "StableMarking":
        n = len(g.marks)
        present = [0] * g.nplaces
        first = [None] * g.nplaces
        varied = [False] * g.nplaces
        for m in g.marks:
            for p, c in m.items():
                present[p] += 1
                if first[p] is None:
                    first[p] = c
                elif first[p] != c:
                    varied[p] = True
        # a place is stable iff it is never marked, or marked with the same count everywhere
        v = any(present[p] == 0 or (present[p] == n and not varied[p]) for p in range(g.nplaces))
    elif exam == "Liveness":
        v = live(g)
    elif exam == "UpperBounds":
        lines = []
        pos = dict((pid, i) for i, pid in enumerate(g.place_ids))
        for fid, refs in props["UpperBounds"]:
            if refs is None:
                continue
            places = [pos[r] for r in refs]
            best = 0
            for m in g.marks:
                s = 0
                for p in places:
                    s += m.get(p, 0)
                if s > best:
                    best = s
            lines.append("FORMULA %s %d %s" % (fid, best, TECH))
        return lines
    elif exam in mf.FORMULA_EXAMS:
        return mf.formula_lines(exam, props[exam], g.marks, g.succ, g.place_ids, g.transition_ids,
                                TECH, deadline)
    else:
        raise CannotCompute("unsupported examination %s" % exam)
    return ["FORMULA %s %s %s" % (exam, tf(v), TECH)]


def witness_lines(exam, observer):
    """The answer lines that the markings seen so far prove (None: no answer)."""
    if observer is not None and observer.formulas is not None:
        return observer.formulas.lines(TECH) or None
    if exam == "StateSpace" and observer is not None and observer.unbounded:
        return ["STATE_SPACE %s +inf %s" % (k, TECH)
                for k in ("STATES", "TRANSITIONS", "MAX_TOKEN_IN_PLACE", "MAX_TOKEN_PER_MARKING")]
    if observer is None or observer.answer is None:
        return None
    return ["FORMULA %s %s %s" % (exam, "TRUE" if observer.answer else "FALSE", TECH)]


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------
def prepare(exams, directory="."):
    """Independent scan of model.pnml and of the property files the examinations need:
    (model path, scan, {examination: properties}) with UpperBounds' [(id, [place ids] or None)]
    and the formula examinations' [(id, formula or None)] (mcc_formulas.py)."""
    model = os.path.join(os.path.abspath(directory), "model.pnml")
    if not os.path.exists(model):
        raise CannotCompute("no model.pnml in %s" % directory)
    scan = scan_pnml(model)
    props = {}
    if "UpperBounds" in exams:
        ub = read_upper_bounds(os.path.join(directory, "UpperBounds.xml"), scan.place_order)
        if not any(p is not None for _, p in ub):
            raise CannotCompute("no UpperBounds formula can be handled")
        props["UpperBounds"] = ub
    for exam in exams:
        if exam not in mf.FORMULA_EXAMS:
            continue
        path = os.path.join(directory, exam + ".xml")
        try:
            fs = mf.read_formulas(path, scan.place_order, scan.transitions, log,
                                  ltl=exam in mf.LTL_EXAMS)
        except (OSError, ET.ParseError, ValueError) as e:
            raise CannotCompute("cannot read %s: %s" % (path, e))
        if not any(f is not None for _, f in fs):
            raise CannotCompute("no formula of %s can be handled" % path)
        props[exam] = fs
    return model, scan, props


def main(tool_name, solve):
    """solve(exams, model_path, scan, props, cap, deadline) -> {exam: answer lines}. With a single
    examination that a witness can decide, solve may stop the exploration early.
    Answer lines go to the real stdout at the end; library chatter goes to stderr."""
    start = time.monotonic()
    real_stdout = sys.stdout
    exam = os.environ.get("BK_EXAMINATION", "").strip()
    log("%s wrapper, examination %r, instance %r, cwd %s"
        % (tool_name, exam, os.environ.get("BK_INPUT", ""), os.getcwd()))
    if exam not in SUPPORTED:
        print("DO_NOT_COMPETE", file=real_stdout, flush=True)
        return 0
    lines = None
    sys.stdout = sys.stderr  # nothing but answers on stdout
    try:
        model, scan, props = prepare([exam])
        lines = solve([exam], model, scan, props, state_limit(), deadline(start)).get(exam)
    except CannotCompute as e:
        log("CANNOT_COMPUTE:", e)
        lines = None
    except MemoryError:
        log("CANNOT_COMPUTE: out of memory")
        lines = None
    except Exception as e:  # noqa: BLE001  never a wrong answer: anything unexpected is no answer
        import traceback
        traceback.print_exc(file=sys.stderr)
        log("CANNOT_COMPUTE: unexpected %s: %s" % (type(e).__name__, e))
        lines = None
    finally:
        sys.stdout = real_stdout
    if not lines:
        print("CANNOT_COMPUTE", flush=True)
    else:
        print("\n".join(lines), flush=True)
    log("done in %.2f s" % (time.monotonic() - start))
    return 0
