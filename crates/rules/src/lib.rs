//! The contest's rules: an edition's settings as data ([`edition`]) and each rule of the contest
//! as one pure function named after it, with its rule number and the rules text in its doc
//! comment. No I/O, no database: the scoring database, explanations, the report and the exports
//! all call these functions, so that each rule is computed in one place.
//!
//! | rules | module |
//! |---|---|
//! | E-1.8: which runs take part | [`participation`] |
//! | E-2.2: the Confidence set V, each tool's Confidence | [`confidence`] |
//! | E-2.2, E-3.1: who votes (every tool, or one vote per family) | [`votes`] |
//! | E-3.1: trusted values (and given truths) | [`trusted`] |
//! | E-4.1 to E-4.3: points, examination scores, completeness | [`points`] |
//! | E-4.4: instance weights, model kinds | [`weights`] |
//! | E-4.5, E-4.6: category totals, podiums, awards | [`podium`] |
//! | exact numbers (fractions of big integers), rounded only for display | [`exact`] |
//! | E-5.1: one machine per model | [`execution`] |
//! | M-9: files a run does not see | [`hidden_files`] |
//! | reference answers: right, wrong, unknown against them (not an MCC rule) | [`reference`] |

#![forbid(unsafe_code)]

pub mod confidence;
pub mod edition;
pub mod exact;
pub mod execution;
pub mod hidden_files;
pub mod participation;
pub mod podium;
pub mod points;
pub mod reference;
pub mod trusted;
pub mod votes;
pub mod weights;
