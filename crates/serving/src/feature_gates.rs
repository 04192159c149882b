//! `--feature-gates`: the gates kube-apiserver and kube-scheduler v1.33 know, each with its
//! stage, default and lock, and the checks upstream applies to a setting: unknown gates and
//! locked ones set away from their default are refused with upstream's messages.

/// A gate's maturity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Off by default, may change or go.
    Alpha,
    /// Usually on by default.
    Beta,
    /// Generally available: the gate goes soon.
    Ga,
    /// On its way out.
    Deprecated,
}

/// One known gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// Its name, e.g. `SidecarContainers`.
    pub name: &'static str,
    /// Its maturity.
    pub stage: Stage,
    /// Its value unless set.
    pub default: bool,
    /// Whether it may only be set to its default.
    pub locked: bool,
}

const TABLE: &str = include_str!("feature_gates_v1_33.tsv");

fn parse_line(line: &'static str) -> Option<Gate> {
    let mut fields = line.split('\t');
    let name = fields.next()?;
    let stage = match fields.next()? {
        "Alpha" => Stage::Alpha,
        "Beta" => Stage::Beta,
        "GA" => Stage::Ga,
        "Deprecated" => Stage::Deprecated,
        _ => return None,
    };
    let default = fields.next()? == "true";
    let locked = fields.next()? == "yes";
    Some(Gate {
        name,
        stage,
        default,
        locked,
    })
}

/// Every known gate, in name order.
pub fn known() -> impl Iterator<Item = Gate> {
    TABLE
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(parse_line)
}

/// The gate named `name`, if it is known.
pub fn gate(name: &str) -> Option<Gate> {
    known().find(|g| g.name == name)
}

/// Go's strconv.ParseBool.
pub fn parse_go_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Parses and checks one `--feature-gates` entry, `Name=true|false`, as upstream does.
pub fn parse_feature_gate(entry: &str) -> Result<(String, bool), String> {
    let Some((name, value)) = entry.split_once('=') else {
        return Err(format!("missing bool value for {}", entry.trim()));
    };
    let (name, value) = (name.trim(), value.trim());
    let enabled = parse_go_bool(value).ok_or_else(|| {
        format!("invalid value of {name}={value}, err: strconv.ParseBool: parsing {value:?}: invalid syntax")
    })?;
    let Some(gate) = gate(name) else {
        return Err(format!("unrecognized feature gate: {name}"));
    };
    if gate.locked && enabled != gate.default {
        return Err(format!(
            "cannot set feature gate {name} to {enabled}, feature is locked to {}",
            gate.default
        ));
    }
    Ok((name.to_string(), enabled))
}

/// Logs upstream's warning for each gate of `gates` that is going away.
pub fn warn_settings(gates: &[(String, bool)]) {
    for (name, enabled) in gates {
        if let Some(warning) = setting_warning(name, *enabled) {
            tracing::warn!("{warning}");
        }
    }
}

/// The warning upstream logs when a gate that is going away is set.
pub fn setting_warning(name: &str, enabled: bool) -> Option<String> {
    match gate(name)?.stage {
        Stage::Ga => Some(format!(
            "Setting GA feature gate {name}={enabled}. It will be removed in a future release."
        )),
        Stage::Deprecated => Some(format!(
            "Setting deprecated feature gate {name}={enabled}. It will be removed in a future release."
        )),
        Stage::Alpha | Stage::Beta => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_complete() {
        let gates: Vec<Gate> = known().collect();
        let lines = TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .count();
        assert_eq!(gates.len(), lines, "every line parses");
        let names: Vec<String> = gates.iter().map(|g| g.name.to_lowercase()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(gates.iter().all(|g| !g.locked || g.stage != Stage::Alpha));
    }

    #[test]
    fn settings_are_checked_as_upstream_checks_them() {
        assert_eq!(
            parse_feature_gate("ImageVolume=true"),
            Ok(("ImageVolume".into(), true))
        );
        assert_eq!(
            parse_feature_gate(" SidecarContainers = true "),
            Ok(("SidecarContainers".into(), true))
        );
        assert_eq!(
            parse_feature_gate("NoSuchGate=true").unwrap_err(),
            "unrecognized feature gate: NoSuchGate"
        );
        assert_eq!(
            parse_feature_gate("SidecarContainers=false").unwrap_err(),
            "cannot set feature gate SidecarContainers to false, feature is locked to true"
        );
        assert_eq!(
            parse_feature_gate("ImageVolume").unwrap_err(),
            "missing bool value for ImageVolume"
        );
        assert_eq!(
            parse_feature_gate("ImageVolume=maybe").unwrap_err(),
            "invalid value of ImageVolume=maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax"
        );
        assert_eq!(
            setting_warning("KMSv1", true).unwrap(),
            "Setting deprecated feature gate KMSv1=true. It will be removed in a future release."
        );
        assert!(setting_warning("ImageVolume", true).is_none());
    }
}
