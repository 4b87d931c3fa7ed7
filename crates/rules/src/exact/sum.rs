//! [`Sum`]: an exact sum of fractions kept in machine words while it fits, for the scoring's hot
//! sums; the same fraction as adding the [`Exact`]s one by one.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::{Exact, from_f64_exact};

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
