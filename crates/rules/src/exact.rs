//! Exact numbers: every Confidence, weight, multiplier, score, sum and rank of the contest is a
//! fraction of big integers ([`Exact`]), so that equal results are equal and a tie is a tie
//! (`1/6 + 1 = 1/2 + 2/3`, `6 x 16 x 1/3 = 16 + 16`). Rounding happens only when a number is
//! shown or exported as a decimal ([`decimal`], [`to_f64`]); exports carry the exact fraction too
//! ([`fraction`]).
//!
//! Rules files write numbers as TOML integers (`16`), decimals (`0.997`, read as the decimal
//! written: 997/1000, never the nearest binary float) or strings holding a fraction or a decimal
//! (`"254/25"`, `"10.16"`): [`parse`] and the serde helpers of [`serde_exact`].

use num_bigint::BigInt;
use num_rational::Ratio;
use num_traits::{One, Signed, Zero};

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
    if negative {
        -value
    } else {
        value
    }
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
    if negative {
        format!("-{body}")
    } else {
        body
    }
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

/// An exact sum, fast while it stays a small fraction: numerator and denominator in `i128`
/// (terms too), added with checked arithmetic and reduced by a machine-word gcd; on
/// overflow, or for a term too large, it goes on with big integers. The result is the same
/// fraction as adding the [`Exact`]s one by one (a sum is a sum; fractions are kept reduced).
/// For the scoring's hot sums (points of 16/values, measured floats), where `Ratio<BigInt>`'s
/// big-integer gcds per addition cost most of the time (docs/BENCHMARKS.md).
#[derive(Clone, Debug)]
pub enum Sum {
    /// `n / d`, `d > 0`, reduced.
    Small(i128, i128),
    Big(Exact),
}

impl PartialEq for Sum {
    fn eq(&self, other: &Sum) -> bool {
        match (self, other) {
            (Sum::Small(n, d), Sum::Small(m, e)) => n == m && d == e,
            _ => self.value() == other.value(),
        }
    }
}

impl Eq for Sum {}

impl Ord for Sum {
    /// By value, exactly: small fractions by cross products in `i128` while they fit.
    fn cmp(&self, other: &Sum) -> std::cmp::Ordering {
        if let (Sum::Small(n1, d1), Sum::Small(n2, d2)) = (self, other) {
            if d1 == d2 {
                return n1.cmp(n2);
            }
            if let (Some(a), Some(b)) = (n1.checked_mul(*d2), n2.checked_mul(*d1)) {
                return a.cmp(&b);
            }
        }
        self.value().cmp(&other.value())
    }
}

impl PartialOrd for Sum {
    fn partial_cmp(&self, other: &Sum) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Default for Sum {
    fn default() -> Sum {
        Sum::Small(0, 1)
    }
}

fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// `n1/d1 + n2/d2` (both reduced, denominators positive), reduced; `None` on overflow.
fn add_small(n1: i128, d1: i128, n2: i128, d2: i128) -> Option<(i128, i128)> {
    // Without a gcd where the result is known reduced: an integer added (gcd(n1 + n2 d1, d1) =
    // gcd(n1, d1) = 1), or powers of two (the floats), whose gcds are shifts.
    if d2 == 1 {
        return Some((n1.checked_add(n2.checked_mul(d1)?)?, d1));
    }
    if d1 == 1 {
        return Some((n1.checked_mul(d2)?.checked_add(n2)?, d2));
    }
    if d1 & (d1 - 1) == 0 && d2 & (d2 - 1) == 0 {
        let d = d1.max(d2);
        let n = n1
            .checked_mul(d / d1)?
            .checked_add(n2.checked_mul(d / d2)?)?;
        if n == 0 {
            return Some((0, 1));
        }
        let shift = n.trailing_zeros().min(d.trailing_zeros());
        return Some((n >> shift, d >> shift));
    }
    let g = gcd_u128(d1 as u128, d2 as u128) as i128;
    let (a, b) = (d1 / g, d2 / g);
    let n = n1.checked_mul(b)?.checked_add(n2.checked_mul(a)?)?;
    let d = a.checked_mul(d2)?;
    if n == 0 {
        return Some((0, 1));
    }
    let r = gcd_u128(n.unsigned_abs(), d as u128) as i128;
    Some((n / r, d / r))
}

/// `n1/d1 x n2/d2` (both reduced, denominators positive), reduced; `None` on overflow. The
/// cross gcds keep the factors small and the product reduced (gcd(n1, d1) = gcd(n2, d2) = 1).
fn mul_small(n1: i128, d1: i128, n2: i128, d2: i128) -> Option<(i128, i128)> {
    if n1 == 0 || n2 == 0 {
        return Some((0, 1));
    }
    let g1 = gcd_u128(n1.unsigned_abs(), d2 as u128) as i128;
    let g2 = gcd_u128(n2.unsigned_abs(), d1 as u128) as i128;
    Some((
        (n1 / g1).checked_mul(n2 / g2)?,
        (d1 / g2).checked_mul(d2 / g1)?,
    ))
}

/// `x` as a small fraction, if its numerator and denominator fit in `i128`.
fn small(x: &Exact) -> Option<(i128, i128)> {
    use num_traits::ToPrimitive;
    Some((x.numer().to_i128()?, x.denom().to_i128()?))
}

impl From<Exact> for Sum {
    /// `x` in machine words if it fits.
    fn from(x: Exact) -> Sum {
        match small(&x) {
            Some((n, d)) => Sum::Small(n, d),
            None => Sum::Big(x),
        }
    }
}

impl From<&Exact> for Sum {
    fn from(x: &Exact) -> Sum {
        match small(x) {
            Some((n, d)) => Sum::Small(n, d),
            None => Sum::Big(x.clone()),
        }
    }
}

impl Sum {
    /// `self x factor`, exactly: in machine words while the product fits, with big integers
    /// otherwise. The same fraction as multiplying the [`Exact`]s.
    pub fn times(&self, factor: &Sum) -> Sum {
        if let (Sum::Small(n1, d1), Sum::Small(n2, d2)) = (self, factor) {
            if let Some((n, d)) = mul_small(*n1, *d1, *n2, *d2) {
                return Sum::Small(n, d);
            }
        }
        Sum::from(self.value() * factor.value())
    }

    /// Adds `x`.
    pub fn add(&mut self, x: &Exact) {
        if let Sum::Small(n, d) = *self {
            if let Some((xn, xd)) = small(x) {
                if let Some((n, d)) = add_small(n, d, xn, xd) {
                    *self = Sum::Small(n, d);
                    return;
                }
            }
            *self = Sum::Big(Exact::new(BigInt::from(n), BigInt::from(d)));
        }
        if let Sum::Big(total) = self {
            *total += x;
        }
    }

    /// Adds another sum.
    pub fn merge(&mut self, other: &Sum) {
        match (&*self, other) {
            (Sum::Small(n, d), Sum::Small(m, e)) => match add_small(*n, *d, *m, *e) {
                Some((n, d)) => *self = Sum::Small(n, d),
                None => {
                    let total = self.value() + other.value();
                    *self = Sum::Big(total);
                }
            },
            _ => {
                let total = self.value() + other.value();
                *self = Sum::Big(total);
            }
        }
    }

    /// Adds a float's exact value (as [`from_f64_exact`]), without big integers while it can.
    pub fn add_f64(&mut self, x: f64) {
        if !x.is_finite() || x == 0.0 {
            return;
        }
        let bits = x.to_bits();
        let negative = bits >> 63 == 1;
        let exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mut mantissa, mut exponent) = if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), exponent - 1075)
        };
        let zeros = mantissa.trailing_zeros().min(exponent.unsigned_abs()) as i32;
        if exponent < 0 {
            mantissa >>= zeros;
            exponent += zeros;
        }
        if (-62..=10).contains(&exponent) {
            let m = if negative {
                -(mantissa as i128)
            } else {
                mantissa as i128
            };
            let (n, d) = if exponent >= 0 {
                (m << exponent, 1i128)
            } else {
                (m, 1i128 << -exponent)
            };
            if let Sum::Small(sn, sd) = *self {
                if let Some((n, d)) = add_small(sn, sd, n, d) {
                    *self = Sum::Small(n, d);
                    return;
                }
            }
        }
        self.add(&from_f64_exact(x));
    }

    /// The sum.
    pub fn value(&self) -> Exact {
        match self {
            Sum::Small(n, d) => Exact::new_raw(BigInt::from(*n), BigInt::from(*d)),
            Sum::Big(x) => x.clone(),
        }
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Sum::Small(n, _) => *n == 0,
            Sum::Big(x) => x.is_zero(),
        }
    }

    /// Above 0.
    pub fn is_positive(&self) -> bool {
        match self {
            Sum::Small(n, _) => *n > 0,
            Sum::Big(x) => x.is_positive(),
        }
    }
}

/// Serde for numbers of rules files and exports: read from a TOML integer, float (as the decimal
/// written) or string (`"254/25"`); written as the fraction string of [`fraction`].
pub mod serde_exact {
    use super::{fraction, from_written_f64, int, parse, Exact};
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_numbers_are_read_exactly() {
        assert_eq!(parse("0.997"), Some(ratio(997, 1000)));
        assert_eq!(parse("10.16"), Some(ratio(254, 25)));
        assert_eq!(parse("254/25"), Some(ratio(254, 25)));
        assert_eq!(parse("16"), Some(int(16)));
        assert_eq!(parse("-4"), Some(int(-4)));
        assert_eq!(parse("1e-3"), Some(ratio(1, 1000)));
        assert_eq!(parse("1678/264"), Some(ratio(839, 132)));
        assert_eq!(parse(".5"), Some(ratio(1, 2)));
        assert_eq!(parse("1/0"), None);
        assert_eq!(parse("abc"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("."), None);
        // A TOML float is the decimal the user wrote, not the binary float nearest to it.
        assert_eq!(from_written_f64(0.997), Some(ratio(997, 1000)));
        assert_eq!(from_written_f64(10.16), Some(ratio(254, 25)));
        assert_eq!(from_written_f64(f64::NAN), None);
    }

    #[test]
    fn floats_convert_exactly() {
        assert_eq!(from_f64_exact(0.5), ratio(1, 2));
        assert_eq!(from_f64_exact(-3.0), int(-3));
        // 0.1 is not 1/10 in binary: its exact value has 2^55 below.
        assert_eq!(
            from_f64_exact(0.1),
            Exact::new(BigInt::from(3602879701896397u64), BigInt::from(2).pow(55))
        );
        assert_eq!(to_f64(&from_f64_exact(0.1)), 0.1);
    }

    #[test]
    fn the_issues_sums_are_exact() {
        // 6 instances x 16 x 1/3 = 32 = 16 + 16 (in floats, 31.999999999999996).
        let thirds = (0..6).fold(zero(), |t, _| t + int(16) * ratio(1, 3));
        assert_eq!(thirds, int(16) + int(16));
        // 1/6 + 1 = 7/6 = 1/2 + 2/3.
        assert_eq!(ratio(1, 6) + one(), ratio(1, 2) + ratio(2, 3));
    }

    #[test]
    fn sums_equal_big_integer_sums() {
        let terms = [
            ratio(16, 3),
            ratio(-32, 7),
            int(16),
            ratio(1, 6),
            Exact::new(BigInt::from(7), BigInt::from(2).pow(70)),
            ratio(i64::MAX, 3),
            ratio(i64::MAX - 1, i64::MAX),
            ratio(5, 11),
        ];
        let mut sum = Sum::default();
        let mut total = zero();
        for x in &terms {
            sum.add(x);
            total += x;
            assert_eq!(sum.value(), total);
        }
        let floats = [0.1, 12.75, 3e-5, 1e300, -2.5, 5e-324, 123456.789];
        let (mut sum, mut total) = (Sum::default(), zero());
        let mut merged = Sum::default();
        for x in floats {
            sum.add_f64(x);
            let mut one = Sum::default();
            one.add_f64(x);
            assert_eq!(one.value(), from_f64_exact(x));
            merged.merge(&one);
            total += from_f64_exact(x);
            assert_eq!(sum.value(), total);
            assert_eq!(merged.value(), total);
        }
        assert!(Sum::default().is_zero());
    }

    #[test]
    fn products_equal_big_integer_products() {
        let big = Exact::new(BigInt::from(7), BigInt::from(2).pow(70));
        let factors = [
            ratio(16, 3),
            ratio(-32, 7),
            int(0),
            int(-1),
            ratio(3, 16),
            ratio(i64::MAX, 3),
            ratio(i64::MAX - 1, i64::MAX),
            Exact::new(BigInt::from(i128::MAX), BigInt::from(3)),
            big.clone(),
        ];
        for a in &factors {
            for b in &factors {
                let product = Sum::from(a).times(&Sum::from(b));
                assert_eq!(product.value(), a * b, "{a} x {b}");
                // Reduced, as an Exact is: equal products are equal sums.
                assert_eq!(product, Sum::from(a * b));
            }
        }
        // Past i128 (2^126 x 2^126 / 3): big integers take over.
        let huge = Sum::from(Exact::from_integer(BigInt::from(1) << 126));
        assert!(matches!(huge, Sum::Small(..)));
        let squared = huge.times(&Sum::from(ratio(1, 3))).times(&huge);
        assert!(matches!(squared, Sum::Big(_)));
        assert_eq!(
            squared.value(),
            Exact::new(BigInt::from(1) << 252, BigInt::from(3))
        );
        assert!(matches!(Sum::from(&big), Sum::Small(..)));
        // Ordered by value, as the fractions are, small or big.
        for a in &factors {
            for b in &factors {
                assert_eq!(Sum::from(a).cmp(&Sum::from(b)), a.cmp(b), "{a} <> {b}");
            }
        }
        assert!(matches!(Sum::from(&big * &big), Sum::Big(_)));
    }

    #[test]
    fn display_rounds_half_away_from_zero() {
        assert_eq!(decimal(&ratio(2, 3), 2), "0.67");
        assert_eq!(decimal(&int(32), 2), "32.00");
        assert_eq!(decimal(&ratio(1, 8), 2), "0.13");
        assert_eq!(decimal(&ratio(-1, 8), 2), "-0.13");
        assert_eq!(decimal(&ratio(-1, 1000), 2), "0.00");
        assert_eq!(decimal(&ratio(7, 2), 0), "4");
        assert_eq!(decimal(&ratio(1, 3), 5), "0.33333");
        assert_eq!(to_f64(&ratio(2, 3)), 2.0 / 3.0);
        assert_eq!(to_f64(&ratio(1, 3000)), 1.0 / 3000.0);
        assert_eq!(to_f64(&int(16238)), 16238.0);
        assert_eq!(fraction(&ratio(839, 132)), "839/132");
        assert_eq!(fraction(&int(-4)), "-4");
    }
}
