//! The audit policy (`--audit-policy-file`): rules tried in order, the first that matches a
//! request decides its level, the stages left out and whether managed fields are kept.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// How much of a request an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub enum Level {
    /// Not recorded.
    None,
    /// Who asked for what, and the answer's status; no bodies.
    Metadata,
    /// Metadata and the request's body.
    Request,
    /// Metadata and both bodies.
    RequestResponse,
}

impl Level {
    /// The name upstream writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "None" => Level::None,
            "Metadata" => Level::Metadata,
            "Request" => Level::Request,
            "RequestResponse" => Level::RequestResponse,
            _ => return None,
        })
    }
}

/// When during a request an event is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// As soon as the request is known (before authorization and the handler).
    RequestReceived,
    /// When the response headers are sent, for long-running requests (watches).
    ResponseStarted,
    /// When the response is complete.
    ResponseComplete,
    /// When the handler panicked.
    Panic,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 4] = [
        Stage::RequestReceived,
        Stage::ResponseStarted,
        Stage::ResponseComplete,
        Stage::Panic,
    ];

    /// The name upstream writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Stage::ALL.into_iter().find(|s| s.as_str() == text)
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of stages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stages(u8);

impl Stages {
    /// Whether `stage` is in the set.
    pub fn contains(self, stage: Stage) -> bool {
        self.0 & stage.bit() != 0
    }

    fn with(self, other: Stages) -> Stages {
        Stages(self.0 | other.0)
    }
}

impl FromIterator<Stage> for Stages {
    fn from_iter<I: IntoIterator<Item = Stage>>(iter: I) -> Self {
        Stages(iter.into_iter().fold(0, |bits, s| bits | s.bit()))
    }
}

/// What the policy decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The level of its events.
    pub level: Level,
    /// The stages not recorded.
    pub omit_stages: Stages,
    /// Whether `metadata.managedFields` is left out of recorded bodies.
    pub omit_managed_fields: bool,
}

/// What a rule is matched against: the request as authorization sees it.
pub use capstan_meta::RequestAttributes;

/// A parsed, validated audit policy.
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
    omit_stages: Stages,
    omit_managed_fields: bool,
}

#[derive(Debug, Clone)]
struct Rule {
    level: Level,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    non_resource_urls: Vec<String>,
    omit_stages: Stages,
    omit_managed_fields: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GroupResources {
    #[serde(default)]
    group: String,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    resource_names: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PolicyFile {
    api_version: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    metadata: Option<serde_json::Value>,
    #[serde(default)]
    rules: Vec<RuleFile>,
    #[serde(default)]
    omit_stages: Vec<String>,
    #[serde(default)]
    omit_managed_fields: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RuleFile {
    #[serde(default)]
    level: String,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    user_groups: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    resources: Vec<GroupResources>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    #[serde(default)]
    omit_stages: Vec<String>,
    omit_managed_fields: Option<bool>,
}

/// The group versions of policies read; all but `v1` with a deprecation warning.
const VERSIONS: [&str; 3] = [
    "audit.k8s.io/v1",
    "audit.k8s.io/v1beta1",
    "audit.k8s.io/v1alpha1",
];

impl Policy {
    /// Reads the policy file at `path` (YAML or JSON).
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Policy {
            path: path.display().to_string(),
            message: format!("cannot be read: {e}"),
        })?;
        Self::parse(&text).map_err(|message| Error::Policy {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses and validates a policy document; the error names the offending field.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        // The parser's first line says what and where; the snippet after it is left out.
        let file: PolicyFile = serde_saphyr::from_str(text).map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        })?;
        let api_version = file.api_version.unwrap_or_default();
        if !VERSIONS.contains(&api_version.as_str()) {
            return Err(format!(
                "unknown apiVersion {api_version:?} (expected audit.k8s.io/v1)"
            ));
        }
        if api_version != VERSIONS[0] {
            tracing::warn!(
                "audit policy: {api_version} is deprecated, use audit.k8s.io/v1 instead"
            );
        }
        if file.kind.as_deref() != Some("Policy") {
            return Err(format!(
                "kind must be \"Policy\", not {:?}",
                file.kind.unwrap_or_default()
            ));
        }
        let omit_stages = stages(&file.omit_stages, "omitStages")?;
        let mut rules = Vec::with_capacity(file.rules.len());
        for (i, rule) in file.rules.into_iter().enumerate() {
            rules.push(Rule::validate(rule, &format!("rules[{i}]"))?);
        }
        if rules.is_empty() {
            return Err("loaded illegal policy with 0 rules".into());
        }
        Ok(Self {
            rules,
            omit_stages,
            omit_managed_fields: file.omit_managed_fields,
        })
    }

    /// A policy of one rule: everything at `level`.
    pub fn everything(level: Level) -> Self {
        Self {
            rules: vec![Rule {
                level,
                users: vec![],
                user_groups: vec![],
                verbs: vec![],
                resources: vec![],
                namespaces: vec![],
                non_resource_urls: vec![],
                omit_stages: Stages::default(),
                omit_managed_fields: None,
            }],
            omit_stages: Stages::default(),
            omit_managed_fields: false,
        }
    }

    /// The decision of the first rule that matches `a`; level None when none does.
    pub fn decide(&self, a: &RequestAttributes<'_>) -> Decision {
        match self.rules.iter().find(|r| r.matches(a)) {
            Some(rule) => Decision {
                level: rule.level,
                omit_stages: self.omit_stages.with(rule.omit_stages),
                omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
            },
            None => Decision {
                level: Level::None,
                omit_stages: self.omit_stages,
                omit_managed_fields: self.omit_managed_fields,
            },
        }
    }
}

fn stages(names: &[String], field: &str) -> std::result::Result<Stages, String> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            Stage::parse(name).ok_or_else(|| {
                format!(
                    "{field}[{i}]: Invalid value: {name:?}: allowed stages are \
                     RequestReceived,ResponseStarted,ResponseComplete,Panic"
                )
            })
        })
        .collect()
}

impl Rule {
    fn validate(rule: RuleFile, path: &str) -> std::result::Result<Self, String> {
        let level = match rule.level.as_str() {
            "" => return Err(format!("{path}.level: Required value")),
            text => Level::parse(text).ok_or_else(|| {
                format!(
                    "{path}.level: Unsupported value: {text:?}: supported values: \"None\", \
                     \"Metadata\", \"Request\", \"RequestResponse\""
                )
            })?,
        };
        for (i, url) in rule.non_resource_urls.iter().enumerate() {
            if url == "*" {
                continue;
            }
            if !url.starts_with('/') {
                return Err(format!(
                    "{path}.nonResourceURLs[{i}]: Invalid value: {url:?}: non-resource URL rules \
                     must begin with a '/' character"
                ));
            }
            if url[..url.len() - 1].contains('*') {
                return Err(format!(
                    "{path}.nonResourceURLs[{i}]: Invalid value: {url:?}: non-resource URL \
                     wildcards '*' must be the final character of the rule"
                ));
            }
        }
        for gr in &rule.resources {
            if !gr.group.is_empty() && !is_dns_subdomain(&gr.group) {
                return Err(format!(
                    "{path}.resources.group: Invalid value: {:?}: a lowercase RFC 1123 subdomain \
                     must consist of lower case alphanumeric characters, '-' or '.'",
                    gr.group
                ));
            }
            if !gr.resource_names.is_empty() && gr.resources.is_empty() {
                return Err(format!(
                    "{path}.resources.resourceNames: Invalid value: {:?}: using resourceNames \
                     requires at least one resource",
                    gr.resource_names
                ));
            }
        }
        if !rule.non_resource_urls.is_empty()
            && (!rule.resources.is_empty() || !rule.namespaces.is_empty())
        {
            return Err(format!(
                "{path}.nonResourceURLs: Invalid value: {:?}: rules cannot apply to both regular \
                 resources and non-resource URLs",
                rule.non_resource_urls
            ));
        }
        Ok(Self {
            level,
            omit_stages: stages(&rule.omit_stages, &format!("{path}.omitStages"))?,
            users: rule.users,
            user_groups: rule.user_groups,
            verbs: rule.verbs,
            resources: rule.resources,
            namespaces: rule.namespaces,
            non_resource_urls: rule.non_resource_urls,
            omit_managed_fields: rule.omit_managed_fields,
        })
    }

    fn matches(&self, a: &RequestAttributes<'_>) -> bool {
        if !self.users.is_empty() && !self.users.iter().any(|u| u == a.user) {
            return false;
        }
        if !self.user_groups.is_empty() && !a.groups.iter().any(|g| self.user_groups.contains(g)) {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.iter().any(|v| v == a.verb) {
            return false;
        }
        let resource_rule = !self.resources.is_empty() || !self.namespaces.is_empty();
        if a.resource_request {
            if !self.non_resource_urls.is_empty() {
                return false;
            }
            if !self.namespaces.is_empty() && !self.namespaces.iter().any(|n| n == a.namespace) {
                return false;
            }
            self.resources.is_empty() || self.resources.iter().any(|gr| gr.matches(a))
        } else {
            if resource_rule {
                return false;
            }
            self.non_resource_urls.is_empty()
                || self
                    .non_resource_urls
                    .iter()
                    .any(|url| match url.strip_suffix('*') {
                        Some(prefix) => a.path.starts_with(prefix),
                        None => url == a.path,
                    })
        }
    }
}

impl GroupResources {
    fn matches(&self, a: &RequestAttributes<'_>) -> bool {
        if self.group != a.api_group {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        if !self.resource_names.is_empty() && !self.resource_names.iter().any(|n| n == a.name) {
            return false;
        }
        self.resources.iter().any(|pattern| {
            if pattern == "*" {
                return true;
            }
            match pattern.split_once('/') {
                None => a.subresource.is_empty() && pattern == a.resource,
                Some(("*", sub)) => !a.subresource.is_empty() && sub == a.subresource,
                Some((res, "*")) => res == a.resource,
                Some((res, sub)) => res == a.resource && sub == a.subresource,
            }
        })
    }
}

fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(user: &'a str, groups: &'a [String], verb: &'a str) -> RequestAttributes<'a> {
        RequestAttributes {
            user,
            groups,
            verb,
            resource_request: true,
            api_group: "",
            resource: "pods",
            subresource: "",
            namespace: "default",
            name: "web",
            path: "/api/v1/namespaces/default/pods/web",
        }
    }

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["pods/log", "*/status"]
- level: Request
  resources:
  - group: ""
    resources: ["configmaps"]
    resourceNames: ["controller-leader"]
  omitManagedFields: true
- level: Metadata
  nonResourceURLs: ["/healthz*", "/version"]
  omitStages: [ResponseComplete]
- level: Metadata
  userGroups: ["system:authenticated"]
  namespaces: ["kube-system", ""]
"#;

    #[test]
    fn the_first_matching_rule_decides() {
        let policy = Policy::parse(POLICY).unwrap();
        let none: Vec<String> = vec![];
        let authenticated = vec!["system:authenticated".to_string()];

        let mut a = request("system:kube-proxy", &none, "watch");
        assert_eq!(policy.decide(&a).level, Level::None);
        a.verb = "get";
        assert_eq!(policy.decide(&a).level, Level::None, "no rule covers it");

        a.subresource = "log";
        let d = policy.decide(&a);
        assert_eq!(d.level, Level::RequestResponse);
        assert!(d.omit_stages.contains(Stage::RequestReceived));
        assert!(!d.omit_stages.contains(Stage::ResponseComplete));
        a.resource = "nodes";
        a.subresource = "status";
        assert_eq!(policy.decide(&a).level, Level::RequestResponse, "*/status");

        a.resource = "configmaps";
        a.subresource = "";
        assert_eq!(policy.decide(&a).level, Level::None, "other names");
        a.name = "controller-leader";
        let d = policy.decide(&a);
        assert_eq!((d.level, d.omit_managed_fields), (Level::Request, true));

        let mut health = request("anyone", &none, "get");
        health.resource_request = false;
        health.path = "/healthz/etcd";
        let d = policy.decide(&health);
        assert_eq!(d.level, Level::Metadata);
        assert!(d.omit_stages.contains(Stage::ResponseComplete));
        health.path = "/versions";
        assert_eq!(policy.decide(&health).level, Level::None);

        let mut system = request("alice", &authenticated, "list");
        system.namespace = "kube-system";
        assert_eq!(policy.decide(&system).level, Level::Metadata);
        system.namespace = "";
        assert_eq!(
            policy.decide(&system).level,
            Level::Metadata,
            "\"\" names cluster-scoped"
        );
        system.namespace = "default";
        assert_eq!(policy.decide(&system).level, Level::None);
    }

    #[test]
    fn bad_policies_name_their_field() {
        let bad = |text: &str| Policy::parse(text).unwrap_err();
        let head = "apiVersion: audit.k8s.io/v1\nkind: Policy\n";
        assert!(
            bad(&format!("{head}rules:\n- level: Everything\n"))
                .starts_with("rules[0].level: Unsupported value: \"Everything\"")
        );
        assert!(bad(&format!("{head}rules:\n- {{}}\n")).starts_with("rules[0].level: Required"));
        assert!(bad(&format!("{head}rules:\n- level: None\n  verb: [get]\n")).contains("verb"));
        assert!(bad(&format!("{head}ruels: []\n")).contains("ruels"));
        assert!(
            bad(&format!(
                "{head}rules:\n- level: None\n  omitStages: [Done]\n"
            ))
            .starts_with("rules[0].omitStages[0]: Invalid value: \"Done\"")
        );
        assert!(
            bad(&format!(
                "{head}rules:\n- level: None\n  nonResourceURLs: [/a*b]\n"
            ))
            .contains("must be the final character")
        );
        assert!(
            bad(&format!(
                "{head}rules:\n- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n"
            ))
            .contains("both regular resources and non-resource URLs")
        );
        assert_eq!(
            bad(&format!("{head}rules: []\n")),
            "loaded illegal policy with 0 rules"
        );
        assert!(
            bad("apiVersion: audit.k8s.io/v2\nkind: Policy\nrules: []\n")
                .starts_with("unknown apiVersion")
        );
        let old = "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: Metadata\n";
        assert!(Policy::parse(old).is_ok());
    }
}
