//! `batch/v1`: Jobs and CronJobs, with upstream's defaults, the selector the server makes
//! for a Job (its uid), validation and status subresources. The controllers that run them
//! are kube-controller-manager's upstream.

use std::collections::BTreeMap;

use capstan_meta::labels::LabelSelector as Selector;
use capstan_meta::{FieldError, FieldErrors, FieldLabels, Refusal, ResourceDescriptor, Strategy};
use k8s_openapi::api::batch::v1::{CronJob, Job, JobSpec};
use k8s_openapi::api::core::v1::{Affinity, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::json;

use crate::apps::non_negative;
use crate::describe::Names;
use crate::pod::{default_template, validate_template};

mod policies;

/// The label naming the Job's uid, on the Job's selector and its pods.
pub const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// The label naming the Job, on its pods.
pub const JOB_NAME: &str = "batch.kubernetes.io/job-name";
/// Longest CronJob name (its Jobs add 11 characters of schedule time).
const MAX_CRONJOB_NAME: usize = 52;
/// Longest `spec.managedBy` of a Job.
const MAX_MANAGED_BY: usize = 63;

/// Upstream's Job defaults (also those a CronJob's template does not get).
fn default_job_spec(spec: &mut JobSpec) {
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
    }
    spec.parallelism.get_or_insert(1);
    if spec.backoff_limit.is_none() {
        spec.backoff_limit = Some(if spec.backoff_limit_per_index.is_some() {
            i32::MAX
        } else {
            6
        });
    }
    spec.completion_mode
        .get_or_insert_with(|| "NonIndexed".into());
    spec.suspend.get_or_insert(false);
    spec.pod_replacement_policy.get_or_insert_with(|| {
        if spec.pod_failure_policy.is_some() {
            "Failed".into()
        } else {
            "TerminatingOrFailed".into()
        }
    });
    spec.manual_selector.get_or_insert(false);
}

/// Checks a Job spec at `path` (`spec`, or `spec.jobTemplate.spec` of a CronJob).
fn validate_job_spec(spec: &JobSpec, path: &str, privileged: bool, generated: bool) -> FieldErrors {
    let mut errs = Vec::new();
    let at = |f: &str| format!("{path}.{f}");
    non_negative(&mut errs, &at("parallelism"), spec.parallelism);
    non_negative(&mut errs, &at("completions"), spec.completions);
    non_negative(&mut errs, &at("backoffLimit"), spec.backoff_limit);
    if let Some(d) = spec.active_deadline_seconds
        && d < 0
    {
        errs.push(FieldError::negative(at("activeDeadlineSeconds"), d));
    }
    non_negative(
        &mut errs,
        &at("ttlSecondsAfterFinished"),
        spec.ttl_seconds_after_finished,
    );
    non_negative(
        &mut errs,
        &at("backoffLimitPerIndex"),
        spec.backoff_limit_per_index,
    );
    non_negative(&mut errs, &at("maxFailedIndexes"), spec.max_failed_indexes);
    if let Some(managed_by) = spec.managed_by.as_deref() {
        if let Some(why) = crate::networking::domain_prefixed_path(managed_by) {
            errs.push(FieldError::invalid(at("managedBy"), managed_by, why));
        }
        if managed_by.len() > MAX_MANAGED_BY {
            errs.push(FieldError::too_long(at("managedBy"), MAX_MANAGED_BY));
        }
    }
    match spec.completion_mode.as_deref() {
        Some("NonIndexed") | None => {}
        Some("Indexed") => {
            if spec.completions.is_none() {
                errs.push(FieldError::required(
                    at("completions"),
                    "when completion mode is Indexed",
                ));
            }
        }
        Some(other) => errs.push(FieldError::not_supported(
            at("completionMode"),
            other,
            &["NonIndexed", "Indexed"],
        )),
    }
    errs.extend(policies::validate_indexed(spec, &at));
    errs.extend(policies::validate_pod_failure_policy(spec, &at));
    errs.extend(policies::validate_success_policy(spec, &at));
    errs.extend(policies::validate_replacement(spec, &at));
    let template_path = at("template");
    errs.extend(validate_template(
        Some(&spec.template),
        &template_path,
        privileged,
    ));
    match spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
    {
        Some("OnFailure") if spec.pod_failure_policy.is_some() => errs.push(FieldError::invalid(
            format!("{template_path}.spec.restartPolicy"),
            "OnFailure",
            "only \"Never\" is supported when podFailurePolicy is specified",
        )),
        Some("OnFailure" | "Never") => {}
        Some("Always") | None => errs.push(FieldError::required(
            format!("{template_path}.spec.restartPolicy"),
            "valid values: \"OnFailure\", \"Never\"",
        )),
        Some(other) => errs.push(FieldError::not_supported(
            format!("{template_path}.spec.restartPolicy"),
            other,
            &["OnFailure", "Never"],
        )),
    }
    // A selector the server made matches by construction; a CronJob's Jobs get theirs later.
    if !generated && let Some(selector) = &spec.selector {
        match Selector::from_api(selector) {
            Err(e) => errs.push(FieldError::invalid(at("selector"), "", e.to_string())),
            Ok(parsed) => {
                let labels = spec
                    .template
                    .metadata
                    .as_ref()
                    .and_then(|m| m.labels.clone());
                if !parsed.is_empty() && !parsed.matches(labels.as_ref()) {
                    errs.push(FieldError::invalid_raw(
                        format!("{template_path}.metadata.labels"),
                        json!(labels.unwrap_or_default()).to_string(),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
        }
    }
    errs
}

/// `template` with the resources of `new`'s containers (matched by name), init containers and
/// pod: what a suspended Job with no pod running may change.
fn with_resources_of(template: &PodTemplateSpec, new: &PodTemplateSpec) -> PodTemplateSpec {
    let mut merged = template.clone();
    let (Some(spec), Some(new_spec)) = (merged.spec.as_mut(), new.spec.as_ref()) else {
        return merged;
    };
    let copy = |containers: &mut Vec<k8s_openapi::api::core::v1::Container>,
                from: &[k8s_openapi::api::core::v1::Container]| {
        for c in containers.iter_mut() {
            if let Some(n) = from.iter().find(|n| n.name == c.name) {
                c.resources = n.resources.clone();
            }
        }
    };
    copy(&mut spec.containers, &new_spec.containers);
    if let Some(init) = spec.init_containers.as_mut() {
        copy(
            init,
            new_spec.init_containers.as_deref().unwrap_or_default(),
        );
    }
    spec.resources = new_spec.resources.clone();
    merged
}

/// `old` with the scheduling directives of `new`: what a suspended Job that has not started
/// may change in its template.
fn with_scheduling_of(old: &PodTemplateSpec, new: &PodTemplateSpec) -> PodTemplateSpec {
    let mut merged = old.clone();
    let meta = merged.metadata.get_or_insert_with(Default::default);
    let new_meta = new.metadata.clone().unwrap_or_default();
    meta.labels = new_meta.labels;
    meta.annotations = new_meta.annotations;
    if merged.metadata.as_ref() == Some(&Default::default()) && new.metadata.is_none() {
        merged.metadata = None;
    }
    let (Some(spec), Some(new_spec)) = (merged.spec.as_mut(), new.spec.as_ref()) else {
        return merged;
    };
    spec.node_selector = new_spec.node_selector.clone();
    spec.tolerations = new_spec.tolerations.clone();
    spec.scheduling_gates = new_spec.scheduling_gates.clone();
    let node_affinity = new_spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.clone());
    spec.affinity = match (spec.affinity.take(), &new_spec.affinity) {
        // Clearing the affinity is allowed when only node affinity was in it.
        (Some(mut a), None) => {
            a.node_affinity = None;
            (a != Default::default()).then_some(a)
        }
        (None, Some(_)) => Some(Affinity {
            node_affinity,
            ..Default::default()
        }),
        (Some(mut a), Some(_)) => {
            a.node_affinity = node_affinity;
            Some(a)
        }
        (None, None) => None,
    };
    merged
}

/// The strategy of Job.
#[derive(Debug, Default, Clone, Copy)]
pub struct JobStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

/// A Job without labels takes its template's (upstream's defaulting, which also runs when
/// upstream reads a Job back: a new Job shows the generated `controller-uid` labels too).
fn labels_from_template(job: &mut Job) {
    if job.metadata.labels.as_ref().is_some_and(|l| !l.is_empty()) {
        return;
    }
    let template = job.spec.as_ref().and_then(|s| s.template.metadata.as_ref());
    if let Some(labels) = template
        .and_then(|m| m.labels.clone())
        .filter(|l| !l.is_empty())
    {
        job.metadata.labels = Some(labels);
    }
}

impl Strategy for JobStrategy {
    fn orphans_by_default(&self) -> bool {
        true
    }

    type Object = Job;

    fn warnings(&self, new: &Job, old: Option<&Job>) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        crate::warnings::template_warnings(new.spec.as_ref().map(|s| &s.template), "spec.template.")
    }

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "batch",
            kind: "Job",
            resource: "jobs",
            short_names: &[],
            namespaced: true,
        }
        .v1_in_all();
        d.field_labels =
            FieldLabels::of_kind(&["status.successful"]).refused_as(Refusal::NotSupportedForKind);
        d
    }

    fn field(&self, job: &Job, field: &str) -> Option<String> {
        let succeeded = job.status.as_ref().and_then(|s| s.succeeded).unwrap_or(0);
        (field == "status.successful").then(|| succeeded.to_string())
    }

    fn default(&self, job: &mut Job) {
        let spec = job.spec.get_or_insert_with(Default::default);
        default_job_spec(spec);
        default_template(&mut spec.template);
        labels_from_template(job);
    }

    /// Unless the selector is manual, the Job selects its pods by its uid: the selector and
    /// the template's labels are made here, as upstream's.
    fn prepare_for_create(&self, job: &mut Job) {
        job.metadata.generation = Some(1);
        job.status = Some(Default::default());
        let uid = job.metadata.uid.clone().unwrap_or_default();
        let name = job.metadata.name.clone().unwrap_or_default();
        let spec = job.spec.get_or_insert_with(Default::default);
        if spec.manual_selector == Some(true) {
            labels_from_template(job);
            return;
        }
        spec.selector = Some(LabelSelector {
            match_labels: Some(BTreeMap::from([(CONTROLLER_UID.to_string(), uid.clone())])),
            ..Default::default()
        });
        let meta = spec.template.metadata.get_or_insert_with(Default::default);
        let labels = meta.labels.get_or_insert_with(Default::default);
        labels.insert(CONTROLLER_UID.into(), uid.clone());
        labels.insert("controller-uid".into(), uid);
        labels.insert(JOB_NAME.into(), name.clone());
        labels.insert("job-name".into(), name);
        labels_from_template(job);
    }

    fn prepare_for_update(&self, new: &mut Job, old: &Job) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, job: &Job) -> FieldErrors {
        let Some(spec) = &job.spec else {
            return vec![FieldError::required("spec", "")];
        };
        let mut errs = validate_job_spec(spec, "spec", self.allow_privileged, false);
        if spec.manual_selector == Some(true) && spec.selector.is_none() {
            errs.push(FieldError::required("spec.selector", ""));
        }
        // An Indexed Job's pods are named `<job>-<index>`, which must be a DNS label.
        if spec.completion_mode.as_deref() == Some("Indexed")
            && let Some(completions) = spec.completions.filter(|&c| c > 0)
        {
            let name = job.metadata.name.as_deref().unwrap_or_default();
            let hostname = format!("{name}-{}", completions - 1);
            if !capstan_meta::validation::dns1123_label(&hostname).is_empty() {
                errs.push(FieldError::invalid(
                    "metadata.name",
                    name,
                    format!("will not able to create pod with invalid DNS label: {hostname}"),
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Job, old: &Job) -> FieldErrors {
        let mut errs = self.validate(new);
        let (Some(n), Some(o)) = (&new.spec, &old.spec) else {
            return errs;
        };
        if n.selector != o.selector {
            errs.push(FieldError::invalid_raw(
                "spec.selector",
                json!(n.selector).to_string(),
                "field is immutable",
            ));
        }
        if n.completion_mode != o.completion_mode {
            errs.push(FieldError::invalid(
                "spec.completionMode",
                n.completion_mode.as_deref().unwrap_or(""),
                "field is immutable",
            ));
        }
        if n.completions != o.completions {
            let indexed = n.completion_mode.as_deref() == Some("Indexed");
            let value = n.completions.map(|c| c.to_string()).unwrap_or_default();
            if !indexed {
                errs.push(FieldError::invalid_raw(
                    "spec.completions",
                    value,
                    "field is immutable",
                ));
            } else if n.completions.is_some() && n.completions != n.parallelism {
                // Elastic Indexed Jobs: completions follow parallelism.
                errs.push(FieldError::invalid_raw(
                    "spec.completions",
                    value,
                    "can only be modified in tandem with spec.parallelism",
                ));
            }
        }
        // While a Job is suspended and has not started, its template's scheduling
        // directives may change (node affinity and selector, tolerations, labels,
        // annotations, scheduling gates); nothing else of it ever does.
        let started = old.status.as_ref().is_some_and(|s| s.start_time.is_some());
        let mut template = if o.suspend == Some(true) && !started {
            with_scheduling_of(&o.template, &n.template)
        } else {
            o.template.clone()
        };
        // While it is suspended with no pod running, its containers' resources may change too
        // (upstream's MutablePodResourcesForSuspendedJobs, beta and on by default in v1.36).
        let active = old.status.as_ref().and_then(|s| s.active).unwrap_or(0);
        if o.suspend == Some(true) && active == 0 {
            template = with_resources_of(&template, &n.template);
        }
        if n.template != template {
            errs.push(FieldError::invalid(
                "spec.template",
                "",
                "field is immutable",
            ));
        }
        let fixed = [
            (
                "spec.podFailurePolicy",
                json!(n.pod_failure_policy),
                json!(o.pod_failure_policy),
            ),
            (
                "spec.backoffLimitPerIndex",
                json!(n.backoff_limit_per_index),
                json!(o.backoff_limit_per_index),
            ),
            ("spec.managedBy", json!(n.managed_by), json!(o.managed_by)),
            (
                "spec.successPolicy",
                json!(n.success_policy),
                json!(o.success_policy),
            ),
        ];
        for (field, new, old) in fixed {
            if new != old {
                errs.push(FieldError::invalid_raw(
                    field,
                    new.to_string(),
                    "field is immutable",
                ));
            }
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut Job, from: &Job) {
        to.status = from.status.clone();
    }
}

/// Why a cron schedule is refused, in the words of the parser upstream uses.
pub fn schedule_problem(schedule: &str) -> Option<String> {
    let trimmed = schedule.trim();
    if trimmed.starts_with("TZ=") || trimmed.starts_with("CRON_TZ=") {
        return Some("cannot use TZ or CRON_TZ in schedule, use timeZone field instead".into());
    }
    if let Some(descriptor) = trimmed.strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => None,
            d if d.starts_with("every ") => {
                let duration = d["every ".len()..].trim();
                match capstan_meta::duration::parse_go_duration(duration) {
                    Some(n) if n > 0 => None,
                    _ => Some(format!(
                        "failed to parse duration {trimmed}: time: invalid duration {duration:?}"
                    )),
                }
            }
            _ => Some(format!("unrecognized descriptor: {trimmed}")),
        };
    }
    let fields: Vec<&str> = trimmed.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(u32, u32, &[&str], u32); 5] = [
        (0, 59, &[], 0),
        (0, 23, &[], 0),
        (1, 31, &[], 0),
        (1, 12, &MONTHS, 1),
        (0, 6, &DAYS, 0),
    ];
    for (field, (low, high, names, first)) in fields.iter().zip(bounds) {
        for part in field.split(',') {
            if let Some(why) = cron_part_problem(part, low, high, names, first) {
                return Some(why);
            }
        }
    }
    None
}

/// One comma-separated part of a cron field: `*`, `?`, `a`, `a-b`, each with `/step`.
fn cron_part_problem(
    part: &str,
    low: u32,
    high: u32,
    names: &[&str],
    first: u32,
) -> Option<String> {
    let value = |text: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
            return Ok(i as u32 + first);
        }
        text.parse::<u32>().map_err(|_| {
            format!(
                "failed to parse int from {text}: strconv.Atoi: parsing {text:?}: invalid syntax"
            )
        })
    };
    let (range, step) = match part.split_once('/') {
        Some((r, s)) => match s.parse::<u32>() {
            Ok(s) if s > 0 => (r, Some(s)),
            _ => {
                return Some(format!(
                    "failed to parse int from {s}: strconv.Atoi: parsing {s:?}: invalid syntax"
                ));
            }
        },
        None => (part, None),
    };
    let (start, end) = match range {
        "*" | "?" => (low, high),
        r => match r.split_once('-') {
            Some((a, b)) => match (value(a), value(b)) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => return Some(e),
            },
            None => match value(r) {
                Ok(v) => (v, if step.is_some() { high } else { v }),
                Err(e) => return Some(e),
            },
        },
    };
    if start < low {
        return Some(format!(
            "beginning of range ({start}) below minimum ({low}): {part}"
        ));
    }
    if end > high {
        return Some(format!(
            "end of range ({end}) above maximum ({high}): {part}"
        ));
    }
    if start > end {
        return Some(format!(
            "beginning of range ({start}) beyond end of range ({end}): {part}"
        ));
    }
    None
}

/// Why `tz` is not a time zone of the IANA database, in upstream's words.
fn time_zone_problem(tz: &str) -> Option<String> {
    if tz.is_empty() {
        return Some("timeZone must be nil or non-empty string".into());
    }
    let part_ok = |part: &str| {
        part != "."
            && part != ".."
            && !part.starts_with('-')
            && (1..=14).contains(&part.len())
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
    };
    if !tz.split('/').all(part_ok) {
        return Some(format!("unknown time zone {tz}"));
    }
    if tz.eq_ignore_ascii_case("Local") {
        return Some(
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
                .into(),
        );
    }
    tz.parse::<chrono_tz::Tz>()
        .is_err()
        .then(|| format!("unknown time zone {tz}"))
}

/// The strategy of CronJob.
#[derive(Debug, Default, Clone, Copy)]
pub struct CronJobStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for CronJobStrategy {
    type Object = CronJob;

    fn warnings(&self, new: &CronJob, old: Option<&CronJob>) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        crate::warnings::template_warnings(
            new.spec.job_template.spec.as_ref().map(|s| &s.template),
            "spec.jobTemplate.spec.template.",
        )
    }

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "batch",
            kind: "CronJob",
            resource: "cronjobs",
            short_names: &["cj"],
            namespaced: true,
        }
        .v1_in_all()
    }

    fn default(&self, cj: &mut CronJob) {
        let spec = &mut cj.spec;
        spec.concurrency_policy
            .get_or_insert_with(|| "Allow".into());
        spec.suspend.get_or_insert(false);
        spec.successful_jobs_history_limit.get_or_insert(3);
        spec.failed_jobs_history_limit.get_or_insert(1);
        // Go writes the templates' (non-pointer) metadata even when empty.
        spec.job_template
            .metadata
            .get_or_insert_with(Default::default);
        let job = spec.job_template.spec.get_or_insert_with(Default::default);
        job.template.metadata.get_or_insert_with(Default::default);
        default_template(&mut job.template);
    }

    fn prepare_for_create(&self, cj: &mut CronJob) {
        cj.metadata.generation = Some(1);
        cj.status = Some(Default::default());
    }

    fn prepare_for_update(&self, new: &mut CronJob, old: &CronJob) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        |name| {
            let mut why = capstan_meta::validation::dns1123_subdomain(name);
            if name.len() > MAX_CRONJOB_NAME {
                why.push(format!(
                    "must be no more than {MAX_CRONJOB_NAME} characters"
                ));
            }
            why
        }
    }

    fn validate(&self, cj: &CronJob) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = &cj.spec;
        if spec.schedule.is_empty() {
            errs.push(FieldError::required("spec.schedule", ""));
        } else if let Some(why) = schedule_problem(&spec.schedule) {
            errs.push(FieldError::invalid("spec.schedule", &spec.schedule, why));
        }
        if let Some(tz) = spec.time_zone.as_deref() {
            if let Some(why) = time_zone_problem(tz) {
                errs.push(FieldError::invalid("spec.timeZone", tz, why));
            }
            if spec.schedule.contains("TZ") {
                errs.push(FieldError::invalid(
                    "spec.schedule",
                    &spec.schedule,
                    "cannot use both timeZone field and TZ or CRON_TZ in schedule",
                ));
            }
        }
        match spec.concurrency_policy.as_deref() {
            Some("Allow" | "Forbid" | "Replace") | None => {}
            Some(other) => errs.push(FieldError::not_supported(
                "spec.concurrencyPolicy",
                other,
                &["Allow", "Forbid", "Replace"],
            )),
        }
        if let Some(d) = spec.starting_deadline_seconds
            && d < 0
        {
            errs.push(FieldError::negative("spec.startingDeadlineSeconds", d));
        }
        non_negative(
            &mut errs,
            "spec.successfulJobsHistoryLimit",
            spec.successful_jobs_history_limit,
        );
        non_negative(
            &mut errs,
            "spec.failedJobsHistoryLimit",
            spec.failed_jobs_history_limit,
        );
        match &spec.job_template.spec {
            None => errs.push(FieldError::required("spec.jobTemplate.spec", "")),
            Some(job) => {
                errs.extend(validate_job_spec(
                    job,
                    "spec.jobTemplate.spec",
                    self.allow_privileged,
                    true,
                ));
                // The Jobs' selectors are made when they are created.
                if let Some(selector) = &job.selector {
                    errs.push(FieldError::invalid_raw(
                        "spec.jobTemplate.spec.selector",
                        json!(selector).to_string(),
                        "`selector` will be auto-generated",
                    ));
                }
                if job.manual_selector == Some(true) {
                    errs.push(FieldError::not_supported(
                        "spec.jobTemplate.spec.manualSelector",
                        "true",
                        &["nil", "false"],
                    ));
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &CronJob, _old: &CronJob) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut CronJob, from: &CronJob) {
        to.status = from.status.clone();
        // An empty list of active jobs is no list (`omitempty`), as upstream writes it.
        if let Some(status) = to.status.as_mut()
            && status.active.as_ref().is_some_and(Vec::is_empty)
        {
            status.active = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOBS: JobStrategy = JobStrategy {
        allow_privileged: false,
    };

    /// The fields a Job update from `old` to `new` is refused at.
    fn update_fields(new: &Job, old: &Job) -> Vec<String> {
        JOBS.validate_update(new, old)
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    /// The pod spec of `j`'s template.
    fn pod(j: &mut Job) -> &mut k8s_openapi::api::core::v1::PodSpec {
        j.spec.as_mut().unwrap().template.spec.as_mut().unwrap()
    }

    fn job() -> Job {
        let mut j: Job = serde_json::from_value(json!({
            "metadata": {"name": "pi", "uid": "u-1"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "perl"}]}}},
        }))
        .unwrap();
        JOBS.default(&mut j);
        j
    }

    #[test]
    fn jobs_default_and_select_their_pods_by_uid() {
        let mut j = job();
        JOBS.prepare_for_create(&mut j);
        let spec = j.spec.clone().unwrap();
        assert_eq!(
            (spec.completions, spec.parallelism, spec.backoff_limit),
            (Some(1), Some(1), Some(6))
        );
        assert_eq!(spec.completion_mode.as_deref(), Some("NonIndexed"));
        assert_eq!(
            spec.selector.unwrap().match_labels.unwrap()[CONTROLLER_UID],
            "u-1"
        );
        let labels = spec.template.metadata.unwrap().labels.unwrap();
        assert_eq!(
            (labels[JOB_NAME].as_str(), labels["controller-uid"].as_str()),
            ("pi", "u-1")
        );
        assert!(JOBS.validate(&j).is_empty(), "{:?}", JOBS.validate(&j));
    }

    #[test]
    fn jobs_restart_on_failure_or_never_and_keep_their_template() {
        let mut j = job();
        pod(&mut j).restart_policy = Some("Always".into());
        let fields: Vec<String> = JOBS.validate(&j).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.template.spec.restartPolicy"]);
        let old = job();
        let mut new = job();
        pod(&mut new).containers[0].image = Some("x".into());
        let fields = update_fields(&new, &old);
        assert_eq!(fields, ["spec.template"]);
    }

    #[test]
    fn time_zones_come_from_the_iana_database() {
        for ok in ["UTC", "Europe/Rome", "America/New_York", "Etc/GMT+5"] {
            assert_eq!(time_zone_problem(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("", "timeZone must be nil or non-empty string"),
            (
                "Local",
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            ),
            ("Europe/InvalidRome", "unknown time zone Europe/InvalidRome"),
            (" Europe/Rome", "unknown time zone  Europe/Rome"),
            ("AMERICA/new_york", "unknown time zone AMERICA/new_york"),
            ("../etc/passwd", "unknown time zone ../etc/passwd"),
        ] {
            assert_eq!(time_zone_problem(bad).as_deref(), Some(why), "{bad:?}");
        }
    }

    #[test]
    fn suspended_jobs_change_only_scheduling_directives_before_they_start() {
        let mut old = job();
        old.spec.as_mut().unwrap().suspend = Some(true);
        let mut new = old.clone();
        pod(&mut new).node_selector = Some([("zone".to_string(), "a".to_string())].into());
        assert!(JOBS.validate_update(&new, &old).is_empty());
        pod(&mut new).containers[0].image = Some("other".into());
        let fields = update_fields(&new, &old);
        assert_eq!(fields, ["spec.template"]);
        // Once started, even the node selector is fixed.
        let mut started = old.clone();
        started.status =
            Some(serde_json::from_value(json!({"startTime": "2026-01-01T00:00:00Z"})).unwrap());
        let mut new = started.clone();
        pod(&mut new).node_selector = Some([("zone".to_string(), "a".to_string())].into());
        assert_eq!(JOBS.validate_update(&new, &started).len(), 1);
    }

    #[test]
    fn failure_policies_are_fixed_and_ask_for_never() {
        let mut j = job();
        j.spec.as_mut().unwrap().pod_failure_policy = Some(
            serde_json::from_value(json!({"rules": [{"action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]}))
            .unwrap(),
        );
        // With a failure policy, only failed pods are replaced (the default then).
        j.spec.as_mut().unwrap().pod_replacement_policy = None;
        JOBS.default(&mut j);
        assert!(JOBS.validate(&j).is_empty(), "{:?}", JOBS.validate(&j));
        let mut changed = j.clone();
        changed.spec.as_mut().unwrap().pod_failure_policy = None;
        let fields = update_fields(&changed, &j);
        assert_eq!(fields, ["spec.podFailurePolicy"]);
        pod(&mut j).restart_policy = Some("OnFailure".into());
        let errs: Vec<String> = JOBS.validate(&j).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            [
                "spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified"
            ]
        );
    }

    #[test]
    fn schedules_parse_as_upstream_parser_does() {
        for ok in [
            "*/5 * * * *",
            "0 0 1 jan *",
            "@hourly",
            "@every 1h30m",
            "0 9-17 * * mon-fri",
            "? * * * *",
        ] {
            assert_eq!(schedule_problem(ok), None, "{ok}");
        }
        assert_eq!(
            schedule_problem("bad").as_deref(),
            Some("expected exactly 5 fields, found 1: [bad]")
        );
        assert!(
            schedule_problem("61 * * * *")
                .unwrap()
                .contains("above maximum")
        );
        assert!(
            schedule_problem("TZ=UTC 0 * * * *")
                .unwrap()
                .contains("timeZone field")
        );
        assert!(
            schedule_problem("@weekdays")
                .unwrap()
                .contains("unrecognized descriptor")
        );
    }
}
