"""BenchKit wrapper: MCC examinations answered from pm4py's reachability graph.

The net is read by pm4py's PNML importer and the graph is built by
pm4py.objects.petri_net.utils.reachability_graph.marking_flow_petri, the exploration that
pm4py.convert_to_reachability_graph / construct_reachability_graph run. See README.md for what is
worked around and why.
"""
import sys
import time
import warnings

import mcc_common as mc


def _load(model, scan):
    from pm4py.objects.petri_net.importer.variants import pnml as importer
    params = {importer.Parameters.AUTO_GUESS_FINAL_MARKING: False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if scan.needs_flattening:
            # pm4py's importer reads the last <page> of the net only, and no nested page
            mc.log("net has %d page(s)%s: handing pm4py a one-page copy"
                   % (scan.pages, ", nested" if scan.nested_pages else ""))
            net, im, _ = importer.import_net_from_string(mc.flattened_pnml(model, scan), parameters=params)
        else:
            net, im, _ = importer.import_net(model, parameters=params)
    mc.check_same_net(
        scan,
        [p.name for p in net.places],
        [t.name for t in net.transitions],
        [(a.source.name, a.target.name, a.weight) for a in net.arcs],
        dict((p.name, n) for p, n in im.items() if n != 0),
    )
    return net, im


def solve(exams, model, scan, props, cap, deadline):
    exam = exams[0] if len(exams) == 1 else None  # witnesses only for a single examination
    t0 = time.monotonic()
    from pm4py.objects.petri_net.obj import PetriNet, Marking
    from pm4py.objects.petri_net.semantics import ClassicSemantics
    from pm4py.objects.petri_net.utils import reachability_graph
    mc.log("pm4py imported in %.2f s" % (time.monotonic() - t0))

    # Speed only, same semantics: Place/Transition compare and hash by identity in pm4py (Python
    # methods returning id(self)); the C slots of object do exactly that, without a Python call.
    PetriNet.Place.__hash__ = object.__hash__
    PetriNet.Place.__eq__ = object.__eq__
    PetriNet.Transition.__hash__ = object.__hash__
    PetriNet.Transition.__eq__ = object.__eq__

    class HMarking(Marking):
        """pm4py's Marking hashes by its set of marked places only (frozenset(self)): all the
        markings with the same support collide, which makes the exploration quadratic on nets
        that are not safe. Same equality (dict equality: markings never hold zero entries here),
        hash over (place, count) pairs, cached (markings are not changed after being hashed), and
        C comparison slots (marking_flow_petri tests `nm not in active` on a list)."""
        __eq__ = dict.__eq__
        __ne__ = dict.__ne__
        __lt__ = dict.__lt__
        __le__ = dict.__le__
        __gt__ = dict.__gt__
        __ge__ = dict.__ge__

        def __hash__(self):
            try:
                return self._mcc_hash
            except AttributeError:
                h = self._mcc_hash = hash(frozenset(self.items()))
                return h

    t0 = time.monotonic()
    net, im = _load(model, scan)
    places = sorted(net.places, key=lambda p: p.name)
    trans = sorted(net.transitions, key=lambda t: t.name)
    pidx = dict((p, i) for i, p in enumerate(places))
    tidx = dict((t, i) for i, t in enumerate(trans))
    mc.log("pm4py loaded %d places, %d transitions, %d arcs in %.2f s"
           % (len(places), len(trans), len(net.arcs), time.monotonic() - t0))

    m0 = HMarking()
    for p, n in im.items():
        if n:
            m0[p] = n
    observer = mc.Observer(exam, [p.name for p in places], [t.name for t in trans],
                           [(pidx[p], n) for p, n in m0.items()], props)

    class ObservedSemantics(ClassicSemantics):
        """pm4py's classic semantics, unchanged; it also counts the expanded markings (state cap,
        time budget) and shows each expanded marking to the witness observer."""
        expanded = 0

        def enabled_transitions(self, pn, m, **kwargs):
            self.expanded += 1
            if self.expanded > cap:
                raise mc.StateCap("more than %d states (MCC_STATE_LIMIT)" % cap)
            if deadline is not None and time.process_time() > deadline:
                raise mc.TimeBudget("time budget spent after %d states" % self.expanded)
            enabled = ClassicSemantics.enabled_transitions(self, pn, m, **kwargs)
            if observer.active and observer.observe(
                    [(pidx[p], n) for p, n in m.items()], [tidx[t] for t in enabled]):
                raise mc.Decided()
            return enabled

        def weak_execute(self, t, pn, m, **kwargs):
            nm = ClassicSemantics.weak_execute(self, t, pn, m, **kwargs)
            if type(nm) is not HMarking:  # copy.copy keeps the class; never taken in practice
                nm = HMarking(nm)
            return nm

    sem = ObservedSemantics()
    # marking_flow_petri stops by itself after MAX_ELAB_TIME and then silently returns a partial
    # graph: give it more time than our own budget (checked at every expansion above), and
    # detect a partial graph below anyway.
    budget = float("inf") if deadline is None else max(1.0, deadline - time.process_time()) + 60.0
    params = {reachability_graph.Parameters.PETRI_SEMANTICS: sem,
              reachability_graph.Parameters.MAX_ELAB_TIME: budget}
    t0 = time.monotonic()
    try:
        incoming, outgoing, _ = reachability_graph.marking_flow_petri(net, m0, parameters=params)
        states = list(incoming.keys())
        if len(outgoing) != len(states) or any(m not in outgoing for m in states):
            raise mc.TimeBudget("pm4py returned a partial graph (%d of %d markings expanded)"
                                % (len(outgoing), len(states)))
    except mc.Decided:
        mc.log("%s after %d expanded states, %.2f s" % (observer.why, sem.expanded, time.monotonic() - t0))
        return {exam: mc.witness_lines(exam, observer)}
    except (mc.StateCap, mc.TimeBudget) as e:
        mc.log("exploration stopped: %s" % e)
        w = mc.witness_lines(exam, observer)
        if w:
            mc.log("answer proved by a witness of the partial graph")
            return {exam: w}
        raise
    mc.log("pm4py explored %d markings in %.2f s" % (len(incoming), time.monotonic() - t0))

    if len(states) > cap:
        raise mc.StateCap("more than %d states" % cap)
    if states[0] != m0:
        raise mc.CannotCompute("first state is not the initial marking")
    index = dict((m, i) for i, m in enumerate(states))
    if len(index) != len(states):
        raise mc.CannotCompute("duplicate markings in pm4py's graph")
    marks = [dict((pidx[p], n) for p, n in m.items()) for m in states]
    succ = [[(tidx[t], index[nm]) for t, nm in outgoing[m].items()] for m in states]
    del incoming, outgoing, states, index
    g = mc.Graph([p.name for p in places], [t.name for t in trans], marks, succ)
    return dict((e, mc.answer_lines(e, g, props, deadline)) for e in exams)


if __name__ == "__main__":
    sys.exit(mc.main("pm4py", solve))
