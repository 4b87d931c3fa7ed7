//! Serde for numbers of rules files and exports: read from a TOML integer, float (as the decimal
//! written) or string (`"254/25"`); written as the fraction string of
//! [`fraction`](super::fraction).

use super::{Exact, fraction, from_written_f64, int, parse};
use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};

pub fn serialize<S: Serializer>(x: &Exact, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&fraction(x))
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Exact, D::Error> {
    d.deserialize_any(ExactVisitor)
}

struct ExactVisitor;

impl Visitor<'_> for ExactVisitor {
    type Value = Exact;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number: an integer, a decimal, or a fraction in a string (\"254/25\")")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Exact, E> {
        Ok(int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Exact, E> {
        Ok(Exact::from_integer(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Exact, E> {
        from_written_f64(v).ok_or_else(|| E::custom("a number must be finite"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Exact, E> {
        parse(v).ok_or_else(|| {
            E::custom(format!(
                "`{v}` is not a number (an integer, a decimal, or a fraction such as \"254/25\")"
            ))
        })
    }
}

/// Writes the nearest float, for JSON meant to be read by people and plotted (`explain`,
/// `scores`' rounded figures); the fields compared by consumers carry the fraction beside.
pub fn as_f64<S: Serializer>(x: &Exact, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(super::to_f64(x))
}

/// [`as_f64`] for an optional number.
pub fn option_as_f64<S: Serializer>(x: &Option<Exact>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => s.serialize_f64(super::to_f64(x)),
        None => s.serialize_none(),
    }
}

/// The same for an optional number.
pub mod option {
    use super::Exact;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &Option<Exact>, s: S) -> Result<S::Ok, S::Error> {
        match x {
            Some(x) => super::serialize(x, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Exact>, D::Error> {
        #[derive(Deserialize)]
        struct Wrap(#[serde(with = "super")] Exact);
        Ok(Option::<Wrap>::deserialize(d)?.map(|w| w.0))
    }
}
