//! `explorer`: an explicit-state model checker for P/T nets that answers the examinations of
//! the Model Checking Contest through the BenchKit protocol.
//!
//! - [`pnml`] reads the model, [`formula`] the property files;
//! - [`explore`] builds the reachability graph over a compact [`store`] of markings;
//! - [`ctl`], [`scc`] and [`karp_miller`] decide the properties;
//! - [`ltl`] translates LTL formulas into Büchi automata, [`runs`] takes their product with the
//!   graph and [`emptiness`] searches it for an accepting cycle;
//! - [`exams`] maps each examination to these and formats the answer lines.

pub mod ctl;
pub mod emptiness;
pub mod exams;
pub mod explore;
pub mod formula;
pub mod karp_miller;
pub mod ltl;
pub mod net;
pub mod pnml;
pub mod runs;
pub mod scc;
pub mod store;
