//! Karp-Miller coverability graph, for exact place bounds on unbounded nets.
//!
//! Nodes are omega-markings explored breadth first; a new node that strictly covers one of its
//! ancestors on the exploration tree gets omega on every place where it is larger. Identical
//! nodes are merged. When the construction completes:
//! - a place sum is unbounded iff some node has omega on one of its places;
//! - otherwise its maximum over the reachable markings is its maximum over the nodes (every
//!   reachable marking is covered by a node, and the finite part of every node is reached).
//!
//! A node with omega on a place is a proof of unboundedness even if the construction stops early.

use crate::explore::Limits;
use crate::net::{Net, Tokens, MAX_TOKENS};
use crate::store::{decode, encode, StateStore};
use std::time::Instant;

/// The omega value of a place.
pub const OMEGA: Tokens = u32::MAX;

/// The bound of a place sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Finite(u64),
    Infinite,
}

const MAX_WALK: usize = 1 << 16;

/// Bounds of each place set of `queries` (`None` where the construction could not decide),
/// and why it stopped early, if it did.
pub fn bounds(
    net: &Net,
    queries: &[Vec<u32>],
    limits: &Limits,
) -> (Vec<Option<Bound>>, Option<String>) {
    let np = net.num_places();
    let mut graph = Coverability {
        store: StateStore::new(),
        parent: Vec::new(),
    };
    let mut seen = Seen::new(queries);
    let mut enc = Vec::new();
    let mut cur = vec![0; np];
    let mut next = vec![0; np];
    let mut anc = vec![0; np];

    encode(&net.initial, &mut enc);
    let mut stopped: Option<String> = graph.store.insert(&enc).err();
    graph.parent.push(u32::MAX);
    seen.observe(&net.initial);

    let mut i = 0;
    'outer: while stopped.is_none() && i < graph.store.len() {
        if seen.inf.iter().all(|&b| b) {
            // every answer is known: no need to go on
            return (
                seen.inf.iter().map(|_| Some(Bound::Infinite)).collect(),
                None,
            );
        }
        stopped = graph.over_budget(i, limits);
        if stopped.is_some() {
            break;
        }
        decode(graph.store.get(i), &mut cur);
        for t in 0..net.num_transitions() {
            match fire_omega(net, t, &cur, &mut next) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(why) => {
                    stopped = Some(why);
                    break 'outer;
                }
            }
            graph.accelerate(i, &mut next, &mut anc);
            encode(&next, &mut enc);
            match graph.store.insert(&enc) {
                Ok((_, true)) => {
                    graph.parent.push(i as u32);
                    seen.observe(&next);
                }
                Ok((_, false)) => {}
                Err(e) => {
                    stopped = Some(e);
                    break 'outer;
                }
            }
        }
        i += 1;
    }
    eprintln!(
        "explorer: coverability graph: {} nodes, {} expanded",
        graph.store.len(),
        i
    );
    (seen.bounds(stopped.is_none()), stopped)
}

/// The coverability graph's nodes, with each node's parent on the exploration tree.
struct Coverability {
    store: StateStore,
    parent: Vec<u32>,
}

impl Coverability {
    /// Why the construction must stop before expanding node `i`, if it must (memory and time
    /// are checked every 256 nodes).
    fn over_budget(&self, i: usize, limits: &Limits) -> Option<String> {
        if self.store.len() >= limits.max_states {
            return Some(format!("state limit of {} reached", limits.max_states));
        }
        if i & 0xff == 0 {
            if self.store.heap_bytes() + self.parent.capacity() * 4 >= limits.max_bytes {
                return Some(format!(
                    "memory budget of {} MB reached",
                    limits.max_bytes >> 20
                ));
            }
            if limits.deadline.is_some_and(|d| Instant::now() >= d) {
                return Some("time budget reached".into());
            }
        }
        None
    }

    /// Acceleration of `next`, a successor of node `i`, against the ancestors on the tree (node
    /// `i` included): omega on every place where it strictly covers one of them.
    fn accelerate(&self, i: usize, next: &mut [Tokens], anc: &mut [Tokens]) {
        let mut a = i;
        for _ in 0..MAX_WALK {
            decode(self.store.get(a), anc);
            let covers = anc
                .iter()
                .zip(next.iter())
                .all(|(&x, &y)| y == OMEGA || (x != OMEGA && x <= y));
            if covers && *anc != *next {
                for (x, y) in anc.iter().zip(next.iter_mut()) {
                    if *y != OMEGA && *x < *y {
                        *y = OMEGA;
                    }
                }
            }
            let p = self.parent[a];
            if p == u32::MAX {
                break;
            }
            a = p as usize;
        }
    }
}

/// Transition `t` fired in the omega-marking `cur` into `next`: false when it is not enabled,
/// an error when a count would overflow.
fn fire_omega(net: &Net, t: usize, cur: &[Tokens], next: &mut [Tokens]) -> Result<bool, String> {
    if !net.pre[t]
        .iter()
        .all(|&(p, w)| cur[p as usize] == OMEGA || cur[p as usize] >= w)
    {
        return Ok(false);
    }
    next.copy_from_slice(cur);
    for &(p, d) in &net.delta[t] {
        let v = next[p as usize];
        if v == OMEGA {
            continue;
        }
        let nv = v as i64 + d;
        if nv < 0 || nv as u64 > MAX_TOKENS {
            return Err(format!(
                "token count overflow in place {}",
                net.place_ids[p as usize]
            ));
        }
        next[p as usize] = nv as Tokens;
    }
    Ok(true)
}

/// What the nodes seen so far say of each query: omega somewhere in it, or its largest sum.
struct Seen<'q> {
    queries: &'q [Vec<u32>],
    inf: Vec<bool>,
    max: Vec<u64>,
}

impl<'q> Seen<'q> {
    fn new(queries: &'q [Vec<u32>]) -> Seen<'q> {
        Seen {
            queries,
            inf: vec![false; queries.len()],
            max: vec![0u64; queries.len()],
        }
    }

    fn observe(&mut self, m: &[Tokens]) {
        for (q, places) in self.queries.iter().enumerate() {
            if places.iter().any(|&p| m[p as usize] == OMEGA) {
                self.inf[q] = true;
            } else {
                let s: u64 = places.iter().map(|&p| m[p as usize] as u64).sum();
                self.max[q] = self.max[q].max(s);
            }
        }
    }

    /// Each query's bound: infinite when a node has omega in it; its maximum when the
    /// construction completed; otherwise undecided.
    fn bounds(&self, complete: bool) -> Vec<Option<Bound>> {
        self.inf
            .iter()
            .zip(&self.max)
            .map(|(&is_inf, &m)| {
                if is_inf {
                    Some(Bound::Infinite)
                } else if complete {
                    Some(Bound::Finite(m))
                } else {
                    None
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_of_an_unbounded_net() {
        // t0: p -> p + q (q unbounded); t1: p + r -> s (r, s bounded by 1); u: q -> nothing
        let net = Net::new(
            "km".into(),
            vec!["p".into(), "q".into(), "r".into(), "s".into()],
            vec!["t0".into(), "t1".into(), "u".into()],
            vec![1, 0, 1, 0],
            &[(0, 0, 1), (1, 0, 1), (1, 2, 1), (2, 1, 1)],
            &[(0, 0, 1), (0, 1, 1), (1, 3, 1)],
        )
        .unwrap();
        let queries = vec![vec![0], vec![1], vec![2, 3], vec![0, 2, 3], vec![3, 1]];
        let (b, stopped) = bounds(&net, &queries, &Limits::unlimited());
        assert_eq!(stopped, None);
        assert_eq!(
            b,
            vec![
                Some(Bound::Finite(1)),
                Some(Bound::Infinite),
                Some(Bound::Finite(1)),
                Some(Bound::Finite(2)),
                Some(Bound::Infinite)
            ]
        );
    }

    #[test]
    fn bounded_net_gives_exact_bounds() {
        let net = crate::net::tests::philosophers2();
        let (b, stopped) = bounds(
            &net,
            &[vec![6, 7], vec![2, 3], vec![0, 1, 2, 3, 4, 5, 6, 7]],
            &Limits::unlimited(),
        );
        assert_eq!(stopped, None);
        assert_eq!(
            b,
            vec![
                Some(Bound::Finite(2)),
                Some(Bound::Finite(2)),
                Some(Bound::Finite(4))
            ]
        );
    }
}
