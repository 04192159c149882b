//! The string `format`s a CRD schema can ask for and upstream checks (`date-time`, `email`,
//! `ipv4`, ...). Formats it does not know, and the numeric ones, constrain nothing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `s` has `format`.
pub fn valid(format: &str, s: &str) -> bool {
    match format {
        "date" => date(s),
        "date-time" | "datetime" => date_time(s),
        "byte" => base64(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => cidr(s),
        "mac" => mac(s),
        "uuid" => uuid(s),
        "email" => email(s),
        "hostname" => hostname(s),
        "duration" => capstan_meta::duration::parse_go_duration(s).is_some(),
        "uri" => s.contains(':') && !s.contains(char::is_whitespace),
        _ => true,
    }
}

fn digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
}

fn date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    matches!(parts.as_slice(), [y, m, d] if digits(y, 4) && digits(m, 2) && digits(d, 2)) && {
        let month: u32 = parts[1].parse().unwrap_or(0);
        let day: u32 = parts[2].parse().unwrap_or(0);
        (1..=12).contains(&month) && (1..=31).contains(&day)
    }
}

fn date_time(s: &str) -> bool {
    s.parse::<jiff::Timestamp>().is_ok()
}

fn base64(s: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).is_ok()
}

fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

fn mac(s: &str) -> bool {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    matches!(parts.len(), 6 | 8 | 20)
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn uuid(s: &str) -> bool {
    let lens = [8, 4, 4, 4, 12];
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip(lens)
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn email(s: &str) -> bool {
    match s.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty() && !local.contains(char::is_whitespace) && hostname(domain)
        }
        None => false,
    }
}

fn hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_accept_and_refuse() {
        let cases = [
            ("date", "2024-02-29", true),
            ("date", "2024-13-01", false),
            ("date-time", "2024-02-29T10:00:00Z", true),
            ("date-time", "yesterday", false),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "10.0.0.256", false),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
            ("uuid", "123e4567", false),
            ("email", "a@example.com", true),
            ("email", "example.com", false),
            ("hostname", "a-b.example", true),
            ("hostname", "-a", false),
            ("byte", "aGk=", true),
            ("byte", "%%", false),
            ("int32", "anything", true),
        ];
        for (format, s, ok) in cases {
            assert_eq!(valid(format, s), ok, "{format} {s}");
        }
    }
}
