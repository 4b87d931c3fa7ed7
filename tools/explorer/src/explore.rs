//! Breadth-first exploration of the reachability graph, with resource limits and
//! on-the-fly detection of unboundedness.
//!
//! States are numbered in discovery order, and expanded in that order, so the states
//! `0..expanded` are exactly the expanded ones and their successor lists form a CSR array.

use crate::net::{Net, Tokens};
use crate::store::{decode, encode, StateStore};
use std::time::Instant;

/// Resource limits of one exploration.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Stop after this many states.
    pub max_states: usize,
    /// Stop when the estimated heap use of the exploration exceeds this many bytes.
    pub max_bytes: usize,
    /// Stop at this instant.
    pub deadline: Option<Instant>,
}

impl Limits {
    pub fn unlimited() -> Limits {
        Limits {
            max_states: usize::MAX,
            max_bytes: usize::MAX,
            deadline: None,
        }
    }
}

/// What to record.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Keep the successor lists (needed for CTL and liveness).
    pub store_edges: bool,
    /// Stop as soon as unboundedness is proven (otherwise go on until the limits).
    pub stop_when_unbounded: bool,
}

/// Why the exploration ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every reachable state was expanded: the graph is the whole reachability graph.
    Complete,
    /// The observer asked to stop.
    Stopped,
    /// A limit was reached (the message says which).
    Budget(String),
    /// A token count would not fit (the message says where).
    Overflow(String),
    /// Unboundedness was proven and `stop_when_unbounded` was set.
    Unbounded,
}

/// Callbacks during exploration; returning `true` stops the exploration.
pub trait Observer {
    /// A marking seen for the first time (the initial one included).
    fn on_state(&mut self, _index: u32, _m: &[Tokens]) -> bool {
        false
    }
    /// A state about to be expanded, with the transitions enabled in it.
    fn on_expand(&mut self, _index: u32, _m: &[Tokens], _enabled: &[u32]) -> bool {
        false
    }
}

/// An observer that observes nothing.
pub struct NoObserver;
impl Observer for NoObserver {}

/// The explored part of the reachability graph.
pub struct Exploration {
    pub store: StateStore,
    /// States `0..expanded` have been expanded (their successors are known).
    pub expanded: usize,
    /// CSR offsets into `edges` (length `expanded + 1`) when edges were stored.
    pub edge_start: Vec<u64>,
    /// Successor indices, one per firing (duplicates kept).
    pub edges: Vec<u32>,
    /// Number of firings from expanded states (duplicates included).
    pub num_edges: u64,
    /// Largest count of a place over the seen markings.
    pub max_in_place: Tokens,
    /// Largest token sum over the seen markings.
    pub max_per_marking: u64,
    /// Proof of unboundedness found (a marking strictly covering an ancestor).
    pub unbounded: Option<String>,
    pub outcome: Outcome,
    pub edges_stored: bool,
}

impl Exploration {
    pub fn is_complete(&self) -> bool {
        self.outcome == Outcome::Complete
    }

    pub fn num_states(&self) -> usize {
        self.store.len()
    }

    /// Successors of an expanded state (empty for a state that was not expanded).
    pub fn successors(&self, s: usize) -> &[u32] {
        if s < self.expanded && self.edges_stored {
            &self.edges[self.edge_start[s] as usize..self.edge_start[s + 1] as usize]
        } else {
            &[]
        }
    }

    pub fn marking(&self, s: usize, m: &mut [Tokens]) {
        decode(self.store.get(s), m);
    }
}

/// Per-state data for the ancestor-coverage check.
struct Ancestry {
    parent: Vec<u32>,
    sum: Vec<u64>,
    /// Minimum token sum over the state and its ancestors.
    min_sum: Vec<u64>,
    support: Vec<u64>,
}

/// Longest ancestor walk for one new state (a bound on the cost, not on soundness).
const MAX_WALK: usize = 1 << 14;

/// Explores the reachability graph of `net` breadth first.
pub fn explore(
    net: &Net,
    options: Options,
    limits: &Limits,
    observer: &mut dyn Observer,
) -> Exploration {
    let mut search = Search::new(net, options);
    if let Err(outcome) = search.add_initial(observer) {
        search.ex.outcome = outcome;
        return search.ex;
    }
    let mut i = 0usize;
    while i < search.ex.store.len() {
        if let Some(why) = search.over_budget(i, limits) {
            search.ex.outcome = Outcome::Budget(why);
            break;
        }
        if let Err(outcome) = search.expand(i, observer) {
            search.ex.outcome = outcome;
            break;
        }
        i += 1;
        search.expanded(i);
    }
    search.finish()
}

/// An exploration under way: what it found so far, the ancestry of its states, and the
/// buffers its steps reuse.
struct Search<'n> {
    net: &'n Net,
    options: Options,
    ex: Exploration,
    anc: Ancestry,
    enc: Vec<u8>,
    cur: Vec<Tokens>,
    next: Vec<Tokens>,
    other: Vec<Tokens>,
    enabled: Vec<u32>,
}

impl<'n> Search<'n> {
    fn new(net: &'n Net, options: Options) -> Search<'n> {
        let np = net.num_places();
        Search {
            net,
            options,
            ex: Exploration {
                store: StateStore::new(),
                expanded: 0,
                edge_start: Vec::new(),
                edges: Vec::new(),
                num_edges: 0,
                max_in_place: 0,
                max_per_marking: 0,
                unbounded: None,
                outcome: Outcome::Complete,
                edges_stored: options.store_edges,
            },
            anc: Ancestry {
                parent: Vec::new(),
                sum: Vec::new(),
                min_sum: Vec::new(),
                support: Vec::new(),
            },
            enc: Vec::new(),
            cur: vec![0; np],
            next: Vec::with_capacity(np),
            other: vec![0; np],
            enabled: Vec::with_capacity(net.num_transitions()),
        }
    }

    /// The initial marking, state 0.
    fn add_initial(&mut self, observer: &mut dyn Observer) -> Result<(), Outcome> {
        let net = self.net;
        let info = encode(&net.initial, &mut self.enc);
        self.ex.store.insert(&self.enc).map_err(Outcome::Budget)?;
        self.ex.max_in_place = info.max;
        self.ex.max_per_marking = info.sum;
        self.anc.parent.push(u32::MAX);
        self.anc.sum.push(info.sum);
        self.anc.min_sum.push(info.sum);
        self.anc.support.push(info.support);
        if self.options.store_edges {
            self.ex.edge_start.push(0);
        }
        if observer.on_state(0, &net.initial) {
            return Err(Outcome::Stopped);
        }
        Ok(())
    }

    /// Why the exploration must stop before expanding state `i`, if it must (the memory and
    /// time budgets are checked every 256 states).
    fn over_budget(&self, i: usize, limits: &Limits) -> Option<String> {
        if self.ex.store.len() >= limits.max_states {
            return Some(format!("state limit of {} reached", limits.max_states));
        }
        if i & 0xff == 0 {
            return over_limits(&self.ex, &self.anc, limits);
        }
        None
    }

    /// Fires every transition enabled in state `i`, adding the new states. An error ends the
    /// exploration with state `i` not expanded.
    fn expand(&mut self, i: usize, observer: &mut dyn Observer) -> Result<(), Outcome> {
        let net = self.net;
        decode(self.ex.store.get(i), &mut self.cur);
        self.enabled.clear();
        for t in 0..net.num_transitions() {
            if net.enabled(t, &self.cur) {
                self.enabled.push(t as u32);
            }
        }
        if observer.on_expand(i as u32, &self.cur, &self.enabled) {
            return Err(Outcome::Stopped);
        }
        for k in 0..self.enabled.len() {
            let t = self.enabled[k] as usize;
            self.fire(i, t, observer)?;
        }
        self.ex.num_edges += self.enabled.len() as u64;
        Ok(())
    }

    /// Transition `t` fired in state `i` (decoded in `cur`): its successor stored, and checked
    /// against its ancestors when it is new.
    fn fire(&mut self, i: usize, t: usize, observer: &mut dyn Observer) -> Result<(), Outcome> {
        let net = self.net;
        if let Err(o) = net.fire_into(t, &self.cur, &mut self.next) {
            return Err(Outcome::Overflow(format!(
                "firing {} would put more than {} tokens in place {}",
                net.transition_ids[t],
                crate::net::MAX_TOKENS,
                net.place_ids[o.place as usize]
            )));
        }
        let info = encode(&self.next, &mut self.enc);
        let (j, new) = self.ex.store.insert(&self.enc).map_err(Outcome::Budget)?;
        if self.options.store_edges {
            self.ex.edges.push(j);
        }
        if !new {
            return Ok(());
        }
        let (ex, anc) = (&mut self.ex, &mut self.anc);
        ex.max_in_place = ex.max_in_place.max(info.max);
        ex.max_per_marking = ex.max_per_marking.max(info.sum);
        let min_sum = anc.min_sum[i].min(info.sum);
        anc.parent.push(i as u32);
        anc.sum.push(info.sum);
        anc.min_sum.push(min_sum);
        anc.support.push(info.support);
        if ex.unbounded.is_none() && anc.min_sum[i] < info.sum {
            if let Some(a) = covered_ancestor(
                &ex.store,
                anc,
                i,
                &self.next,
                info.sum,
                info.support,
                &mut self.other,
            ) {
                ex.unbounded = Some(format!(
                    "state {j} (reached from state {a} by a path ending with {}) strictly covers its ancestor {a}",
                    net.transition_ids[t]
                ));
                if self.options.stop_when_unbounded {
                    return Err(Outcome::Unbounded);
                }
            }
        }
        if observer.on_state(j, &self.next) {
            return Err(Outcome::Stopped);
        }
        Ok(())
    }

    /// States `0..i` are expanded.
    fn expanded(&mut self, i: usize) {
        self.ex.expanded = i;
        if self.options.store_edges {
            self.ex.edge_start.push(self.ex.edges.len() as u64);
        }
    }

    fn finish(mut self) -> Exploration {
        let ex = &mut self.ex;
        if self.options.store_edges {
            // Drop the successors of a state whose expansion was interrupted.
            ex.edges.truncate(ex.edge_start[ex.expanded] as usize);
            ex.edge_start.truncate(ex.expanded + 1);
        }
        self.ex
    }
}

/// Index of an ancestor of the new marking `m` (whose parent is `parent`) that `m` strictly covers.
fn covered_ancestor(
    store: &StateStore,
    anc: &Ancestry,
    parent: usize,
    m: &[Tokens],
    sum: u64,
    support: u64,
    scratch: &mut [Tokens],
) -> Option<usize> {
    let mut a = parent;
    for _ in 0..MAX_WALK {
        if anc.min_sum[a] >= sum {
            return None; // no ancestor from here up has fewer tokens
        }
        // A strictly smaller marking has a smaller sum and a support included in m's.
        if anc.sum[a] < sum && anc.support[a] & !support == 0 {
            decode(store.get(a), scratch);
            if scratch.iter().zip(m).all(|(x, y)| x <= y) {
                return Some(a);
            }
        }
        let p = anc.parent[a];
        if p == u32::MAX {
            return None;
        }
        a = p as usize;
    }
    None
}

fn over_limits(ex: &Exploration, anc: &Ancestry, limits: &Limits) -> Option<String> {
    let bytes = ex.store.heap_bytes()
        + ex.edges.capacity() * 4
        + ex.edge_start.capacity() * 8
        + anc.parent.capacity() * 4
        + (anc.sum.capacity() + anc.min_sum.capacity() + anc.support.capacity()) * 8;
    if bytes >= limits.max_bytes {
        return Some(format!(
            "memory budget of {} MB reached",
            limits.max_bytes >> 20
        ));
    }
    if let Some(d) = limits.deadline {
        if Instant::now() >= d {
            return Some("time budget reached".to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::tests::philosophers2;

    fn opts(store_edges: bool) -> Options {
        Options {
            store_edges,
            stop_when_unbounded: true,
        }
    }

    #[test]
    fn two_philosophers_by_hand() {
        let net = philosophers2();
        let ex = explore(&net, opts(true), &Limits::unlimited(), &mut NoObserver);
        assert_eq!(ex.outcome, Outcome::Complete);
        assert_eq!(ex.num_states(), 6);
        assert_eq!(ex.num_edges, 8);
        assert_eq!(ex.edges.len(), 8);
        assert_eq!(ex.max_in_place, 1);
        assert_eq!(ex.max_per_marking, 4);
        assert!(ex.unbounded.is_none());
        // initial state: takeL0 and takeL1 enabled
        assert_eq!(ex.successors(0).len(), 2);
    }

    #[test]
    fn unbounded_net_is_detected() {
        // t: p -> p + q  (q grows forever)
        let net = Net::new(
            "u".into(),
            vec!["p".into(), "q".into()],
            vec!["t".into()],
            vec![1, 0],
            &[(0, 0, 1)],
            &[(0, 0, 1), (0, 1, 1)],
        )
        .unwrap();
        let ex = explore(&net, opts(false), &Limits::unlimited(), &mut NoObserver);
        assert_eq!(ex.outcome, Outcome::Unbounded);
        assert!(ex.unbounded.is_some());
        // going on until a limit instead
        let limits = Limits {
            max_states: 100,
            ..Limits::unlimited()
        };
        let ex = explore(
            &net,
            Options {
                store_edges: true,
                stop_when_unbounded: false,
            },
            &limits,
            &mut NoObserver,
        );
        assert!(matches!(ex.outcome, Outcome::Budget(_)));
        assert!(ex.unbounded.is_some());
        assert_eq!(ex.edge_start.len(), ex.expanded + 1);
    }

    #[test]
    fn bounded_but_growing_sum_is_not_called_unbounded() {
        // t0: a -> b + c ; t1: b + c -> a  (sum oscillates 1, 2)
        let net = Net::new(
            "b".into(),
            vec!["a".into(), "b".into(), "c".into()],
            vec!["t0".into(), "t1".into()],
            vec![1, 0, 0],
            &[(0, 0, 1), (1, 1, 1), (1, 2, 1)],
            &[(0, 1, 1), (0, 2, 1), (1, 0, 1)],
        )
        .unwrap();
        let ex = explore(&net, opts(false), &Limits::unlimited(), &mut NoObserver);
        assert_eq!(ex.outcome, Outcome::Complete);
        assert_eq!(ex.num_states(), 2);
        assert_eq!(ex.num_edges, 2);
        assert_eq!(ex.max_per_marking, 2);
    }

    #[test]
    fn limits_stop_the_exploration() {
        let net = philosophers2();
        let limits = Limits {
            max_states: 3,
            ..Limits::unlimited()
        };
        let ex = explore(&net, opts(true), &limits, &mut NoObserver);
        assert!(matches!(ex.outcome, Outcome::Budget(_)));
        assert!(ex.expanded < ex.num_states());
        assert_eq!(ex.edge_start.len(), ex.expanded + 1);
    }
}
