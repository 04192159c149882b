//! `batch/v1`: Jobs and CronJobs, with upstream's defaults, the selector the server makes
//! for a Job (its uid), validation and status subresources. The controllers that run them
//! are kube-controller-manager's upstream.

use std::collections::BTreeMap;

use capstan_meta::labels::LabelSelector as Selector;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::batch::v1::{CronJob, Job, JobSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::json;

use crate::apps::non_negative;
use crate::describe::Names;
use crate::pod::{default_template, validate_template};

/// The label naming the Job's uid, on the Job's selector and its pods.
pub const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// The label naming the Job, on its pods.
pub const JOB_NAME: &str = "batch.kubernetes.io/job-name";
/// Longest CronJob name (its Jobs add 11 characters of schedule time).
const MAX_CRONJOB_NAME: usize = 52;

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
        && d <= 0
    {
        errs.push(FieldError::invalid(
            at("activeDeadlineSeconds"),
            &d.to_string(),
            "must be greater than 0",
        ));
    }
    non_negative(
        &mut errs,
        &at("ttlSecondsAfterFinished"),
        spec.ttl_seconds_after_finished,
    );
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
        Some("OnFailure" | "Never") => {}
        Some(other) => errs.push(FieldError::not_supported(
            format!("{template_path}.spec.restartPolicy"),
            other,
            &["OnFailure", "Never"],
        )),
        None => errs.push(FieldError::required(
            format!("{template_path}.spec.restartPolicy"),
            "valid values: \"OnFailure\", \"Never\"",
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

/// The strategy of Job.
#[derive(Debug, Default, Clone, Copy)]
pub struct JobStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for JobStrategy {
    type Object = Job;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "batch",
            kind: "Job",
            resource: "jobs",
            short_names: &[],
            namespaced: true,
        }
        .v1_in_all()
    }

    fn default(&self, job: &mut Job) {
        let spec = job.spec.get_or_insert_with(Default::default);
        default_job_spec(spec);
        default_template(&mut spec.template);
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
        if n.completions != o.completions && n.completion_mode.as_deref() != Some("Indexed") {
            errs.push(FieldError::invalid(
                "spec.completions",
                &n.completions.map(|c| c.to_string()).unwrap_or_default(),
                "field is immutable",
            ));
        }
        // The template may change only while the Job is suspended (its scheduling
        // directives), as upstream allows.
        let suspended = o.suspend == Some(true);
        if n.template != o.template && !suspended {
            errs.push(FieldError::invalid(
                "spec.template",
                "",
                "field is immutable",
            ));
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

/// The strategy of CronJob.
#[derive(Debug, Default, Clone, Copy)]
pub struct CronJobStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for CronJobStrategy {
    type Object = CronJob;

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
        let spec = cj.spec.get_or_insert_with(Default::default);
        spec.concurrency_policy
            .get_or_insert_with(|| "Allow".into());
        spec.suspend.get_or_insert(false);
        spec.successful_jobs_history_limit.get_or_insert(3);
        spec.failed_jobs_history_limit.get_or_insert(1);
        let job = spec.job_template.spec.get_or_insert_with(Default::default);
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
        let Some(spec) = &cj.spec else {
            return vec![FieldError::required("spec", "")];
        };
        if spec.schedule.is_empty() {
            errs.push(FieldError::required("spec.schedule", ""));
        } else if let Some(why) = schedule_problem(&spec.schedule) {
            errs.push(FieldError::invalid("spec.schedule", &spec.schedule, why));
        }
        if let Some(tz) = spec.time_zone.as_deref()
            && (tz.is_empty() || tz.contains(' ') || tz.starts_with('/') || tz.contains(".."))
        {
            errs.push(FieldError::invalid(
                "spec.timeZone",
                tz,
                "unknown time zone",
            ));
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
            errs.push(FieldError::invalid(
                "spec.startingDeadlineSeconds",
                &d.to_string(),
                "must be greater than or equal to 0",
            ));
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
            Some(job) => errs.extend(validate_job_spec(
                job,
                "spec.jobTemplate.spec",
                self.allow_privileged,
                job.manual_selector != Some(true),
            )),
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOBS: JobStrategy = JobStrategy {
        allow_privileged: false,
    };

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
        j.spec
            .as_mut()
            .unwrap()
            .template
            .spec
            .as_mut()
            .unwrap()
            .restart_policy = Some("Always".into());
        let fields: Vec<String> = JOBS.validate(&j).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.template.spec.restartPolicy"]);
        let old = job();
        let mut new = job();
        new.spec
            .as_mut()
            .unwrap()
            .template
            .spec
            .as_mut()
            .unwrap()
            .containers[0]
            .image = Some("x".into());
        let fields: Vec<String> = JOBS
            .validate_update(&new, &old)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["spec.template"]);
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
