//! Classification: the first FlowSchema (by matching precedence, then name) with a rule that
//! matches the request's user and what it asks for decides its priority level and flow.

use k8s_openapi::api::flowcontrol::v1 as api;

use capstan_meta::RequestAttributes;

/// A subject of a rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Subject {
    User(String),
    Group(String),
    ServiceAccount { namespace: String, name: String },
}

/// A resource rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResourceRule {
    verbs: Vec<String>,
    api_groups: Vec<String>,
    resources: Vec<String>,
    cluster_scope: bool,
    namespaces: Vec<String>,
}

/// A non-resource rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NonResourceRule {
    verbs: Vec<String>,
    urls: Vec<String>,
}

/// One `rules` entry: subjects and what they ask for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    subjects: Vec<Subject>,
    resource_rules: Vec<ResourceRule>,
    non_resource_rules: Vec<NonResourceRule>,
}

/// How requests of one schema are told apart into flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distinguisher {
    /// One flow for the whole schema.
    None,
    /// One flow per user.
    ByUser,
    /// One flow per namespace.
    ByNamespace,
}

impl Distinguisher {
    /// The flow distinguisher of `req`.
    pub fn of<'a>(self, req: &RequestAttributes<'a>) -> &'a str {
        match self {
            Distinguisher::None => "",
            Distinguisher::ByUser => req.user,
            Distinguisher::ByNamespace => req.namespace,
        }
    }
}

fn any(list: &[String], value: &str, all: &str) -> bool {
    list.iter().any(|v| v == value || v == all)
}

impl Subject {
    fn from_api(s: &api::Subject) -> Option<Self> {
        match s.kind.as_str() {
            "User" => Some(Subject::User(s.user.as_ref()?.name.clone())),
            "Group" => Some(Subject::Group(s.group.as_ref()?.name.clone())),
            "ServiceAccount" => {
                let sa = s.service_account.as_ref()?;
                Some(Subject::ServiceAccount {
                    namespace: sa.namespace.clone(),
                    name: sa.name.clone(),
                })
            }
            _ => None,
        }
    }

    fn matches(&self, req: &RequestAttributes) -> bool {
        match self {
            Subject::User(name) => name == "*" || name == req.user,
            Subject::Group(name) => name == "*" || req.groups.iter().any(|g| g == name),
            Subject::ServiceAccount { namespace, name } => req
                .user
                .strip_prefix("system:serviceaccount:")
                .and_then(|rest| rest.split_once(':'))
                .is_some_and(|(ns, n)| ns == namespace && (name == "*" || name == n)),
        }
    }
}

impl ResourceRule {
    fn matches(&self, req: &RequestAttributes) -> bool {
        if !req.resource_request
            || !any(&self.verbs, req.verb, "*")
            || !any(&self.api_groups, req.api_group, "*")
        {
            return false;
        }
        let resource_ok = self.resources.iter().any(|r| {
            r == "*"
                || if req.subresource.is_empty() {
                    r == req.resource
                } else {
                    r.split_once('/')
                        .is_some_and(|(res, sub)| res == req.resource && sub == req.subresource)
                }
        });
        if !resource_ok {
            return false;
        }
        if req.namespace.is_empty() {
            self.cluster_scope
        } else {
            any(&self.namespaces, req.namespace, "*")
        }
    }
}

impl NonResourceRule {
    fn matches(&self, req: &RequestAttributes) -> bool {
        !req.resource_request
            && any(&self.verbs, req.verb, "*")
            && self.urls.iter().any(|u| {
                u == "*"
                    || u == req.path
                    || u.strip_suffix('*')
                        .is_some_and(|prefix| req.path.starts_with(prefix))
            })
    }
}

impl Rule {
    pub(crate) fn from_api(r: &api::PolicyRulesWithSubjects) -> Self {
        Rule {
            subjects: r.subjects.iter().filter_map(Subject::from_api).collect(),
            resource_rules: r
                .resource_rules
                .iter()
                .flatten()
                .map(|rr| ResourceRule {
                    verbs: rr.verbs.clone(),
                    api_groups: rr.api_groups.clone(),
                    resources: rr.resources.clone(),
                    cluster_scope: rr.cluster_scope.unwrap_or(false),
                    namespaces: rr.namespaces.clone().unwrap_or_default(),
                })
                .collect(),
            non_resource_rules: r
                .non_resource_rules
                .iter()
                .flatten()
                .map(|nr| NonResourceRule {
                    verbs: nr.verbs.clone(),
                    urls: nr.non_resource_urls.clone(),
                })
                .collect(),
        }
    }

    /// Whether the rule can match resource requests.
    pub(crate) fn has_resource_rules(&self) -> bool {
        !self.resource_rules.is_empty()
    }

    /// Whether the rule can match non-resource requests.
    pub(crate) fn has_non_resource_rules(&self) -> bool {
        !self.non_resource_rules.is_empty()
    }

    pub(crate) fn matches(&self, req: &RequestAttributes) -> bool {
        self.subjects.iter().any(|s| s.matches(req))
            && (self.resource_rules.iter().any(|r| r.matches(req))
                || self.non_resource_rules.iter().any(|r| r.matches(req)))
    }
}

/// The flow of a request: FNV-1a over the schema's name and the distinguisher, as the
/// shuffle-sharding deal's entropy.
pub(crate) fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in schema
        .as_bytes()
        .iter()
        .chain([0u8].iter())
        .chain(distinguisher.as_bytes())
    {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(json: serde_json::Value) -> Rule {
        Rule::from_api(&serde_json::from_value(json).unwrap())
    }

    fn digest<'a>(user: &'a str, groups: &'a [String]) -> RequestAttributes<'a> {
        RequestAttributes {
            user,
            groups,
            verb: "get",
            resource_request: true,
            api_group: "",
            resource: "pods",
            namespace: "team-a",
            name: "web",
            path: "/api/v1/namespaces/team-a/pods/web",
            ..RequestAttributes::default()
        }
    }

    #[test]
    fn subjects_resources_and_namespaces_match() {
        let r = rule(serde_json::json!({
            "subjects": [
                {"kind": "User", "user": {"name": "alice"}},
                {"kind": "ServiceAccount", "serviceAccount": {"namespace": "ci", "name": "*"}},
            ],
            "resourceRules": [{
                "verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"],
                "namespaces": ["team-a"],
            }],
        }));
        let none: [String; 0] = [];
        assert!(r.matches(&digest("alice", &none)));
        assert!(r.matches(&digest("system:serviceaccount:ci:builder", &none)));
        assert!(!r.matches(&digest("system:serviceaccount:other:builder", &none)));
        assert!(!r.matches(&digest("bob", &none)));
        let mut other_ns = digest("alice", &none);
        other_ns.namespace = "team-b";
        assert!(!r.matches(&other_ns));
        let mut write = digest("alice", &none);
        write.verb = "delete";
        assert!(!r.matches(&write));
        let mut log = digest("alice", &none);
        log.subresource = "log";
        assert!(r.matches(&log));
        log.subresource = "exec";
        assert!(!r.matches(&log));
        let mut cluster = digest("alice", &none);
        cluster.namespace = "";
        assert!(!r.matches(&cluster), "cluster scope needs clusterScope");
    }

    #[test]
    fn groups_and_non_resource_urls_match() {
        let r = rule(serde_json::json!({
            "subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/metrics/*"]}],
        }));
        let groups = ["system:authenticated".to_string()];
        let mut req = RequestAttributes {
            user: "carol",
            groups: &groups,
            verb: "get",
            path: "/healthz",
            ..RequestAttributes::default()
        };
        assert!(r.matches(&req));
        req.path = "/metrics/slis";
        assert!(r.matches(&req));
        req.path = "/livez";
        assert!(!r.matches(&req));
        req.path = "/healthz";
        req.groups = &[];
        assert!(!r.matches(&req));
    }

    #[test]
    fn flows_differ_by_schema_and_distinguisher() {
        assert_ne!(flow_hash("a", "x"), flow_hash("a", "y"));
        assert_ne!(flow_hash("ab", ""), flow_hash("a", "b"));
        assert_eq!(flow_hash("a", "x"), flow_hash("a", "x"));
    }
}
