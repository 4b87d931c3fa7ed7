//! The values tools compute: booleans, exact non-negative integers of any size, and `+inf`.
//!
//! Rule E-1.2/E-1.4: StateSpace and UpperBounds values are integers; the MCC consensus has
//! state counts far beyond 2^64 (one of 23,857 digits) and writes unbounded results as `+inf`.
//! Values are therefore kept exactly, never as floats.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use num_bigint::BigUint;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One value computed by a tool, or trusted by the contest.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Bool(bool),
    /// An integer that fits 64 bits (the common case, kept small).
    Int(u64),
    /// An integer beyond 64 bits. Invariant: always `> u64::MAX`, so equal values compare equal.
    Big(Arc<BigUint>),
    /// Unbounded (`+inf` or `inf` in tool output).
    Inf,
}

/// The kind of value an examination expects (rules files: `value = "boolean" | "integer"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    Boolean,
    Integer,
}

impl ValueKind {
    /// Its name in rules files (`boolean`, `integer`).
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Boolean => "boolean",
            ValueKind::Integer => "integer",
        }
    }
}

/// Why a word is not a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("`{0}` is a negative number, which means \"not computed\"")]
    Negative(String),
    #[error("`{0}` is not TRUE, FALSE, an integer or +inf")]
    Invalid(String),
}

impl Value {
    /// Parses a value word as tools print it: `TRUE`, `FALSE`, decimal integers of any size,
    /// `inf`/`+inf`. A leading `+` and leading zeros are accepted and normalised away.
    pub fn parse(word: &str) -> Result<Value, ValueError> {
        match word {
            "TRUE" => return Ok(Value::Bool(true)),
            "FALSE" => return Ok(Value::Bool(false)),
            "+inf" | "inf" | "+INF" | "INF" | "+Inf" | "Inf" => return Ok(Value::Inf),
            _ => {}
        }
        if let Some(rest) = word.strip_prefix('-') {
            if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ValueError::Negative(word.to_string()));
            }
            return Err(ValueError::Invalid(word.to_string()));
        }
        let digits = word.strip_prefix('+').unwrap_or(word);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ValueError::Invalid(word.to_string()));
        }
        Ok(Value::from_decimal_digits(digits))
    }

    fn from_decimal_digits(digits: &str) -> Value {
        let trimmed = digits.trim_start_matches('0');
        if trimmed.len() <= 19 {
            // At most 19 digits always fits u64 (u64::MAX has 20 digits).
            return Value::Int(trimmed.parse().unwrap_or(0));
        }
        match trimmed.parse::<u64>() {
            Ok(n) => Value::Int(n),
            Err(_) => match BigUint::from_str(trimmed) {
                Ok(big) => Value::Big(Arc::new(big)),
                // Unreachable for an all-digit string; keep a total function anyway.
                Err(_) => Value::Inf,
            },
        }
    }

    /// Builds an integer value from a big integer, keeping the small form when it fits.
    /// A number in scientific notation that denotes an integer exactly (`7.1790E+0023` is
    /// 71790 x 10^19, `2.5e3` is 2500), read as that integer; `None` for anything else (no
    /// exponent, a sign, a fraction left over such as `1.25E+1`, an exponent above 100,000).
    /// The MCC's own files write big state counts so, and the protocol's integers are read
    /// exactly: a tool printing such a count is judged on the integer it wrote (docs/rules.md).
    pub fn parse_scientific_integer(word: &str) -> Option<Value> {
        let (mantissa, exponent) = word.split_once(['e', 'E'])?;
        let exponent: i64 = exponent.parse().ok()?;
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let int_part = int_part.strip_prefix('+').unwrap_or(int_part);
        let digits = format!("{int_part}{frac_part}");
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // digits x 10^(exponent - fraction digits); trailing zeros of the fraction may absorb a
        // negative shift (`1.50E+1` is 15).
        let mut shift = exponent - frac_part.len() as i64;
        let mut digits = digits.as_str();
        while shift < 0 && digits.len() > 1 && digits.ends_with('0') {
            digits = &digits[..digits.len() - 1];
            shift += 1;
        }
        if !(0..=100_000).contains(&shift) {
            return None;
        }
        let base: BigUint = digits.parse().ok()?;
        Some(Value::from_biguint(
            base * BigUint::from(10u32).pow(shift as u32),
        ))
    }

    pub fn from_biguint(n: BigUint) -> Value {
        match u64::try_from(&n) {
            Ok(small) => Value::Int(small),
            Err(_) => Value::Big(Arc::new(n)),
        }
    }

    /// Its kind of value.
    pub fn kind(&self) -> ValueKind {
        match self {
            Value::Bool(_) => ValueKind::Boolean,
            Value::Int(_) | Value::Big(_) | Value::Inf => ValueKind::Integer,
        }
    }
}

impl fmt::Display for Value {
    /// Values are written as in the tools' output: `TRUE`, `FALSE`, `42`, `+inf`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(true) => f.write_str("TRUE"),
            Value::Bool(false) => f.write_str("FALSE"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Big(n) => write!(f, "{n}"),
            Value::Inf => f.write_str("+inf"),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            CompactValue::from(self).serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
            Value::parse(&text).map_err(serde::de::Error::custom)
        } else {
            CompactValue::deserialize(deserializer).map(Value::from)
        }
    }
}

/// The binary encoding of a value (store packs): small integers stay small.
#[derive(Serialize, Deserialize)]
enum CompactValue {
    False,
    True,
    Int(u64),
    Big(Vec<u8>),
    Inf,
}

impl From<&Value> for CompactValue {
    fn from(value: &Value) -> Self {
        match value {
            Value::Bool(false) => CompactValue::False,
            Value::Bool(true) => CompactValue::True,
            Value::Int(n) => CompactValue::Int(*n),
            Value::Big(n) => CompactValue::Big(n.to_bytes_le()),
            Value::Inf => CompactValue::Inf,
        }
    }
}

impl From<CompactValue> for Value {
    fn from(value: CompactValue) -> Self {
        match value {
            CompactValue::False => Value::Bool(false),
            CompactValue::True => Value::Bool(true),
            CompactValue::Int(n) => Value::Int(n),
            CompactValue::Big(bytes) => Value::from_biguint(BigUint::from_bytes_le(&bytes)),
            CompactValue::Inf => Value::Inf,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_tools_print() {
        assert_eq!(Value::parse("TRUE"), Ok(Value::Bool(true)));
        assert_eq!(Value::parse("FALSE"), Ok(Value::Bool(false)));
        assert_eq!(Value::parse("42"), Ok(Value::Int(42)));
        assert_eq!(Value::parse("+42"), Ok(Value::Int(42)));
        assert_eq!(Value::parse("0042"), Ok(Value::Int(42)));
        assert_eq!(Value::parse("0"), Ok(Value::Int(0)));
        assert_eq!(Value::parse("000"), Ok(Value::Int(0)));
        assert_eq!(Value::parse("inf"), Ok(Value::Inf));
        assert_eq!(Value::parse("+inf"), Ok(Value::Inf));
    }

    #[test]
    fn negative_numbers_mean_not_computed() {
        assert!(matches!(Value::parse("-1"), Err(ValueError::Negative(_))));
        assert!(matches!(Value::parse("-"), Err(ValueError::Invalid(_))));
    }

    #[test]
    fn rejects_garbage() {
        for word in ["", "true", "1.5", "7.1790E+0023", "12a", "+", "∞"] {
            assert!(
                matches!(Value::parse(word), Err(ValueError::Invalid(_))),
                "{word}"
            );
        }
    }

    #[test]
    fn u64_boundary_is_exact() {
        assert_eq!(
            Value::parse("18446744073709551615"),
            Ok(Value::Int(u64::MAX))
        );
        let above = Value::parse("18446744073709551616").unwrap();
        assert!(matches!(above, Value::Big(_)));
        assert_eq!(above.to_string(), "18446744073709551616");
        // Leading zeros do not push a small number into the big form.
        assert_eq!(
            Value::parse("000000000000000000000000000007"),
            Ok(Value::Int(7))
        );
    }

    #[test]
    fn huge_integers_are_exact_and_compare_by_value() {
        let digits = "9".repeat(23_857);
        let a = Value::parse(&digits).unwrap();
        let b = Value::parse(&format!("+000{digits}")).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), digits);
        let mut other = digits.clone();
        other.replace_range(23_856.., "8");
        assert_ne!(a, Value::parse(&other).unwrap());
    }

    #[test]
    fn display_round_trips() {
        for word in [
            "TRUE",
            "FALSE",
            "0",
            "17",
            "+inf",
            "123456789012345678901234567890",
        ] {
            assert_eq!(Value::parse(word).unwrap().to_string(), word);
        }
    }

    #[test]
    fn serde_round_trips_in_both_encodings() {
        let values = vec![
            Value::Bool(true),
            Value::Bool(false),
            Value::Int(3),
            Value::parse("123456789012345678901234567890").unwrap(),
            Value::Inf,
        ];
        let json = serde_json::to_string(&values).unwrap();
        assert_eq!(
            json,
            r#"["TRUE","FALSE","3","123456789012345678901234567890","+inf"]"#
        );
        assert_eq!(serde_json::from_str::<Vec<Value>>(&json).unwrap(), values);
        let bytes = postcard::to_allocvec(&values).unwrap();
        assert_eq!(postcard::from_bytes::<Vec<Value>>(&bytes).unwrap(), values);
    }
}
