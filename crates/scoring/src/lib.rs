//! Scoring: the incremental database (salsa) whose queries only wire the rules functions
//! together ([`db`]) and the database holding them ([`database`]), its inputs built from a plan
//! and the store ([`inputs`]), remembered scores kept between processes ([`memo`]), and what the
//! outputs read from it: the scores report ([`scores`]) and explanations ([`explain`]).

#![forbid(unsafe_code)]

pub mod database;
pub mod db;
pub mod explain;
pub mod inputs;
pub mod memo;
pub mod scores;
