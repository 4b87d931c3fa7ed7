//! Reader for PNML place/transition nets (`http://www.pnml.org/version-2009/grammar/ptnet`).
//!
//! Reads places (with `initialMarking`), transitions and arcs (with an optional
//! `inscription` weight, default 1), through nested pages and reference nodes.
//! Graphics, names and `<toolspecific>` blocks (such as NUPN) are ignored.

use crate::net::{Net, MAX_TOKENS};
use std::collections::HashMap;
use std::fmt;

/// The net type URI of P/T nets.
pub const PTNET_TYPE: &str = "http://www.pnml.org/version-2009/grammar/ptnet";

/// Why a model could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// Not well-formed XML.
    Xml(String),
    /// A colored net (symmetric net or high-level net): not supported.
    Colored(String),
    /// Well-formed XML that is not a P/T net in PNML, or an inconsistent one.
    Invalid(String),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Xml(m) => write!(f, "model is not well-formed XML: {m}"),
            ModelError::Colored(t) => write!(f, "colored nets are not supported (net type {t})"),
            ModelError::Invalid(m) => write!(f, "model is not a valid P/T net: {m}"),
        }
    }
}

impl std::error::Error for ModelError {}

fn invalid(msg: impl Into<String>) -> ModelError {
    ModelError::Invalid(msg.into())
}

/// Parses the text of a `model.pnml` file.
pub fn parse_pnml(text: &str) -> Result<Net, ModelError> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, opts)
        .map_err(|e| ModelError::Xml(e.to_string()))?;
    let root = doc.root_element();
    if root.tag_name().name() != "pnml" {
        return Err(invalid(format!(
            "root element is <{}>, expected <pnml>",
            root.tag_name().name()
        )));
    }
    let nets: Vec<_> = root
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "net")
        .collect();
    let net_node = match nets.as_slice() {
        [one] => *one,
        [] => return Err(invalid("no <net> element")),
        _ => {
            return Err(invalid(format!(
                "{} <net> elements, expected one",
                nets.len()
            )))
        }
    };
    let net_type = net_node.attribute("type").unwrap_or("");
    if net_type != PTNET_TYPE {
        if net_type.contains("symmetricnet") || net_type.contains("highlevelnet") {
            return Err(ModelError::Colored(net_type.to_string()));
        }
        return Err(invalid(format!(
            "net type is {net_type:?}, expected {PTNET_TYPE}"
        )));
    }
    let name = net_node.attribute("id").unwrap_or("").to_string();

    let mut reader = Reader::default();
    reader.walk(net_node)?;
    reader.finish(name)
}

#[derive(Default)]
struct Reader {
    place_ids: Vec<String>,
    initial: Vec<u64>,
    transition_ids: Vec<String>,
    /// id -> node
    nodes: HashMap<String, NodeRef>,
    /// reference node id -> referenced id
    references: HashMap<String, String>,
    /// (arc id, source, target, weight)
    arcs: Vec<(String, String, String, u64)>,
}

#[derive(Clone, Copy)]
enum NodeRef {
    Place(u32),
    Transition(u32),
}

fn child<'a, 'i>(node: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    node.children()
        .find(|n| n.is_element() && n.tag_name().name() == name)
}

/// Reads `<X><text>n</text></X>` below `node` as a non-negative integer.
fn read_count(node: roxmltree::Node, what: &str, owner: &str) -> Result<Option<u64>, ModelError> {
    let Some(label) = child(node, what) else {
        return Ok(None);
    };
    let text = match child(label, "text") {
        Some(t) => t.text().unwrap_or("").trim().to_string(),
        None => {
            // Tolerate structured labels without <text> only if they carry no value we need.
            return Err(invalid(format!("<{what}> of {owner} has no <text>")));
        }
    };
    if text.is_empty() {
        return Ok(Some(0));
    }
    text.parse::<u64>().map(Some).map_err(|_| {
        invalid(format!(
            "<{what}> of {owner} is {text:?}, expected a non-negative integer"
        ))
    })
}

impl Reader {
    fn walk(&mut self, container: roxmltree::Node) -> Result<(), ModelError> {
        for node in container.children().filter(|n| n.is_element()) {
            match node.tag_name().name() {
                "page" => self.walk(node)?,
                "place" => {
                    let id = self.id_of(node, "place")?;
                    let m = read_count(node, "initialMarking", &id)?.unwrap_or(0);
                    if m > MAX_TOKENS {
                        return Err(invalid(format!(
                            "initial marking {m} of place {id} exceeds {MAX_TOKENS}"
                        )));
                    }
                    let idx = self.place_ids.len() as u32;
                    self.add_node(id.clone(), NodeRef::Place(idx))?;
                    self.place_ids.push(id);
                    self.initial.push(m);
                }
                "transition" => {
                    let id = self.id_of(node, "transition")?;
                    let idx = self.transition_ids.len() as u32;
                    self.add_node(id.clone(), NodeRef::Transition(idx))?;
                    self.transition_ids.push(id);
                }
                "referencePlace" | "referenceTransition" => {
                    let id = self.id_of(node, node.tag_name().name())?;
                    let target = node.attribute("ref").ok_or_else(|| {
                        invalid(format!("reference node {id} has no ref attribute"))
                    })?;
                    self.references.insert(id, target.to_string());
                }
                "arc" => {
                    let id = self.id_of(node, "arc")?;
                    let source = node
                        .attribute("source")
                        .ok_or_else(|| invalid(format!("arc {id} has no source")))?;
                    let target = node
                        .attribute("target")
                        .ok_or_else(|| invalid(format!("arc {id} has no target")))?;
                    let w = read_count(node, "inscription", &id)?.unwrap_or(1);
                    self.arcs
                        .push((id, source.to_string(), target.to_string(), w));
                }
                // name, graphics, toolspecific (NUPN, ...), declarations: ignored.
                _ => {}
            }
        }
        Ok(())
    }

    fn id_of(&self, node: roxmltree::Node, what: &str) -> Result<String, ModelError> {
        node.attribute("id")
            .map(str::to_string)
            .ok_or_else(|| invalid(format!("a <{what}> has no id attribute")))
    }

    fn add_node(&mut self, id: String, r: NodeRef) -> Result<(), ModelError> {
        if self.nodes.insert(id.clone(), r).is_some() {
            return Err(invalid(format!("duplicate node id {id}")));
        }
        Ok(())
    }

    fn resolve(&self, id: &str) -> Option<NodeRef> {
        let mut cur = id;
        // Follow reference chains, bounded to avoid cycles.
        for _ in 0..=self.references.len() {
            if let Some(r) = self.nodes.get(cur) {
                return Some(*r);
            }
            cur = self.references.get(cur)?;
        }
        None
    }

    fn finish(self, name: String) -> Result<Net, ModelError> {
        let mut pre = Vec::new();
        let mut post = Vec::new();
        for (id, s, t, w) in &self.arcs {
            let src = self
                .resolve(s)
                .ok_or_else(|| invalid(format!("arc {id}: unknown source {s}")))?;
            let dst = self
                .resolve(t)
                .ok_or_else(|| invalid(format!("arc {id}: unknown target {t}")))?;
            match (src, dst) {
                (NodeRef::Place(p), NodeRef::Transition(tr)) => pre.push((tr, p, *w)),
                (NodeRef::Transition(tr), NodeRef::Place(p)) => post.push((tr, p, *w)),
                _ => {
                    return Err(invalid(format!(
                        "arc {id} does not link a place and a transition"
                    )))
                }
            }
        }
        let initial = self.initial.iter().map(|&m| m as u32).collect();
        Net::new(
            name,
            self.place_ids,
            self.transition_ids,
            initial,
            &pre,
            &post,
        )
        .map_err(ModelError::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"<?xml version="1.0"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
  <net id="small" type="http://www.pnml.org/version-2009/grammar/ptnet">
    <page id="page0">
      <name><text>DefaultPage</text></name>
      <place id="p0"><name><text>p0</text></name><initialMarking><text>2</text></initialMarking></place>
      <place id="p1"/>
      <transition id="t0"><name><text>t0</text></name></transition>
      <arc id="a0" source="p0" target="t0"><inscription><text>2</text></inscription></arc>
      <page id="inner">
        <place id="p2"><initialMarking><text> 7 </text></initialMarking></place>
        <arc id="a1" source="t0" target="p1"/>
        <referencePlace id="rp2" ref="p2"/>
        <arc id="a2" source="rp2" target="t0"/>
      </page>
    </page>
    <toolspecific tool="nupn" version="1.1"><size places="3" transitions="1" arcs="3"/></toolspecific>
  </net>
</pnml>"#;

    #[test]
    fn reads_places_transitions_arcs_pages_and_references() {
        let net = parse_pnml(SMALL).unwrap();
        assert_eq!(net.name, "small");
        assert_eq!(net.place_ids, vec!["p0", "p1", "p2"]);
        assert_eq!(net.initial, vec![2, 0, 7]);
        assert_eq!(net.transition_ids, vec!["t0"]);
        assert_eq!(net.pre[0], vec![(0, 2), (2, 1)]);
        assert_eq!(net.delta[0], vec![(0, -2), (1, 1), (2, -1)]);
    }

    #[test]
    fn rejects_bad_xml_colored_and_nonsense() {
        assert!(matches!(parse_pnml("<pnml><net"), Err(ModelError::Xml(_))));
        let col = r#"<pnml><net id="x" type="http://www.pnml.org/version-2009/grammar/symmetricnet"/></pnml>"#;
        assert!(matches!(parse_pnml(col), Err(ModelError::Colored(_))));
        assert!(matches!(parse_pnml("<foo/>"), Err(ModelError::Invalid(_))));
        let bad_arc = SMALL.replace(
            r#"target="t0"><inscription>"#,
            r#"target="p1"><inscription>"#,
        );
        assert!(matches!(parse_pnml(&bad_arc), Err(ModelError::Invalid(_))));
        let bad_weight = SMALL.replace(
            "<text>2</text></inscription>",
            "<text>-2</text></inscription>",
        );
        assert!(matches!(
            parse_pnml(&bad_weight),
            Err(ModelError::Invalid(_))
        ));
        let dup = SMALL.replace(r#"<place id="p1"/>"#, r#"<place id="p0"/>"#);
        assert!(matches!(parse_pnml(&dup), Err(ModelError::Invalid(_))));
    }
}
