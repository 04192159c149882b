//! The audit state of one request, shared by the layers that add to it: the audit filter
//! starts it once the user is known, impersonation names the user acted as, authorization
//! and admission annotate it, the handler hands over the bodies its level records.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use jiff::Timestamp;
use serde_json::value::RawValue;

use crate::event::{self, Event, RequestRecord, ResponseStatus, User};
use crate::policy::{Decision, Level, Stage};

/// One request's audit state (a request extension).
#[derive(Debug)]
pub struct RequestContext {
    audit_id: String,
    received: Timestamp,
    decision: OnceLock<Decision>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    started: Option<Started>,
    annotations: BTreeMap<String, String>,
    unauthenticated: Option<(RequestRecord, String)>,
}

#[derive(Debug)]
struct Started {
    record: Arc<RequestRecord>,
    request_object: Option<Arc<RawValue>>,
    response_object: Option<Arc<RawValue>>,
}

impl RequestContext {
    /// The state of a request that arrived at `received` with `audit_id`.
    pub fn new(audit_id: String, received: Timestamp) -> Self {
        Self {
            audit_id,
            received,
            decision: OnceLock::new(),
            state: Mutex::default(),
        }
    }

    /// The request's audit ID.
    pub fn audit_id(&self) -> &str {
        &self.audit_id
    }

    /// When the request arrived.
    pub fn received(&self) -> Timestamp {
        self.received
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records what the policy decided and what is known of the request; events follow
    /// from here (none at level None).
    pub fn start(&self, decision: Decision, record: Option<RequestRecord>) {
        if self.decision.set(decision).is_err() {
            return;
        }
        if let Some(record) = record {
            self.state().started = Some(Started {
                record: Arc::new(record),
                request_object: None,
                response_object: None,
            });
        }
    }

    /// The policy's decision, once started.
    pub fn decision(&self) -> Option<Decision> {
        self.decision.get().copied()
    }

    /// Notes a request refused for its credentials: what is known of it, and what it tried.
    pub fn note_unauthenticated(&self, record: RequestRecord, message: String) {
        self.state().unauthenticated = Some((record, message));
    }

    /// The request refused for its credentials, if it was.
    pub fn take_unauthenticated(&self) -> Option<(RequestRecord, String)> {
        self.state().unauthenticated.take()
    }

    /// The level of the request's events (None before the start).
    pub fn level(&self) -> Level {
        self.decision().map_or(Level::None, |d| d.level)
    }

    /// Sets an annotation (the first value of a key stays, as upstream).
    pub fn annotate(&self, key: impl Into<String>, value: impl Into<String>) {
        self.state()
            .annotations
            .entry(key.into())
            .or_insert_with(|| value.into());
    }

    /// Names the user the request acts as.
    pub fn set_impersonated(&self, user: User) {
        if let Some(s) = self.state().started.as_mut() {
            let record = Arc::make_mut(&mut s.record);
            record.impersonated_user = Some(user);
            record.encoded = OnceLock::new();
        }
    }

    /// Completes the request's object reference from the object a create or update sends
    /// (its name, UID and resourceVersion; the events after RequestReceived carry them).
    pub fn complete_object_ref(&self, json: &[u8]) {
        let reference = self
            .state()
            .started
            .as_ref()
            .map(|s| s.record.object_ref.clone());
        let Some(Some(mut reference)) = reference else {
            return;
        };
        if !reference.complete_from(json) {
            return;
        }
        if let Some(s) = self.state().started.as_mut() {
            let record = Arc::make_mut(&mut s.record);
            record.object_ref = Some(reference);
            record.encoded = OnceLock::new();
        }
    }

    /// Hands over the request's body (JSON), kept at level Request and above.
    pub fn log_request_object(&self, json: &[u8]) {
        self.log_object(json, Level::Request, |s, o| s.request_object = o);
    }

    /// Hands over the response's body (JSON), kept at level RequestResponse.
    pub fn log_response_object(&self, json: &[u8]) {
        self.log_object(json, Level::RequestResponse, |s, o| s.response_object = o);
    }

    fn log_object(
        &self,
        json: &[u8],
        at_least: Level,
        set: impl FnOnce(&mut Started, Option<Arc<RawValue>>),
    ) {
        let Some(decision) = self.decision() else {
            return;
        };
        if decision.level < at_least {
            return;
        }
        let mut object = event::raw_json(json);
        if decision.omit_managed_fields {
            object = object.and_then(|o| event::strip_managed_fields(&o));
        }
        if let Some(started) = self.state().started.as_mut() {
            set(started, object);
        }
    }

    /// The event of `stage`, unless the request is not recorded or the stage is omitted.
    /// The last event of a request takes the annotations instead of copying them.
    pub fn event(&self, stage: Stage, status: Option<ResponseStatus>) -> Option<Event> {
        let decision = self.decision()?;
        if decision.level == Level::None || decision.omit_stages.contains(stage) {
            return None;
        }
        let mut state = self.state();
        let annotations = match stage {
            Stage::RequestReceived => None,
            Stage::ResponseStarted => Some(state.annotations.clone()),
            Stage::ResponseComplete | Stage::Panic => Some(std::mem::take(&mut state.annotations)),
        }
        .filter(|a| !a.is_empty())
        .map(Arc::new);
        let started = state.started.as_ref()?;
        let stage_timestamp = if stage == Stage::RequestReceived {
            self.received
        } else {
            Timestamp::now()
        };
        let later = stage != Stage::RequestReceived;
        Some(Event {
            request: started.record.clone(),
            stage,
            stage_timestamp,
            response_status: status,
            request_object: started.request_object.clone(),
            response_object: started.response_object.clone().filter(|_| later),
            annotations,
        })
    }
}
