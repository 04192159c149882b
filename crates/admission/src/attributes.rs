//! What a plugin is asked about: the operation, the resource, the objects and the user.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use capstan_auth::UserInfo;
use capstan_meta::GroupResource;

use crate::forms::{Form, Forms};
use serde_json::Value;

/// The operation being admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// A create (also of subresources such as `pods/binding` or `pods/eviction`).
    Create,
    /// An update or patch.
    Update,
    /// A delete.
    Delete,
    /// A connection (`pods/exec`, `pods/attach`, proxies).
    Connect,
}

impl Operation {
    /// Upstream's name (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
            Self::Connect => "CONNECT",
        }
    }
}

/// One admission request. Mutating plugins may change `object`.
#[derive(Debug, Clone)]
pub struct Attributes {
    /// What is done.
    pub operation: Operation,
    /// The group and resource.
    pub resource: GroupResource,
    /// The API version the request used.
    pub version: String,
    /// The subresource, if any (`status`, `binding`, ...).
    pub subresource: String,
    /// The object's kind (`Pod`), of `object` for subresources (`Binding`).
    pub kind: String,
    /// The group and version of `kind` when they are not the resource's: a workload's
    /// `scale` takes `autoscaling/v1` Scales, a pod's `eviction` `policy/v1` Evictions.
    pub kind_group_version: Option<(String, String)>,
    /// The namespace (empty for cluster objects).
    pub namespace: String,
    /// The object's name (empty for a create with `generateName`).
    pub name: String,
    /// The new object (creates and updates; the options' object of a delete is not given).
    pub object: Option<Value>,
    /// The stored object (updates and deletes).
    pub old_object: Option<Value>,
    /// Who asks.
    pub user: UserInfo,
    /// A dry run: plugins must not change anything else.
    pub dry_run: bool,
    /// Warnings and audit annotations the plugins leave (shared by clones).
    pub feedback: Arc<Feedback>,
    /// The second pass of the mutating plugins, when one asked for it.
    pub reinvocation: Reinvocation,
    /// The form the client wrote in, when it is not the stored one (an `autoscaling/v1`
    /// write of HorizontalPodAutoscalers, which are stored as `autoscaling/v2`).
    pub served_as: Option<Form>,
    /// Every form of the resource, for plugins that see objects in another version.
    pub forms: Option<Arc<dyn Forms>>,
}

/// What plugins report besides their verdict: warnings for the client (`Warning` headers)
/// and annotations for the audit event; and what they keep until the request ends.
#[derive(Default)]
pub struct Feedback {
    warnings: Mutex<Vec<String>>,
    annotations: Mutex<BTreeMap<String, String>>,
    held: Mutex<Vec<Box<dyn std::any::Any + Send>>>,
}

impl std::fmt::Debug for Feedback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feedback")
            .field("warnings", &self.warnings)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

impl Feedback {
    /// Adds a warning for the client.
    pub fn warn(&self, warning: impl Into<String>) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(warning.into());
    }

    /// Sets an audit annotation (the first value of a key stays).
    pub fn annotate(&self, key: impl Into<String>, value: impl Into<String>) {
        self.annotations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.into())
            .or_insert_with(|| value.into());
    }

    /// Keeps `guard` until the request ends (the request's write stored or refused), for
    /// a plugin that must know when what it admitted is done.
    pub fn hold(&self, guard: impl std::any::Any + Send) {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Box::new(guard));
    }

    /// The warnings so far, taken.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The audit annotations so far.
    pub fn annotations(&self) -> BTreeMap<String, String> {
        self.annotations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Reinvocation, as upstream's `reinvocationPolicy: IfNeeded` asks for: when a plugin that
/// ran early may need to see changes later plugins made, it sets `requested`; the chain then
/// runs its mutating plugins once more, with `round` 1. Plugins keep what they need to
/// decide in `state`, under their own name.
#[derive(Debug, Clone, Default)]
pub struct Reinvocation {
    /// 0 in the first pass, 1 in the second.
    pub round: u8,
    /// Whether a second pass is wanted.
    pub requested: bool,
    /// Per-plugin state carried from the first pass into the second.
    pub state: BTreeMap<&'static str, Value>,
    /// The object as mutators that want to see later changes left it, by a key of their
    /// plugin's (`<plugin>/<name>`): when the first pass ends with another object, the chain
    /// runs the second.
    pub watched: BTreeMap<String, Value>,
}

impl Reinvocation {
    /// Whether a watched mutator's output was changed by a later one.
    pub fn watched_changed(&self, object: Option<&Value>) -> bool {
        self.watched.values().any(|left| Some(left) != object)
    }
}

impl Attributes {
    /// Attributes of `operation` on `resource` (no subresource, no objects yet).
    pub fn new(operation: Operation, resource: GroupResource, user: UserInfo) -> Self {
        Self {
            operation,
            resource,
            version: String::new(),
            subresource: String::new(),
            kind: String::new(),
            kind_group_version: None,
            namespace: String::new(),
            name: String::new(),
            object: None,
            old_object: None,
            user,
            dry_run: false,
            feedback: Arc::default(),
            reinvocation: Reinvocation::default(),
            served_as: None,
            forms: None,
        }
    }

    /// The group and version of `kind`.
    pub fn kind_group_version(&self) -> (&str, &str) {
        match &self.kind_group_version {
            Some((group, version)) => (group, version),
            None => (&self.resource.group, &self.version),
        }
    }

    /// The form the request was made in: what it was served as, or the stored form.
    pub fn requested(&self) -> Form {
        self.served_as.clone().unwrap_or_else(|| self.stored_form())
    }

    /// The form of the objects the plugins get.
    pub fn stored_form(&self) -> Form {
        Form {
            group: self.resource.group.clone(),
            version: self.version.clone(),
            resource: self.resource.resource.clone(),
            subresource: self.subresource.clone(),
            kind: self.kind.clone(),
        }
    }

    /// The name for error messages: the object's name, or its `generateName`.
    pub fn display_name(&self) -> &str {
        if !self.name.is_empty() {
            return &self.name;
        }
        self.object
            .as_ref()
            .and_then(|o| o["metadata"]["generateName"].as_str())
            .unwrap_or_default()
    }
}
