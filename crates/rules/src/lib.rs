//! The contest's rules: an edition's settings as data ([`edition`]) and each scoring rule as one
//! pure function named after it, with its rule number in its doc comment.

pub mod confidence;
pub mod edition;
pub mod execution;
pub mod scoring;
pub mod trusted;
