//! Generated names and uids.

use rand::Rng;

/// The characters upstream draws generated-name suffixes from (no vowels, no look-alikes).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the random suffix appended to `generateName`.
pub const SUFFIX_LEN: usize = 5;
/// Longest generated name; the prefix is cut so that prefix and suffix fit.
const MAX_NAME: usize = 63;

/// A name from a `generateName` prefix: the prefix (cut to fit) plus five random characters.
pub fn generate(prefix: &str) -> String {
    let keep = prefix.len().min(MAX_NAME - SUFFIX_LEN);
    let mut rng = rand::rng();
    let mut name = String::with_capacity(keep + SUFFIX_LEN);
    name.push_str(&prefix[..floor_char_boundary(prefix, keep)]);
    for _ in 0..SUFFIX_LEN {
        name.push(ALPHABET[rng.random_range(0..ALPHABET.len())] as char);
    }
    name
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A new random object uid (a version 4 UUID).
///
/// Drawn from the thread's generator, a CSPRNG seeded from the operating system, rather
/// than from a `getrandom` system call per uid (1.4% of a StorageClass create's CPU).
pub fn uid() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    let id = uuid::Builder::from_random_bytes(bytes).into_uuid();
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    id.hyphenated().encode_lower(&mut text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_have_a_five_character_suffix() {
        let a = generate("fast-");
        assert_eq!(a.len(), 10);
        assert!(a.starts_with("fast-"));
        assert!(a[5..].bytes().all(|c| ALPHABET.contains(&c)));
        assert_ne!(generate("x-"), generate("x-"));
        assert_eq!(generate(&"p".repeat(100)).len(), 63);
    }

    #[test]
    fn uids_are_distinct_version_4_uuids() {
        let a = uid();
        let parsed = uuid::Uuid::parse_str(&a).expect("a UUID");
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        assert_eq!(a, parsed.hyphenated().to_string(), "lower-case, hyphenated");
        assert_ne!(a, uid());
    }
}
