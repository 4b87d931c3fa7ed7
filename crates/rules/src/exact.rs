//! Exact numbers: every Confidence, weight, multiplier, score, sum and rank of the contest is a
//! fraction of big integers ([`Exact`]), so that equal results are equal and a tie is a tie
//! (`1/6 + 1 = 1/2 + 2/3`, `6 x 16 x 1/3 = 16 + 16`). Rounding happens only when a number is
//! shown or exported as a decimal ([`decimal`], [`to_f64`]); exports carry the exact fraction too
//! ([`fraction`]).
//!
//! Rules files write numbers as TOML integers (`16`), decimals (`0.997`, read as the decimal
//! written: 997/1000, never the nearest binary float) or strings holding a fraction or a decimal
//! (`"254/25"`, `"10.16"`): [`parse`] and the serde helpers of [`serde_exact`].

pub mod serde_exact;
mod sum;
#[cfg(test)]
mod tests;

use num_bigint::BigInt;
use num_rational::Ratio;
use num_traits::{One, Signed, Zero};

pub use self::sum::Sum;

/// An exact rational number.
pub type Exact = Ratio<BigInt>;

/// `n` as an exact number.
pub fn int(n: i64) -> Exact {
    Exact::from_integer(BigInt::from(n))
}

/// `n / d` as an exact number (`d` not 0).
pub fn ratio(n: i64, d: i64) -> Exact {
    Exact::new(BigInt::from(n), BigInt::from(d))
}

/// 0.
pub fn zero() -> Exact {
    Exact::zero()
}

/// 1.
pub fn one() -> Exact {
    Exact::one()
}

/// A count as an exact number.
pub fn count(n: usize) -> Exact {
    Exact::from_integer(BigInt::from(n))
}

/// Reads a number written as an integer (`16`, `-4`), a decimal (`0.997`, `10.16`, `1e-3`) or a
/// fraction (`254/25`), exactly. `None` when it is none of these or a fraction divides by 0.
pub fn parse(text: &str) -> Option<Exact> {
    let text = text.trim();
    if let Some((n, d)) = text.split_once('/') {
        let n = parse(n)?;
        let d = parse(d)?;
        return (!d.is_zero()).then(|| n / d);
    }
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (negative, digits) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let numerator: BigInt = format!("{whole}{fraction}").parse().ok()?;
    let scale = exponent - i32::try_from(fraction.len()).ok()?;
    let ten = BigInt::from(10);
    let value = if scale >= 0 {
        Exact::from_integer(numerator * ten.pow(scale.unsigned_abs()))
    } else {
        Exact::new(numerator, ten.pow(scale.unsigned_abs()))
    };
    Some(if negative { -value } else { value })
}

/// A float read as the decimal it prints as (Rust prints the shortest decimal that reads back as
/// the same float: `0.997` gives 997/1000). For numbers a user wrote in a file as TOML floats;
/// `None` for NaN and infinities.
pub fn from_written_f64(x: f64) -> Option<Exact> {
    x.is_finite().then(|| parse(&format!("{x}"))).flatten()
}

/// A float's exact value (every finite float is a fraction with a power of two below): for
/// measurements (seconds, megabytes), which are what they are, not what someone wrote.
pub fn from_f64_exact(x: f64) -> Exact {
    if !x.is_finite() || x == 0.0 {
        return zero();
    }
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, exponent) = if exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), exponent - 1075)
    };
    let two = BigInt::from(2);
    let m = BigInt::from(mantissa);
    let value = if exponent >= 0 {
        Exact::from_integer(m * two.pow(exponent.unsigned_abs()))
    } else {
        Exact::new(m, two.pow(exponent.unsigned_abs()))
    };
    if negative { -value } else { value }
}

/// `x` rounded to `places` decimals (half away from zero), for display: `decimal(2/3, 2)` is
/// `"0.67"`, `decimal(32, 2)` is `"32.00"`. Never `-0.00`.
pub fn decimal(x: &Exact, places: usize) -> String {
    let scale = BigInt::from(10).pow(places as u32);
    let scaled = x.abs() * Exact::from_integer(scale.clone());
    // Half away from zero: floor(|x| * 10^p + 1/2).
    let rounded = (scaled + ratio(1, 2)).floor().to_integer();
    let negative = x.is_negative() && !rounded.is_zero();
    let digits = rounded.to_string();
    let body = if places == 0 {
        digits
    } else {
        let padded = format!("{digits:0>width$}", width = places + 1);
        let (whole, fraction) = padded.split_at(padded.len() - places);
        format!("{whole}.{fraction}")
    };
    if negative { format!("-{body}") } else { body }
}

/// The nearest float (within a few units of the last place), for display and drawing only:
/// never compare or add these.
pub fn to_f64(x: &Exact) -> f64 {
    if x.is_integer() {
        return x.to_integer().to_string().parse().unwrap_or(f64::NAN);
    }
    // 20 significant digits are plenty for a float: scale so that the integer part has them.
    let magnitude = x.abs();
    let mut places = 20usize;
    if magnitude < one() {
        let mut m = magnitude.clone();
        while m < one() && places < 400 {
            m *= int(10);
            places += 1;
        }
    }
    decimal(x, places).parse().unwrap_or(f64::NAN)
}

/// The exact value as a fraction `n/d` (`n` when it is an integer), as exports carry it.
pub fn fraction(x: &Exact) -> String {
    if x.is_integer() {
        x.numer().to_string()
    } else {
        format!("{}/{}", x.numer(), x.denom())
    }
}
