//! A place/transition net in the compact form the explorer fires.

use std::collections::HashMap;

/// Token count of one place. `u32::MAX` is reserved (the omega of the
/// coverability construction), so a finite count is at most `MAX_TOKENS`.
pub type Tokens = u32;

/// Largest finite token count a place may hold; a firing that would exceed it
/// is reported as an overflow instead of wrapping around.
pub const MAX_TOKENS: u64 = u32::MAX as u64 - 1;

/// A P/T net: places and transitions are numbered from 0 in document order.
#[derive(Debug, Clone)]
pub struct Net {
    /// The `id` attribute of the `<net>` element.
    pub name: String,
    /// Place ids (what formulas refer to).
    pub place_ids: Vec<String>,
    /// Transition ids (what formulas refer to).
    pub transition_ids: Vec<String>,
    /// Initial marking, one count per place.
    pub initial: Vec<Tokens>,
    /// Per transition: the input places with their arc weights (sorted by place, merged).
    pub pre: Vec<Vec<(u32, Tokens)>>,
    /// Per transition: the places whose count changes with the signed change (sorted, non-zero only).
    pub delta: Vec<Vec<(u32, i64)>>,
}

/// Why a firing could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    pub place: u32,
}

impl Net {
    /// Builds a net, merging parallel arcs and computing firing deltas.
    /// `pre_arcs` and `post_arcs` are (transition, place, weight).
    pub fn new(
        name: String,
        place_ids: Vec<String>,
        transition_ids: Vec<String>,
        initial: Vec<Tokens>,
        pre_arcs: &[(u32, u32, u64)],
        post_arcs: &[(u32, u32, u64)],
    ) -> Result<Net, String> {
        let nt = transition_ids.len();
        let mut pre_map: Vec<HashMap<u32, u64>> = vec![HashMap::new(); nt];
        let mut post_map: Vec<HashMap<u32, u64>> = vec![HashMap::new(); nt];
        for &(t, p, w) in pre_arcs {
            let e = pre_map[t as usize].entry(p).or_insert(0);
            *e = e.saturating_add(w);
        }
        for &(t, p, w) in post_arcs {
            let e = post_map[t as usize].entry(p).or_insert(0);
            *e = e.saturating_add(w);
        }
        let mut pre = Vec::with_capacity(nt);
        let mut delta = Vec::with_capacity(nt);
        for t in 0..nt {
            let mut inputs: Vec<(u32, Tokens)> = Vec::new();
            for (&p, &w) in &pre_map[t] {
                if w > MAX_TOKENS {
                    return Err(format!(
                        "arc weight {w} into transition {} exceeds {MAX_TOKENS}",
                        transition_ids[t]
                    ));
                }
                if w > 0 {
                    inputs.push((p, w as Tokens));
                }
            }
            inputs.sort_unstable();
            let mut changes: HashMap<u32, i64> = HashMap::new();
            for (&p, &w) in &pre_map[t] {
                *changes.entry(p).or_insert(0) -= w as i64;
            }
            for (&p, &w) in &post_map[t] {
                if w > MAX_TOKENS {
                    return Err(format!(
                        "arc weight {w} out of transition {} exceeds {MAX_TOKENS}",
                        transition_ids[t]
                    ));
                }
                *changes.entry(p).or_insert(0) += w as i64;
            }
            let mut changes: Vec<(u32, i64)> =
                changes.into_iter().filter(|&(_, d)| d != 0).collect();
            changes.sort_unstable();
            pre.push(inputs);
            delta.push(changes);
        }
        Ok(Net {
            name,
            place_ids,
            transition_ids,
            initial,
            pre,
            delta,
        })
    }

    pub fn num_places(&self) -> usize {
        self.place_ids.len()
    }

    pub fn num_transitions(&self) -> usize {
        self.transition_ids.len()
    }

    /// Is transition `t` enabled in marking `m`?
    #[inline]
    pub fn enabled(&self, t: usize, m: &[Tokens]) -> bool {
        self.pre[t].iter().all(|&(p, w)| m[p as usize] >= w)
    }

    /// Fires `t` (assumed enabled) from `m` into `out` (a copy of `m` is made first).
    #[inline]
    pub fn fire_into(&self, t: usize, m: &[Tokens], out: &mut Vec<Tokens>) -> Result<(), Overflow> {
        out.clear();
        out.extend_from_slice(m);
        for &(p, d) in &self.delta[t] {
            let v = out[p as usize] as i64 + d;
            if v < 0 || v as u64 > MAX_TOKENS {
                return Err(Overflow { place: p });
            }
            out[p as usize] = v as Tokens;
        }
        Ok(())
    }

    /// Index of places by id.
    pub fn place_index(&self) -> HashMap<&str, u32> {
        self.place_ids
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i as u32))
            .collect()
    }

    /// Index of transitions by id.
    pub fn transition_index(&self) -> HashMap<&str, u32> {
        self.transition_ids
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i as u32))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two dining philosophers: each philosopher i thinks (T_i), takes both forks
    /// (transition take_i needs fork_i and fork_{i+1}) to eat (E_i), and releases them.
    /// Hand count: states = {both think, 0 eats, 1 eats} ... see `philosophers2`.
    pub fn philosophers2() -> Net {
        // places: think0 think1 eat0 eat1 fork0 fork1
        // A simpler hand-countable variant used by the unit tests: left then right fork.
        // places: 0 think0, 1 think1, 2 hasLeft0, 3 hasLeft1, 4 eat0, 5 eat1, 6 fork0, 7 fork1
        // p0 takes fork0 (left) then fork1 (right); p1 takes fork1 (left) then fork0 (right).
        let places = [
            "think0", "think1", "left0", "left1", "eat0", "eat1", "fork0", "fork1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let transitions = [
            "takeL0", "takeL1", "takeR0", "takeR1", "release0", "release1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let initial = vec![1, 1, 0, 0, 0, 0, 1, 1];
        let pre = [
            (0, 0, 1),
            (0, 6, 1), // takeL0: think0 + fork0
            (1, 1, 1),
            (1, 7, 1), // takeL1: think1 + fork1
            (2, 2, 1),
            (2, 7, 1), // takeR0: left0 + fork1
            (3, 3, 1),
            (3, 6, 1), // takeR1: left1 + fork0
            (4, 4, 1), // release0
            (5, 5, 1), // release1
        ];
        let post = [
            (0, 2, 1),
            (1, 3, 1),
            (2, 4, 1),
            (3, 5, 1),
            (4, 0, 1),
            (4, 6, 1),
            (4, 7, 1),
            (5, 1, 1),
            (5, 6, 1),
            (5, 7, 1),
        ];
        Net::new("phil2".into(), places, transitions, initial, &pre, &post).expect("valid net")
    }

    #[test]
    fn firing_rule() {
        let net = philosophers2();
        let m0 = net.initial.clone();
        assert!(net.enabled(0, &m0));
        assert!(net.enabled(1, &m0));
        assert!(!net.enabled(2, &m0));
        let mut m1 = Vec::new();
        net.fire_into(0, &m0, &mut m1).unwrap();
        assert_eq!(m1, vec![0, 1, 1, 0, 0, 0, 0, 1]);
        assert!(net.enabled(2, &m1));
        assert!(!net.enabled(3, &m1));
    }

    #[test]
    fn parallel_arcs_merge_and_self_loops_vanish_from_delta() {
        let net = Net::new(
            "n".into(),
            vec!["a".into(), "b".into()],
            vec!["t".into()],
            vec![3, 0],
            &[(0, 0, 1), (0, 0, 1), (0, 1, 0)],
            &[(0, 1, 2), (0, 0, 2)],
        )
        .unwrap();
        assert_eq!(net.pre[0], vec![(0, 2)]);
        assert_eq!(net.delta[0], vec![(1, 2)]);
    }

    #[test]
    fn overflow_is_detected() {
        let net = Net::new(
            "n".into(),
            vec!["a".into()],
            vec!["t".into()],
            vec![(MAX_TOKENS - 1) as Tokens],
            &[],
            &[(0, 0, 5)],
        )
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(
            net.fire_into(0, &net.initial, &mut out),
            Err(Overflow { place: 0 })
        );
    }
}
