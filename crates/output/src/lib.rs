//! What mccbuild writes: the exports for other programs ([`export`]: the MCC-layout CSV, the
//! JSON, propertiesverdict XML), the results site ([`report`]), and the tables and texts of the
//! terminal ([`terminal`]).

#![forbid(unsafe_code)]

pub mod diff;
pub mod export;
pub mod qualify;
pub mod report;
pub mod terminal;
pub mod versions;
pub mod wrong;
