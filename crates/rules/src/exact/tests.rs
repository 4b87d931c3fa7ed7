//! Exact numbers read, summed, multiplied and rounded.

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
fn sums_that_floats_get_wrong_are_exact() {
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
