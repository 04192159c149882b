//! `flowcontrol.apiserver.k8s.io/v1`: FlowSchemas and PriorityLevelConfigurations, the
//! configuration of API Priority and Fairness, with upstream's defaults and validation.

use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::flowcontrol::v1::{
    FlowSchema, LimitResponse, PriorityLevelConfiguration, QueuingConfiguration,
};

use crate::describe::Names;

/// The most bits of hash shuffle sharding may need (upstream's bound on queues and hand size).
const MAX_HASH_BITS: f64 = 60.0;

/// The strategy of FlowSchema (status written by the server through `flowschemas/status`).
#[derive(Debug, Default, Clone, Copy)]
pub struct FlowSchemaStrategy;

/// The strategy of PriorityLevelConfiguration.
#[derive(Debug, Default, Clone, Copy)]
pub struct PriorityLevelConfigurationStrategy;

fn not_empty(errs: &mut FieldErrors, at: &str, list: &[String], what: &str) {
    if list.is_empty() {
        errs.push(FieldError::required(
            at,
            format!("{what} must contain at least one value"),
        ));
    }
}

impl Strategy for FlowSchemaStrategy {
    type Object = FlowSchema;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "flowcontrol.apiserver.k8s.io",
            kind: "FlowSchema",
            resource: "flowschemas",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn default(&self, fs: &mut FlowSchema) {
        if let Some(spec) = fs.spec.as_mut() {
            spec.matching_precedence.get_or_insert(1000);
        }
    }

    fn prepare_for_create(&self, fs: &mut FlowSchema) {
        fs.status = None;
    }

    fn validate(&self, fs: &FlowSchema) -> FieldErrors {
        let mut errs = Vec::new();
        let Some(spec) = fs.spec.as_ref() else {
            errs.push(FieldError::required("spec", ""));
            return errs;
        };
        if spec.priority_level_configuration.name.is_empty() {
            errs.push(FieldError::required(
                "spec.priorityLevelConfiguration.name",
                "must reference a priority level",
            ));
        }
        if let Some(p) = spec.matching_precedence
            && !(1..=10000).contains(&p)
        {
            errs.push(FieldError::invalid_raw(
                "spec.matchingPrecedence",
                p.to_string(),
                "must be between 1 and 10000, inclusive",
            ));
        }
        if let Some(d) = spec.distinguisher_method.as_ref()
            && !matches!(d.type_.as_str(), "ByUser" | "ByNamespace")
        {
            errs.push(FieldError::not_supported(
                "spec.distinguisherMethod.type",
                &d.type_,
                &["ByNamespace", "ByUser"],
            ));
        }
        for (i, rule) in spec.rules.iter().flatten().enumerate() {
            let at = format!("spec.rules[{i}]");
            if rule.subjects.is_empty() {
                errs.push(FieldError::required(
                    format!("{at}.subjects"),
                    "subjects must contain at least one value",
                ));
            }
            for (j, s) in rule.subjects.iter().enumerate() {
                let sat = format!("{at}.subjects[{j}]");
                let (member, present) = match s.kind.as_str() {
                    "User" => ("user", s.user.as_ref().map(|u| u.name.is_empty())),
                    "Group" => ("group", s.group.as_ref().map(|g| g.name.is_empty())),
                    "ServiceAccount" => (
                        "serviceAccount",
                        s.service_account
                            .as_ref()
                            .map(|sa| sa.name.is_empty() || sa.namespace.is_empty()),
                    ),
                    other => {
                        errs.push(FieldError::not_supported(
                            format!("{sat}.kind"),
                            other,
                            &["Group", "ServiceAccount", "User"],
                        ));
                        continue;
                    }
                };
                match present {
                    None => errs.push(FieldError::required(
                        format!("{sat}.{member}"),
                        format!("{member} is required when subject kind is '{}'", s.kind),
                    )),
                    Some(true) => errs.push(FieldError::required(
                        format!("{sat}.{member}.name"),
                        "name is required",
                    )),
                    Some(false) => {}
                }
            }
            let resource_rules = rule.resource_rules.as_deref().unwrap_or_default();
            let non_resource_rules = rule.non_resource_rules.as_deref().unwrap_or_default();
            if resource_rules.is_empty() && non_resource_rules.is_empty() {
                errs.push(FieldError::required(
                    &at,
                    "at least one of resourceRules and nonResourceRules has to be non-empty",
                ));
            }
            for (j, r) in resource_rules.iter().enumerate() {
                let rat = format!("{at}.resourceRules[{j}]");
                not_empty(&mut errs, &format!("{rat}.verbs"), &r.verbs, "verbs");
                not_empty(
                    &mut errs,
                    &format!("{rat}.apiGroups"),
                    &r.api_groups,
                    "resource rules",
                );
                not_empty(
                    &mut errs,
                    &format!("{rat}.resources"),
                    &r.resources,
                    "resource rules",
                );
                let namespaces = r.namespaces.as_deref().unwrap_or_default();
                if namespaces.is_empty() && !r.cluster_scope.unwrap_or(false) {
                    errs.push(FieldError::required(
                        format!("{rat}.namespaces"),
                        "resource rules that are not cluster scoped must supply at least one namespace",
                    ));
                }
            }
            for (j, r) in non_resource_rules.iter().enumerate() {
                let nat = format!("{at}.nonResourceRules[{j}]");
                not_empty(&mut errs, &format!("{nat}.verbs"), &r.verbs, "verbs");
                not_empty(
                    &mut errs,
                    &format!("{nat}.nonResourceURLs"),
                    &r.non_resource_urls,
                    "nonResourceURLs",
                );
                for (k, url) in r.non_resource_urls.iter().enumerate() {
                    if url != "*" && !url.starts_with('/') {
                        errs.push(FieldError::invalid(
                            format!("{nat}.nonResourceURLs[{k}]"),
                            url,
                            "must start with slash",
                        ));
                    }
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &FlowSchema, _old: &FlowSchema) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut FlowSchema, from: &FlowSchema) {
        to.status = from.status.clone();
    }
}

fn default_queuing(q: &mut QueuingConfiguration) {
    q.queues.get_or_insert(64);
    q.hand_size.get_or_insert(8);
    q.queue_length_limit.get_or_insert(50);
}

fn validate_response(errs: &mut FieldErrors, r: &LimitResponse) {
    let at = "spec.limited.limitResponse";
    match r.type_.as_str() {
        "Reject" => {
            if r.queuing.is_some() {
                errs.push(FieldError::forbidden(
                    format!("{at}.queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => {
            let Some(q) = r.queuing.as_ref() else {
                errs.push(FieldError::required(
                    format!("{at}.queuing"),
                    "must not be empty if limited.limitResponse.type is Limited",
                ));
                return;
            };
            let (queues, hand, length) = (
                q.queues.unwrap_or(64),
                q.hand_size.unwrap_or(8),
                q.queue_length_limit.unwrap_or(50),
            );
            for (field, value) in [
                ("queues", queues),
                ("handSize", hand),
                ("queueLengthLimit", length),
            ] {
                if value <= 0 {
                    errs.push(FieldError::invalid_raw(
                        format!("{at}.queuing.{field}"),
                        value.to_string(),
                        "must be positive",
                    ));
                }
            }
            if hand > queues && queues > 0 {
                errs.push(FieldError::invalid_raw(
                    format!("{at}.queuing.handSize"),
                    hand.to_string(),
                    format!("should not be greater than queues ({queues})"),
                ));
            } else if queues > 0 && hand > 0 {
                let bits = (f64::from(queues)).log2() * f64::from(hand);
                if bits.ceil() > MAX_HASH_BITS {
                    errs.push(FieldError::invalid_raw(
                        format!("{at}.queuing.handSize"),
                        hand.to_string(),
                        format!(
                            "required entropy bits of deckSize {queues} and handSize {hand} \
                             should not be greater than {MAX_HASH_BITS}"
                        ),
                    ));
                }
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{at}.type"),
            other,
            &["Queue", "Reject"],
        )),
    }
}

fn percent(errs: &mut FieldErrors, at: &str, value: Option<i32>, max: Option<i32>) {
    if let Some(v) = value {
        let bad = v < 0 || max.is_some_and(|m| v > m);
        if bad {
            let detail = match max {
                Some(m) => format!("must be between 0 and {m}, inclusive"),
                None => "must be a non-negative integer".to_string(),
            };
            errs.push(FieldError::invalid_raw(at, v.to_string(), detail));
        }
    }
}

impl Strategy for PriorityLevelConfigurationStrategy {
    type Object = PriorityLevelConfiguration;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "flowcontrol.apiserver.k8s.io",
            kind: "PriorityLevelConfiguration",
            resource: "prioritylevelconfigurations",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn default(&self, pl: &mut PriorityLevelConfiguration) {
        let Some(spec) = pl.spec.as_mut() else {
            return;
        };
        if let Some(limited) = spec.limited.as_mut() {
            limited.nominal_concurrency_shares.get_or_insert(30);
            limited.lendable_percent.get_or_insert(0);
            if let Some(q) = limited
                .limit_response
                .as_mut()
                .and_then(|r| r.queuing.as_mut())
            {
                default_queuing(q);
            }
        }
        if let Some(exempt) = spec.exempt.as_mut() {
            exempt.nominal_concurrency_shares.get_or_insert(0);
            exempt.lendable_percent.get_or_insert(0);
        }
    }

    fn prepare_for_create(&self, pl: &mut PriorityLevelConfiguration) {
        pl.status = None;
    }

    fn validate(&self, pl: &PriorityLevelConfiguration) -> FieldErrors {
        let mut errs = Vec::new();
        let Some(spec) = pl.spec.as_ref() else {
            errs.push(FieldError::required("spec", ""));
            return errs;
        };
        let name = pl.metadata.name.as_deref().unwrap_or_default();
        if name == "exempt" && spec.type_ != "Exempt" {
            errs.push(FieldError::invalid(
                "spec.type",
                &spec.type_,
                "type must be 'Exempt' if and only if name is 'exempt'",
            ));
        }
        match spec.type_.as_str() {
            "Exempt" => {
                if name != "exempt" {
                    errs.push(FieldError::invalid(
                        "spec.type",
                        &spec.type_,
                        "type must be 'Exempt' if and only if name is 'exempt'",
                    ));
                }
                if spec.limited.is_some() {
                    errs.push(FieldError::forbidden(
                        "spec.limited",
                        "must be nil if the type is not Limited",
                    ));
                }
                if let Some(e) = spec.exempt.as_ref() {
                    percent(
                        &mut errs,
                        "spec.exempt.nominalConcurrencyShares",
                        e.nominal_concurrency_shares,
                        None,
                    );
                    percent(
                        &mut errs,
                        "spec.exempt.lendablePercent",
                        e.lendable_percent,
                        Some(100),
                    );
                }
            }
            "Limited" => {
                if spec.exempt.is_some() {
                    errs.push(FieldError::forbidden(
                        "spec.exempt",
                        "must be nil if the type is Limited",
                    ));
                }
                let Some(limited) = spec.limited.as_ref() else {
                    errs.push(FieldError::required(
                        "spec.limited",
                        "must not be empty when type is Limited",
                    ));
                    return errs;
                };
                percent(
                    &mut errs,
                    "spec.limited.nominalConcurrencyShares",
                    limited.nominal_concurrency_shares,
                    None,
                );
                percent(
                    &mut errs,
                    "spec.limited.lendablePercent",
                    limited.lendable_percent,
                    Some(100),
                );
                percent(
                    &mut errs,
                    "spec.limited.borrowingLimitPercent",
                    limited.borrowing_limit_percent,
                    None,
                );
                match limited.limit_response.as_ref() {
                    Some(r) => validate_response(&mut errs, r),
                    None => errs.push(FieldError::required("spec.limited.limitResponse.type", "")),
                }
            }
            other => errs.push(FieldError::not_supported(
                "spec.type",
                other,
                &["Exempt", "Limited"],
            )),
        }
        errs
    }

    fn validate_update(
        &self,
        new: &PriorityLevelConfiguration,
        _old: &PriorityLevelConfiguration,
    ) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut PriorityLevelConfiguration, from: &PriorityLevelConfiguration) {
        to.status = from.status.clone();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    #[test]
    fn flow_schemas_are_checked_and_defaulted() {
        let mut fs: FlowSchema = serde_json::from_value(json!({
            "metadata": {"name": "x"},
            "spec": {
                "priorityLevelConfiguration": {"name": "global-default"},
                "distinguisherMethod": {"type": "ByColour"},
                "rules": [
                    {"subjects": [{"kind": "User"}], "resourceRules": [
                        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]},
                    {"subjects": [{"kind": "Group", "group": {"name": "g"}}],
                     "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["healthz"]}]},
                    {"subjects": [{"kind": "Group", "group": {"name": "g"}}]},
                ],
            },
        }))
        .unwrap();
        FlowSchemaStrategy.default(&mut fs);
        assert_eq!(fs.spec.as_ref().unwrap().matching_precedence, Some(1000));
        let errs = messages(&FlowSchemaStrategy.validate(&fs));
        for expected in [
            "spec.distinguisherMethod.type: Unsupported value: \"ByColour\"",
            "spec.rules[0].subjects[0].user: Required value",
            "spec.rules[0].resourceRules[0].namespaces: Required value",
            "spec.rules[1].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash",
            "spec.rules[2]: Required value: at least one of resourceRules and nonResourceRules",
        ] {
            assert!(
                errs.iter().any(|e| e.starts_with(expected)),
                "{expected} in {errs:#?}"
            );
        }
        fs.spec.as_mut().unwrap().matching_precedence = Some(0);
        let errs = messages(&FlowSchemaStrategy.validate(&fs));
        assert!(
            errs.iter()
                .any(|e| e.contains("must be between 1 and 10000"))
        );
    }

    #[test]
    fn priority_levels_are_checked_and_defaulted() {
        let mut pl: PriorityLevelConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"type": "Limited", "limited": {
                "lendablePercent": 101,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5}},
            }},
        }))
        .unwrap();
        PriorityLevelConfigurationStrategy.default(&mut pl);
        let limited = pl.spec.as_ref().unwrap().limited.as_ref().unwrap();
        assert_eq!(limited.nominal_concurrency_shares, Some(30));
        let q = limited
            .limit_response
            .as_ref()
            .unwrap()
            .queuing
            .as_ref()
            .unwrap();
        assert_eq!(q.queue_length_limit, Some(50));
        let errs = messages(&PriorityLevelConfigurationStrategy.validate(&pl));
        assert!(
            errs.iter()
                .any(|e| e.contains("spec.limited.lendablePercent: Invalid value: 101"))
        );
        assert!(errs.iter().any(|e| {
            e.contains("handSize: Invalid value: 5: should not be greater than queues (4)")
        }));
        let exempt: PriorityLevelConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "mine"}, "spec": {"type": "Exempt"},
        }))
        .unwrap();
        let errs = messages(&PriorityLevelConfigurationStrategy.validate(&exempt));
        assert!(
            errs.iter()
                .any(|e| e.contains("if and only if name is 'exempt'")),
            "{errs:?}"
        );
        // 128 queues need 7 bits a card: 9 cards pass the 60 bits of hash.
        let pl: PriorityLevelConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"type": "Limited", "limited": {
                "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 9}}}},
        }))
        .unwrap();
        let errs = messages(&PriorityLevelConfigurationStrategy.validate(&pl));
        assert!(
            errs.iter().any(|e| e.contains("required entropy bits")),
            "{errs:?}"
        );
    }
}
