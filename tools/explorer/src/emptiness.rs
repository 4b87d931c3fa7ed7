//! Emptiness of the product of a state graph with a generalised Büchi automaton: is there an
//! infinite run from the initial state whose automaton part visits every acceptance set
//! infinitely often?
//!
//! The product is explored on the fly, depth first, with Couvreur's SCC-based algorithm
//! ("On-the-fly verification of linear temporal logic", FM 1999): a stack of SCC roots, each with
//! the union of the acceptance sets of its SCC; an edge back into the DFS stack merges the roots
//! above its target, and the search stops as soon as a merged SCC carries every set. Each
//! product state is entered once; a finished SCC is marked dead.
//!
//! Product state `(s, q)`: graph state `s` read in automaton node `q` (so `s` satisfies the
//! literals of `q`). Initial: `(0, q)` for every initial node `q` that state 0 satisfies. Edge
//! `(s, q) -> (t, r)` when `s -> t` in the graph, `q -> r` in the automaton and `t` satisfies `r`.
//!
//! Bad prefixes: when every finite path of the structure extends to an infinite one
//! ([`Structure::prefixes_extend`]), reaching a product state whose node has a successor that
//! accepts every word (no literal, an accepting self-loop: [`Gba::universal`]) already proves an
//! accepting run, without a cycle in the explored part: whatever the path does next is accepted. This is what lets a safety property be refuted on a graph that is not
//! completely explored (an unbounded net).

use crate::ltl::Gba;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The graph side of the product: state 0 is the initial state.
pub trait Structure {
    /// Successors of a state (the runs of the structure are its infinite paths).
    fn successors(&self, s: u32) -> &[u32];
    /// Does state `s` satisfy every literal (atom, positive) of `label`?
    fn satisfies(&self, s: u32, label: &[(u32, bool)]) -> bool;
    /// Does every finite path from the initial state extend to an infinite path of the system
    /// (also through states whose successors are not known here)?
    fn prefixes_extend(&self) -> bool {
        false
    }
    /// Are the successors of `s` all those of the system (not a part of them)?
    fn complete(&self, _s: u32) -> bool {
        true
    }
}

/// A multiplicative hasher for the u64 keys of product states (SipHash costs more than the
/// rest of a step).
#[derive(Default)]
pub struct KeyHasher(u64);
impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, k: u64) {
        let x = (k ^ (k >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 = x ^ (x >> 32);
    }
}

fn key(s: u32, q: u32) -> u64 {
    ((s as u64) << 32) | q as u64
}

/// One DFS frame: the product state and the position in its successor pairs.
struct Frame {
    s: u32,
    q: u32,
    /// index into the graph successors of `s`
    i: u32,
    /// index into the automaton successors of `q`
    j: u32,
}

/// Bytes per product state held (hash entry, live stack, roots, DFS frame), for budgets.
pub const BYTES_PER_STATE: usize = 48;

/// Is there an accepting run of the product of `k` and `a`? `check(states)` is called every
/// few thousand steps with the number of product states entered; an `Err` from it stops the
/// search (budget spent) and is returned.
pub fn accepting_run_exists(
    k: &impl Structure,
    a: &Gba,
    check: &mut dyn FnMut(usize) -> Result<(), String>,
) -> Result<bool, String> {
    search(k, a, check).map(|r| r.accepting)
}

/// What a search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Search {
    pub accepting: bool,
    /// Product states entered.
    pub states: usize,
    /// Every product state entered had all its successors ([`Structure::complete`]): then "no
    /// accepting run" holds for the whole system, not only for the part searched. (Only
    /// meaningful without an accepting run, which is always a real one.)
    pub exact: bool,
}

/// The automaton nodes from which every continuation is accepted (only where the structure's
/// prefixes always extend), and each node's successors with those doomed nodes first: the
/// depth-first search then tries the end of a bad prefix before going deeper.
fn doomed_first(k: &impl Structure, a: &Gba) -> (Vec<bool>, Vec<Vec<u32>>) {
    let doomed: Vec<bool> = if k.prefixes_extend() {
        (0..a.num_nodes())
            .map(|q| a.succ[q].iter().any(|&r| a.universal(r)))
            .collect()
    } else {
        vec![false; a.num_nodes()]
    };
    let ordered = a
        .succ
        .iter()
        .map(|rs| {
            let mut rs = rs.clone();
            rs.sort_by_key(|&r| !doomed[r as usize]);
            rs
        })
        .collect();
    (doomed, ordered)
}

/// The next successor pair (t, r) of the frame's (s, q) with t satisfying r's label, advancing
/// the frame's indices past it; None when (s, q) has no more.
fn next_pair(k: &impl Structure, a: &Gba, qs: &[u32], top: &mut Frame) -> Option<(u32, u32)> {
    let gs = k.successors(top.s);
    while (top.i as usize) < gs.len() {
        let t = gs[top.i as usize];
        while (top.j as usize) < qs.len() {
            let r = qs[top.j as usize];
            top.j += 1;
            if k.satisfies(t, &a.labels[r as usize]) {
                return Some((t, r));
            }
        }
        top.i += 1;
        top.j = 0;
    }
    None
}

/// [`accepting_run_exists`], with the number of product states entered.
pub fn search(
    k: &impl Structure,
    a: &Gba,
    check: &mut dyn FnMut(usize) -> Result<(), String>,
) -> Result<Search, String> {
    // dfs number of each entered product state; 0 once its SCC is finished (dead)
    let mut h: HashMap<u64, u32, BuildHasherDefault<KeyHasher>> = HashMap::default();
    let mut live: Vec<u64> = Vec::new();
    let mut roots: Vec<(u32, u64)> = Vec::new();
    let mut todo: Vec<Frame> = Vec::new();
    let mut counter: u32 = 0;
    let mut steps: usize = 0;
    let mut exact = true;

    let mut push = |s: u32,
                    q: u32,
                    h: &mut HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
                    live: &mut Vec<u64>,
                    roots: &mut Vec<(u32, u64)>,
                    todo: &mut Vec<Frame>| {
        exact &= k.complete(s);
        counter += 1;
        h.insert(key(s, q), counter);
        live.push(key(s, q));
        roots.push((counter, a.acc[q as usize]));
        todo.push(Frame { s, q, i: 0, j: 0 });
    };

    let (doomed, ordered) = doomed_first(k, a);
    for &q0 in &a.init {
        if h.contains_key(&key(0, q0)) || !k.satisfies(0, &a.labels[q0 as usize]) {
            continue;
        }
        if doomed[q0 as usize] {
            return Ok(Search {
                accepting: true,
                states: h.len(),
                exact: false,
            });
        }
        push(0, q0, &mut h, &mut live, &mut roots, &mut todo);
        while let Some(top) = todo.last_mut() {
            steps += 1;
            if steps & 0xfff == 0 {
                check(h.len())?;
            }
            let found = next_pair(k, a, &ordered[top.q as usize], top);
            match found {
                Some((_, r)) if doomed[r as usize] => {
                    return Ok(Search {
                        accepting: true,
                        states: h.len(),
                        exact: false,
                    })
                }
                Some((t, r)) => match h.get(&key(t, r)) {
                    None => push(t, r, &mut h, &mut live, &mut roots, &mut todo),
                    Some(0) => {} // a finished SCC
                    Some(&n) => {
                        // a cycle: merge every SCC above the one of (t, r)
                        let mut acc = 0;
                        while roots.last().is_some_and(|&(d, _)| d > n) {
                            acc |= roots.pop().map_or(0, |(_, m)| m);
                        }
                        let top_root = roots.last_mut().expect("a root below a live state");
                        top_root.1 |= acc;
                        if top_root.1 & a.all_acc == a.all_acc {
                            return Ok(Search {
                                accepting: true,
                                states: h.len(),
                                exact: false,
                            });
                        }
                    }
                },
                None => {
                    let Frame { s, q, .. } = todo.pop().expect("non-empty");
                    let me = key(s, q);
                    let d = h[&me];
                    if roots.last().is_some_and(|&(r, _)| r == d) {
                        roots.pop();
                        // the SCC of (s, q) is finished: its states are dead
                        while let Some(x) = live.pop() {
                            h.insert(x, 0);
                            if x == me {
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
    let states = h.len();
    Ok(Search {
        accepting: false,
        states,
        exact,
    })
}

/// The same question answered naively (all reachable product states, then reachability between
/// every pair): for tests on small products only.
#[cfg(test)]
pub fn naive_accepting_run_exists(k: &impl Structure, a: &Gba) -> bool {
    let mut index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut states: Vec<(u32, u32)> = Vec::new();
    for &q in &a.init {
        if k.satisfies(0, &a.labels[q as usize]) && !index.contains_key(&(0, q)) {
            index.insert((0, q), states.len());
            states.push((0, q));
        }
    }
    let mut edges: Vec<Vec<usize>> = Vec::new();
    let mut i = 0;
    while i < states.len() {
        let (s, q) = states[i];
        let mut out = Vec::new();
        for &t in k.successors(s) {
            for &r in &a.succ[q as usize] {
                if k.satisfies(t, &a.labels[r as usize]) {
                    let j = *index.entry((t, r)).or_insert_with(|| {
                        states.push((t, r));
                        states.len() - 1
                    });
                    out.push(j);
                }
            }
        }
        edges.push(out);
        i += 1;
    }
    let n = states.len();
    // reach[x][y]: a non-empty path from x to y
    let mut reach = vec![vec![false; n]; n];
    for (x, out) in edges.iter().enumerate() {
        for &y in out {
            reach[x][y] = true;
        }
    }
    for m in 0..n {
        let via = reach[m].clone();
        for row in reach.iter_mut() {
            if row[m] {
                for (r, &v) in row.iter_mut().zip(&via) {
                    *r |= v;
                }
            }
        }
    }
    // an accepting cycle: a state on a cycle whose SCC carries every set
    (0..n).any(|x| {
        reach[x][x] && {
            let acc = (0..n)
                .filter(|&y| reach[x][y] && reach[y][x])
                .fold(0u64, |m, y| m | a.acc[states[y].1 as usize]);
            acc & a.all_acc == a.all_acc
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph given by its successor lists; atom 0 holds in the states listed in `p`.
    struct G {
        succ: Vec<Vec<u32>>,
        p: Vec<bool>,
    }
    impl Structure for G {
        fn successors(&self, s: u32) -> &[u32] {
            &self.succ[s as usize]
        }
        fn satisfies(&self, s: u32, label: &[(u32, bool)]) -> bool {
            label.iter().all(|&(_, pos)| self.p[s as usize] == pos)
        }
    }

    /// Büchi automaton (one set) for G F p: node 0 (true), node 1 (p, accepting).
    fn gf_p() -> Gba {
        Gba {
            labels: vec![vec![], vec![(0, true)]],
            succ: vec![vec![0, 1], vec![0, 1]],
            init: vec![0, 1],
            acc: vec![0, 1],
            all_acc: 1,
        }
    }

    #[test]
    fn accepting_cycles_are_found_and_rejecting_ones_are_not() {
        // 0 -> 1 -> 2 -> 1, p only in 0: no run visits p infinitely often
        let g = G {
            succ: vec![vec![1], vec![2], vec![1]],
            p: vec![true, false, false],
        };
        let never = |_: usize| -> Result<(), String> { Ok(()) };
        assert!(!accepting_run_exists(&g, &gf_p(), &mut { never }).unwrap());
        assert!(!naive_accepting_run_exists(&g, &gf_p()));
        // p in 2 as well: the cycle 1 -> 2 -> 1 accepts
        let g = G {
            p: vec![true, false, true],
            ..g
        };
        assert!(accepting_run_exists(&g, &gf_p(), &mut { never }).unwrap());
        // a graph without any infinite path: nothing accepts, even with no acceptance set
        let g = G {
            succ: vec![vec![1], vec![]],
            p: vec![true, true],
        };
        let mut a = gf_p();
        a.all_acc = 0;
        assert!(!accepting_run_exists(&g, &a, &mut { never }).unwrap());
    }

    #[test]
    fn the_budget_check_stops_the_search() {
        // a long chain: 0 -> 1 -> ... -> n-1 (no cycle)
        let n = 100_000u32;
        let g = G {
            succ: (0..n)
                .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
                .collect(),
            p: vec![false; n as usize],
        };
        let r = accepting_run_exists(&g, &gf_p(), &mut |states| {
            if states > 5000 {
                Err("budget".into())
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err("budget".to_string()));
    }

    #[test]
    fn a_universal_node_refutes_without_a_cycle_when_prefixes_extend() {
        /// 0 -> 1, state 1 not expanded; atom 0 false in 1
        struct Open(bool);
        impl Structure for Open {
            fn successors(&self, s: u32) -> &[u32] {
                if s == 0 {
                    &[1]
                } else {
                    &[]
                }
            }
            fn satisfies(&self, s: u32, label: &[(u32, bool)]) -> bool {
                label.iter().all(|&(_, p)| p == (s == 0))
            }
            fn prefixes_extend(&self) -> bool {
                self.0
            }
        }
        // F not p: node 0 (true, waiting), node 1 (not p), node 2 (true, promise kept)
        let a = Gba {
            labels: vec![vec![], vec![(0, false)], vec![]],
            succ: vec![vec![0, 1], vec![2], vec![2]],
            init: vec![0, 1],
            acc: vec![0, 1, 1],
            all_acc: 1,
        };
        assert!(a.universal(2) && !a.universal(0) && !a.universal(1));
        let ok = &mut |_: usize| -> Result<(), String> { Ok(()) };
        assert!(accepting_run_exists(&Open(true), &a, ok).unwrap());
        assert!(!accepting_run_exists(&Open(false), &a, ok).unwrap());
    }

    #[test]
    fn no_accepting_run_is_exact_only_if_no_partial_state_was_entered() {
        /// 0 -> 1 -> 2 -> 2, state 2 not complete; atom 0 true in 0 and 1 only
        struct Chain;
        impl Structure for Chain {
            fn successors(&self, s: u32) -> &[u32] {
                [&[1u32][..], &[2], &[2]][s as usize]
            }
            fn satisfies(&self, s: u32, label: &[(u32, bool)]) -> bool {
                label.iter().all(|&(_, p)| p == (s < 2))
            }
            fn complete(&self, s: u32) -> bool {
                s < 2
            }
        }
        let ok = &mut |_: usize| -> Result<(), String> { Ok(()) };
        // G p (one node labelled p, looping, accepting): its runs die at state 2, entered never
        let gp = Gba {
            labels: vec![vec![(0, true)]],
            succ: vec![vec![0]],
            init: vec![0],
            acc: vec![1],
            all_acc: 1,
        };
        let r = search(&Chain, &gp, ok).unwrap();
        assert!(!r.accepting && r.exact && r.states == 2);
        // G true: state 2 is entered, and nothing accepts in the part known
        let gt = Gba {
            labels: vec![vec![]],
            succ: vec![vec![0]],
            init: vec![0],
            acc: vec![0],
            all_acc: 1,
        };
        let r = search(&Chain, &gt, ok).unwrap();
        assert!(!r.accepting && !r.exact);
    }

    /// Random graphs and random automata: Couvreur's search agrees with the naive check.
    #[test]
    fn agrees_with_the_naive_check_on_random_products() {
        let mut r = crate::ltl::tests::Rng(0x0123_4567_89ab_cdef);
        let mut yes = 0;
        for _ in 0..3000 {
            let n = 1 + r.next(7) as usize;
            let g = G {
                succ: (0..n)
                    .map(|_| (0..r.next(3)).map(|_| r.next(n as u64) as u32).collect())
                    .collect(),
                p: (0..n).map(|_| r.next(2) == 0).collect(),
            };
            let m = 1 + r.next(4) as usize;
            let sets = r.next(3);
            let a = Gba {
                labels: (0..m)
                    .map(|_| match r.next(3) {
                        0 => vec![],
                        1 => vec![(0, true)],
                        _ => vec![(0, false)],
                    })
                    .collect(),
                succ: (0..m)
                    .map(|_| {
                        (0..1 + r.next(2))
                            .map(|_| r.next(m as u64) as u32)
                            .collect()
                    })
                    .collect(),
                init: vec![0],
                acc: (0..m).map(|_| r.next(1 << sets)).collect(),
                all_acc: (1 << sets) - 1,
            };
            let fast = accepting_run_exists(&g, &a, &mut |_| Ok(())).unwrap();
            assert_eq!(fast, naive_accepting_run_exists(&g, &a), "{a:?}");
            yes += fast as usize;
        }
        assert!(yes > 300 && yes < 2700, "{yes}");
    }
}
