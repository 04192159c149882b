//! Bearer tokens with fixed users (`--token-auth-file`, the admin kubeconfig's token).

use std::collections::HashMap;
use std::path::Path;

use async_trait::async_trait;

use super::{Authenticator, Credentials, Outcome};
use crate::error::{Error, Result};
use crate::user::UserInfo;

/// Bearer tokens with fixed users: the `--token-auth-file` CSV, and generated tokens such
/// as the admin kubeconfig's.
#[derive(Debug, Default, Clone)]
pub struct StaticTokens {
    users: HashMap<String, UserInfo>,
}

impl StaticTokens {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `token` as `user`.
    pub fn insert(&mut self, token: impl Into<String>, user: UserInfo) {
        self.users.insert(token.into(), user);
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Loads the upstream token file: CSV lines `token,user,uid[,"group1,group2"]`; further
    /// columns are ignored; blank lines are skipped.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::TokenFileRead {
            path: path.into(),
            source,
        })?;
        Self::parse(&text).map_err(|(line, reason)| Error::TokenFileLine {
            path: path.into(),
            line,
            reason,
        })
    }

    /// Parses token file text; errors carry the 1-based line number.
    pub fn parse(text: &str) -> Result<Self, (usize, String)> {
        let mut out = Self::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let fields = split_csv(line).map_err(|e| (line_no, e))?;
            if fields.len() < 3 {
                return Err((
                    line_no,
                    format!(
                        "expected at least 3 columns (token,user,uid), found {}",
                        fields.len()
                    ),
                ));
            }
            let token = fields[0].trim();
            if token.is_empty() {
                return Err((line_no, "the token is empty".into()));
            }
            let groups = fields
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            out.insert(
                token,
                UserInfo {
                    name: fields[1].clone(),
                    uid: fields[2].clone(),
                    groups,
                    ..Default::default()
                },
            );
        }
        Ok(out)
    }
}

/// Splits one CSV line, honouring double quotes (`""` is a quote inside a quoted field).
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', false) if field.is_empty() => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => {
                quoted = false;
                if !matches!(chars.peek(), None | Some(',')) {
                    return Err("unexpected text after a closing quote".into());
                }
            }
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    if quoted {
        return Err("unterminated quoted field".into());
    }
    fields.push(field);
    Ok(fields)
}

impl StaticTokens {
    /// The user of the request's token, if it is in the file.
    fn lookup(&self, credentials: &Credentials<'_>) -> Outcome {
        match credentials
            .bearer_token
            .and_then(|token| self.users.get(token))
        {
            Some(user) => Outcome::authenticated(user.clone()),
            None => Outcome::NoOpinion,
        }
    }
}

#[async_trait]
impl Authenticator for StaticTokens {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        self.lookup(credentials)
    }

    fn authenticate_now(&self, credentials: &Credentials<'_>) -> Option<Outcome> {
        Some(self.lookup(credentials))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_upstream_csv() {
        let tokens = StaticTokens::parse(
            "t1,alice,u1,\"dev,ops\"\n\nt2,bob,u2\nt3,\"carol, c\",u3,,extra\n",
        )
        .unwrap();
        assert_eq!(tokens.len(), 3);
        assert_eq!(tokens.users["t1"].groups, ["dev", "ops"]);
        assert!(tokens.users["t2"].groups.is_empty());
        assert_eq!(tokens.users["t3"].name, "carol, c");
        assert_eq!(StaticTokens::parse("ok,a,1\nonly,two").unwrap_err().0, 2);
        assert!(StaticTokens::parse("t,\"open,1").is_err());
    }
}
