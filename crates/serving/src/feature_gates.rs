//! `--feature-gates`: the gates kube-apiserver and kube-scheduler v1.36 know, each with its
//! stage, default, lock and the gates it needs, and the checks upstream applies to a setting:
//! unknown gates, locked ones set away from their default, components other than `kube:`,
//! `kube:` used on some entries only, and enabled gates whose dependencies are disabled are
//! refused with upstream's messages.

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
    /// The gates that must be enabled when this one is, comma-separated.
    depends_on: &'static str,
}

impl Gate {
    /// The gates that must be enabled when this one is.
    pub fn dependencies(&self) -> impl Iterator<Item = &'static str> {
        self.depends_on.split(',').filter(|d| !d.is_empty())
    }
}

/// One entry of `--feature-gates`, checked against the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateSetting {
    /// The gate's name.
    pub name: String,
    /// The value asked for.
    pub enabled: bool,
    /// Whether the entry was written with the `kube:` component prefix.
    pub prefixed: bool,
}

/// The one component whose gates Capstan knows (upstream's name for Kubernetes' own).
const COMPONENT: &str = "kube";

const TABLE: &str = include_str!("feature_gates_v1_36.tsv");

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
    let depends_on = fields.next().unwrap_or("");
    Some(Gate {
        name,
        stage,
        default,
        locked,
        depends_on,
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

/// Parses and checks one `--feature-gates` entry, `[kube:]Name=true|false`, as upstream does.
pub fn parse_feature_gate(entry: &str) -> Result<GateSetting, String> {
    let Some((name, value)) = entry.split_once('=') else {
        return Err(format!("missing bool value for {}", entry.trim()));
    };
    let (name, value) = (name.trim(), value.trim());
    let (name, prefixed) = match name.split_once(':') {
        Some((COMPONENT, name)) => (name, true),
        Some((component, _)) => return Err(format!("component not registered: {component}")),
        None => (name, false),
    };
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
    Ok(GateSetting {
        name: name.to_string(),
        enabled,
        prefixed,
    })
}

/// Whether `gate` is on under `settings`: its own entry (the last one), else `AllAlpha` or
/// `AllBeta` for its stage, else its default.
pub fn enabled(settings: &[GateSetting], gate: &Gate) -> bool {
    let setting = |name: &str| settings.iter().rev().find(|s| s.name == name);
    if let Some(own) = setting(gate.name) {
        return own.enabled;
    }
    let all = match gate.stage {
        Stage::Alpha => setting("AllAlpha"),
        Stage::Beta => setting("AllBeta"),
        Stage::Ga | Stage::Deprecated => None,
    };
    all.filter(|_| !gate.locked)
        .map_or(gate.default, |s| s.enabled)
}

/// Checks the settings as a whole, as upstream does once every entry is read: `kube:` on all
/// entries or none, and every enabled gate's dependencies enabled (one error per gate, in
/// name order, several in brackets).
pub fn check_settings(settings: &[GateSetting]) -> Result<(), String> {
    if settings.iter().any(|s| s.prefixed) && settings.iter().any(|s| !s.prefixed) {
        return Err(
            "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"
                .into(),
        );
    }
    let on: std::collections::HashSet<&str> = known()
        .filter(|g| enabled(settings, g))
        .map(|g| g.name)
        .collect();
    let errors: Vec<String> = known()
        .filter(|g| on.contains(g.name))
        .filter_map(|g| {
            let missing: Vec<&str> = g.dependencies().filter(|d| !on.contains(d)).collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "{} is enabled, but depends on features that are disabled: [{}]",
                    g.name,
                    missing.join(" ")
                )
            })
        })
        .collect();
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.into_iter().next().unwrap_or_default()),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// Logs upstream's warning for each gate of `settings` that is going away.
pub fn warn_settings(settings: &[GateSetting]) {
    for setting in settings {
        if let Some(warning) = setting_warning(&setting.name) {
            tracing::warn!(feature_gate = %setting.name, value = setting.enabled, "{warning}");
        }
    }
}

/// The warning upstream logs when a gate that is going away is set.
pub fn setting_warning(name: &str) -> Option<&'static str> {
    match gate(name)?.stage {
        Stage::Ga => {
            Some("Warning: setting GA feature gate. It will be removed in a future release.")
        }
        Stage::Deprecated => Some(
            "Warning: setting deprecated feature gate. It will be removed in a future release.",
        ),
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

    fn setting(entry: &str) -> GateSetting {
        parse_feature_gate(entry).unwrap()
    }

    fn settings(entries: &[&str]) -> Vec<GateSetting> {
        entries.iter().map(|e| setting(e)).collect()
    }

    #[test]
    fn settings_are_checked_as_upstream_checks_them() {
        let image_volume = |prefixed| GateSetting {
            name: "ImageVolume".into(),
            enabled: true,
            prefixed,
        };
        assert_eq!(setting("ImageVolume=true"), image_volume(false));
        assert_eq!(setting(" kube:ImageVolume = true "), image_volume(true));
        assert_eq!(
            parse_feature_gate("NoSuchGate=true").unwrap_err(),
            "unrecognized feature gate: NoSuchGate"
        );
        assert_eq!(
            parse_feature_gate("wardle:ImageVolume=true").unwrap_err(),
            "component not registered: wardle"
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
            setting_warning("KMSv1").unwrap(),
            "Warning: setting deprecated feature gate. It will be removed in a future release."
        );
        assert!(setting_warning("ImageVolume").unwrap().contains("GA"));
        assert!(setting_warning("WatchList").is_none());
    }

    #[test]
    fn prefixes_are_all_or_nothing() {
        assert!(check_settings(&settings(&["kube:KMSv1=true", "kube:WatchList=false"])).is_ok());
        assert_eq!(
            check_settings(&settings(&["KMSv1=true", "kube:WatchList=false"])).unwrap_err(),
            "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"
        );
    }

    #[test]
    fn enabled_gates_need_their_dependencies() {
        assert!(check_settings(&[]).is_ok(), "the defaults are consistent");
        assert_eq!(
            check_settings(&settings(&["ClusterTrustBundleProjection=true"])).unwrap_err(),
            "ClusterTrustBundleProjection is enabled, but depends on features that are disabled: [ClusterTrustBundle]"
        );
        assert!(
            check_settings(&settings(&[
                "ClusterTrustBundle=true",
                "ClusterTrustBundleProjection=true"
            ]))
            .is_ok()
        );
        // Several gates lose theirs at once: one error each, in name order.
        let err = check_settings(&settings(&["AtomicFIFO=false"])).unwrap_err();
        assert!(
            err.starts_with("[StaleControllerConsistencyDaemonSet is enabled"),
            "{err}"
        );
        assert_eq!(
            err.matches("depends on features that are disabled: [AtomicFIFO]")
                .count(),
            4
        );
        // AllBeta=false turns off every beta gate not named, dependencies included.
        let gate = gate("DRADeviceTaintRules").unwrap();
        assert!(!enabled(&[], &gate));
        assert!(enabled(&settings(&["AllBeta=true"]), &gate));
        assert!(!enabled(
            &settings(&["AllBeta=true", "DRADeviceTaintRules=false"]),
            &gate
        ));
        assert!(check_settings(&settings(&["AllAlpha=true", "AllBeta=true"])).is_ok());
    }
}
