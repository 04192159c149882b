//! Resource quantities (`500m`, `1.5Gi`, `2e3`, `128974848`) in the upstream syntax: a signed
//! decimal number followed by a binary suffix (`Ki` … `Ei`), a decimal suffix (`n`, `u`, `m`,
//! `k`, `M` … `E`) or a decimal exponent.

/// A parsed quantity as a whole number of thousandths (so `100m` CPU is 100 and `1Ki` is
/// 1,024,000), rounded up as upstream rounds fractional milli-values. Large enough for any
/// quantity a manifest carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Milli(pub i128);

impl Milli {
    /// The value in whole units, rounded up (e.g. bytes, or cores).
    pub fn units_ceil(self) -> i128 {
        self.0.div_euclid(1000) + i128::from(self.0.rem_euclid(1000) != 0)
    }
}

/// Why a quantity does not parse (upstream's message).
pub const QUANTITY_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// Parses `text`; `None` when it is not a quantity.
pub fn parse(text: &str) -> Option<Milli> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let digits_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(digits_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return None;
    }
    // The value is mantissa × 10^exp10 × 2^exp2.
    let mantissa: i128 = format!("{whole}{fraction}").parse().ok()?;
    let mut exp10 = -(fraction.len() as i32);
    let mut exp2 = 0u32;
    match suffix {
        "" => {}
        "n" => exp10 -= 9,
        "u" => exp10 -= 6,
        "m" => exp10 -= 3,
        "k" => exp10 += 3,
        "M" => exp10 += 6,
        "G" => exp10 += 9,
        "T" => exp10 += 12,
        "P" => exp10 += 15,
        "E" => exp10 += 18,
        "Ki" => exp2 = 10,
        "Mi" => exp2 = 20,
        "Gi" => exp2 = 30,
        "Ti" => exp2 = 40,
        "Pi" => exp2 = 50,
        "Ei" => exp2 = 60,
        other => {
            let exponent = other.strip_prefix(['e', 'E'])?;
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            exp10 += exponent.parse::<i32>().ok()?;
        }
    }
    // Thousandths: one more factor of 10^3.
    exp10 += 3;
    let mut value = mantissa.checked_mul(1i128.checked_shl(exp2)?)?;
    if exp10 >= 0 {
        value = value.checked_mul(10i128.checked_pow(exp10 as u32)?)?;
    } else {
        let divisor = 10i128.checked_pow(exp10.unsigned_abs())?;
        value = value / divisor + i128::from(value % divisor != 0);
    }
    Some(Milli(if negative { -value } else { value }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_forms() {
        let cases = [
            ("1", 1000),
            ("500m", 500),
            ("0.5", 500),
            ("1.5Gi", 1_610_612_736_000),
            ("128974848", 128_974_848_000),
            ("129e6", 129_000_000_000),
            ("129M", 129_000_000_000),
            ("123Mi", 128_974_848_000),
            ("1Ki", 1_024_000),
            ("1k", 1_000_000),
            ("-2", -2000),
            ("+3", 3000),
            (".5", 500),
            ("1n", 1),
            ("1E-3", 1),
        ];
        for (text, milli) in cases {
            assert_eq!(parse(text), Some(Milli(milli)), "{text}");
        }
        assert_eq!(parse("1.5Gi").unwrap().units_ceil(), 1_610_612_736);
        assert_eq!(parse("100m").unwrap().units_ceil(), 1);
    }

    #[test]
    fn rejects_what_upstream_rejects() {
        for bad in [
            "", "abc", "1.2.3", "1KB", "1 Gi", "Gi", "1e", "1e+", "--1", "1ki",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
