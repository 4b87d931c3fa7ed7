//! The runs of an explored reachability graph as the LTL examinations read them, and the
//! LTL check of one formula on them.
//!
//! Runs that end in a deadlock: by default ([`FiniteRuns::Stutter`]) a maximal run that ends in
//! a marking without successor goes on forever in that marking (the deadlock repeats), so every
//! maximal run is an infinite word and `X p` holds at a deadlock exactly when `p` does. This is
//! the reading of the tools that compete in the MCC's LTL category (ITS-Tools passes
//! `-stutter-deadlock`, "Extend finite traces to infinite traces that stutter in final state") and
//! the one the MCC 2025 consensus agrees with (see the README: "LTL and deadlocks").
//! [`FiniteRuns::Drop`] keeps the infinite runs only, for comparisons.
//!
//! Partial graphs: only expanded states have their successors; an unexpanded state has none in
//! the product, and is not a deadlock. An accepting cycle found in the explored part is made of
//! real firings, so it is a real counterexample; finding none proves the formula when the graph
//! is complete, or when the search never entered a state whose successors are not all known
//! (the part of the product reachable from the initial state was then searched whole).
//!
//! Counterexamples near the initial marking first: the product is searched on growing prefixes
//! of the graph (the first 4,096 states in breadth-first order, then 8 times more each round,
//! up to the whole graph), each a part of the graph in the sense above (edges to later states
//! are left out, and the state is not a deadlock for that). Without that, the depth-first
//! search can spend its budget along one long path of a big or infinite graph before it comes
//! back to a short lasso; the rounds cost at most 1/7 more when there is no counterexample.

use crate::emptiness::{search, Structure, BYTES_PER_STATE};
use crate::explore::Exploration;
use crate::formula::PathFormula;
use crate::ltl::negation_automaton;
use crate::net::{Net, Tokens};
use std::time::Instant;

/// How a maximal run ending in a deadlock is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FiniteRuns {
    /// The deadlock marking repeats forever (MCC convention).
    Stutter,
    /// Finite maximal runs are not runs at all: only infinite ones count.
    Drop,
}

/// Largest automaton built for one formula.
const MAX_AUTOMATON_NODES: usize = 20_000;

/// First prefix of the graph searched (states in discovery order).
const FIRST_PREFIX: usize = 4096;

/// The explored graph, or its first states, with the finite-run convention applied, in CSR form.
pub struct Runs<'a> {
    net: &'a Net,
    ex: &'a Exploration,
    start: Vec<u64>,
    succ: Vec<u32>,
    /// Values of the current formula's atoms, `words` u64 per state.
    vals: Vec<u64>,
    words: usize,
    finite: FiniteRuns,
    /// States whose successor list here is not the whole one (not expanded, or edges cut).
    partial: Vec<bool>,
}

impl<'a> Runs<'a> {
    pub fn new(net: &'a Net, ex: &'a Exploration, finite: FiniteRuns) -> Runs<'a> {
        Runs {
            net,
            ex,
            start: Vec::new(),
            succ: Vec::new(),
            vals: Vec::new(),
            words: 0,
            finite,
            partial: Vec::new(),
        }
    }

    /// Keeps the states `0..limit` and the edges between them.
    fn restrict(&mut self, limit: usize) {
        self.start.clear();
        self.succ.clear();
        self.partial.clear();
        self.start.push(0);
        for s in 0..limit {
            let mut partial = true;
            if s < self.ex.expanded {
                let out = self.ex.successors(s);
                if out.is_empty() {
                    if self.finite == FiniteRuns::Stutter {
                        self.succ.push(s as u32); // the deadlock repeats
                    }
                    partial = false;
                } else {
                    let before = self.succ.len();
                    self.succ
                        .extend(out.iter().copied().filter(|&t| (t as usize) < limit));
                    partial = self.succ.len() - before < out.len();
                }
            }
            self.partial.push(partial);
            self.start.push(self.succ.len() as u64);
        }
    }

    /// Checks `A f` on the runs from the initial marking: `Some(true)` when no run violates it
    /// (graph complete), `Some(false)` with a violating run, `None` when undecided (partial graph,
    /// budget spent, automaton too large). The flag says whether the time or memory budget
    /// stopped the check (a retry with more could decide).
    pub fn check(
        &mut self,
        id: &str,
        f: &PathFormula,
        deadline: Instant,
        max_bytes: usize,
    ) -> (Option<bool>, bool) {
        let started = Instant::now();
        let (gba, atoms) = match negation_automaton(f, MAX_AUTOMATON_NODES) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("explorer: {id}: automaton not built: {e}");
                return (None, false);
            }
        };
        // the atoms' values in every state, decoded once
        let n = self.ex.num_states();
        self.words = atoms.preds.len().div_ceil(64).max(1);
        self.vals.clear();
        self.vals.resize(n * self.words, 0);
        let mut m: Vec<Tokens> = vec![0; self.net.num_places()];
        for s in 0..n {
            if s & 0xfff == 0 && Instant::now() >= deadline {
                return (None, true);
            }
            self.ex.marking(s, &mut m);
            for (k, p) in atoms.preds.iter().enumerate() {
                if p.eval_state(self.net, &m) {
                    self.vals[s * self.words + k / 64] |= 1 << (k % 64);
                }
            }
        }
        let mut limit = n.min(FIRST_PREFIX);
        let found = loop {
            self.restrict(limit);
            let r = search(self, &gba, &mut |states| {
                if Instant::now() >= deadline {
                    Err("time budget reached".to_string())
                } else if states.saturating_mul(BYTES_PER_STATE) >= max_bytes {
                    Err(format!("memory budget of {} MB reached", max_bytes >> 20))
                } else {
                    Ok(())
                }
            });
            match r {
                Ok(r) if !r.accepting && !r.exact && limit < n => {
                    limit = n.min(limit.saturating_mul(8))
                }
                r => break r,
            }
        };
        let what = format!(
            "explorer: {id}: {} atoms, automaton of the negation {} nodes, {} acceptance sets",
            atoms.preds.len(),
            gba.num_nodes(),
            gba.all_acc.count_ones()
        );
        let secs = started.elapsed().as_secs_f64();
        match found {
            Ok(r) => {
                eprintln!(
                    "{what}; {} product states (graph states 0..{limit}), {} in {secs:.3} s",
                    r.states,
                    if r.accepting {
                        "counterexample"
                    } else {
                        "no counterexample"
                    }
                );
                match r.accepting {
                    true => (Some(false), false),
                    false if r.exact => (Some(true), false),
                    false => (None, false),
                }
            }
            Err(e) => {
                eprintln!("{what}; product search stopped after {secs:.3} s: {e}");
                (None, true)
            }
        }
    }
}

impl Structure for Runs<'_> {
    /// Under the stutter reading a path that reaches a deadlock goes on in it, so every finite
    /// path of the net, also one through a state not expanded here, is the prefix of a run.
    fn prefixes_extend(&self) -> bool {
        self.finite == FiniteRuns::Stutter
    }

    fn complete(&self, s: u32) -> bool {
        !self.partial[s as usize]
    }

    fn successors(&self, s: u32) -> &[u32] {
        let s = s as usize;
        &self.succ[self.start[s] as usize..self.start[s + 1] as usize]
    }

    fn satisfies(&self, s: u32, label: &[(u32, bool)]) -> bool {
        let base = s as usize * self.words;
        label.iter().all(|&(a, p)| {
            let a = a as usize;
            ((self.vals[base + a / 64] >> (a % 64)) & 1 == 1) == p
        })
    }
}
