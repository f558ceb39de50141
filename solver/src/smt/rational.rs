//! Exact numbers between f64 and z3: every f64 is a dyadic rational m·2^e, so instance
//! constants enter z3 without rounding; z3's rationals come back through their text form.

/// `(numerator, denominator)` decimal strings equal to `v` exactly.
pub(crate) fn exact_fraction(v: f64) -> (String, String) {
    if v == 0.0 || !v.is_finite() {
        return ("0".into(), "1".into());
    }
    let bits = v.to_bits();
    let negative = bits >> 63 == 1;
    let exp_bits = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut mantissa, mut exp) = if exp_bits == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_bits - 1075)
    };
    while mantissa % 2 == 0 && exp < 0 {
        mantissa /= 2;
        exp += 1;
    }
    let sign = if negative { "-" } else { "" };
    if exp >= 0 {
        let num = big_shift(mantissa, exp as u32);
        (format!("{sign}{num}"), "1".into())
    } else {
        (format!("{sign}{mantissa}"), big_shift(1, (-exp) as u32))
    }
}

/// Decimal string of `m · 2^shift` (arbitrary size, base-1e9 limbs).
fn big_shift(m: u64, shift: u32) -> String {
    let mut limbs: Vec<u64> = vec![m % 1_000_000_000, m / 1_000_000_000 % 1_000_000_000];
    limbs.push(m / 1_000_000_000_000_000_000);
    for _ in 0..shift {
        let mut carry = 0;
        for limb in limbs.iter_mut() {
            let v = *limb * 2 + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut s = limbs.last().map(|l| l.to_string()).unwrap_or_default();
    for limb in limbs.iter().rev().skip(1) {
        s.push_str(&format!("{limb:09}"));
    }
    s
}

/// Parses z3's text of a real numeral — `12.5`, `(/ 3.0 8.0)`, `(- (/ 1.0 3.0))`,
/// `(- 2.0)` — to the nearest f64 (≈ 1 ulp per operand).
pub(crate) fn parse_numeral(text: &str) -> Option<f64> {
    let cleaned = text.replace(['(', ')'], " ");
    let tokens: Vec<&str> = cleaned.split_whitespace().collect();
    let (negative, rest) = match tokens.first() {
        Some(&"-") => (true, &tokens[1..]),
        _ => (false, &tokens[..]),
    };
    let value = match rest {
        [x] => x.parse::<f64>().ok()?,
        ["/", a, b] => a.parse::<f64>().ok()? / b.parse::<f64>().ok()?,
        _ => return None,
    };
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_exact() {
        assert_eq!(exact_fraction(12.5), ("25".into(), "2".into()));
        assert_eq!(exact_fraction(3.0), ("3".into(), "1".into()));
        assert_eq!(exact_fraction(-0.375), ("-3".into(), "8".into()));
        let (n, d) = exact_fraction(0.1);
        assert_eq!(n, "3602879701896397");
        assert_eq!(d, "36028797018963968");
        assert_eq!(exact_fraction(2f64.powi(70)).0, "1180591620717411303424");
    }

    #[test]
    fn numerals_parse() {
        assert_eq!(parse_numeral("12.5"), Some(12.5));
        assert_eq!(parse_numeral("(/ 3.0 8.0)"), Some(0.375));
        assert_eq!(parse_numeral("(- (/ 1.0 4.0))"), Some(-0.25));
        assert_eq!(parse_numeral("(- 2.0)"), Some(-2.0));
        assert_eq!(parse_numeral("x"), None);
    }
}
