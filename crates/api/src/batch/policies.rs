//! The parts of a Job spec that say how its pods' outcomes count: the pod failure policy,
//! the success policy, per-index backoff and the pod replacement policy, checked as upstream.

use std::collections::BTreeSet;

use capstan_meta::{FieldError, FieldErrors};
use k8s_openapi::api::batch::v1::{
    JobSpec, PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyOnPodConditionsPattern,
    SuccessPolicyRule,
};

/// Most rules a pod failure or success policy may have.
const MAX_RULES: usize = 20;
/// Most exit codes one `onExitCodes` requirement may list.
const MAX_EXIT_CODES: usize = 255;
/// Most condition patterns one rule may list.
const MAX_CONDITION_PATTERNS: usize = 20;
/// Longest `succeededIndexes`, in bytes.
const MAX_SUCCEEDED_INDEXES: usize = 64 * 1024;
/// Largest parallelism, and `maxFailedIndexes`, of an Indexed Job.
const MAX_INDEXED: i32 = 100_000;
/// Completions beyond which per-index backoff asks for tighter limits.
const COMPLETIONS_SOFT_LIMIT: i32 = 100_000;
/// Parallelism and `maxFailedIndexes` allowed beyond that soft limit.
const HIGH_COMPLETIONS_LIMIT: i32 = 10_000;

/// Checks the fields of an Indexed Job and per-index backoff (`spec.backoffLimitPerIndex`,
/// `spec.maxFailedIndexes`, `spec.parallelism` against the indexed limits).
pub(super) fn validate_indexed(spec: &JobSpec, at: &dyn Fn(&str) -> String) -> FieldErrors {
    let mut errs = Vec::new();
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    if spec.max_failed_indexes.is_some() && spec.backoff_limit_per_index.is_none() {
        errs.push(FieldError::required(
            at("backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        ));
    }
    let invalid = |field: &str, value: i32, why: String| {
        FieldError::invalid_raw(at(field), value.to_string(), why)
    };
    if !indexed {
        for (field, value) in [
            ("backoffLimitPerIndex", spec.backoff_limit_per_index),
            ("maxFailedIndexes", spec.max_failed_indexes),
        ] {
            if let Some(v) = value {
                errs.push(invalid(field, v, "requires indexed completion mode".into()));
            }
        }
        return errs;
    }
    if let Some(p) = spec.parallelism
        && p > MAX_INDEXED
    {
        errs.push(invalid(
            "parallelism",
            p,
            format!("must be less than or equal to {MAX_INDEXED} when completion mode is Indexed"),
        ));
    }
    if let Some(max) = spec.max_failed_indexes {
        if spec.completions.is_some_and(|c| max > c) {
            errs.push(invalid(
                "maxFailedIndexes",
                max,
                "must be less than or equal to completions".into(),
            ));
        }
        if max > MAX_INDEXED {
            errs.push(invalid(
                "maxFailedIndexes",
                max,
                format!("must be less than or equal to {MAX_INDEXED}"),
            ));
        }
    }
    if spec.completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT)
        && spec.backoff_limit_per_index.is_some()
    {
        let beyond = format!(
            "must be less than or equal to {HIGH_COMPLETIONS_LIMIT} when completions are above \
             {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        );
        match spec.max_failed_indexes {
            None => errs.push(FieldError::required(
                at("maxFailedIndexes"),
                format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
            )),
            Some(max) if max > HIGH_COMPLETIONS_LIMIT => {
                errs.push(invalid("maxFailedIndexes", max, beyond.clone()))
            }
            Some(_) => {}
        }
        if let Some(p) = spec.parallelism
            && p > HIGH_COMPLETIONS_LIMIT
        {
            errs.push(invalid("parallelism", p, beyond));
        }
    }
    errs
}

/// Checks `spec.podReplacementPolicy`: `Failed` only, with a pod failure policy.
pub(super) fn validate_replacement(spec: &JobSpec, at: &dyn Fn(&str) -> String) -> FieldErrors {
    let Some(policy) = spec.pod_replacement_policy.as_deref() else {
        return Vec::new();
    };
    let supported: &[&str] = if spec.pod_failure_policy.is_some() {
        &["Failed"]
    } else {
        &["Failed", "TerminatingOrFailed"]
    };
    if supported.contains(&policy) {
        return Vec::new();
    }
    vec![FieldError::not_supported(
        at("podReplacementPolicy"),
        policy,
        supported,
    )]
}

/// Checks `spec.podFailurePolicy`: its rules, their actions, exit codes and condition
/// patterns, with upstream's paths and words.
pub(super) fn validate_pod_failure_policy(
    spec: &JobSpec,
    at: &dyn Fn(&str) -> String,
) -> FieldErrors {
    let mut errs = Vec::new();
    let Some(policy) = &spec.pod_failure_policy else {
        return errs;
    };
    let rules_path = at("podFailurePolicy.rules");
    if policy.rules.len() > MAX_RULES {
        errs.push(FieldError::too_many(
            &rules_path,
            policy.rules.len(),
            MAX_RULES,
        ));
    }
    let pod = spec.template.spec.as_ref();
    let containers: BTreeSet<&str> = pod
        .into_iter()
        .flat_map(|p| {
            p.containers
                .iter()
                .chain(p.init_containers.iter().flatten())
        })
        .map(|c| c.name.as_str())
        .collect();
    const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
    for (i, rule) in policy.rules.iter().enumerate() {
        let path = format!("{rules_path}[{i}]");
        let action = format!("{path}.action");
        match rule.action.as_str() {
            "" => errs.push(FieldError::required(action, valid_values(&ACTIONS))),
            "FailIndex" if spec.backoff_limit_per_index.is_none() => {
                errs.push(FieldError::invalid(
                    action,
                    "FailIndex",
                    "requires the backoffLimitPerIndex to be set",
                ))
            }
            a if !ACTIONS.contains(&a) => errs.push(FieldError::not_supported(action, a, &ACTIONS)),
            _ => {}
        }
        let conditions = rule.on_pod_conditions.as_deref().unwrap_or_default();
        if let Some(codes) = &rule.on_exit_codes {
            errs.extend(exit_codes(
                codes,
                &format!("{path}.onExitCodes"),
                &containers,
            ));
        }
        if !conditions.is_empty() {
            errs.extend(condition_patterns(
                conditions,
                &format!("{path}.onPodConditions"),
            ));
        }
        let why = match (rule.on_exit_codes.is_some(), !conditions.is_empty()) {
            (true, true) => {
                Some("specifying both OnExitCodes and OnPodConditions is not supported")
            }
            (false, false) => Some("specifying one of OnExitCodes and OnPodConditions is required"),
            _ => None,
        };
        if let Some(why) = why {
            errs.push(FieldError {
                value: None,
                ..FieldError::invalid(path, "", why)
            });
        }
    }
    errs
}

/// `valid values: ["a" "b"]`, as Go prints a list of strings with `%q`.
fn valid_values(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("valid values: [{}]", quoted.join(" "))
}

fn exit_codes(
    codes: &PodFailurePolicyOnExitCodesRequirement,
    path: &str,
    containers: &BTreeSet<&str>,
) -> FieldErrors {
    let mut errs = Vec::new();
    const OPERATORS: [&str; 2] = ["In", "NotIn"];
    let operator = format!("{path}.operator");
    match codes.operator.as_str() {
        "" => errs.push(FieldError::required(operator, valid_values(&OPERATORS))),
        o if !OPERATORS.contains(&o) => {
            errs.push(FieldError::not_supported(operator, o, &OPERATORS))
        }
        _ => {}
    }
    if let Some(name) = codes.container_name.as_deref()
        && !containers.contains(name)
    {
        errs.push(FieldError::invalid(
            format!("{path}.containerName"),
            name,
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_path = format!("{path}.values");
    let rendered = || {
        let list: Vec<String> = codes.values.iter().map(i32::to_string).collect();
        format!("[]int32{{{}}}", list.join(", "))
    };
    if codes.values.is_empty() {
        errs.push(FieldError::invalid_raw(
            &values_path,
            rendered(),
            "at least one value is required",
        ));
    } else if codes.values.len() > MAX_EXIT_CODES {
        errs.push(FieldError::too_many(
            &values_path,
            codes.values.len(),
            MAX_EXIT_CODES,
        ));
    }
    let mut seen = BTreeSet::new();
    for (j, &code) in codes.values.iter().enumerate() {
        let at = format!("{values_path}[{j}]");
        if codes.operator == "In" && code == 0 {
            errs.push(FieldError::invalid_raw(
                &at,
                "0",
                "must not be 0 for the In operator",
            ));
        }
        if !seen.insert(code) {
            errs.push(FieldError {
                value: Some(code.to_string()),
                ..FieldError::duplicate(&at, "")
            });
        }
    }
    if codes.values.windows(2).any(|w| w[0] > w[1]) {
        errs.push(FieldError::invalid_raw(
            &values_path,
            rendered(),
            "must be ordered",
        ));
    }
    errs
}

fn condition_patterns(
    patterns: &[PodFailurePolicyOnPodConditionsPattern],
    path: &str,
) -> FieldErrors {
    let mut errs = Vec::new();
    if patterns.len() > MAX_CONDITION_PATTERNS {
        errs.push(FieldError::too_many(
            path,
            patterns.len(),
            MAX_CONDITION_PATTERNS,
        ));
    }
    const STATUSES: [&str; 3] = ["False", "True", "Unknown"];
    for (j, pattern) in patterns.iter().enumerate() {
        let at = format!("{path}[{j}]");
        for why in capstan_meta::validation::qualified_name(&pattern.type_) {
            errs.push(FieldError::invalid(
                format!("{at}.type"),
                &pattern.type_,
                why,
            ));
        }
        let status = format!("{at}.status");
        match pattern.status.as_deref().unwrap_or_default() {
            "" => errs.push(FieldError::required(status, valid_values(&STATUSES))),
            s if !STATUSES.contains(&s) => {
                errs.push(FieldError::not_supported(status, s, &STATUSES))
            }
            _ => {}
        }
    }
    errs
}

/// Checks `spec.successPolicy`: Indexed Jobs only, 1 to 20 rules, each with indexes in
/// upstream's interval form and a count that fits them and the completions.
pub(super) fn validate_success_policy(spec: &JobSpec, at: &dyn Fn(&str) -> String) -> FieldErrors {
    let mut errs = Vec::new();
    let Some(policy) = &spec.success_policy else {
        return errs;
    };
    if spec.completion_mode.as_deref() != Some("Indexed") {
        let rendered = serde_json::to_string(policy).unwrap_or_default();
        errs.push(FieldError::invalid_raw(
            at("successPolicy"),
            rendered,
            "requires indexed completion mode",
        ));
        return errs;
    }
    let rules_path = at("successPolicy.rules");
    if policy.rules.is_empty() {
        errs.push(FieldError::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if policy.rules.len() > MAX_RULES {
        errs.push(FieldError::too_many(
            &rules_path,
            policy.rules.len(),
            MAX_RULES,
        ));
    }
    let completions = spec.completions.unwrap_or(0);
    for (i, rule) in policy.rules.iter().enumerate() {
        errs.extend(success_rule(
            rule,
            &format!("{rules_path}[{i}]"),
            completions,
        ));
    }
    errs
}

fn success_rule(rule: &SuccessPolicyRule, path: &str, completions: i32) -> FieldErrors {
    let mut errs = Vec::new();
    if rule.succeeded_count.is_none() && rule.succeeded_indexes.is_none() {
        errs.push(FieldError::required(
            path,
            "at least one of succeededCount or succeededIndexes must be specified",
        ));
    }
    let mut total = 0;
    if let Some(indexes) = rule.succeeded_indexes.as_deref() {
        let at = format!("{path}.succeededIndexes");
        if indexes.len() > MAX_SUCCEEDED_INDEXES {
            errs.push(FieldError::too_long(&at, MAX_SUCCEEDED_INDEXES));
        }
        match count_indexes(indexes, completions) {
            Ok(n) => total = n,
            Err(why) => errs.push(FieldError::invalid(
                &at,
                indexes,
                format!("error parsing succeededIndexes: {why}"),
            )),
        }
    }
    if let Some(count) = rule.succeeded_count {
        let at = format!("{path}.succeededCount");
        crate::apps::non_negative(&mut errs, &at, Some(count));
        if count > completions {
            errs.push(FieldError::invalid_raw(
                &at,
                count.to_string(),
                format!(
                    "must be less than or equal to {completions} (the number of specified completions)"
                ),
            ));
        }
        if rule.succeeded_indexes.is_some() && count > total {
            errs.push(FieldError::invalid_raw(
                &at,
                count.to_string(),
                format!(
                    "must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"
                ),
            ));
        }
    }
    errs
}

/// How many indexes `1,3-5` names, each below `completions` and in increasing order, or
/// why the text is not such a list (in upstream's words).
pub(crate) fn count_indexes(text: &str, completions: i32) -> Result<i32, String> {
    if text.is_empty() {
        return Ok(0);
    }
    let index = |part: &str| -> Result<i64, String> {
        let n: i64 = part
            .parse()
            .map_err(|_| format!("cannot convert string to integer for index: {part:?}"))?;
        if n >= i64::from(completions) {
            return Err(format!("too large index: {part:?}"));
        }
        Ok(n)
    };
    let mut last: Option<i64> = None;
    let mut total: i64 = 0;
    for interval in text.split(',') {
        let parts: Vec<&str> = interval.split('-').collect();
        if parts.len() > 2 {
            return Err(format!(
                "the fragment {interval:?} violates the requirement that an index interval can \
                 have at most two parts separated by '-'"
            ));
        }
        let first = index(parts[0])?;
        let end = match parts.get(1) {
            Some(part) => {
                let end = index(part)?;
                if first >= end {
                    return Err(format!(
                        "non-increasing order, previous: {first}, current: {end}"
                    ));
                }
                end
            }
            None => first,
        };
        if let Some(previous) = last
            && previous >= first
        {
            return Err(format!(
                "non-increasing order, previous: {previous}, current: {first}"
            ));
        }
        total += end - first + 1;
        last = Some(end);
    }
    Ok(i32::try_from(total).unwrap_or(i32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(extra: serde_json::Value) -> JobSpec {
        let mut base = json!({
            "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox"}],
                "initContainers": [{"name": "setup", "image": "busybox"}]}},
        });
        base.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    fn messages(errs: FieldErrors) -> Vec<String> {
        errs.into_iter().map(|e| e.to_string()).collect()
    }

    fn at(f: &str) -> String {
        format!("spec.{f}")
    }

    #[test]
    fn pod_failure_rules_are_checked_as_upstream() {
        let s = spec(json!({"podFailurePolicy": {"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
            {"action": "Count", "onExitCodes": {"containerName": "setup", "operator": "NotIn", "values": [0, 5]}},
        ]}}));
        assert_eq!(
            messages(validate_pod_failure_policy(&s, &at)),
            Vec::<String>::new()
        );

        let s = spec(json!({"podFailurePolicy": {"rules": [
            {"action": "FailJob"},
            {"action": "", "onExitCodes": {"containerName": "xyz", "operator": "In", "values": [3, 0, 3]},
             "onPodConditions": [{"type": "Bad Type", "status": "Maybe"}]},
            {"action": "FailIndex", "onExitCodes": {"operator": "", "values": []}},
        ]}}));
        assert_eq!(
            messages(validate_pod_failure_policy(&s, &at)),
            [
                "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
                "spec.podFailurePolicy.rules[1].action: Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
                "spec.podFailurePolicy.rules[1].onExitCodes.containerName: Invalid value: \"xyz\": must be one of the container or initContainer names in the pod template",
                "spec.podFailurePolicy.rules[1].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator",
                "spec.podFailurePolicy.rules[1].onExitCodes.values[2]: Duplicate value: 3",
                "spec.podFailurePolicy.rules[1].onExitCodes.values: Invalid value: []int32{3, 0, 3}: must be ordered",
                "spec.podFailurePolicy.rules[1].onPodConditions[0].type: Invalid value: \"Bad Type\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "spec.podFailurePolicy.rules[1]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
                "spec.podFailurePolicy.rules[2].action: Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set",
                "spec.podFailurePolicy.rules[2].onExitCodes.operator: Required value: valid values: [\"In\" \"NotIn\"]",
                "spec.podFailurePolicy.rules[2].onExitCodes.values: Invalid value: []int32{}: at least one value is required",
            ]
        );
    }

    #[test]
    fn success_policies_need_indexed_jobs_and_fitting_counts() {
        let s = spec(json!({"successPolicy": {"rules": []}}));
        assert_eq!(
            messages(validate_success_policy(&s, &at)),
            ["spec.successPolicy: Invalid value: {\"rules\":[]}: requires indexed completion mode"]
        );
        let s = spec(
            json!({"completionMode": "Indexed", "completions": 5, "successPolicy": {"rules": [
                {"succeededCount": 1, "succeededIndexes": "0,2-4"},
                {},
                {"succeededIndexes": "invalid-format"},
                {"succeededCount": 6},
                {"succeededCount": 4, "succeededIndexes": "0-2"},
                {"succeededIndexes": "3,1"},
                {"succeededIndexes": "1-5"},
            ]}}),
        );
        assert_eq!(
            messages(validate_success_policy(&s, &at)),
            [
                "spec.successPolicy.rules[1]: Required value: at least one of succeededCount or succeededIndexes must be specified",
                "spec.successPolicy.rules[2].succeededIndexes: Invalid value: \"invalid-format\": error parsing succeededIndexes: cannot convert string to integer for index: \"invalid\"",
                "spec.successPolicy.rules[3].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)",
                "spec.successPolicy.rules[4].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of indexes in the specified succeededIndexes field)",
                "spec.successPolicy.rules[5].succeededIndexes: Invalid value: \"3,1\": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1",
                "spec.successPolicy.rules[6].succeededIndexes: Invalid value: \"1-5\": error parsing succeededIndexes: too large index: \"5\"",
            ]
        );
    }

    #[test]
    fn per_index_backoff_needs_indexed_jobs_and_limits() {
        let s = spec(json!({"backoffLimitPerIndex": 1, "maxFailedIndexes": 1}));
        assert_eq!(
            messages(validate_indexed(&s, &at)),
            [
                "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
                "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
            ]
        );
        let s = spec(json!({"completionMode": "Indexed", "completions": 100_001,
                            "parallelism": 50_000, "backoffLimitPerIndex": 1}));
        assert_eq!(
            messages(validate_indexed(&s, &at)),
            [
                "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
                "spec.parallelism: Invalid value: 50000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index",
            ]
        );
        let s =
            spec(json!({"completionMode": "Indexed", "completions": 10, "maxFailedIndexes": 11}));
        assert_eq!(
            messages(validate_indexed(&s, &at)),
            [
                "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
                "spec.maxFailedIndexes: Invalid value: 11: must be less than or equal to completions",
            ]
        );
    }

    #[test]
    fn replacement_is_failed_only_with_a_failure_policy() {
        let s = spec(json!({"podReplacementPolicy": "TerminatingOrFailed",
                            "podFailurePolicy": {"rules": []}}));
        assert_eq!(
            messages(validate_replacement(&s, &at)),
            [
                "spec.podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\""
            ]
        );
        let s = spec(json!({"podReplacementPolicy": "TerminatingOrFailed"}));
        assert!(validate_replacement(&s, &at).is_empty());
    }
}
