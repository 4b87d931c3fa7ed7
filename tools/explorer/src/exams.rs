//! The MCC examinations (rules E-1.2 to E-1.6) on top of the exploration, and their answer lines.

use crate::ctl::{Deadlocks, Kripke};
use crate::explore::{explore, Exploration, Limits, Observer, Options, Outcome};
use crate::formula::{parse_property_file, Formula, Logic, Property, Query};
use crate::karp_miller::{self, Bound};
use crate::net::{Net, Tokens};
use crate::runs::{FiniteRuns, Runs};
use crate::scc::closed_bottom_sccs;
use std::path::Path;
use std::time::{Duration, Instant};

/// Techniques reported on every answer line (rule E-1.12).
pub const TECHNIQUES: &str = "TECHNIQUES EXPLICIT";

/// The examinations the explorer takes part in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Examination {
    StateSpace,
    ReachabilityDeadlock,
    OneSafe,
    QuasiLiveness,
    StableMarking,
    Liveness,
    UpperBounds,
    ReachabilityCardinality,
    ReachabilityFireability,
    CTLCardinality,
    CTLFireability,
    LTLCardinality,
    LTLFireability,
}

impl Examination {
    /// `None` for an examination the explorer does not compete in (unknown names).
    pub fn from_name(name: &str) -> Option<Examination> {
        use Examination::*;
        Some(match name {
            "StateSpace" => StateSpace,
            "ReachabilityDeadlock" => ReachabilityDeadlock,
            "OneSafe" => OneSafe,
            "QuasiLiveness" => QuasiLiveness,
            "StableMarking" => StableMarking,
            "Liveness" => Liveness,
            "UpperBounds" => UpperBounds,
            "ReachabilityCardinality" => ReachabilityCardinality,
            "ReachabilityFireability" => ReachabilityFireability,
            "CTLCardinality" => CTLCardinality,
            "CTLFireability" => CTLFireability,
            "LTLCardinality" => LTLCardinality,
            "LTLFireability" => LTLFireability,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use Examination::*;
        match self {
            StateSpace => "StateSpace",
            ReachabilityDeadlock => "ReachabilityDeadlock",
            OneSafe => "OneSafe",
            QuasiLiveness => "QuasiLiveness",
            StableMarking => "StableMarking",
            Liveness => "Liveness",
            UpperBounds => "UpperBounds",
            ReachabilityCardinality => "ReachabilityCardinality",
            ReachabilityFireability => "ReachabilityFireability",
            CTLCardinality => "CTLCardinality",
            CTLFireability => "CTLFireability",
            LTLCardinality => "LTLCardinality",
            LTLFireability => "LTLFireability",
        }
    }

    /// The formula file of the examination, if it has one.
    pub fn formula_file(self) -> Option<String> {
        use Examination::*;
        match self {
            UpperBounds
            | ReachabilityCardinality
            | ReachabilityFireability
            | CTLCardinality
            | CTLFireability
            | LTLCardinality
            | LTLFireability => Some(format!("{}.xml", self.name())),
            _ => None,
        }
    }

    /// How the examination's formula file is read.
    pub fn logic(self) -> Logic {
        match self {
            Examination::LTLCardinality | Examination::LTLFireability => Logic::Ltl,
            _ => Logic::Ctl,
        }
    }
}

/// Resources granted to one run.
#[derive(Debug, Clone)]
pub struct Budget {
    pub start: Instant,
    /// BK_TIME_CONFINEMENT
    pub time: Duration,
    /// BK_MEMORY_CONFINEMENT, in bytes
    pub memory: usize,
    /// Optional cap on the number of states (EXPLORER_MAX_STATES).
    pub max_states: Option<usize>,
    /// Deadlocks in CTL (EXPLORER_CTL_DEADLOCKS).
    pub deadlocks: Deadlocks,
    /// Finite runs in LTL (EXPLORER_LTL_DEADLOCKS).
    pub finite_runs: FiniteRuns,
}

impl Budget {
    /// Limits for an exploration that may use `share` of the memory and must end by `time_share`
    /// of the time confinement.
    fn deadline(&self, time_share: f64) -> Instant {
        self.start + self.time.mul_f64(time_share)
    }

    fn limits(&self, share: f64, time_share: f64) -> Limits {
        Limits {
            max_states: self.max_states.unwrap_or(usize::MAX),
            max_bytes: (self.memory as f64 * share) as usize,
            deadline: Some(self.deadline(time_share)),
        }
    }
}

/// The answer of a run: lines for stdout, and diagnostics already written to stderr.
pub struct Answer {
    pub lines: Vec<String>,
}

fn global(exam: Examination, value: Option<bool>) -> Vec<String> {
    match value {
        Some(v) => vec![format!("FORMULA {} {} {TECHNIQUES}", exam.name(), tf(v))],
        None => vec!["CANNOT_COMPUTE".to_string()],
    }
}

fn tf(v: bool) -> &'static str {
    if v {
        "TRUE"
    } else {
        "FALSE"
    }
}

fn report(exam: Examination, ex: &Exploration, started: Instant) {
    let why = match &ex.outcome {
        Outcome::Complete => "complete".to_string(),
        Outcome::Stopped => "stopped early (answer found)".to_string(),
        Outcome::Budget(m) => format!("incomplete: {m}"),
        Outcome::Overflow(m) => format!("incomplete: {m}"),
        Outcome::Unbounded => "stopped: net is unbounded".to_string(),
    };
    eprintln!(
        "explorer: {}: {} states ({} expanded), {} firings, {why}, {:.3} s",
        exam.name(),
        ex.num_states(),
        ex.expanded,
        ex.num_edges,
        started.elapsed().as_secs_f64()
    );
    if let Some(w) = &ex.unbounded {
        eprintln!("explorer: unbounded: {w}");
    }
}

/// Runs one examination on a parsed net; `dir` holds the formula files.
pub fn run(exam: Examination, net: &Net, dir: &Path, budget: &Budget) -> Result<Answer, String> {
    let props = match exam.formula_file() {
        Some(file) => {
            let path = dir.join(&file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let props = parse_property_file(&text, net, exam.logic())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            for p in &props {
                if let Err(e) = &p.query {
                    eprintln!("explorer: formula {}: {e}", p.id);
                }
            }
            props
        }
        None => Vec::new(),
    };
    let started = Instant::now();
    let lines = match exam {
        Examination::StateSpace => state_space(net, budget, started),
        Examination::ReachabilityDeadlock => {
            let mut o = DeadlockObserver { found: false };
            let ex = explore(net, opts(false, false), &budget.limits(0.6, 0.8), &mut o);
            report(exam, &ex, started);
            global(
                exam,
                if o.found {
                    Some(true)
                } else {
                    ex.is_complete().then_some(false)
                },
            )
        }
        Examination::OneSafe => {
            let mut o = OneSafeObserver { violated: false };
            let ex = explore(net, opts(false, true), &budget.limits(0.6, 0.8), &mut o);
            report(exam, &ex, started);
            let v = if o.violated || ex.max_in_place > 1 || ex.outcome == Outcome::Unbounded {
                Some(false)
            } else {
                ex.is_complete().then_some(true)
            };
            global(exam, v)
        }
        Examination::QuasiLiveness => {
            let mut o = FiredObserver::new(net, false);
            let ex = explore(net, opts(false, false), &budget.limits(0.6, 0.8), &mut o);
            report(exam, &ex, started);
            let v = if o.missing_transitions == 0 {
                Some(true)
            } else {
                ex.is_complete().then_some(false)
            };
            global(exam, v)
        }
        Examination::StableMarking => {
            let mut o = FiredObserver::new(net, true);
            let ex = explore(net, opts(false, false), &budget.limits(0.6, 0.8), &mut o);
            report(exam, &ex, started);
            // Stable places are those no fired transition changes; once every transition
            // has fired the set is final.
            let v = if o.unstable_places == net.num_places() {
                Some(false)
            } else {
                (o.missing_transitions == 0 || ex.is_complete()).then_some(true)
            };
            global(exam, v)
        }
        Examination::Liveness => liveness(net, budget, started),
        Examination::UpperBounds => upper_bounds(net, &props, budget, started),
        Examination::ReachabilityCardinality
        | Examination::ReachabilityFireability
        | Examination::CTLCardinality
        | Examination::CTLFireability => formulas(exam, net, &props, budget, started),
        Examination::LTLCardinality | Examination::LTLFireability => {
            ltl_formulas(exam, net, &props, budget, started)
        }
    };
    Ok(Answer { lines })
}

fn opts(store_edges: bool, stop_when_unbounded: bool) -> Options {
    Options {
        store_edges,
        stop_when_unbounded,
    }
}

fn state_space(net: &Net, budget: &Budget, started: Instant) -> Vec<String> {
    let ex = explore(
        net,
        opts(false, true),
        &budget.limits(0.6, 0.8),
        &mut crate::explore::NoObserver,
    );
    report(Examination::StateSpace, &ex, started);
    let values: [String; 4] = match ex.outcome {
        Outcome::Complete => [
            ex.num_states().to_string(),
            ex.num_edges.to_string(),
            ex.max_in_place.to_string(),
            ex.max_per_marking.to_string(),
        ],
        Outcome::Unbounded => std::array::from_fn(|_| "+inf".to_string()),
        _ => return vec!["CANNOT_COMPUTE".to_string()],
    };
    [
        "STATES",
        "TRANSITIONS",
        "MAX_TOKEN_IN_PLACE",
        "MAX_TOKEN_PER_MARKING",
    ]
    .iter()
    .zip(values)
    .map(|(k, v)| format!("STATE_SPACE {k} {v} {TECHNIQUES}"))
    .collect()
}

fn liveness(net: &Net, budget: &Budget, started: Instant) -> Vec<String> {
    let exam = Examination::Liveness;
    if net.num_transitions() == 0 {
        return global(exam, Some(true));
    }
    let mut o = DeadlockObserver { found: false };
    let ex = explore(net, opts(true, false), &budget.limits(0.4, 0.5), &mut o);
    report(exam, &ex, started);
    if o.found {
        return global(exam, Some(false)); // a deadlock is a bottom SCC where nothing is enabled
    }
    let mut m: Vec<Tokens> = vec![0; net.num_places()];
    for scc in closed_bottom_sccs(&ex) {
        let mut seen = vec![false; net.num_transitions()];
        for &s in &scc {
            ex.marking(s as usize, &mut m);
            for (t, flag) in seen.iter_mut().enumerate() {
                if !*flag && net.enabled(t, &m) {
                    *flag = true;
                }
            }
        }
        if let Some(t) = seen.iter().position(|&b| !b) {
            eprintln!(
                "explorer: transition {} can never fire again from a bottom SCC of {} states",
                net.transition_ids[t],
                scc.len()
            );
            return global(exam, Some(false));
        }
    }
    global(exam, ex.is_complete().then_some(true))
}

fn upper_bounds(net: &Net, props: &[Property], budget: &Budget, started: Instant) -> Vec<String> {
    let queries: Vec<Option<&Vec<u32>>> = props
        .iter()
        .map(|p| match &p.query {
            Ok(Query::Bound(ps)) => Some(ps),
            _ => None,
        })
        .collect();
    let mut o = BoundObserver {
        places: queries
            .iter()
            .map(|q| q.cloned().unwrap_or_default())
            .collect(),
        max: vec![0; props.len()],
    };
    let ex = explore(net, opts(false, true), &budget.limits(0.6, 0.5), &mut o);
    report(Examination::UpperBounds, &ex, started);
    let results: Vec<Option<Bound>> = match ex.outcome {
        Outcome::Complete => o.max.iter().map(|&m| Some(Bound::Finite(m))).collect(),
        Outcome::Unbounded => {
            let (b, stopped) = karp_miller::bounds(net, &o.places, &budget.limits(0.6, 0.85));
            if let Some(why) = stopped {
                eprintln!("explorer: coverability graph incomplete: {why}");
            }
            b
        }
        _ => vec![None; props.len()],
    };
    props
        .iter()
        .zip(queries)
        .zip(results)
        .map(|((p, q), r)| match (q, r) {
            (Some(_), Some(Bound::Finite(v))) => format!("FORMULA {} {v} {TECHNIQUES}", p.id),
            (Some(_), Some(Bound::Infinite)) => format!("FORMULA {} +inf {TECHNIQUES}", p.id),
            _ => format!("FORMULA {} CANNOT_COMPUTE", p.id),
        })
        .collect()
}

fn formulas(
    exam: Examination,
    net: &Net,
    props: &[Property],
    budget: &Budget,
    started: Instant,
) -> Vec<String> {
    let parsed: Vec<Option<&Formula>> = props
        .iter()
        .map(|p| match &p.query {
            Ok(Query::Formula(f)) => Some(f),
            _ => None,
        })
        .collect();
    let need_graph = parsed
        .iter()
        .flatten()
        .any(|f| f.as_reachability().is_none());
    let values: Vec<Option<bool>> = if need_graph {
        let ex = explore(
            net,
            opts(true, false),
            &budget.limits(0.3, 0.4),
            &mut crate::explore::NoObserver,
        );
        report(exam, &ex, started);
        let k = Kripke::new(net, &ex, budget.deadlocks);
        let deadline = budget.deadline(0.85);
        let values = parsed
            .iter()
            .map(|f| {
                let f = (*f)?;
                if Instant::now() >= deadline {
                    return None; // out of time: no answer rather than a late one
                }
                k.check(f)
            })
            .collect();
        eprintln!(
            "explorer: labelling done at {:.3} s",
            started.elapsed().as_secs_f64()
        );
        values
    } else {
        let mut o = ReachObserver {
            net,
            goals: parsed
                .iter()
                .map(|f| f.and_then(Formula::as_reachability))
                .collect(),
            witness: vec![false; props.len()],
            open: 0,
        };
        o.open = o.goals.iter().flatten().count();
        let ex = explore(net, opts(false, false), &budget.limits(0.6, 0.8), &mut o);
        report(exam, &ex, started);
        o.goals
            .iter()
            .zip(&o.witness)
            .map(|(g, &w)| {
                let (is_ef, _) = (*g)?;
                // EF p: true with a witness; AG p: false with a counterexample.
                if w {
                    Some(is_ef)
                } else if ex.is_complete() {
                    Some(!is_ef)
                } else {
                    None
                }
            })
            .collect()
    };
    props
        .iter()
        .zip(values)
        .map(|(p, v)| match v {
            Some(v) => format!("FORMULA {} {} {TECHNIQUES}", p.id, tf(v)),
            None => format!("FORMULA {} CANNOT_COMPUTE", p.id),
        })
        .collect()
}

/// LTL: the reachability graph (with edges), then for each formula the product of the graph
/// with the automaton of its negation, searched for an accepting cycle (module [`crate::runs`]).
fn ltl_formulas(
    exam: Examination,
    net: &Net,
    props: &[Property],
    budget: &Budget,
    started: Instant,
) -> Vec<String> {
    let ex = explore(
        net,
        opts(true, false),
        &budget.limits(0.3, 0.4),
        &mut crate::explore::NoObserver,
    );
    report(exam, &ex, started);
    let mut runs = Runs::new(net, &ex, budget.finite_runs);
    let deadline = budget.deadline(0.85);
    let graph_bytes = ex.store.heap_bytes() + ex.edges.len() * 8;
    let product_bytes = ((budget.memory as f64 * 0.7) as usize).saturating_sub(graph_bytes);
    // Each formula gets half of an equal share of the time left (what a quick one leaves goes to
    // the next ones); the formulas stopped by their share then share what remains, in a second
    // pass.
    let mut values: Vec<Option<bool>> = vec![None; props.len()];
    let mut retry: Vec<usize> = Vec::new();
    for pass in 0..2 {
        let todo: Vec<usize> = if pass == 0 {
            (0..props.len()).collect()
        } else {
            std::mem::take(&mut retry)
        };
        for (k, &i) in todo.iter().enumerate() {
            let Ok(Query::Ltl(f)) = &props[i].query else {
                continue;
            };
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let share = (deadline - now) / (todo.len() - k) as u32;
            let share = if pass == 0 { share / 2 } else { share };
            let (v, stopped) = runs.check(&props[i].id, f, now + share, product_bytes);
            values[i] = v;
            if stopped && pass == 0 {
                retry.push(i);
            }
        }
        if retry.is_empty() {
            break;
        }
    }
    let lines = props
        .iter()
        .zip(values)
        .map(|(p, v)| match v {
            Some(v) => format!("FORMULA {} {} {TECHNIQUES}", p.id, tf(v)),
            None => format!("FORMULA {} CANNOT_COMPUTE", p.id),
        })
        .collect();
    eprintln!(
        "explorer: LTL done at {:.3} s",
        started.elapsed().as_secs_f64()
    );
    lines
}

struct DeadlockObserver {
    found: bool,
}
impl Observer for DeadlockObserver {
    fn on_expand(&mut self, _: u32, _: &[Tokens], enabled: &[u32]) -> bool {
        self.found |= enabled.is_empty();
        self.found
    }
}

struct OneSafeObserver {
    violated: bool,
}
impl Observer for OneSafeObserver {
    fn on_state(&mut self, _: u32, m: &[Tokens]) -> bool {
        self.violated |= m.iter().any(|&v| v > 1);
        self.violated
    }
}

/// Records fired transitions and the places they change (QuasiLiveness, StableMarking).
struct FiredObserver<'n> {
    net: &'n Net,
    fired: Vec<bool>,
    missing_transitions: usize,
    unstable: Vec<bool>,
    unstable_places: usize,
    /// StableMarking also stops once every place is unstable.
    stop_when_all_unstable: bool,
}
impl<'n> FiredObserver<'n> {
    fn new(net: &'n Net, stop_when_all_unstable: bool) -> Self {
        FiredObserver {
            net,
            fired: vec![false; net.num_transitions()],
            missing_transitions: net.num_transitions(),
            unstable: vec![false; net.num_places()],
            unstable_places: 0,
            stop_when_all_unstable,
        }
    }
}
impl Observer for FiredObserver<'_> {
    fn on_expand(&mut self, _: u32, _: &[Tokens], enabled: &[u32]) -> bool {
        for &t in enabled {
            let t = t as usize;
            if !self.fired[t] {
                self.fired[t] = true;
                self.missing_transitions -= 1;
                for &(p, _) in &self.net.delta[t] {
                    if !self.unstable[p as usize] {
                        self.unstable[p as usize] = true;
                        self.unstable_places += 1;
                    }
                }
            }
        }
        // Both answers are settled once every transition has fired: QuasiLiveness is true,
        // and no further firing can make another place unstable.
        self.missing_transitions == 0
            || (self.stop_when_all_unstable && self.unstable_places == self.net.num_places())
    }
}

struct BoundObserver {
    places: Vec<Vec<u32>>,
    max: Vec<u64>,
}
impl Observer for BoundObserver {
    fn on_state(&mut self, _: u32, m: &[Tokens]) -> bool {
        for (ps, mx) in self.places.iter().zip(self.max.iter_mut()) {
            let s: u64 = ps.iter().map(|&p| m[p as usize] as u64).sum();
            *mx = (*mx).max(s);
        }
        false
    }
}

/// Evaluates EF p / AG p on the fly; stops when every formula is decided.
struct ReachObserver<'a> {
    net: &'a Net,
    goals: Vec<Option<(bool, &'a Formula)>>,
    /// EF: p seen; AG: not p seen.
    witness: Vec<bool>,
    open: usize,
}
impl Observer for ReachObserver<'_> {
    fn on_state(&mut self, _: u32, m: &[Tokens]) -> bool {
        for (g, w) in self.goals.iter().zip(self.witness.iter_mut()) {
            if let (Some((is_ef, p)), false) = (g, *w) {
                if p.eval_state(self.net, m) == *is_ef {
                    *w = true;
                    self.open -= 1;
                }
            }
        }
        self.open == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::tests::philosophers2;

    fn budget() -> Budget {
        Budget {
            start: Instant::now(),
            time: Duration::from_secs(60),
            memory: 1 << 30,
            max_states: None,
            deadlocks: Deadlocks::NoSuccessor,
            finite_runs: FiniteRuns::Stutter,
        }
    }

    fn answer(exam: Examination, dir: &Path) -> Vec<String> {
        run(exam, &philosophers2(), dir, &budget())
            .expect("answer")
            .lines
    }

    #[test]
    fn global_properties_of_two_philosophers() {
        let here = Path::new(".");
        let one =
            |e: Examination, v: &str| vec![format!("FORMULA {} {v} TECHNIQUES EXPLICIT", e.name())];
        use Examination::*;
        assert_eq!(
            answer(ReachabilityDeadlock, here),
            one(ReachabilityDeadlock, "TRUE")
        );
        assert_eq!(answer(OneSafe, here), one(OneSafe, "TRUE"));
        assert_eq!(answer(QuasiLiveness, here), one(QuasiLiveness, "TRUE"));
        assert_eq!(answer(StableMarking, here), one(StableMarking, "FALSE"));
        assert_eq!(answer(Liveness, here), one(Liveness, "FALSE"));
        assert_eq!(
            answer(StateSpace, here),
            vec![
                "STATE_SPACE STATES 6 TECHNIQUES EXPLICIT",
                "STATE_SPACE TRANSITIONS 8 TECHNIQUES EXPLICIT",
                "STATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT",
                "STATE_SPACE MAX_TOKEN_PER_MARKING 4 TECHNIQUES EXPLICIT",
            ]
        );
    }

    #[test]
    fn formula_examinations_answer_by_file_id() {
        let dir = std::env::temp_dir().join(format!("explorer-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("UpperBounds.xml"),
            r#"<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>ub-b</id><formula><place-bound><place>fork0</place><place>fork1</place></place-bound></formula></property>
  <property><id>ub-a</id><formula><place-bound><place>eat0</place></place-bound></formula></property>
  <property><id>ub-x</id><formula><place-bound><place>nowhere</place></place-bound></formula></property>
</property-set>"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("CTLFireability.xml"),
            r#"<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>c-2023-12</id><formula><all-paths><globally><exists-path><finally>
    <is-fireable><transition>release0</transition></is-fireable></finally></exists-path></globally></all-paths></formula></property>
  <property><id>c-2025-00</id><formula><exists-path><finally><negation><is-fireable>
    <transition>takeL0</transition><transition>takeL1</transition><transition>takeR0</transition>
    <transition>takeR1</transition><transition>release0</transition><transition>release1</transition>
  </is-fireable></negation></finally></exists-path></formula></property>
</property-set>"#,
        )
        .unwrap();
        assert_eq!(
            answer(Examination::UpperBounds, &dir),
            vec![
                "FORMULA ub-b 2 TECHNIQUES EXPLICIT",
                "FORMULA ub-a 1 TECHNIQUES EXPLICIT",
                "FORMULA ub-x CANNOT_COMPUTE",
            ]
        );
        assert_eq!(
            answer(Examination::CTLFireability, &dir),
            vec![
                "FORMULA c-2023-12 FALSE TECHNIQUES EXPLICIT",
                "FORMULA c-2025-00 TRUE TECHNIQUES EXPLICIT"
            ]
        );
        assert!(run(
            Examination::ReachabilityCardinality,
            &philosophers2(),
            &dir,
            &budget()
        )
        .is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
