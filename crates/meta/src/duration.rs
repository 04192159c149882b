//! Durations in Go's text form, as Kubernetes objects and configuration files carry them
//! (`metav1.Duration`: `1h0m0s`, `1.5s`, `300ms`).

/// Go's `time.Duration.String()` form: `1h0m0s`, `1.5s`, `300ms`, `0s`.
pub fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000_000_000 {
        let (unit, div) = if n < 1_000 {
            ("ns", 1)
        } else if n < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{sign}{}{unit}", decimal(n, div));
    }
    let secs = n / 1_000_000_000;
    let frac = n % 1_000_000_000;
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    let seconds = decimal(s * 1_000_000_000 + frac, 1_000_000_000);
    if h > 0 {
        format!("{sign}{h}h{m}m{seconds}s")
    } else if m > 0 {
        format!("{sign}{m}m{seconds}s")
    } else {
        format!("{sign}{seconds}s")
    }
}

/// `n / div` in decimal with the trailing zeros of the fraction left out.
fn decimal(n: u64, div: u64) -> String {
    let whole = n / div;
    let frac = n % div;
    if frac == 0 {
        return whole.to_string();
    }
    let digits = div.ilog10() as usize;
    let text = format!("{frac:0digits$}");
    format!("{whole}.{}", text.trim_end_matches('0'))
}

/// Parses a Go duration (`1h30m`, `1.5s`, `300ms`, `-2m`) into nanoseconds.
pub fn parse_go_duration(text: &str) -> Option<i64> {
    if text == "0" {
        return Some(0);
    }
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        if end == 0 {
            return None;
        }
        let number: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let n = total.round() as i64;
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_and_print_as_go_does() {
        for (nanos, text) in [
            (3_600_000_000_000, "1h0m0s"),
            (1_500_000_000, "1.5s"),
            (300_000_000, "300ms"),
            (0, "0s"),
            (90_000_000_000, "1m30s"),
            (-2_000, "-2µs"),
        ] {
            assert_eq!(go_duration(nanos), text);
            assert_eq!(parse_go_duration(text), Some(nanos));
        }
        assert_eq!(parse_go_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration("s"), None);
    }
}
