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
//! real firings, so it is a real counterexample; finding none proves the formula only when the
//! graph is complete.

use crate::emptiness::{accepting_run_exists, Structure, BYTES_PER_STATE};
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

/// The explored graph with the finite-run convention applied, in CSR form.
pub struct Runs<'a> {
    net: &'a Net,
    ex: &'a Exploration,
    start: Vec<u64>,
    succ: Vec<u32>,
    /// Values of the current formula's atoms, `words` u64 per state.
    vals: Vec<u64>,
    words: usize,
    finite: FiniteRuns,
}

impl<'a> Runs<'a> {
    pub fn new(net: &'a Net, ex: &'a Exploration, finite: FiniteRuns) -> Runs<'a> {
        let n = ex.num_states();
        let mut start = Vec::with_capacity(n + 1);
        let mut succ = Vec::with_capacity(ex.edges.len() + 16);
        start.push(0);
        for s in 0..n {
            if s < ex.expanded {
                let out = ex.successors(s);
                if out.is_empty() {
                    if finite == FiniteRuns::Stutter {
                        succ.push(s as u32);
                    }
                } else {
                    succ.extend_from_slice(out);
                }
            }
            start.push(succ.len() as u64);
        }
        Runs {
            net,
            ex,
            start,
            succ,
            vals: Vec::new(),
            words: 0,
            finite,
        }
    }

    /// Checks `A f` on the runs from the initial marking: `Some(true)` when no run violates it
    /// (graph complete), `Some(false)` with a violating run, `None` when undecided (partial graph,
    /// budget spent, automaton too large).
    pub fn check(&mut self, f: &PathFormula, deadline: Instant, max_bytes: usize) -> Option<bool> {
        let (gba, atoms) = match negation_automaton(f, MAX_AUTOMATON_NODES) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("explorer: LTL automaton not built: {e}");
                return None;
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
                return None;
            }
            self.ex.marking(s, &mut m);
            for (k, p) in atoms.preds.iter().enumerate() {
                if p.eval_state(self.net, &m) {
                    self.vals[s * self.words + k / 64] |= 1 << (k % 64);
                }
            }
        }
        let found = accepting_run_exists(self, &gba, &mut |states| {
            if Instant::now() >= deadline {
                Err("time budget reached".to_string())
            } else if states.saturating_mul(BYTES_PER_STATE) >= max_bytes {
                Err(format!("memory budget of {} MB reached", max_bytes >> 20))
            } else {
                Ok(())
            }
        });
        match found {
            Ok(true) => Some(false),
            Ok(false) if self.ex.is_complete() => Some(true),
            Ok(false) => None,
            Err(e) => {
                eprintln!("explorer: LTL product search stopped: {e}");
                None
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
