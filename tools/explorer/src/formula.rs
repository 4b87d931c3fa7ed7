//! MCC property files (`<property-set xmlns="http://mcc.lip6.fr/">`) and their formulas.

use crate::net::{Net, Tokens};
use std::collections::HashMap;

/// An integer expression over a marking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntExpr {
    Const(i128),
    /// Sum of the tokens of these places.
    Tokens(Vec<u32>),
}

impl IntExpr {
    pub fn eval(&self, m: &[Tokens]) -> i128 {
        match self {
            IntExpr::Const(c) => *c,
            IntExpr::Tokens(ps) => ps.iter().map(|&p| m[p as usize] as i128).sum(),
        }
    }
}

/// A CTL state formula (reachability formulas are the special case EF/AG of a state predicate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Formula {
    Bool(bool),
    /// `a <= b`
    Le(IntExpr, IntExpr),
    /// True when any of the listed transitions is enabled.
    Fireable(Vec<u32>),
    Not(Box<Formula>),
    And(Vec<Formula>),
    Or(Vec<Formula>),
    EX(Box<Formula>),
    AX(Box<Formula>),
    EF(Box<Formula>),
    AF(Box<Formula>),
    EG(Box<Formula>),
    AG(Box<Formula>),
    EU(Box<Formula>, Box<Formula>),
    AU(Box<Formula>, Box<Formula>),
}

impl Formula {
    /// True when the formula has no temporal operator.
    pub fn is_state_predicate(&self) -> bool {
        match self {
            Formula::Bool(_) | Formula::Le(..) | Formula::Fireable(_) => true,
            Formula::Not(f) => f.is_state_predicate(),
            Formula::And(fs) | Formula::Or(fs) => fs.iter().all(Formula::is_state_predicate),
            _ => false,
        }
    }

    /// Evaluates a state predicate on a marking (temporal operators are not allowed here).
    pub fn eval_state(&self, net: &Net, m: &[Tokens]) -> bool {
        match self {
            Formula::Bool(b) => *b,
            Formula::Le(a, b) => a.eval(m) <= b.eval(m),
            Formula::Fireable(ts) => ts.iter().any(|&t| net.enabled(t as usize, m)),
            Formula::Not(f) => !f.eval_state(net, m),
            Formula::And(fs) => fs.iter().all(|f| f.eval_state(net, m)),
            Formula::Or(fs) => fs.iter().any(|f| f.eval_state(net, m)),
            _ => panic!("eval_state called on a temporal formula"),
        }
    }

    /// `Some((true, p))` for EF p, `Some((false, p))` for AG p, with p a state predicate.
    pub fn as_reachability(&self) -> Option<(bool, &Formula)> {
        match self {
            Formula::EF(p) if p.is_state_predicate() => Some((true, p)),
            Formula::AG(p) if p.is_state_predicate() => Some((false, p)),
            _ => None,
        }
    }
}

/// A path formula of the LTL examinations: the body of `<all-paths>`, interpreted on runs.
/// Subformulas without temporal operator are kept whole as [`PathFormula::State`], evaluated on
/// the current marking of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathFormula {
    State(Formula),
    Not(Box<PathFormula>),
    And(Vec<PathFormula>),
    Or(Vec<PathFormula>),
    Next(Box<PathFormula>),
    Finally(Box<PathFormula>),
    Globally(Box<PathFormula>),
    Until(Box<PathFormula>, Box<PathFormula>),
}

/// What a property asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    Formula(Formula),
    /// UpperBounds: the maximum over reachable markings of the sum of these places.
    Bound(Vec<u32>),
    /// LTL: does every run from the initial marking satisfy this path formula (`A φ`)?
    Ltl(PathFormula),
}

/// How the `<formula>` elements of a property file are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logic {
    /// UpperBounds, Reachability and CTL files: `place-bound` or a CTL state formula.
    Ctl,
    /// LTLCardinality and LTLFireability files: `<all-paths>` over an LTL path formula.
    Ltl,
}

/// One `<property>`: its id as written in the file, and its query (or why it cannot be read).
#[derive(Debug, Clone)]
pub struct Property {
    pub id: String,
    pub query: Result<Query, String>,
}

/// Parses a property file of the UpperBounds, Reachability or CTL examinations. A malformed file
/// is an error; a property whose formula uses something unsupported is returned with an `Err`
/// query.
pub fn parse_properties(text: &str, net: &Net) -> Result<Vec<Property>, String> {
    parse_property_file(text, net, Logic::Ctl)
}

/// Parses a property file in the given logic (see [`parse_properties`]).
pub fn parse_property_file(text: &str, net: &Net, logic: Logic) -> Result<Vec<Property>, String> {
    let doc = roxmltree::Document::parse(text).map_err(|e| format!("not well-formed XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "property-set" {
        return Err(format!(
            "root element is <{}>, expected <property-set>",
            root.tag_name().name()
        ));
    }
    let ctx = Ctx {
        places: net.place_index(),
        transitions: net.transition_index(),
    };
    let mut out = Vec::new();
    for prop in elements(root).filter(|n| n.tag_name().name() == "property") {
        let id = elements(prop)
            .find(|n| n.tag_name().name() == "id")
            .and_then(|n| n.text())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| "a <property> has no <id>".to_string())?;
        let query = match elements(prop).find(|n| n.tag_name().name() == "formula") {
            None => Err("no <formula>".to_string()),
            Some(f) => match (logic, single_child(f)) {
                (_, Err(e)) => Err(e),
                (Logic::Ctl, Ok(body)) if body.tag_name().name() == "place-bound" => {
                    ctx.places_of(body).map(Query::Bound)
                }
                (Logic::Ctl, Ok(body)) => ctx.formula(body).map(Query::Formula),
                (Logic::Ltl, Ok(body)) if body.tag_name().name() == "all-paths" => {
                    single_child(body).and_then(|p| ctx.path(p)).map(Query::Ltl)
                }
                (Logic::Ltl, Ok(body)) => Err(format!(
                    "an LTL formula is <all-paths> over a path formula, found <{}>",
                    body.tag_name().name()
                )),
            },
        };
        out.push(Property { id, query });
    }
    Ok(out)
}

fn elements<'a, 'i>(n: roxmltree::Node<'a, 'i>) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    n.children().filter(|c| c.is_element())
}

fn single_child<'a, 'i>(n: roxmltree::Node<'a, 'i>) -> Result<roxmltree::Node<'a, 'i>, String> {
    let mut it = elements(n);
    match (it.next(), it.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(format!(
            "<{}> must have exactly one child element",
            n.tag_name().name()
        )),
    }
}

struct Ctx<'n> {
    places: HashMap<&'n str, u32>,
    transitions: HashMap<&'n str, u32>,
}

impl Ctx<'_> {
    fn places_of(&self, n: roxmltree::Node) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        for c in elements(n) {
            if c.tag_name().name() != "place" {
                return Err(format!(
                    "unexpected <{}> in <{}>",
                    c.tag_name().name(),
                    n.tag_name().name()
                ));
            }
            let name = c.text().unwrap_or("").trim();
            out.push(
                *self
                    .places
                    .get(name)
                    .ok_or_else(|| format!("unknown place {name:?}"))?,
            );
        }
        Ok(out)
    }

    fn transitions_of(&self, n: roxmltree::Node) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        for c in elements(n) {
            if c.tag_name().name() != "transition" {
                return Err(format!(
                    "unexpected <{}> in <is-fireable>",
                    c.tag_name().name()
                ));
            }
            let name = c.text().unwrap_or("").trim();
            out.push(
                *self
                    .transitions
                    .get(name)
                    .ok_or_else(|| format!("unknown transition {name:?}"))?,
            );
        }
        Ok(out)
    }

    fn int(&self, n: roxmltree::Node) -> Result<IntExpr, String> {
        match n.tag_name().name() {
            "integer-constant" => {
                let t = n.text().unwrap_or("").trim();
                t.parse::<i128>()
                    .map(IntExpr::Const)
                    .map_err(|_| format!("bad integer constant {t:?}"))
            }
            "tokens-count" => self.places_of(n).map(IntExpr::Tokens),
            other => Err(format!("unsupported integer expression <{other}>")),
        }
    }

    fn children(&self, n: roxmltree::Node) -> Result<Vec<Formula>, String> {
        elements(n).map(|c| self.formula(c)).collect()
    }

    fn one(&self, n: roxmltree::Node) -> Result<Box<Formula>, String> {
        Ok(Box::new(self.formula(single_child(n)?)?))
    }

    fn formula(&self, n: roxmltree::Node) -> Result<Formula, String> {
        Ok(match n.tag_name().name() {
            "true" => Formula::Bool(true),
            "false" => Formula::Bool(false),
            "negation" => Formula::Not(self.one(n)?),
            "conjunction" => Formula::And(self.children(n)?),
            "disjunction" => Formula::Or(self.children(n)?),
            "is-fireable" => Formula::Fireable(self.transitions_of(n)?),
            "integer-le" => {
                let ops: Vec<_> = elements(n).collect();
                match ops.as_slice() {
                    [a, b] => Formula::Le(self.int(*a)?, self.int(*b)?),
                    _ => return Err("<integer-le> must have two operands".into()),
                }
            }
            q @ ("exists-path" | "all-paths") => {
                let exists = q == "exists-path";
                let op = single_child(n)?;
                match (exists, op.tag_name().name()) {
                    (true, "next") => Formula::EX(self.one(op)?),
                    (false, "next") => Formula::AX(self.one(op)?),
                    (true, "finally") => Formula::EF(self.one(op)?),
                    (false, "finally") => Formula::AF(self.one(op)?),
                    (true, "globally") => Formula::EG(self.one(op)?),
                    (false, "globally") => Formula::AG(self.one(op)?),
                    (e, "until") => {
                        let before = elements(op).find(|c| c.tag_name().name() == "before");
                        let reach = elements(op).find(|c| c.tag_name().name() == "reach");
                        let (Some(b), Some(r)) = (before, reach) else {
                            return Err("<until> needs <before> and <reach>".into());
                        };
                        let (b, r) = (self.one(b)?, self.one(r)?);
                        if e {
                            Formula::EU(b, r)
                        } else {
                            Formula::AU(b, r)
                        }
                    }
                    (_, other) => return Err(format!("unsupported path formula <{q}><{other}>")),
                }
            }
            other => return Err(format!("unsupported formula element <{other}>")),
        })
    }

    /// An LTL path formula. Boolean combinations whose operands have no temporal operator are
    /// folded into one [`PathFormula::State`].
    fn path(&self, n: roxmltree::Node) -> Result<PathFormula, String> {
        let one = |n: roxmltree::Node| -> Result<Box<PathFormula>, String> {
            Ok(Box::new(self.path(single_child(n)?)?))
        };
        Ok(match n.tag_name().name() {
            "negation" => match *one(n)? {
                PathFormula::State(f) => PathFormula::State(Formula::Not(Box::new(f))),
                p => PathFormula::Not(Box::new(p)),
            },
            op @ ("conjunction" | "disjunction") => {
                let ps: Vec<PathFormula> = elements(n)
                    .map(|c| self.path(c))
                    .collect::<Result<_, _>>()?;
                let conj = op == "conjunction";
                if ps.iter().all(|p| matches!(p, PathFormula::State(_))) {
                    let fs = ps
                        .into_iter()
                        .map(|p| match p {
                            PathFormula::State(f) => f,
                            _ => unreachable!("checked above"),
                        })
                        .collect();
                    PathFormula::State(if conj {
                        Formula::And(fs)
                    } else {
                        Formula::Or(fs)
                    })
                } else if conj {
                    PathFormula::And(ps)
                } else {
                    PathFormula::Or(ps)
                }
            }
            "next" => PathFormula::Next(one(n)?),
            "finally" => PathFormula::Finally(one(n)?),
            "globally" => PathFormula::Globally(one(n)?),
            "until" => {
                let before = elements(n).find(|c| c.tag_name().name() == "before");
                let reach = elements(n).find(|c| c.tag_name().name() == "reach");
                let (Some(b), Some(r)) = (before, reach) else {
                    return Err("<until> needs <before> and <reach>".into());
                };
                PathFormula::Until(one(b)?, one(r)?)
            }
            q @ ("exists-path" | "all-paths") => {
                return Err(format!(
                    "path quantifier <{q}> inside an LTL path formula (CTL* is not supported)"
                ))
            }
            _ => PathFormula::State(self.formula(n)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::tests::philosophers2;

    #[test]
    fn parses_ctl_reachability_and_bounds() {
        let net = philosophers2();
        let xml = r#"<?xml version="1.0"?>
<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>A-2025-00</id><description>x</description>
    <formula><all-paths><globally><integer-le>
      <tokens-count><place>eat0</place><place>eat1</place></tokens-count>
      <integer-constant>1</integer-constant></integer-le></globally></all-paths></formula></property>
  <property><id>B-01</id><formula><exists-path><until>
      <before><true/></before>
      <reach><negation><is-fireable><transition>takeL0</transition><transition>takeL1</transition></is-fireable></negation></reach>
    </until></exists-path></formula></property>
  <property><id>C</id><formula><place-bound><place>fork0</place></place-bound></formula></property>
  <property><id>D</id><formula><is-fireable><transition>nope</transition></is-fireable></formula></property>
  <property><id>E</id><formula><exists-path><next><false/></next></exists-path></formula></property>
</property-set>"#;
        let props = parse_properties(xml, &net).unwrap();
        let ids: Vec<_> = props.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, vec!["A-2025-00", "B-01", "C", "D", "E"]);
        let Ok(Query::Formula(a)) = &props[0].query else {
            panic!()
        };
        assert_eq!(
            a,
            &Formula::AG(Box::new(Formula::Le(
                IntExpr::Tokens(vec![4, 5]),
                IntExpr::Const(1)
            )))
        );
        assert!(a.as_reachability().is_some());
        let Ok(Query::Formula(b)) = &props[1].query else {
            panic!()
        };
        assert_eq!(
            b,
            &Formula::EU(
                Box::new(Formula::Bool(true)),
                Box::new(Formula::Not(Box::new(Formula::Fireable(vec![0, 1]))))
            )
        );
        assert_eq!(props[2].query, Ok(Query::Bound(vec![6])));
        assert!(props[3]
            .query
            .as_ref()
            .unwrap_err()
            .contains("unknown transition"));
        assert_eq!(
            props[4].query,
            Ok(Query::Formula(Formula::EX(Box::new(Formula::Bool(false)))))
        );
    }

    #[test]
    fn parses_ltl_path_formulas_with_state_subformulas_kept_whole() {
        let net = philosophers2();
        // A (X (eat0 <= 0 and not fire(takeL0)) U G F fire(release0))
        let xml = r#"<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>L-00</id><formula><all-paths><until>
    <before><next><conjunction>
      <integer-le><tokens-count><place>eat0</place></tokens-count><integer-constant>0</integer-constant></integer-le>
      <negation><is-fireable><transition>takeL0</transition></is-fireable></negation>
    </conjunction></next></before>
    <reach><globally><finally><is-fireable><transition>release0</transition></is-fireable></finally></globally></reach>
  </until></all-paths></formula></property>
  <property><id>L-01</id><formula><all-paths><negation><disjunction>
    <finally><true/></finally><integer-le><integer-constant>1</integer-constant><integer-constant>2</integer-constant></integer-le>
  </disjunction></negation></all-paths></formula></property>
  <property><id>L-02</id><formula><exists-path><finally><true/></finally></exists-path></formula></property>
</property-set>"#;
        let props = parse_property_file(xml, &net, Logic::Ltl).unwrap();
        let eat0_le_0 = Formula::Le(IntExpr::Tokens(vec![4]), IntExpr::Const(0));
        assert_eq!(
            props[0].query,
            Ok(Query::Ltl(PathFormula::Until(
                Box::new(PathFormula::Next(Box::new(PathFormula::State(
                    Formula::And(vec![
                        eat0_le_0,
                        Formula::Not(Box::new(Formula::Fireable(vec![0])))
                    ])
                )))),
                Box::new(PathFormula::Globally(Box::new(PathFormula::Finally(
                    Box::new(PathFormula::State(Formula::Fireable(vec![4])))
                ))))
            )))
        );
        assert_eq!(
            props[1].query,
            Ok(Query::Ltl(PathFormula::Not(Box::new(PathFormula::Or(
                vec![
                    PathFormula::Finally(Box::new(PathFormula::State(Formula::Bool(true)))),
                    PathFormula::State(Formula::Le(IntExpr::Const(1), IntExpr::Const(2)))
                ]
            )))))
        );
        assert!(props[2].query.as_ref().unwrap_err().contains("<all-paths>"));
        // the same file read as CTL: the LTL bodies are not CTL formulas
        let ctl = parse_properties(xml, &net).unwrap();
        assert!(ctl[0].query.is_err() && ctl[2].query.is_ok());
    }

    #[test]
    fn rejects_malformed_files() {
        let net = philosophers2();
        assert!(parse_properties("<property-set>", &net).is_err());
        assert!(parse_properties("<other/>", &net).is_err());
        assert!(parse_properties(
            "<property-set><property><formula/></property></property-set>",
            &net
        )
        .is_err());
    }

    #[test]
    fn evaluates_state_predicates() {
        let net = philosophers2();
        let m0 = net.initial.clone();
        let f = Formula::And(vec![
            Formula::Fireable(vec![0]),
            Formula::Le(IntExpr::Tokens(vec![6, 7]), IntExpr::Const(2)),
            Formula::Not(Box::new(Formula::Fireable(vec![2, 3]))),
        ]);
        assert!(f.eval_state(&net, &m0));
        assert!(!Formula::Le(IntExpr::Const(3), IntExpr::Tokens(vec![0, 1])).eval_state(&net, &m0));
    }
}
