//! Bottom strongly connected components of the explored graph (for Liveness).

use crate::explore::Exploration;

/// The terminal SCCs of the explored graph whose states were all expanded: each is a
/// closed set of reachable states (no path leaves it), also when the exploration is partial.
pub fn closed_bottom_sccs(ex: &Exploration) -> Vec<Vec<u32>> {
    let n = ex.num_states();
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![UNSEEN; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut sccs: Vec<Vec<u32>> = Vec::new();
    let mut next_index = 0u32;
    // call stack of (state, position in its successor list)
    let mut call: Vec<(u32, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        call.push((root as u32, 0));
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        while let Some(top) = call.last_mut() {
            let v = top.0 as usize;
            let succ = ex.successors(v);
            if top.1 < succ.len() {
                let w = succ[top.1] as usize;
                top.1 += 1;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    call.push((w as u32, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    let u = u as usize;
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let id = sccs.len() as u32;
                    let mut members = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w as usize] = false;
                        comp[w as usize] = id;
                        members.push(w);
                        if w as usize == v {
                            break;
                        }
                    }
                    sccs.push(members);
                }
            }
        }
    }
    sccs.into_iter()
        .enumerate()
        .filter(|(id, members)| {
            members.iter().all(|&s| {
                (s as usize) < ex.expanded
                    && ex
                        .successors(s as usize)
                        .iter()
                        .all(|&d| comp[d as usize] == *id as u32)
            })
        })
        .map(|(_, m)| m)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::{explore, Limits, NoObserver, Options};
    use crate::net::tests::philosophers2;
    use crate::net::Net;

    #[test]
    fn philosophers_have_the_deadlock_as_only_bottom_scc() {
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
        let b = closed_bottom_sccs(&ex);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].len(), 1);
        assert!(ex.successors(b[0][0] as usize).is_empty());
    }

    #[test]
    fn cycle_is_one_bottom_scc_and_partial_graphs_have_none() {
        // a -> b -> c -> a
        let net = Net::new(
            "c".into(),
            vec!["a".into(), "b".into(), "c".into()],
            vec!["t0".into(), "t1".into(), "t2".into()],
            vec![1, 0, 0],
            &[(0, 0, 1), (1, 1, 1), (2, 2, 1)],
            &[(0, 1, 1), (1, 2, 1), (2, 0, 1)],
        )
        .unwrap();
        let opts = Options {
            store_edges: true,
            stop_when_unbounded: true,
        };
        let ex = explore(&net, opts, &Limits::unlimited(), &mut NoObserver);
        let b = closed_bottom_sccs(&ex);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].len(), 3);
        let ex = explore(
            &net,
            opts,
            &Limits {
                max_states: 2,
                ..Limits::unlimited()
            },
            &mut NoObserver,
        );
        assert!(closed_bottom_sccs(&ex).is_empty());
    }
}
