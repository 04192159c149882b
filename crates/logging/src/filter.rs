//! Which events are logged: `-v` and `--vmodule`.

use tracing::{Level, Metadata};

/// The verbosity settings: a global level and per-module overrides.
#[derive(Debug, Clone, Default)]
pub struct Verbosity {
    global: u8,
    modules: Vec<(String, u8)>,
}

/// Parses `--vmodule`: comma-separated `pattern=N`.
pub fn parse_vmodule(value: &str) -> Result<Vec<(String, u8)>, String> {
    value
        .split(',')
        .filter(|entry| !entry.trim().is_empty())
        .map(|entry| {
            let (pattern, level) = entry
                .trim()
                .split_once('=')
                .ok_or_else(|| format!("{entry:?} is not pattern=N"))?;
            if pattern.is_empty() {
                return Err(format!("{entry:?} has an empty pattern"));
            }
            let level = level
                .parse()
                .map_err(|_| format!("{entry:?}: {level:?} is not a verbosity level"))?;
            Ok((pattern.to_string(), level))
        })
        .collect()
}

impl Verbosity {
    /// `-v` and `--vmodule`'s entries.
    pub fn new(global: u8, modules: Vec<(String, u8)>) -> Self {
        Self { global, modules }
    }

    /// The level for the first `--vmodule` pattern matching one of `names`, else `-v`.
    pub fn for_names(&self, names: &[&str]) -> u8 {
        self.module_level(names).unwrap_or(self.global)
    }

    fn module_level(&self, names: &[&str]) -> Option<u8> {
        self.modules
            .iter()
            .find(|(pattern, _)| names.iter().any(|name| glob_matches(pattern, name)))
            .map(|(_, level)| *level)
    }

    /// Whether an event or span with this metadata is logged.
    pub fn enabled(&self, meta: &Metadata<'_>) -> bool {
        let stem = meta
            .file()
            .and_then(|f| f.rsplit('/').next())
            .map(|f| f.strip_suffix(".rs").unwrap_or(f));
        let mut names: Vec<&str> = stem.into_iter().collect();
        names.extend(meta.module_path().unwrap_or(meta.target()).split("::"));
        let needed = match *meta.level() {
            Level::ERROR | Level::WARN | Level::INFO => 0,
            Level::DEBUG => 4,
            Level::TRACE => 6,
        };
        match self.module_level(&names) {
            Some(level) => needed <= level,
            None if meta.target().starts_with("capstan") => needed <= self.global,
            // Libraries: warnings and errors always, information from -v=2, nothing finer
            // unless --vmodule names them.
            None => match *meta.level() {
                Level::ERROR | Level::WARN => true,
                Level::INFO => self.global >= 2,
                _ => false,
            },
        }
    }
}

/// Go's `filepath.Match` subset klog uses: `*` any run, `?` one character.
fn glob_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some((b'*', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some((b'?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_matches("server", "server"));
        assert!(glob_matches("serv*", "server"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("s?rver", "server"));
        assert!(!glob_matches("s?rver", "srver"));
        assert!(!glob_matches("server", "servers"));
    }

    #[test]
    fn vmodule_parses_and_picks_the_first_match() {
        let v = Verbosity::new(1, parse_vmodule("access_log=2,acc*=5, h2=6").unwrap());
        assert_eq!(v.for_names(&["access_log"]), 2);
        assert_eq!(v.for_names(&["accounting"]), 5);
        assert_eq!(v.for_names(&["h2"]), 6);
        assert_eq!(v.for_names(&["server"]), 1);
        assert!(parse_vmodule("").unwrap().is_empty());
        assert!(parse_vmodule("=3").is_err());
        assert!(parse_vmodule("x=-1").is_err());
    }
}
