//! Numbers in messages: [`num`] writes an `f64` as Rust's `{}` does in the ordinary range and
//! in exponent notation outside it, so that `1e300` is not echoed as a 301-digit integer nor a
//! subnormal as 300 zeros.

/// `x` as `{}` writes it when `1e-5 ≤ |x| < 1e16` (or `x` is 0, ±∞ or NaN), otherwise as
/// `{:e}` (the shortest digits that round-trip, e.g. `1e300`, `1e-310`, `2.5e-7`).
pub fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn ordinary_numbers_are_unchanged_and_extreme_ones_use_an_exponent() {
        for (x, want) in [
            (2.0, "2"),
            (-1.0, "-1"),
            (0.01, "0.01"),
            (1e-5, "0.00001"),
            (123456.5, "123456.5"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
            (1e16, "1e16"),
            (1e300, "1e300"),
            (1e-310, "1e-310"),
            (-2.5e-7, "-2.5e-7"),
        ] {
            assert_eq!(num(x), want, "{x:?}");
        }
        assert_eq!(num(f64::NAN), "NaN");
    }
}
