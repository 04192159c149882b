//! [`Redacted`]: a secret (a token, a private key) that `Debug` does not print, so a
//! configuration logged or dumped in a panic does not leak it.

/// A value `Debug` shows as `<redacted>`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redacted<T>(pub T);

impl<T> std::fmt::Debug for Redacted<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl<T> std::ops::Deref for Redacted<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_value() {
        let token = Some(Redacted("s3cret".to_string()));
        assert_eq!(format!("{token:?}"), "Some(<redacted>)");
        assert_eq!(token.as_deref().map(String::as_str), Some("s3cret"));
    }
}
