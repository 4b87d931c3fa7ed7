//! Explicit CTL labelling on the explored reachability graph, three-valued so that it stays
//! sound on a partial graph.
//!
//! For every subformula two sets are computed: the states where it provably holds (`t`) and
//! those where it provably fails (`f`). On a complete graph they are complementary. On a partial
//! graph (exploration stopped early) a state that was not expanded has unknown successors: the
//! existential operators can still be proven true through known edges and the universal ones
//! false, and everything else stays unknown.
//!
//! Deadlocks (convention of the MCC, checked against the 2025 consensus): paths are maximal, a
//! deadlock state has no successor. Hence at a deadlock `EX p` is false, `AX p` is true,
//! `EG p` is `p` (the one-state path is maximal), `AF p` and `A[p U q]` are `q`-or-`p` of that state
//! only. The alternative convention (a deadlock loops on itself) is available as
//! [`Deadlocks::SelfLoop`] for comparison.

use crate::explore::Exploration;
use crate::formula::Formula;
use crate::net::{Net, Tokens};
use std::collections::HashMap;

/// How deadlock states are treated by the temporal operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadlocks {
    /// A deadlock has no successor; paths ending in it are maximal (MCC convention).
    NoSuccessor,
    /// A deadlock has itself as only successor.
    SelfLoop,
}

/// The graph the labelling runs on.
pub struct Kripke<'a> {
    net: &'a Net,
    ex: &'a Exploration,
    n: usize,
    succ_start: Vec<u64>,
    succ: Vec<u32>,
    pred_start: Vec<u64>,
    pred: Vec<u32>,
    /// Expanded states (successors known).
    expanded: Vec<bool>,
    /// Expanded states without successor.
    dead: Vec<bool>,
}

/// Values of the maximal state predicates of a formula, computed in one pass over the states
/// (each marking is decoded once rather than once per predicate); keyed by address.
type Atoms = HashMap<*const Formula, Vec<bool>>;

/// Three-valued labelling of one formula: provably true, provably false.
struct Label {
    t: Vec<bool>,
    f: Vec<bool>,
}

impl<'a> Kripke<'a> {
    pub fn new(net: &'a Net, ex: &'a Exploration, deadlocks: Deadlocks) -> Kripke<'a> {
        let n = ex.num_states();
        let mut succ_start = Vec::with_capacity(n + 1);
        let mut succ = Vec::with_capacity(ex.edges.len());
        let mut expanded = vec![false; n];
        let mut dead = vec![false; n];
        succ_start.push(0u64);
        for s in 0..n {
            if s < ex.expanded {
                expanded[s] = true;
                let out = ex.successors(s);
                if out.is_empty() {
                    match deadlocks {
                        Deadlocks::NoSuccessor => dead[s] = true,
                        Deadlocks::SelfLoop => succ.push(s as u32),
                    }
                } else {
                    succ.extend_from_slice(out);
                }
            }
            succ_start.push(succ.len() as u64);
        }
        // reverse CSR (with multiplicity)
        let mut count = vec![0u64; n + 1];
        for &d in &succ {
            count[d as usize + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let pred_start = count.clone();
        let mut fill = count;
        let mut pred = vec![0u32; succ.len()];
        for s in 0..n {
            for k in succ_start[s]..succ_start[s + 1] {
                let d = succ[k as usize] as usize;
                pred[fill[d] as usize] = s as u32;
                fill[d] += 1;
            }
        }
        Kripke {
            net,
            ex,
            n,
            succ_start,
            succ,
            pred_start,
            pred,
            expanded,
            dead,
        }
    }

    /// Evaluates the maximal state predicates of `formula` in one pass over the states.
    fn atoms(&self, formula: &Formula) -> Atoms {
        fn collect<'f>(f: &'f Formula, out: &mut Vec<&'f Formula>) {
            if f.is_state_predicate() {
                out.push(f);
                return;
            }
            match f {
                Formula::Not(g) | Formula::EX(g) | Formula::AX(g) => collect(g, out),
                Formula::EF(g) | Formula::AF(g) | Formula::EG(g) | Formula::AG(g) => {
                    collect(g, out)
                }
                Formula::And(gs) | Formula::Or(gs) => gs.iter().for_each(|g| collect(g, out)),
                Formula::EU(a, b) | Formula::AU(a, b) => {
                    collect(a, out);
                    collect(b, out);
                }
                Formula::Bool(_) | Formula::Le(..) | Formula::Fireable(_) => {}
            }
        }
        let mut preds = Vec::new();
        collect(formula, &mut preds);
        let mut values = vec![vec![false; self.n]; preds.len()];
        let mut m: Vec<Tokens> = vec![0; self.net.num_places()];
        for s in 0..self.n {
            self.ex.marking(s, &mut m);
            for (p, v) in preds.iter().zip(values.iter_mut()) {
                v[s] = p.eval_state(self.net, &m);
            }
        }
        preds
            .into_iter()
            .map(|p| p as *const Formula)
            .zip(values)
            .collect()
    }

    fn succs(&self, s: usize) -> &[u32] {
        &self.succ[self.succ_start[s] as usize..self.succ_start[s + 1] as usize]
    }

    fn preds(&self, s: usize) -> &[u32] {
        &self.pred[self.pred_start[s] as usize..self.pred_start[s + 1] as usize]
    }

    /// Value of `f` in the initial state: `None` when the explored part does not decide it.
    pub fn check(&self, f: &Formula) -> Option<bool> {
        let atoms = self.atoms(f);
        let l = self.label(f, &atoms);
        match (l.t[0], l.f[0]) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            (false, false) => None,
            (true, true) => {
                eprintln!(
                    "internal error: formula labelled both true and false in the initial state"
                );
                None
            }
        }
    }

    fn label(&self, f: &Formula, atoms: &Atoms) -> Label {
        if f.is_state_predicate() {
            if let Some(t) = atoms.get(&(f as *const Formula)) {
                return Label {
                    t: t.clone(),
                    f: t.iter().map(|v| !v).collect(),
                };
            }
            let mut m: Vec<Tokens> = vec![0; self.net.num_places()];
            let mut t = vec![false; self.n];
            for (s, v) in t.iter_mut().enumerate() {
                self.ex.marking(s, &mut m);
                *v = f.eval_state(self.net, &m);
            }
            let f = t.iter().map(|v| !v).collect();
            return Label { t, f };
        }
        match f {
            Formula::Not(g) => {
                let l = self.label(g, atoms);
                Label { t: l.f, f: l.t }
            }
            Formula::And(gs) => {
                let mut t = vec![true; self.n];
                let mut fl = vec![false; self.n];
                for g in gs {
                    let l = self.label(g, atoms);
                    and_assign(&mut t, &l.t);
                    or_assign(&mut fl, &l.f);
                }
                Label { t, f: fl }
            }
            Formula::Or(gs) => {
                let mut t = vec![false; self.n];
                let mut fl = vec![true; self.n];
                for g in gs {
                    let l = self.label(g, atoms);
                    or_assign(&mut t, &l.t);
                    and_assign(&mut fl, &l.f);
                }
                Label { t, f: fl }
            }
            Formula::EX(g) => {
                let l = self.label(g, atoms);
                let t = (0..self.n)
                    .map(|s| self.succs(s).iter().any(|&d| l.t[d as usize]))
                    .collect();
                let fl = (0..self.n)
                    .map(|s| self.expanded[s] && self.succs(s).iter().all(|&d| l.f[d as usize]))
                    .collect();
                Label { t, f: fl }
            }
            Formula::AX(g) => {
                let l = self.label(g, atoms);
                let t = (0..self.n)
                    .map(|s| self.expanded[s] && self.succs(s).iter().all(|&d| l.t[d as usize]))
                    .collect();
                let fl = (0..self.n)
                    .map(|s| self.succs(s).iter().any(|&d| l.f[d as usize]))
                    .collect();
                Label { t, f: fl }
            }
            Formula::EU(a, b) => {
                let (la, lb) = (self.label(a, atoms), self.label(b, atoms));
                self.eu(&la, &lb)
            }
            Formula::AU(a, b) => {
                let (la, lb) = (self.label(a, atoms), self.label(b, atoms));
                self.au(&la, &lb)
            }
            Formula::EF(g) => {
                let lb = self.label(g, atoms);
                self.eu(&self.constant(true), &lb)
            }
            Formula::AF(g) => {
                let lb = self.label(g, atoms);
                self.au(&self.constant(true), &lb)
            }
            Formula::EG(g) => {
                // EG g = not AF not g
                let l = self.label(g, atoms);
                let neg = Label { t: l.f, f: l.t };
                let r = self.au(&self.constant(true), &neg);
                Label { t: r.f, f: r.t }
            }
            Formula::AG(g) => {
                // AG g = not EF not g
                let l = self.label(g, atoms);
                let neg = Label { t: l.f, f: l.t };
                let r = self.eu(&self.constant(true), &neg);
                Label { t: r.f, f: r.t }
            }
            Formula::Bool(_) | Formula::Le(..) | Formula::Fireable(_) => {
                unreachable!("state predicates are handled above")
            }
        }
    }

    fn constant(&self, v: bool) -> Label {
        Label {
            t: vec![v; self.n],
            f: vec![!v; self.n],
        }
    }

    /// E[a U b] = mu Z. b or (a and EX Z)
    fn eu(&self, a: &Label, b: &Label) -> Label {
        let t = self.lfp_exists(b.t.clone(), &a.t);
        // F = nu Z. Fb and (Fa or (expanded and AX Z))
        //   = not mu Y. notFb or (notFa and (not expanded or EX Y))
        let not_fa: Vec<bool> = a.f.iter().map(|v| !v).collect();
        let seed: Vec<bool> = (0..self.n)
            .map(|s| !b.f[s] || (not_fa[s] && !self.expanded[s]))
            .collect();
        let y = self.lfp_exists(seed, &not_fa);
        Label {
            t,
            f: y.iter().map(|v| !v).collect(),
        }
    }

    /// A[a U b] = mu Z. b or (a and not dead and AX Z)
    fn au(&self, a: &Label, b: &Label) -> Label {
        let guard: Vec<bool> = (0..self.n)
            .map(|s| a.t[s] && self.expanded[s] && !self.dead[s])
            .collect();
        let t = self.lfp_forall(b.t.clone(), &guard);
        // F = nu Z. Fb and (Fa or dead or EX Z)
        //   = not mu Y. notFb or (notFa and not dead and AX Y)
        let seed: Vec<bool> = b.f.iter().map(|v| !v).collect();
        let guard: Vec<bool> = (0..self.n).map(|s| !a.f[s] && !self.dead[s]).collect();
        let y = self.lfp_forall(seed, &guard);
        Label {
            t,
            f: y.iter().map(|v| !v).collect(),
        }
    }

    /// mu Z. seed or (guard and some successor in Z)
    fn lfp_exists(&self, mut z: Vec<bool>, guard: &[bool]) -> Vec<bool> {
        let mut queue: Vec<u32> = (0..self.n).filter(|&s| z[s]).map(|s| s as u32).collect();
        while let Some(s) = queue.pop() {
            for &p in self.preds(s as usize) {
                let p = p as usize;
                if !z[p] && guard[p] {
                    z[p] = true;
                    queue.push(p as u32);
                }
            }
        }
        z
    }

    /// mu Z. seed or (guard and every successor in Z); a guarded state without successor joins.
    fn lfp_forall(&self, mut z: Vec<bool>, guard: &[bool]) -> Vec<bool> {
        let mut missing: Vec<u64> = (0..self.n)
            .map(|s| self.succ_start[s + 1] - self.succ_start[s])
            .collect();
        let mut queue: Vec<u32> = Vec::new();
        for s in 0..self.n {
            if !z[s] && guard[s] && missing[s] == 0 {
                z[s] = true;
            }
            if z[s] {
                queue.push(s as u32);
            }
        }
        while let Some(s) = queue.pop() {
            for &p in self.preds(s as usize) {
                let p = p as usize;
                missing[p] -= 1;
                if missing[p] == 0 && !z[p] && guard[p] {
                    z[p] = true;
                    queue.push(p as u32);
                }
            }
        }
        z
    }
}

fn and_assign(a: &mut [bool], b: &[bool]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x &= *y;
    }
}

fn or_assign(a: &mut [bool], b: &[bool]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= *y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::{explore, Limits, NoObserver, Options};
    use crate::formula::IntExpr;
    use crate::net::tests::philosophers2;

    fn b(f: Formula) -> Box<Formula> {
        Box::new(f)
    }
    fn fire(t: u32) -> Formula {
        Formula::Fireable(vec![t])
    }
    fn dead() -> Formula {
        Formula::Not(b(Formula::Fireable(vec![0, 1, 2, 3, 4, 5])))
    }
    fn eating() -> Formula {
        Formula::Le(IntExpr::Const(1), IntExpr::Tokens(vec![4, 5]))
    }

    fn full() -> (Net, Exploration) {
        let net = philosophers2();
        let ex = explore(
            &net,
            Options {
                store_edges: true,
                stop_when_unbounded: true,
            },
            &Limits::unlimited(),
            &mut NoObserver,
        );
        (net, ex)
    }

    #[test]
    fn ctl_on_two_philosophers() {
        let (net, ex) = full();
        let k = Kripke::new(&net, &ex, Deadlocks::NoSuccessor);
        assert_eq!(k.check(&Formula::EF(b(dead()))), Some(true));
        assert_eq!(
            k.check(&Formula::AG(b(Formula::Not(b(dead()))))),
            Some(false)
        );
        assert_eq!(k.check(&Formula::EF(b(eating()))), Some(true));
        assert_eq!(k.check(&Formula::AF(b(eating()))), Some(false)); // the deadlock path avoids eating
        assert_eq!(
            k.check(&Formula::EG(b(Formula::Not(b(eating()))))),
            Some(true)
        ); // ends in the deadlock
        assert_eq!(
            k.check(&Formula::AG(b(Formula::EF(b(eating()))))),
            Some(false)
        );
        assert_eq!(k.check(&Formula::EX(b(fire(2)))), Some(true)); // after takeL0, takeR0 is enabled
        assert_eq!(k.check(&Formula::AX(b(fire(2)))), Some(false));
        // at the deadlock: EX false, AX true (no successor)
        let at_dead_ex = Formula::EF(b(Formula::And(vec![
            dead(),
            Formula::EX(b(Formula::Bool(true))),
        ])));
        assert_eq!(k.check(&at_dead_ex), Some(false));
        let at_dead_ax = Formula::EF(b(Formula::And(vec![
            dead(),
            Formula::AX(b(Formula::Bool(false))),
        ])));
        assert_eq!(k.check(&at_dead_ax), Some(true));
        // E[not eating U dead], A[true U eating or dead]
        assert_eq!(
            k.check(&Formula::EU(b(Formula::Not(b(eating()))), b(dead()))),
            Some(true)
        );
        assert_eq!(
            k.check(&Formula::AU(
                b(Formula::Bool(true)),
                b(Formula::Or(vec![eating(), dead()]))
            )),
            Some(true)
        );
        assert_eq!(
            k.check(&Formula::AU(b(Formula::Bool(true)), b(eating()))),
            Some(false)
        );
    }

    #[test]
    fn self_loop_convention_differs_at_deadlocks() {
        let (net, ex) = full();
        let k = Kripke::new(&net, &ex, Deadlocks::SelfLoop);
        let at_dead_ex = Formula::EF(b(Formula::And(vec![
            dead(),
            Formula::EX(b(Formula::Bool(true))),
        ])));
        assert_eq!(k.check(&at_dead_ex), Some(true));
    }

    #[test]
    fn complete_graph_labels_are_complementary() {
        let (net, ex) = full();
        let k = Kripke::new(&net, &ex, Deadlocks::NoSuccessor);
        let fs = [
            Formula::AG(b(Formula::EF(b(fire(4))))),
            Formula::EG(b(Formula::AF(b(eating())))),
            Formula::AU(b(Formula::Not(b(eating()))), b(Formula::AX(b(dead())))),
            Formula::EU(b(fire(0)), b(Formula::EX(b(dead())))),
        ];
        for f in &fs {
            let l = k.label(f, &Atoms::new());
            for s in 0..k.n {
                assert!(l.t[s] != l.f[s], "{f:?} at state {s}");
            }
        }
    }

    #[test]
    fn partial_graph_answers_only_what_is_proven() {
        let net = philosophers2();
        let limits = Limits {
            max_states: 3,
            ..Limits::unlimited()
        };
        let ex = explore(
            &net,
            Options {
                store_edges: true,
                stop_when_unbounded: true,
            },
            &limits,
            &mut NoObserver,
        );
        assert!(!ex.is_complete());
        let k = Kripke::new(&net, &ex, Deadlocks::NoSuccessor);
        // a witness among the first states proves EF; nothing proves the deadlock yet
        assert_eq!(k.check(&Formula::EF(b(fire(2)))), Some(true));
        assert_eq!(k.check(&Formula::EF(b(dead()))), None);
        assert_eq!(
            k.check(&Formula::AG(b(Formula::Not(b(fire(2)))))),
            Some(false)
        );
        // unexplored states keep universal properties open, even trivial ones (sound, not complete)
        assert_eq!(k.check(&Formula::AG(b(Formula::Bool(true)))), None);
        assert_eq!(k.check(&Formula::EG(b(Formula::Bool(false)))), Some(false));
        assert_eq!(k.check(&Formula::AF(b(eating()))), None);
        assert_eq!(k.check(&Formula::EX(b(fire(2)))), Some(true));
        assert_eq!(
            k.check(&Formula::AX(b(Formula::Not(b(fire(4)))))),
            Some(true)
        );
    }
}

#[cfg(test)]
mod reference {
    //! A naive fixpoint-iteration CTL checker on complete graphs, to cross-check the labelling.
    use super::*;
    use crate::explore::{explore, Limits, NoObserver, Options};
    use crate::formula::IntExpr;

    fn naive(k: &Kripke, f: &Formula) -> Vec<bool> {
        let n = k.n;
        let succ = |s: usize| k.succs(s).iter().map(|&d| d as usize).collect::<Vec<_>>();
        let lfp = |step: &dyn Fn(&[bool]) -> Vec<bool>| {
            let mut z = vec![false; n];
            loop {
                let nz = step(&z);
                if nz == z {
                    return z;
                }
                z = nz;
            }
        };
        let gfp = |step: &dyn Fn(&[bool]) -> Vec<bool>| {
            let mut z = vec![true; n];
            loop {
                let nz = step(&z);
                if nz == z {
                    return z;
                }
                z = nz;
            }
        };
        match f {
            _ if f.is_state_predicate() => {
                let mut m = vec![0; k.net.num_places()];
                (0..n)
                    .map(|s| {
                        k.ex.marking(s, &mut m);
                        f.eval_state(k.net, &m)
                    })
                    .collect()
            }
            Formula::Not(g) => naive(k, g).iter().map(|v| !v).collect(),
            Formula::And(gs) => {
                let ls: Vec<_> = gs.iter().map(|g| naive(k, g)).collect();
                (0..n).map(|s| ls.iter().all(|l| l[s])).collect()
            }
            Formula::Or(gs) => {
                let ls: Vec<_> = gs.iter().map(|g| naive(k, g)).collect();
                (0..n).map(|s| ls.iter().any(|l| l[s])).collect()
            }
            Formula::EX(g) => {
                let l = naive(k, g);
                (0..n).map(|s| succ(s).iter().any(|&d| l[d])).collect()
            }
            Formula::AX(g) => {
                let l = naive(k, g);
                (0..n).map(|s| succ(s).iter().all(|&d| l[d])).collect()
            }
            Formula::EF(g) => naive(k, &Formula::EU(Box::new(Formula::Bool(true)), g.clone())),
            Formula::AF(g) => naive(k, &Formula::AU(Box::new(Formula::Bool(true)), g.clone())),
            Formula::EU(a, b) => {
                let (la, lb) = (naive(k, a), naive(k, b));
                lfp(&|z: &[bool]| {
                    (0..n)
                        .map(|s| lb[s] || (la[s] && succ(s).iter().any(|&d| z[d])))
                        .collect()
                })
            }
            Formula::AU(a, b) => {
                let (la, lb) = (naive(k, a), naive(k, b));
                lfp(&|z: &[bool]| {
                    (0..n)
                        .map(|s| {
                            lb[s] || (la[s] && !succ(s).is_empty() && succ(s).iter().all(|&d| z[d]))
                        })
                        .collect()
                })
            }
            Formula::EG(g) => {
                let l = naive(k, g);
                gfp(&|z: &[bool]| {
                    (0..n)
                        .map(|s| l[s] && (succ(s).is_empty() || succ(s).iter().any(|&d| z[d])))
                        .collect()
                })
            }
            Formula::AG(g) => {
                let l = naive(k, g);
                gfp(&|z: &[bool]| {
                    (0..n)
                        .map(|s| l[s] && succ(s).iter().all(|&d| z[d]))
                        .collect()
                })
            }
            _ => unreachable!(),
        }
    }

    /// A small deterministic pseudo-random generator (no dependency needed).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn random_formula(r: &mut Rng, depth: u32, np: u32, nt: u32) -> Formula {
        let b = |f| Box::new(f);
        if depth == 0 || r.next(4) == 0 {
            return match r.next(3) {
                0 => Formula::Fireable(vec![r.next(nt as u64) as u32]),
                1 => Formula::Le(
                    IntExpr::Tokens(vec![r.next(np as u64) as u32]),
                    IntExpr::Const(r.next(2) as i128),
                ),
                _ => Formula::Le(
                    IntExpr::Const(1),
                    IntExpr::Tokens(vec![r.next(np as u64) as u32, r.next(np as u64) as u32]),
                ),
            };
        }
        let x = random_formula(r, depth - 1, np, nt);
        let y = random_formula(r, depth - 1, np, nt);
        match r.next(12) {
            0 => Formula::Not(b(x)),
            1 => Formula::And(vec![x, y]),
            2 => Formula::Or(vec![x, y]),
            3 => Formula::EX(b(x)),
            4 => Formula::AX(b(x)),
            5 => Formula::EF(b(x)),
            6 => Formula::AF(b(x)),
            7 => Formula::EG(b(x)),
            8 => Formula::AG(b(x)),
            9 => Formula::EU(b(x), b(y)),
            10 => Formula::AU(b(x), b(y)),
            _ => Formula::Not(b(Formula::EU(b(y), b(x)))),
        }
    }

    #[test]
    fn labelling_agrees_with_naive_fixpoints() {
        let net = crate::net::tests::philosophers2();
        let ex = explore(
            &net,
            Options {
                store_edges: true,
                stop_when_unbounded: true,
            },
            &Limits::unlimited(),
            &mut NoObserver,
        );
        let k = Kripke::new(&net, &ex, Deadlocks::NoSuccessor);
        let mut r = Rng(0x1234_5678_9abc_def1);
        for i in 0..2000 {
            let f = random_formula(
                &mut r,
                4,
                net.num_places() as u32,
                net.num_transitions() as u32,
            );
            // half of the time with the state predicates evaluated in advance, as `check` does
            let atoms = if i % 2 == 0 {
                k.atoms(&f)
            } else {
                Atoms::new()
            };
            let l = k.label(&f, &atoms);
            let want = naive(&k, &f);
            assert_eq!(l.t, want, "{f:?}");
            assert_eq!(l.f, want.iter().map(|v| !v).collect::<Vec<_>>(), "{f:?}");
        }
    }
}
