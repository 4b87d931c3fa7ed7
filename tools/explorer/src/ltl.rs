//! LTL to generalised Büchi automata: the construction of Gerth, Peled, Vardi and Wolper,
//! "Simple on-the-fly automatic verification of linear temporal logic" (PSTV 1995).
//!
//! A formula of the LTL examinations is checked by translating its *negation* into an automaton
//! that accepts exactly the runs violating it ([`translate`]); the product with the reachability
//! graph is then searched for an accepting cycle ([`crate::emptiness`]).
//!
//! - The maximal subformulas without temporal operator (a comparison of token counts, a
//!   fireability test, or a Boolean combination of them) are the atomic propositions: one
//!   [`Atoms`] entry each, evaluated on markings.
//! - The negated formula is put in negation normal form over `true`, `false`, literals, `∧`,
//!   `∨`, `X`, `U` and `R` (release), with `F a = true U a` and `G a = false R a`, and a few
//!   sound simplifications (constants, `F F a = F a`, `G G a = G a`, idempotence).
//! - The automaton is state-labelled: a run `q0 q1 ...` reads the word `s0 s1 ...` when each
//!   `si` satisfies the literals of `qi`. Acceptance is generalised Büchi, one set per `U`
//!   subformula `a U b`: the nodes where `a U b` is not promised or `b` holds.
//!
//! The words are infinite. How the MCC's finite runs (ending in a deadlock) become infinite is
//! the business of the product ([`crate::emptiness`]), not of the automaton.

use crate::formula::{Formula, PathFormula};
use std::collections::{BTreeSet, HashMap};

/// The atomic propositions of one formula: distinct state predicates.
#[derive(Debug, Default, Clone)]
pub struct Atoms {
    pub preds: Vec<Formula>,
}

impl Atoms {
    fn intern(&mut self, f: &Formula) -> u32 {
        if let Some(i) = self.preds.iter().position(|g| g == f) {
            return i as u32;
        }
        self.preds.push(f.clone());
        (self.preds.len() - 1) as u32
    }
}

/// A formula in negation normal form, hash-consed in an [`Arena`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    True,
    False,
    /// Atom number, and whether it appears positively.
    Lit(u32, bool),
    And(u32, u32),
    Or(u32, u32),
    Next(u32),
    Until(u32, u32),
    Release(u32, u32),
}

/// Hash-consed NNF formulas; a formula is its index.
#[derive(Debug, Default)]
pub struct Arena {
    ops: Vec<Op>,
    index: HashMap<Op, u32>,
}

impl Arena {
    pub fn op(&self, f: u32) -> Op {
        self.ops[f as usize]
    }

    fn intern(&mut self, op: Op) -> u32 {
        if let Some(&i) = self.index.get(&op) {
            return i;
        }
        let i = self.ops.len() as u32;
        self.ops.push(op);
        self.index.insert(op, i);
        i
    }

    pub fn tt(&mut self) -> u32 {
        self.intern(Op::True)
    }

    pub fn ff(&mut self) -> u32 {
        self.intern(Op::False)
    }

    pub fn lit(&mut self, atom: u32, positive: bool) -> u32 {
        self.intern(Op::Lit(atom, positive))
    }

    pub fn and(&mut self, a: u32, b: u32) -> u32 {
        match (self.op(a), self.op(b)) {
            (Op::False, _) | (_, Op::False) => self.ff(),
            (Op::True, _) => b,
            (_, Op::True) => a,
            (Op::Lit(x, p), Op::Lit(y, q)) if x == y && p != q => self.ff(),
            _ if a == b => a,
            _ => self.intern(Op::And(a.min(b), a.max(b))),
        }
    }

    pub fn or(&mut self, a: u32, b: u32) -> u32 {
        match (self.op(a), self.op(b)) {
            (Op::True, _) | (_, Op::True) => self.tt(),
            (Op::False, _) => b,
            (_, Op::False) => a,
            (Op::Lit(x, p), Op::Lit(y, q)) if x == y && p != q => self.tt(),
            _ if a == b => a,
            _ => self.intern(Op::Or(a.min(b), a.max(b))),
        }
    }

    pub fn next(&mut self, a: u32) -> u32 {
        match self.op(a) {
            // on infinite words X true = true and X false = false
            Op::True | Op::False => a,
            _ => self.intern(Op::Next(a)),
        }
    }

    pub fn until(&mut self, a: u32, b: u32) -> u32 {
        match (self.op(a), self.op(b)) {
            (_, Op::True) | (_, Op::False) | (Op::False, _) => b,
            // F F c = F c
            (Op::True, Op::Until(x, _)) if self.op(x) == Op::True => b,
            _ if a == b => a,
            _ => self.intern(Op::Until(a, b)),
        }
    }

    pub fn release(&mut self, a: u32, b: u32) -> u32 {
        match (self.op(a), self.op(b)) {
            (_, Op::True) | (_, Op::False) | (Op::True, _) => b,
            // G G c = G c
            (Op::False, Op::Release(x, _)) if self.op(x) == Op::False => b,
            _ if a == b => a,
            _ => self.intern(Op::Release(a, b)),
        }
    }

    /// `f` (or its negation) in negation normal form; state subformulas become literals.
    pub fn nnf(&mut self, f: &PathFormula, negate: bool, atoms: &mut Atoms) -> u32 {
        match f {
            PathFormula::State(Formula::Bool(b)) => {
                if *b != negate {
                    self.tt()
                } else {
                    self.ff()
                }
            }
            PathFormula::State(Formula::Not(g)) => {
                self.nnf(&PathFormula::State((**g).clone()), !negate, atoms)
            }
            PathFormula::State(p) => {
                let a = atoms.intern(p);
                self.lit(a, !negate)
            }
            PathFormula::Not(g) => self.nnf(g, !negate, atoms),
            PathFormula::And(gs) | PathFormula::Or(gs) => {
                // a conjunction, or a disjunction negated, is a conjunction in NNF
                let conj = matches!(f, PathFormula::And(_)) != negate;
                let mut acc = if conj { self.tt() } else { self.ff() };
                for g in gs {
                    let x = self.nnf(g, negate, atoms);
                    acc = if conj {
                        self.and(acc, x)
                    } else {
                        self.or(acc, x)
                    };
                }
                acc
            }
            // not X a = X not a (infinite words)
            PathFormula::Next(g) => {
                let x = self.nnf(g, negate, atoms);
                self.next(x)
            }
            PathFormula::Finally(g) => {
                let x = self.nnf(g, negate, atoms);
                if negate {
                    let f = self.ff();
                    self.release(f, x) // not F a = G not a
                } else {
                    let t = self.tt();
                    self.until(t, x)
                }
            }
            PathFormula::Globally(g) => {
                let x = self.nnf(g, negate, atoms);
                if negate {
                    let t = self.tt();
                    self.until(t, x) // not G a = F not a
                } else {
                    let f = self.ff();
                    self.release(f, x)
                }
            }
            PathFormula::Until(a, b) => {
                let x = self.nnf(a, negate, atoms);
                let y = self.nnf(b, negate, atoms);
                if negate {
                    self.release(x, y) // not (a U b) = (not a) R (not b)
                } else {
                    self.until(x, y)
                }
            }
        }
    }
}

/// A state-labelled generalised Büchi automaton.
#[derive(Debug, Clone)]
pub struct Gba {
    /// Per node: the literals (atom, positive) a state must satisfy to be read in this node.
    pub labels: Vec<Vec<(u32, bool)>>,
    /// Per node: its successor nodes.
    pub succ: Vec<Vec<u32>>,
    /// Initial nodes.
    pub init: Vec<u32>,
    /// Per node: the acceptance sets it belongs to (bit i = set i).
    pub acc: Vec<u64>,
    /// All acceptance sets (`(1 << count) - 1`; 0 when there is none: every cycle accepts).
    pub all_acc: u64,
}

impl Gba {
    pub fn num_nodes(&self) -> usize {
        self.labels.len()
    }

    /// A node that accepts every word: no literal, and a self-loop in every acceptance set.
    /// (A sufficient condition: GPVW's node for `true`, reached once every obligation is met.)
    pub fn universal(&self, q: u32) -> bool {
        let q = q as usize;
        self.labels[q].is_empty()
            && self.succ[q].contains(&(q as u32))
            && self.acc[q] & self.all_acc == self.all_acc
    }
}

/// Node name of the virtual initial predecessor.
const INIT: u32 = u32::MAX;

/// A node under construction (GPVW's Incoming, New, Old, Next).
#[derive(Clone)]
struct Pending {
    incoming: BTreeSet<u32>,
    new: BTreeSet<u32>,
    old: BTreeSet<u32>,
    next: BTreeSet<u32>,
}

/// Translates the NNF formula `f` of `arena` into a generalised Büchi automaton accepting the
/// infinite words that satisfy it. Fails when the automaton would exceed `max_nodes` nodes or
/// 64 acceptance sets.
pub fn translate(arena: &Arena, f: u32, max_nodes: usize) -> Result<Gba, String> {
    let (olds, incoming) = expand(arena, f, max_nodes)?;
    Ok(reduce(&gba_of_nodes(arena, &olds, &incoming)?))
}

/// GPVW's completed nodes: the Old set of each, and the nodes it is a successor of.
type Nodes = (Vec<BTreeSet<u32>>, Vec<BTreeSet<u32>>);

/// GPVW's node expansion of `f`: the Old set and the incoming nodes (`INIT` for the initial
/// predecessor) of every completed node. Fails beyond `max_nodes` nodes.
fn expand(arena: &Arena, f: u32, max_nodes: usize) -> Result<Nodes, String> {
    // completed nodes: (old, next) -> index, with their incoming sets
    let mut keys: HashMap<(BTreeSet<u32>, BTreeSet<u32>), u32> = HashMap::new();
    let mut olds: Vec<BTreeSet<u32>> = Vec::new();
    let mut incoming: Vec<BTreeSet<u32>> = Vec::new();
    let mut work: Vec<Pending> = vec![Pending {
        incoming: BTreeSet::from([INIT]),
        new: BTreeSet::from([f]),
        old: BTreeSet::new(),
        next: BTreeSet::new(),
    }];
    'nodes: while let Some(mut node) = work.pop() {
        loop {
            let Some(eta) = node.new.pop_first() else {
                // fully expanded: merge with an equal node, or create it and its successor
                let key = (node.old, node.next);
                if let Some(&i) = keys.get(&key) {
                    incoming[i as usize].extend(node.incoming);
                    continue 'nodes;
                }
                if olds.len() >= max_nodes {
                    return Err(format!("automaton larger than {max_nodes} nodes"));
                }
                let i = olds.len() as u32;
                let (old, next) = key.clone();
                keys.insert(key, i);
                olds.push(old);
                incoming.push(node.incoming);
                work.push(Pending {
                    incoming: BTreeSet::from([i]),
                    new: next,
                    old: BTreeSet::new(),
                    next: BTreeSet::new(),
                });
                continue 'nodes;
            };
            match arena.op(eta) {
                Op::False => continue 'nodes,
                Op::True => {
                    node.old.insert(eta);
                }
                Op::Lit(a, p) => {
                    if node.old.iter().any(|&g| arena.op(g) == Op::Lit(a, !p)) {
                        continue 'nodes; // contradiction
                    }
                    node.old.insert(eta);
                }
                Op::And(a, b) => {
                    for g in [a, b] {
                        if !node.old.contains(&g) {
                            node.new.insert(g);
                        }
                    }
                    node.old.insert(eta);
                }
                Op::Next(a) => {
                    node.old.insert(eta);
                    node.next.insert(a);
                }
                Op::Or(_, _) | Op::Until(_, _) | Op::Release(_, _) => {
                    // split: node 1 gets New1 (and Next1), node 2 gets New2
                    let (new1, next1, new2): (Vec<u32>, Option<u32>, Vec<u32>) = match arena.op(eta)
                    {
                        Op::Or(a, b) => (vec![a], None, vec![b]),
                        Op::Until(a, b) => (vec![a], Some(eta), vec![b]),
                        Op::Release(a, b) => (vec![b], Some(eta), vec![a, b]),
                        _ => unreachable!(),
                    };
                    node.old.insert(eta);
                    let mut second = node.clone();
                    for g in new2 {
                        if !second.old.contains(&g) {
                            second.new.insert(g);
                        }
                    }
                    work.push(second);
                    for g in new1 {
                        if !node.old.contains(&g) {
                            node.new.insert(g);
                        }
                    }
                    if let Some(x) = next1 {
                        node.next.insert(x);
                    }
                }
            }
        }
    }
    Ok((olds, incoming))
}

/// The automaton of GPVW's completed nodes: a node's literals label it, its incoming nodes are
/// its predecessors, and one acceptance set per until subformula `a U b` (the nodes without it or
/// with `b`). Fails beyond 64 acceptance sets.
fn gba_of_nodes(
    arena: &Arena,
    olds: &[BTreeSet<u32>],
    incoming: &[BTreeSet<u32>],
) -> Result<Gba, String> {
    // acceptance: one set per until subformula `a U b` occurring in a node
    let mut untils: BTreeSet<u32> = BTreeSet::new();
    for old in olds {
        untils.extend(
            old.iter()
                .copied()
                .filter(|&g| matches!(arena.op(g), Op::Until(_, _))),
        );
    }
    if untils.len() > 64 {
        return Err(format!("{} until subformulas (at most 64)", untils.len()));
    }
    let all_acc = if untils.len() == 64 {
        u64::MAX
    } else {
        (1u64 << untils.len()) - 1
    };
    let n = olds.len();
    let mut succ = vec![Vec::new(); n];
    let mut init = Vec::new();
    for (j, inc) in incoming.iter().enumerate() {
        for &i in inc {
            if i == INIT {
                init.push(j as u32);
            } else {
                succ[i as usize].push(j as u32);
            }
        }
    }
    let labels = olds
        .iter()
        .map(|old| {
            old.iter()
                .filter_map(|&g| match arena.op(g) {
                    Op::Lit(a, p) => Some((a, p)),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let acc = olds
        .iter()
        .map(|old| {
            let mut m = 0u64;
            for (k, &u) in untils.iter().enumerate() {
                let Op::Until(_, b) = arena.op(u) else {
                    unreachable!()
                };
                if !old.contains(&u) || old.contains(&b) {
                    m |= 1 << k;
                }
            }
            m
        })
        .collect();
    Ok(Gba {
        labels,
        succ,
        init,
        acc,
        all_acc,
    })
}

/// Two language-preserving reductions of GPVW's output, which has many redundant nodes (the
/// `X X X` of the MCC's formulas multiply them):
/// - nodes from which no accepting run starts (they reach no cycle carrying every acceptance
///   set) are removed;
/// - bisimilar nodes (same literals, same acceptance sets, successors in the same classes) are
///   merged: the coarsest such partition, by refinement.
pub fn reduce(a: &Gba) -> Gba {
    let n = a.num_nodes();
    // 1. live nodes: those that reach an accepting cycle of the automaton's own graph
    let comp = node_sccs(&a.succ);
    let ncomp = comp.iter().map(|&c| c + 1).max().unwrap_or(0);
    let mut comp_acc = vec![0u64; ncomp];
    let mut comp_cycle = vec![false; ncomp];
    for q in 0..n {
        comp_acc[comp[q]] |= a.acc[q];
        for &r in &a.succ[q] {
            if comp[r as usize] == comp[q] {
                comp_cycle[comp[q]] = true;
            }
        }
    }
    let mut live: Vec<bool> = (0..n)
        .map(|q| comp_cycle[comp[q]] && comp_acc[comp[q]] & a.all_acc == a.all_acc)
        .collect();
    let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
    for q in 0..n {
        for &r in &a.succ[q] {
            pred[r as usize].push(q as u32);
        }
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&q| live[q as usize]).collect();
    while let Some(r) = stack.pop() {
        for &q in &pred[r as usize] {
            if !live[q as usize] {
                live[q as usize] = true;
                stack.push(q);
            }
        }
    }
    // 2. coarsest bisimulation among the live nodes
    let mut block: Vec<usize> = vec![0; n];
    let mut count = 0;
    loop {
        // (literals, acceptance sets, successor classes) -> class
        type Signature = (Vec<(u32, bool)>, u64, Vec<usize>);
        let mut ids: HashMap<Signature, usize> = HashMap::new();
        let mut next = vec![usize::MAX; n];
        for q in (0..n).filter(|&q| live[q]) {
            let mut succ_blocks: Vec<usize> = a.succ[q]
                .iter()
                .filter(|&&r| live[r as usize])
                .map(|&r| block[r as usize])
                .collect();
            succ_blocks.sort_unstable();
            succ_blocks.dedup();
            let mut label = a.labels[q].clone();
            label.sort_unstable();
            let key = (label, a.acc[q] & a.all_acc, succ_blocks);
            let len = ids.len();
            next[q] = *ids.entry(key).or_insert(len);
        }
        let new_count = ids.len();
        block = next;
        if new_count == count {
            break;
        }
        count = new_count;
    }
    // the quotient
    let mut labels = vec![Vec::new(); count];
    let mut acc = vec![0u64; count];
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); count];
    for q in (0..n).filter(|&q| live[q]) {
        let b = block[q];
        labels[b] = a.labels[q].clone();
        acc[b] = a.acc[q] & a.all_acc;
        for &r in a.succ[q].iter().filter(|&&r| live[r as usize]) {
            succ[b].push(block[r as usize] as u32);
        }
    }
    for s in &mut succ {
        s.sort_unstable();
        s.dedup();
    }
    let mut init: Vec<u32> = a
        .init
        .iter()
        .filter(|&&q| live[q as usize])
        .map(|&q| block[q as usize] as u32)
        .collect();
    init.sort_unstable();
    init.dedup();
    Gba {
        labels,
        succ,
        init,
        acc,
        all_acc: a.all_acc,
    }
}

/// SCC number of every node (Tarjan, iterative).
fn node_sccs(succ: &[Vec<u32>]) -> Vec<usize> {
    let n = succ.len();
    const NONE: usize = usize::MAX;
    let (mut index, mut low, mut comp) = (vec![NONE; n], vec![0; n], vec![NONE; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut next, mut ncomp) = (Vec::new(), 0, 0);
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        let mut call = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if *i < succ[v].len() {
                let w = succ[v][*i] as usize;
                *i += 1;
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp[w] = ncomp;
                        if w == v {
                            break;
                        }
                    }
                    ncomp += 1;
                }
            }
        }
    }
    comp
}

/// The automaton of the runs that violate `A f`: the translation of `not f`.
pub fn negation_automaton(f: &PathFormula, max_nodes: usize) -> Result<(Gba, Atoms), String> {
    let mut arena = Arena::default();
    let mut atoms = Atoms::default();
    let neg = arena.nnf(f, true, &mut atoms);
    let gba = translate(&arena, neg, max_nodes)?;
    Ok((gba, atoms))
}

#[cfg(test)]
pub(crate) mod tests {
    //! The translation is checked against the semantics of LTL on ultimately periodic words
    //! (`u v^ω`), where a formula can be evaluated directly: for thousands of random formulas
    //! and words, the automaton accepts the word exactly when the formula holds on it.
    use super::*;
    use crate::emptiness::{accepting_run_exists, naive_accepting_run_exists, Structure};
    use crate::formula::IntExpr;

    /// A lasso word over atom valuations: positions `0..vals.len()`, and after the last one the
    /// word goes on at `loop_start`.
    pub struct Lasso {
        pub vals: Vec<u64>,
        succ: Vec<[u32; 1]>,
    }

    impl Lasso {
        pub fn new(vals: Vec<u64>, loop_start: usize) -> Lasso {
            let n = vals.len();
            let succ = (0..n)
                .map(|i| [if i + 1 < n { i + 1 } else { loop_start } as u32])
                .collect();
            Lasso { vals, succ }
        }
        fn next(&self, i: usize) -> usize {
            self.succ[i][0] as usize
        }
    }

    impl Structure for Lasso {
        fn successors(&self, s: u32) -> &[u32] {
            &self.succ[s as usize]
        }
        fn satisfies(&self, s: u32, label: &[(u32, bool)]) -> bool {
            label
                .iter()
                .all(|&(a, p)| ((self.vals[s as usize] >> a) & 1 == 1) == p)
        }
        /// every position has a successor (exercises the bad-prefix shortcut)
        fn prefixes_extend(&self) -> bool {
            true
        }
    }

    /// Truth of the NNF formula `f` at every position of the lasso.
    pub fn eval(arena: &Arena, f: u32, w: &Lasso) -> Vec<bool> {
        let n = w.vals.len();
        match arena.op(f) {
            Op::True => vec![true; n],
            Op::False => vec![false; n],
            Op::Lit(a, p) => w.vals.iter().map(|v| ((v >> a) & 1 == 1) == p).collect(),
            Op::And(a, b) => {
                let (x, y) = (eval(arena, a, w), eval(arena, b, w));
                x.iter().zip(&y).map(|(p, q)| *p && *q).collect()
            }
            Op::Or(a, b) => {
                let (x, y) = (eval(arena, a, w), eval(arena, b, w));
                x.iter().zip(&y).map(|(p, q)| *p || *q).collect()
            }
            Op::Next(a) => {
                let x = eval(arena, a, w);
                (0..n).map(|i| x[w.next(i)]).collect()
            }
            Op::Until(a, b) => {
                // least fixpoint of  r = b or (a and X r)
                let (x, y) = (eval(arena, a, w), eval(arena, b, w));
                let mut r = vec![false; n];
                for _ in 0..=n {
                    r = (0..n).map(|i| y[i] || (x[i] && r[w.next(i)])).collect();
                }
                r
            }
            Op::Release(a, b) => {
                // greatest fixpoint of  r = b and (a or X r)
                let (x, y) = (eval(arena, a, w), eval(arena, b, w));
                let mut r = vec![true; n];
                for _ in 0..=n {
                    r = (0..n).map(|i| y[i] && (x[i] || r[w.next(i)])).collect();
                }
                r
            }
        }
    }

    pub struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Atom `i` as a state predicate (`i <= i`, distinct per i); only its identity matters here.
    pub fn atom(i: u32) -> Formula {
        Formula::Le(IntExpr::Const(i as i128), IntExpr::Tokens(vec![i]))
    }

    pub fn random_path(r: &mut Rng, depth: u32, atoms: u32) -> PathFormula {
        let b = Box::new;
        if depth == 0 || r.next(5) == 0 {
            return match r.next(10) {
                0 => PathFormula::State(Formula::Bool(r.next(2) == 0)),
                _ => PathFormula::State(atom(r.next(atoms as u64) as u32)),
            };
        }
        let x = random_path(r, depth - 1, atoms);
        match r.next(8) {
            0 => PathFormula::Not(b(x)),
            1 => PathFormula::And(vec![x, random_path(r, depth - 1, atoms)]),
            2 => PathFormula::Or(vec![x, random_path(r, depth - 1, atoms)]),
            3 => PathFormula::Next(b(x)),
            4 => PathFormula::Finally(b(x)),
            5 => PathFormula::Globally(b(x)),
            _ => PathFormula::Until(b(x), b(random_path(r, depth - 1, atoms))),
        }
    }

    /// Bit of atom `atom(i)` in the valuation of a lasso, through the formula's atom table.
    fn remap(vals: &[u64], atoms: &Atoms) -> Vec<u64> {
        vals.iter()
            .map(|v| {
                let mut out = 0;
                for (k, p) in atoms.preds.iter().enumerate() {
                    let Formula::Le(IntExpr::Const(i), _) = p else {
                        panic!("unexpected atom {p:?}")
                    };
                    if (v >> *i) & 1 == 1 {
                        out |= 1 << k;
                    }
                }
                out
            })
            .collect()
    }

    #[test]
    fn automata_accept_exactly_the_lassos_that_satisfy_the_formula() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        let mut accepted = 0;
        for _ in 0..1500 {
            let f = random_path(&mut r, 4, 3);
            let mut arena = Arena::default();
            let mut atoms = Atoms::default();
            let pos = arena.nnf(&f, false, &mut atoms);
            let neg = arena.nnf(&f, true, &mut atoms);
            let a_pos = translate(&arena, pos, 10_000).expect("translate");
            let a_neg = translate(&arena, neg, 10_000).expect("translate");
            for _ in 0..6 {
                let len = 1 + r.next(5) as usize;
                let loop_start = r.next(len as u64) as usize;
                let raw: Vec<u64> = (0..len).map(|_| r.next(8)).collect();
                let w = Lasso::new(remap(&raw, &atoms), loop_start);
                let holds = eval(&arena, pos, &w)[0];
                let holds_neg = eval(&arena, neg, &w)[0];
                assert_eq!(holds, !holds_neg, "NNF of the negation, {f:?}");
                let acc_pos = accepting_run_exists(&w, &a_pos, &mut |_| Ok(())).unwrap();
                let acc_neg = accepting_run_exists(&w, &a_neg, &mut |_| Ok(())).unwrap();
                assert_eq!(acc_pos, holds, "{f:?} on {raw:?} loop at {loop_start}");
                assert_eq!(acc_neg, !holds, "not {f:?} on {raw:?} loop at {loop_start}");
                assert_eq!(naive_accepting_run_exists(&w, &a_pos), acc_pos);
                assert_eq!(naive_accepting_run_exists(&w, &a_neg), acc_neg);
                checked += 1;
                accepted += acc_pos as usize;
            }
        }
        // both outcomes are well represented
        assert!(
            accepted > checked / 5 && accepted < checked * 4 / 5,
            "{accepted} of {checked}"
        );
    }

    #[test]
    fn small_automata_by_hand() {
        let p = || PathFormula::State(atom(0));
        // not G p = F not p: one node waiting (true, with the until promised), one where not p
        // holds; the promise is fulfilled only by reading not p
        let (a, atoms) = negation_automaton(&PathFormula::Globally(Box::new(p())), 100).unwrap();
        assert_eq!(atoms.preds.len(), 1);
        assert_eq!(a.all_acc, 1);
        assert!(a.num_nodes() <= 3, "{a:?}");
        // not X p = X not p
        let (a, _) = negation_automaton(&PathFormula::Next(Box::new(p())), 100).unwrap();
        assert_eq!(a.all_acc, 0);
        assert!(a.init.iter().all(|&q| a.labels[q as usize].is_empty()));
        // A true: its negation is false, no node at all
        let (a, _) = negation_automaton(&PathFormula::State(Formula::Bool(true)), 100).unwrap();
        assert_eq!(a.num_nodes(), 0);
        assert!(a.init.is_empty());
        // p and not p inside one state predicate stay one atom
        let both = PathFormula::State(Formula::And(vec![atom(0), Formula::Not(Box::new(atom(0)))]));
        let (_, atoms) = negation_automaton(&PathFormula::Finally(Box::new(both)), 100).unwrap();
        assert_eq!(atoms.preds.len(), 1);
    }

    #[test]
    fn node_cap_is_an_error_not_a_wrong_answer() {
        let mut f = PathFormula::State(atom(0));
        for i in 1..12 {
            f = PathFormula::Until(
                Box::new(f),
                Box::new(PathFormula::Globally(Box::new(PathFormula::Finally(
                    Box::new(PathFormula::State(atom(i))),
                )))),
            );
        }
        let e = negation_automaton(&f, 50).unwrap_err();
        assert!(e.contains("larger than 50 nodes"), "{e}");
    }

    #[test]
    fn simplifications_are_sound_rewrites() {
        let mut a = Arena::default();
        let p = a.lit(0, true);
        let np = a.lit(0, false);
        let t = a.tt();
        let f = a.ff();
        assert_eq!(a.and(p, np), f);
        assert_eq!(a.or(p, np), t);
        let fp = a.until(t, p);
        assert_eq!(a.until(t, fp), fp);
        let gp = a.release(f, p);
        assert_eq!(a.release(f, gp), gp);
        assert_eq!(a.until(p, p), p);
        assert_eq!(a.next(t), t);
        assert_eq!(a.until(f, p), p);
        assert_eq!(a.release(t, p), p);
    }
}
