"""BenchKit wrapper: MCC examinations answered from SNAKES' marking graph (snakes.nets.StateGraph).

The net is read by SNAKES' own PNML loader (snakes.pnml.loads) and the graph is built by
snakes.nets.StateGraph. See README.md for what is worked around and why.
"""
import sys
import time

import mcc_common as mc


def _weight(label, dot, Value, MultiArc):
    if isinstance(label, Value) and label.value is dot:
        return 1
    if isinstance(label, MultiArc) and all(isinstance(c, Value) and c.value is dot for c in label):
        return len(label)
    raise mc.CannotCompute("unexpected arc label %r" % (label,))


def solve(exams, model, scan, props, cap, deadline):
    exam = exams[0] if len(exams) == 1 else None  # witnesses only for a single examination
    t0 = time.monotonic()
    import snakes.pnml
    from snakes.nets import PetriNet, Place, StateGraph, Value, MultiArc, Test, dot
    mc.log("snakes imported in %.2f s" % (time.monotonic() - t0))

    t0 = time.monotonic()
    if scan.needs_flattening:
        # snakes' loader reads the places/transitions/arcs of the net and of its direct pages only
        mc.log("net has %d page(s)%s: handing SNAKES a one-page copy"
               % (scan.pages, ", nested" if scan.nested_pages else ""))
        loaded = snakes.pnml.loads(mc.flattened_pnml(model, scan).decode("utf-8"))
    else:
        with open(model, "rb") as f:
            loaded = snakes.pnml.loads(f)
    nets = loaded if isinstance(loaded, list) else [loaded]
    nets = [n for n in nets if isinstance(n, PetriNet)]
    if len(nets) != 1:
        raise mc.CannotCompute("snakes.pnml.loads gave %d nets" % len(nets))
    net = nets[0]

    arcs = []
    for t in net.transition():
        for p, label in t.input():
            arcs.append((p.name, t.name, _weight(label, dot, Value, MultiArc)))
        for p, label in t.output():
            arcs.append((t.name, p.name, _weight(label, dot, Value, MultiArc)))
    m0 = {}
    for p in net.place():
        if any(tok is not dot for tok in p.tokens):
            raise mc.CannotCompute("place %s holds tokens other than black ones" % p.name)
        if len(p.tokens):
            m0[p.name] = len(p.tokens)
    mc.check_same_net(scan, [p.name for p in net.place()], [t.name for t in net.transition()], arcs, m0)

    place_ids = sorted(p.name for p in net.place())
    trans_ids = sorted(t.name for t in net.transition())
    pidx = dict((p, i) for i, p in enumerate(place_ids))
    tidx = dict((t, i) for i, t in enumerate(trans_ids))

    # SNAKES gives a transition without input arc no mode at all, so it would never fire, while
    # in a P/T net it is always enabled. Such transitions get a test arc (read, not consumed) on
    # an extra place holding one token; that place is left out of every marking below.
    sources = [t.name for t in net.transition() if not t.input()]
    aux = None
    if sources:
        aux = "mcc_always_marked"
        while aux in pidx or aux in tidx:
            aux += "_"
        net.add_place(Place(aux, [dot]))
        for t in sources:
            net.add_input(aux, t, Test(Value(dot)))
        mc.log("%d transition(s) without input place: test arc on extra place %s" % (len(sources), aux))
    mc.log("snakes loaded %d places, %d transitions, %d arcs in %.2f s"
           % (len(place_ids), len(trans_ids), len(arcs), time.monotonic() - t0))

    def items(marking):
        return [(pidx[name], len(ms)) for name, ms in marking.items() if name != aux]

    observer = mc.Observer(exam, place_ids, trans_ids, [(pidx[p], n) for p, n in m0.items()], props)
    t0 = time.monotonic()
    g = StateGraph(net)
    stopped = None
    for s in g:
        if len(g) > cap:
            stopped = mc.StateCap("more than %d states (MCC_STATE_LIMIT)" % cap)
            break
        if deadline is not None and time.process_time() > deadline:
            stopped = mc.TimeBudget("time budget spent after %d states" % len(g))
            break
        if observer.active and observer.observe(
                items(g[s]), [tidx[trans.name] for (_, trans, _) in g.successors(s)]):
            mc.log("%s after %d states, %.2f s" % (observer.why, len(g), time.monotonic() - t0))
            return {exam: mc.witness_lines(exam, observer)}
    if stopped is not None:
        mc.log("exploration stopped: %s" % stopped)
        w = mc.witness_lines(exam, observer)
        if w:
            mc.log("answer proved by a witness of the partial graph")
            return {exam: w}
        raise stopped
    if not g.completed():
        raise mc.CannotCompute("StateGraph not completed")
    n = len(g)
    mc.log("snakes explored %d markings in %.2f s" % (n, time.monotonic() - t0))

    marks = []
    succ = []
    for s in range(n):
        marks.append(dict(items(g[s])))
        edges = [(tidx[trans.name], target) for (target, trans, _) in g.successors(s)]
        if len(set(t for t, _ in edges)) != len(edges):
            raise mc.CannotCompute("a transition fires in two modes from state %d" % s)
        succ.append(edges)
    if marks[0] != dict((pidx[p], c) for p, c in m0.items()):
        raise mc.CannotCompute("state 0 is not the initial marking")
    g = mc.Graph(place_ids, trans_ids, marks, succ)
    return dict((e, mc.answer_lines(e, g, props, deadline)) for e in exams)


if __name__ == "__main__":
    sys.exit(mc.main("snakes", solve))
