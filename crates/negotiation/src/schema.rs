//! The upstream protobuf schemas, loaded once into compact tables: every message with its
//! fields in field-number order, their wire types, and the few types whose JSON form is not
//! their message.

use foldhash::HashMap;
use foldhash::HashMapExt;
use std::sync::OnceLock;

use crate::descriptors::{self, FieldDesc, LABEL_REPEATED, MessageDesc};

/// The upstream schemas (the `generated.proto` of every API group of Kubernetes v1.35, the
/// newest the `k8s-rs-pb` crate carries: fields first added in v1.36 have no number here and are
/// left out of protobuf bodies) as a descriptor set: names, field numbers and types, no
/// comments. `tests/schemas_current.rs` checks it and rewrites it.
const DESCRIPTORS: &[u8] = include_bytes!("../schemas/v1_35.pb");

/// The merge markers of messages and fields, read from the comments of the same schemas:
/// `message<TAB>field<TAB>marker;marker` (field empty for a message).
const MARKERS: &str = include_str!("../schemas/v1_35-markers.tsv");

/// Types whose JSON form is not their message; the transcoder converts them explicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `meta/v1.Time`: an RFC 3339 string with seconds ↔ `{seconds, nanos}`.
    Time,
    /// `meta/v1.MicroTime`: an RFC 3339 string with microseconds ↔ `{seconds, nanos}`.
    MicroTime,
    /// `meta/v1.Duration`: a Go duration string ↔ nanoseconds.
    Duration,
    /// `util/intstr.IntOrString`: a number or a string ↔ `{type, intVal, strVal}`.
    IntOrString,
    /// `api/resource.Quantity`: a string ↔ `{string}`.
    Quantity,
    /// `runtime.RawExtension`: embedded JSON ↔ its bytes.
    RawExtension,
    /// `meta/v1.FieldsV1`: embedded JSON ↔ its bytes.
    FieldsV1,
    /// `meta/v1.Verbs` (of discovery's APIResource) and the `ExtraValue`s of user info
    /// (authentication, authorization, certificates): a list of strings ↔ `{items}`.
    Verbs,
    /// apiextensions' `JSONSchemaPropsOrBool`: a schema or a boolean ↔ `{allows, schema}`.
    SchemaOrBool,
    /// apiextensions' `JSONSchemaPropsOrArray`: a schema or a list of them ↔
    /// `{schema, jSONSchemas}`.
    SchemaOrArray,
    /// apiextensions' `JSONSchemaPropsOrStringArray`: a schema or a list of strings ↔
    /// `{schema, property}`.
    SchemaOrStringArray,
}

/// The scalar and message types a field can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// `double`.
    Double,
    /// `float`.
    Float,
    /// `int64`.
    Int64,
    /// `uint64`.
    Uint64,
    /// `int32`.
    Int32,
    /// `fixed64`.
    Fixed64,
    /// `fixed32`.
    Fixed32,
    /// `bool`.
    Bool,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `uint32`.
    Uint32,
    /// An enum (carried as its number).
    Enum,
    /// `sfixed32`.
    Sfixed32,
    /// `sfixed64`.
    Sfixed64,
    /// `sint32` (zig-zag).
    Sint32,
    /// `sint64` (zig-zag).
    Sint64,
    /// A message, by its index in the schema.
    Message(usize),
}

impl FieldType {
    /// The wire type of one value of this type.
    pub fn wire_type(self) -> u8 {
        match self {
            FieldType::Double | FieldType::Fixed64 | FieldType::Sfixed64 => 1,
            FieldType::Float | FieldType::Fixed32 | FieldType::Sfixed32 => 5,
            FieldType::String | FieldType::Bytes | FieldType::Message(_) => 2,
            _ => 0,
        }
    }
}

/// How a field holds its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One value.
    Single,
    /// A list.
    Repeated,
    /// A map whose entries are messages `{key = 1, value = 2}` of these types.
    Map(FieldType, FieldType),
}

/// How the items of a list field merge (its `+listType`, or what its patch strategy implies).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ListType {
    /// The list is one value: replaced whole, owned whole.
    #[default]
    Atomic,
    /// A set of scalars: items merge by value.
    Set,
    /// A list of objects identified by these key fields.
    Map(Vec<String>),
}

/// The strategic-merge-patch strategy of a field (its `+patchStrategy` and `+patchMergeKey`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchStrategy {
    /// `merge`: lists merge (by `merge_key` for objects, by value for scalars).
    pub merge: bool,
    /// `retainKeys`: a patch may clear the fields of the struct it does not name.
    pub retain_keys: bool,
    /// `replace`: the field is replaced whole.
    pub replace: bool,
    /// The key that identifies list items when merging.
    pub merge_key: Option<String>,
}

/// One field of a message.
#[derive(Debug, Clone)]
pub struct Field {
    /// The field's name, which is also its JSON name.
    pub name: String,
    /// The field number.
    pub number: u32,
    /// The type of its values.
    pub ty: FieldType,
    /// Single, repeated or map.
    pub shape: Shape,
    /// A struct embedded inline in the JSON form (its fields sit in the parent object).
    pub inline: bool,
    /// A number whose zero means unset (Go writes it always, its JSON omits it).
    pub zero_is_unset: bool,
    /// A string whose empty value is a value: a Go pointer (`storageClassName: ""` asks for
    /// no class, which an absent one does not), kept when decoded.
    pub empty_is_set: bool,
    /// For a repeated field: how its items merge.
    pub list_type: ListType,
    /// For a map or message field: whether it is one atomic value (`+mapType=atomic`,
    /// `+structType=atomic` on the field or its message type) rather than merged by entry.
    pub atomic: bool,
    /// The strategic-merge-patch strategy.
    pub patch: PatchStrategy,
    /// The value the server defaults the field to, when the schema says (`+default=`; only
    /// literal values, used for the key fields of associative lists).
    pub default: Option<serde_json::Value>,
}

/// One message type.
#[derive(Debug, Clone)]
pub struct Message {
    /// The full name, e.g. `api.core.v1.Pod`.
    pub name: String,
    /// Its fields in field-number order.
    pub fields: Vec<Field>,
    /// Set for the types converted explicitly.
    pub special: Option<Special>,
    /// `+structType=atomic` on the type: fields of this type are owned and replaced whole.
    pub atomic: bool,
    /// The JSON members this message holds, made on first use (see [`Schema::members`]):
    /// left empty when the message is made, and `fields` is not changed once it is used.
    pub members: OnceLock<Members>,
}

/// The JSON members a message holds, for finding the field of an object's member.
#[derive(Debug, Clone, Default)]
pub struct Members {
    /// A cheap key per member, ascending (see [`Members::tag`]).
    tags: Box<[u32]>,
    /// Per tag: the position in the message's `fields` of the field that holds the member
    /// (itself, or the inline struct it sits in), and the member's name.
    entries: Box<[(u16, Box<str>)]>,
    /// The inline fields among the first 64, one bit per position.
    inline: u64,
}

impl Members {
    /// A sort key that tells most names apart: the length and the first and last bytes.
    fn tag(name: &str) -> u32 {
        let bytes = name.as_bytes();
        let end = |b: Option<&u8>| u32::from(b.copied().unwrap_or(0));
        (u32::try_from(bytes.len()).unwrap_or(u32::MAX) << 16)
            | end(bytes.first()) << 8
            | end(bytes.last())
    }

    /// The position in the message's `fields` of the field that holds member `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        let tag = Self::tag(name);
        let first = self.tags.partition_point(|t| *t < tag);
        let same = self.tags[first..].iter().take_while(|t| **t == tag).count();
        self.entries[first..first + same]
            .iter()
            .find(|(_, member)| **member == *name)
            .map(|(position, _)| usize::from(*position))
    }

    /// The positions of the inline fields among the first 64, one bit each.
    pub fn inline_bits(&self) -> u64 {
        self.inline
    }
}

impl Message {
    /// The field numbered `number`.
    pub fn field(&self, number: u32) -> Option<&Field> {
        self.fields
            .binary_search_by_key(&number, |f| f.number)
            .ok()
            .map(|i| &self.fields[i])
    }
}

/// Every known message.
#[derive(Debug, Clone)]
pub struct Schema {
    messages: Vec<Message>,
    by_name: HashMap<String, usize>,
    /// Kinds added at run time (custom resources), by (apiVersion, kind).
    kinds: HashMap<(String, String), usize>,
}

/// Fields whose Go struct is embedded inline in the JSON form (`json:",inline"`) while the
/// protobuf form names it. The schemas do not say so; these are the ones of the served and
/// common groups (a test checks the served kinds against their OpenAPI schemas).
const INLINE_FIELDS: &[(&str, &str)] = &[
    ("api.core.v1.Volume", "volumeSource"),
    ("api.core.v1.PersistentVolumeSpec", "persistentVolumeSource"),
    ("api.core.v1.Probe", "handler"),
    ("api.core.v1.EphemeralContainer", "ephemeralContainerCommon"),
    ("api.core.v1.ConfigMapEnvSource", "localObjectReference"),
    ("api.core.v1.ConfigMapKeySelector", "localObjectReference"),
    ("api.core.v1.ConfigMapProjection", "localObjectReference"),
    ("api.core.v1.ConfigMapVolumeSource", "localObjectReference"),
    ("api.core.v1.SecretEnvSource", "localObjectReference"),
    ("api.core.v1.SecretKeySelector", "localObjectReference"),
    ("api.core.v1.SecretProjection", "localObjectReference"),
    ("api.networking.v1.IngressRule", "ingressRuleValue"),
    ("api.networking.v1beta1.IngressRule", "ingressRuleValue"),
    ("api.extensions.v1beta1.IngressRule", "ingressRuleValue"),
    (
        "api.admissionregistration.v1.NamedRuleWithOperations",
        "ruleWithOperations",
    ),
    ("api.admissionregistration.v1.RuleWithOperations", "rule"),
    (
        "api.admissionregistration.v1beta1.NamedRuleWithOperations",
        "ruleWithOperations",
    ),
    (
        "api.admissionregistration.v1beta1.RuleWithOperations",
        "rule",
    ),
];

/// String fields that are Go pointers (`*string`, `*HostPathType`, ...), by message and JSON
/// name: an empty value there is set, not omitted, so decoding keeps it. Every other empty
/// string is one a Go client wrote for an unset plain string. The schemas do not say which
/// are pointers; these are the ones of the served groups (a test checks each exists).
const POINTER_STRINGS: &[(&str, &[&str])] = &[
    ("api.core.v1.HostPathVolumeSource", &["type"]),
    (
        "api.core.v1.PersistentVolumeClaimSpec",
        &[
            "storageClassName",
            "volumeMode",
            "volumeAttributesClassName",
        ],
    ),
    (
        "api.core.v1.PersistentVolumeSpec",
        &["volumeMode", "volumeAttributesClassName"],
    ),
    (
        "api.core.v1.PersistentVolumeClaimStatus",
        &["currentVolumeAttributesClassName"],
    ),
    ("api.core.v1.TypedLocalObjectReference", &["apiGroup"]),
    (
        "api.core.v1.TypedObjectReference",
        &["apiGroup", "namespace"],
    ),
    ("api.core.v1.CSIVolumeSource", &["fsType"]),
    ("api.core.v1.LocalVolumeSource", &["fsType"]),
    (
        "api.core.v1.AzureDiskVolumeSource",
        &["cachingMode", "fsType", "kind"],
    ),
    ("api.core.v1.ISCSIVolumeSource", &["initiatorName"]),
    (
        "api.core.v1.ISCSIPersistentVolumeSource",
        &["initiatorName"],
    ),
    ("api.core.v1.SecurityContext", &["procMount"]),
    ("api.core.v1.SeccompProfile", &["localhostProfile"]),
    ("api.core.v1.AppArmorProfile", &["localhostProfile"]),
    (
        "api.core.v1.WindowsSecurityContextOptions",
        &[
            "gmsaCredentialSpecName",
            "gmsaCredentialSpec",
            "runAsUserName",
        ],
    ),
    (
        "api.core.v1.PodSpec",
        &["runtimeClassName", "preemptionPolicy", "hostnameOverride"],
    ),
    (
        "api.core.v1.PodSecurityContext",
        &[
            "fsGroupChangePolicy",
            "seLinuxChangePolicy",
            "supplementalGroupsPolicy",
        ],
    ),
    ("api.core.v1.Container", &["restartPolicy"]),
    ("api.core.v1.EphemeralContainerCommon", &["restartPolicy"]),
    (
        "api.core.v1.VolumeMount",
        &["mountPropagation", "recursiveReadOnly"],
    ),
    ("api.core.v1.Lifecycle", &["stopSignal"]),
    ("api.core.v1.ContainerStatus", &["stopSignal"]),
    (
        "api.core.v1.ServiceSpec",
        &[
            "loadBalancerClass",
            "internalTrafficPolicy",
            "ipFamilyPolicy",
            "trafficDistribution",
        ],
    ),
    ("api.core.v1.ServicePort", &["appProtocol"]),
    ("api.core.v1.EndpointPort", &["appProtocol"]),
    ("api.core.v1.LoadBalancerIngress", &["ipMode"]),
    ("api.core.v1.PortStatus", &["error"]),
    (
        "api.core.v1.TopologySpreadConstraint",
        &["nodeAffinityPolicy", "nodeTaintsPolicy"],
    ),
    (
        "api.core.v1.PodResourceClaim",
        &["resourceClaimName", "resourceClaimTemplateName"],
    ),
    ("api.core.v1.PodResourceClaimStatus", &["resourceClaimName"]),
    (
        "api.discovery.v1.Endpoint",
        &["hostname", "nodeName", "zone"],
    ),
    (
        "api.discovery.v1.EndpointPort",
        &["name", "protocol", "appProtocol"],
    ),
    ("api.networking.v1.IngressSpec", &["ingressClassName"]),
    ("api.networking.v1.HTTPIngressPath", &["pathType"]),
    ("api.networking.v1.NetworkPolicyPort", &["protocol"]),
    (
        "api.networking.v1.IngressClassParametersReference",
        &["apiGroup", "scope", "namespace"],
    ),
    ("api.networking.v1.IngressPortStatus", &["error"]),
    (
        "api.storage.v1.StorageClass",
        &["reclaimPolicy", "volumeBindingMode"],
    ),
    ("api.storage.v1.CSIDriverSpec", &["fsGroupPolicy"]),
    (
        "api.storage.v1.VolumeAttachmentSource",
        &["persistentVolumeName"],
    ),
    (
        "api.batch.v1.JobSpec",
        &["completionMode", "podReplacementPolicy", "managedBy"],
    ),
    ("api.batch.v1.CronJobSpec", &["timeZone"]),
    (
        "api.coordination.v1.LeaseSpec",
        &["holderIdentity", "strategy", "preferredHolder"],
    ),
    (
        "api.policy.v1.PodDisruptionBudgetSpec",
        &["unhealthyPodEvictionPolicy"],
    ),
    ("api.autoscaling.v2.HPAScalingRules", &["selectPolicy"]),
    ("api.scheduling.v1.PriorityClass", &["preemptionPolicy"]),
    ("api.admissionregistration.v1.WebhookClientConfig", &["url"]),
    ("api.admissionregistration.v1.ServiceReference", &["path"]),
    ("api.admissionregistration.v1.Rule", &["scope"]),
    (
        "api.admissionregistration.v1.ValidatingWebhook",
        &["failurePolicy", "matchPolicy", "sideEffects"],
    ),
    (
        "api.admissionregistration.v1.MutatingWebhook",
        &[
            "failurePolicy",
            "matchPolicy",
            "sideEffects",
            "reinvocationPolicy",
        ],
    ),
    (
        "api.admissionregistration.v1.ValidatingAdmissionPolicySpec",
        &["failurePolicy"],
    ),
    (
        "api.admissionregistration.v1.MatchResources",
        &["matchPolicy"],
    ),
    (
        "api.admissionregistration.v1.ParamRef",
        &["parameterNotFoundAction"],
    ),
    ("api.admissionregistration.v1.Validation", &["reason"]),
];

/// Fields whose JSON name is their capitalised Go name (`json:"Port"`), unlike every other.
const VERBATIM_FIELDS: &[(&str, &str)] = &[("api.core.v1.DaemonEndpoint", "Port")];

/// Fields whose JSON name is not derived from their protobuf name at all: the JSON Schema
/// keywords and Kubernetes extensions of apiextensions' `JSONSchemaProps`.
const RENAMED_FIELDS: &[(&str, &str, &str)] = &[
    (SCHEMA_PROPS, "ref", "$ref"),
    (SCHEMA_PROPS, "schema", "$schema"),
    (
        SCHEMA_PROPS,
        "xKubernetesPreserveUnknownFields",
        "x-kubernetes-preserve-unknown-fields",
    ),
    (
        SCHEMA_PROPS,
        "xKubernetesEmbeddedResource",
        "x-kubernetes-embedded-resource",
    ),
    (
        SCHEMA_PROPS,
        "xKubernetesIntOrString",
        "x-kubernetes-int-or-string",
    ),
    (
        SCHEMA_PROPS,
        "xKubernetesListMapKeys",
        "x-kubernetes-list-map-keys",
    ),
    (
        SCHEMA_PROPS,
        "xKubernetesListType",
        "x-kubernetes-list-type",
    ),
    (SCHEMA_PROPS, "xKubernetesMapType", "x-kubernetes-map-type"),
    (
        SCHEMA_PROPS,
        "xKubernetesValidations",
        "x-kubernetes-validations",
    ),
];

const SCHEMA_PROPS: &str = "apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

/// The merge markers of the upstream types, as `(message, field, markers)`: the message as
/// `api.core.v1.PodSpec`, the field by its JSON name (empty for the message itself), the
/// markers as `patchMergeKey=name`, `listType=map`, ...
pub fn upstream_markers() -> impl Iterator<Item = (&'static str, &'static str, Vec<&'static str>)> {
    MARKERS.lines().filter_map(|line| {
        let mut parts = line.split('\t');
        let message = parts.next()?;
        let field = parts.next()?;
        let markers = parts.next()?.split(';').collect();
        Some((message, field, markers))
    })
}

impl Schema {
    /// The schemas compiled into this crate, loaded on first use.
    pub fn upstream() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(Schema::load_upstream)
    }

    /// Starts building the compiled-in schemas on a thread of their own, once per process
    /// (later calls do nothing): [`Schema::upstream`] then waits for that build rather than
    /// starting another. For a process that will need them soon and has a core to spare.
    pub fn build_upstream_in_background() {
        static STARTED: std::sync::Once = std::sync::Once::new();
        STARTED.call_once(|| {
            // Without a thread, the first use builds them.
            let _ = std::thread::Builder::new()
                .name("capstan-schema".into())
                .spawn(|| {
                    Schema::upstream();
                });
        });
    }

    /// Builds the compiled-in schemas anew (what [`Schema::upstream`] does once).
    pub fn load_upstream() -> Schema {
        Schema::from_descriptors_with_markers(DESCRIPTORS, MARKERS)
            .expect("the embedded descriptor set is valid")
    }

    /// Loads a serialized `FileDescriptorSet` (without merge markers: every list atomic).
    pub fn from_descriptors(bytes: &[u8]) -> Result<Schema, String> {
        Self::from_descriptors_with_markers(bytes, "")
    }

    /// Loads a serialized `FileDescriptorSet` and the merge markers of its types, in the
    /// format the build script writes.
    pub fn from_descriptors_with_markers(bytes: &[u8], markers: &str) -> Result<Schema, String> {
        // Each marked message's fields (its own markers under the empty field name).
        let mut marked: HashMap<&str, Vec<(&str, Vec<&str>)>> = HashMap::new();
        for line in markers.lines() {
            let mut parts = line.split('\t');
            let (Some(message), Some(field), Some(list)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(format!("malformed marker line {line:?}"));
            };
            marked
                .entry(message)
                .or_default()
                .push((field, list.split(';').collect()));
        }
        let files = descriptors::read_set(bytes)?;
        let mut declared = Vec::new();
        for (package, messages) in &files {
            for m in messages {
                collect(package, m, &mut declared);
            }
        }
        let by_name: HashMap<String, usize> = declared
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.clone(), i))
            .collect();
        let markers_of = |message: &str, field: &str| {
            marked
                .get(message)
                .and_then(|fields| fields.iter().find(|(f, _)| *f == field))
                .map(|(_, markers)| markers)
        };
        let mut messages = Vec::with_capacity(declared.len());
        for (name, proto) in &declared {
            let name = name.as_str();
            // The exceptions tables' entries for this message (most have none).
            let inline: Vec<&str> = INLINE_FIELDS
                .iter()
                .filter(|(m, _)| *m == name)
                .map(|(_, f)| *f)
                .collect();
            let renamed: Vec<(&str, &str)> = RENAMED_FIELDS
                .iter()
                .filter(|(m, _, _)| *m == name)
                .map(|(_, f, json)| (*f, *json))
                .collect();
            let verbatim: Vec<&str> = VERBATIM_FIELDS
                .iter()
                .filter(|(m, _)| *m == name)
                .map(|(_, f)| *f)
                .collect();
            let pointers: &[&str] = POINTER_STRINGS
                .iter()
                .find(|(m, _)| *m == name)
                .map_or(&[], |(_, fields)| fields);
            let mut fields = Vec::with_capacity(proto.fields.len());
            for f in &proto.fields {
                let ty = field_type(f, &by_name)?;
                let shape = if f.label != LABEL_REPEATED {
                    Shape::Single
                } else if let FieldType::Message(i) = ty {
                    match map_entry(declared[i].1, &by_name)? {
                        Some((k, v)) => Shape::Map(k, v),
                        None => Shape::Repeated,
                    }
                } else {
                    Shape::Repeated
                };
                let json = json_name(f.name);
                let own = markers_of(name, f.name);
                let marker = |key: &'static str| {
                    own.into_iter()
                        .flatten()
                        .filter_map(move |m| m.strip_prefix(key).and_then(|m| m.strip_prefix('=')))
                };
                let mut patch = PatchStrategy {
                    merge_key: marker("patchMergeKey").next().map(str::to_string),
                    ..PatchStrategy::default()
                };
                for strategy in marker("patchStrategy").flat_map(|s| s.split(',')) {
                    match strategy {
                        "merge" => patch.merge = true,
                        "retainKeys" => patch.retain_keys = true,
                        "replace" => patch.replace = true,
                        other => return Err(format!("unknown patch strategy {other}")),
                    }
                }
                let list_type = match marker("listType").next() {
                    Some("map") => {
                        ListType::Map(marker("listMapKey").map(str::to_string).collect())
                    }
                    Some("set") => ListType::Set,
                    Some("atomic") => ListType::Atomic,
                    Some(other) => return Err(format!("unknown list type {other}")),
                    // Upstream derives the list type from the patch strategy when unmarked.
                    None => match (&patch.merge, &patch.merge_key) {
                        (true, Some(key)) => ListType::Map(vec![key.clone()]),
                        (true, None) => ListType::Set,
                        _ => ListType::Atomic,
                    },
                };
                let type_atomic = |ty: FieldType| match ty {
                    FieldType::Message(i) => markers_of(&declared[i].0, "").is_some_and(|m| {
                        m.iter()
                            .any(|m| *m == "structType=atomic" || *m == "mapType=atomic")
                    }),
                    _ => false,
                };
                let atomic = match marker("structType").chain(marker("mapType")).next() {
                    Some(kind) => kind == "atomic",
                    None => type_atomic(ty),
                };
                let default = marker("default")
                    .next()
                    .and_then(|v| serde_json::from_str(v).ok());
                let empty_is_set = pointers.contains(&json.as_str());
                fields.push(Field {
                    default,
                    list_type,
                    atomic,
                    patch,
                    name: if let Some((_, json)) = renamed.iter().find(|(p, _)| *p == f.name) {
                        json.to_string()
                    } else if verbatim.contains(&f.name) {
                        f.name.to_string()
                    } else {
                        json
                    },
                    number: u32::try_from(f.number).map_err(|_| "negative field number")?,
                    ty,
                    shape,
                    inline: inline.contains(&f.name),
                    zero_is_unset: name == "apimachinery.pkg.apis.meta.v1.ObjectMeta"
                        && f.name == "generation",
                    empty_is_set,
                });
            }
            fields.sort_by_key(|f| f.number);
            messages.push(Message {
                name: name.to_string(),
                fields,
                special: special(name),
                atomic: markers_of(name, "").is_some_and(|m| {
                    m.contains(&"structType=atomic") || m.contains(&"mapType=atomic")
                }),
                members: OnceLock::new(),
            });
        }
        Ok(Schema {
            messages,
            by_name,
            kinds: HashMap::new(),
        })
    }

    /// The messages of `self` that `roots` (full names) reach, as a schema of their own to
    /// which custom kinds are added (a custom resource's schema starts from `ObjectMeta`).
    pub fn subset(&self, roots: &[&str]) -> Schema {
        let mut order: Vec<usize> = Vec::new();
        let mut pending: Vec<usize> = roots.iter().filter_map(|r| self.index(r)).collect();
        let mut seen = std::collections::HashSet::new();
        while let Some(i) = pending.pop() {
            if !seen.insert(i) {
                continue;
            }
            order.push(i);
            for f in &self.messages[i].fields {
                for ty in [Some(f.ty), map_value(f.shape)].into_iter().flatten() {
                    if let FieldType::Message(j) = ty {
                        pending.push(j);
                    }
                }
            }
        }
        let renumbered: HashMap<usize, usize> = order
            .iter()
            .enumerate()
            .map(|(new, old)| (*old, new))
            .collect();
        let remap = |ty: FieldType| match ty {
            FieldType::Message(i) => FieldType::Message(renumbered[&i]),
            other => other,
        };
        let messages: Vec<Message> = order
            .iter()
            .map(|&i| {
                let mut m = self.messages[i].clone();
                for f in &mut m.fields {
                    f.ty = remap(f.ty);
                    if let Shape::Map(k, v) = f.shape {
                        f.shape = Shape::Map(remap(k), remap(v));
                    }
                }
                m
            })
            .collect();
        let by_name = messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.clone(), i))
            .collect();
        Schema {
            messages,
            by_name,
            kinds: HashMap::new(),
        }
    }

    /// Adds `message` (its field types refer to this schema's indexes); returns its index.
    pub fn push(&mut self, message: Message) -> usize {
        let index = self.messages.len();
        self.by_name.insert(message.name.clone(), index);
        self.messages.push(message);
        index
    }

    /// Makes the message at `index` the one of `api_version`/`kind`.
    pub fn add_kind(&mut self, api_version: &str, kind: &str, index: usize) {
        self.kinds
            .insert((api_version.to_string(), kind.to_string()), index);
    }

    /// The message at `index`.
    pub fn message(&self, index: usize) -> &Message {
        &self.messages[index]
    }

    /// The JSON members of message `index`: which field holds each.
    pub fn members(&self, index: usize) -> &Members {
        let message = &self.messages[index];
        message.members.get_or_init(|| {
            let mut members: Vec<(u32, u16, Box<str>)> = Vec::with_capacity(message.fields.len());
            let mut inline = 0u64;
            for (position, field) in message.fields.iter().enumerate() {
                let at = u16::try_from(position).expect("a message has under 65,536 fields");
                match (field.inline, field.ty) {
                    (true, FieldType::Message(inner)) => {
                        if position < 64 {
                            inline |= 1 << position;
                        }
                        let of_inner = self.members(inner);
                        members.extend(
                            of_inner
                                .tags
                                .iter()
                                .zip(&of_inner.entries)
                                .map(|(tag, (_, name))| (*tag, at, name.clone())),
                        );
                    }
                    _ => members.push((Members::tag(&field.name), at, field.name.as_str().into())),
                }
            }
            members.sort_unstable_by_key(|m| m.0);
            Members {
                tags: members.iter().map(|m| m.0).collect(),
                entries: members
                    .into_iter()
                    .map(|(_, at, name)| (at, name))
                    .collect(),
                inline,
            }
        })
    }

    /// The index of the message with this full name.
    pub fn index(&self, full_name: &str) -> Option<usize> {
        self.by_name.get(full_name).copied()
    }

    /// The message of `kind` in `api_version` (`v1` Pod → `api.core.v1.Pod`; `meta.k8s.io`
    /// kinds and the meta kinds every group version carries, such as Status, come from
    /// apimachinery).
    pub fn kind(&self, api_version: &str, kind: &str) -> Option<usize> {
        if let Some(&i) = self.kinds.get(&(api_version.to_string(), kind.to_string())) {
            return Some(i);
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let meta = |v: &str| format!("apimachinery.pkg.apis.meta.{v}.{kind}");
        let candidates = match group {
            "" => vec![format!("api.core.{version}.{kind}"), meta(version)],
            "meta.k8s.io" => vec![meta(version), meta("v1")],
            "apiextensions.k8s.io" => vec![format!(
                "apiextensions_apiserver.pkg.apis.apiextensions.{version}.{kind}"
            )],
            "apiregistration.k8s.io" => vec![format!(
                "kube_aggregator.pkg.apis.apiregistration.{version}.{kind}"
            )],
            "metrics.k8s.io" => vec![format!("metrics.pkg.apis.metrics.{version}.{kind}")],
            "internal.apiserver.k8s.io" => {
                vec![format!("api.apiserverinternal.{version}.{kind}")]
            }
            // Custom groups (`batch.tutorial.kubebuilder.io`) are not upstream's, whatever
            // their first label says: only the meta kinds.
            group if group.contains('.') && !group.ends_with(".k8s.io") => vec![meta("v1")],
            group => {
                let short = group.split('.').next().unwrap_or(group);
                let mut names = vec![format!("api.{short}.{version}.{kind}")];
                // A kind promoted to v1 after the embedded schemas (v1.36's
                // MutatingAdmissionPolicy) is written as its beta was: promotion keeps the
                // field numbers.
                if version == "v1" {
                    names.push(format!("api.{short}.v1beta1.{kind}"));
                }
                names.push(meta("v1"));
                names
            }
        };
        candidates.iter().find_map(|name| self.index(name))
    }
}

/// The value type of a map field.
fn map_value(shape: Shape) -> Option<FieldType> {
    match shape {
        Shape::Map(_, v) => Some(v),
        _ => None,
    }
}

/// Every message declared in `m` (itself and its nested types), with full names.
fn collect<'a, 'b>(
    prefix: &str,
    m: &'b MessageDesc<'a>,
    out: &mut Vec<(String, &'b MessageDesc<'a>)>,
) {
    let name = if prefix.is_empty() {
        m.name.to_string()
    } else {
        format!("{prefix}.{}", m.name)
    };
    for nested in &m.nested {
        collect(&name, nested, out);
    }
    out.push((name, m));
}

/// The JSON name of a proto field. go-to-protobuf names a few fields after their Go names,
/// as they are (`Webhooks` for the JSON `webhooks`) or with only the first letter lowered
/// (`aPIGroup` for `apiGroup`). No JSON field of the API starts with a capital or has a
/// capital second letter, so a leading acronym is lowered up to the capital that starts the
/// next word.
fn json_name(proto: &str) -> String {
    let bytes = proto.as_bytes();
    // Most names start with a lower-case word: they are their JSON name.
    if bytes.first().is_some_and(u8::is_ascii_lowercase)
        && !bytes.get(1).is_some_and(u8::is_ascii_uppercase)
    {
        return proto.to_string();
    }
    let chars: Vec<char> = proto.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    // The Go name's leading capitals (its first letter restored).
    let run = 1 + chars[1..]
        .iter()
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    // An acronym followed by a word keeps the word's capital.
    let lowered = if run > 1 && run < chars.len() {
        run - 1
    } else {
        run
    };
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i < lowered {
                c.to_ascii_lowercase()
            } else {
                *c
            }
        })
        .collect()
}

fn field_type(f: &FieldDesc, by_name: &HashMap<String, usize>) -> Result<FieldType, String> {
    // The numbers of `FieldDescriptorProto.Type`.
    Ok(match f.ty {
        1 => FieldType::Double,
        2 => FieldType::Float,
        3 => FieldType::Int64,
        4 => FieldType::Uint64,
        5 => FieldType::Int32,
        6 => FieldType::Fixed64,
        7 => FieldType::Fixed32,
        8 => FieldType::Bool,
        9 => FieldType::String,
        12 => FieldType::Bytes,
        13 => FieldType::Uint32,
        14 => FieldType::Enum,
        15 => FieldType::Sfixed32,
        16 => FieldType::Sfixed64,
        17 => FieldType::Sint32,
        18 => FieldType::Sint64,
        // A message, or a group.
        10 | 11 => {
            let name = f.type_name.trim_start_matches('.');
            FieldType::Message(
                *by_name
                    .get(name)
                    .ok_or_else(|| format!("unknown message type {name}"))?,
            )
        }
        other => return Err(format!("unknown field type {other} of {}", f.name)),
    })
}

/// The key and value types of a map-entry message.
fn map_entry(
    m: &MessageDesc,
    by_name: &HashMap<String, usize>,
) -> Result<Option<(FieldType, FieldType)>, String> {
    if !m.map_entry {
        return Ok(None);
    }
    let typed = |n: i32| {
        m.fields
            .iter()
            .find(|f| f.number == n)
            .ok_or_else(|| format!("map entry {} lacks field {n}", m.name))
            .and_then(|f| field_type(f, by_name))
    };
    Ok(Some((typed(1)?, typed(2)?)))
}

fn special(name: &str) -> Option<Special> {
    Some(match name {
        "apimachinery.pkg.apis.meta.v1.Time" => Special::Time,
        "apimachinery.pkg.apis.meta.v1.MicroTime" => Special::MicroTime,
        "apimachinery.pkg.apis.meta.v1.Duration" => Special::Duration,
        "apimachinery.pkg.apis.meta.v1.FieldsV1" => Special::FieldsV1,
        "apimachinery.pkg.util.intstr.IntOrString" => Special::IntOrString,
        "apimachinery.pkg.api.resource.Quantity" => Special::Quantity,
        "apimachinery.pkg.runtime.RawExtension" => Special::RawExtension,
        // apiextensions' `JSON` (defaults, enums, examples) is raw JSON in `raw`, as is a
        // RawExtension.
        "apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON" => Special::RawExtension,
        "apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool" => {
            Special::SchemaOrBool
        }
        "apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray" => {
            Special::SchemaOrArray
        }
        "apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => {
            Special::SchemaOrStringArray
        }
        "apimachinery.pkg.apis.meta.v1.Verbs" => Special::Verbs,
        n if n.starts_with("api.") && n.ends_with(".ExtraValue") => Special::Verbs,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pointer_string_names_a_string_field() {
        let s = Schema::upstream();
        for (message, fields) in POINTER_STRINGS {
            let index = s
                .index(message)
                .unwrap_or_else(|| panic!("no message {message}"));
            for name in *fields {
                let field = s
                    .message(index)
                    .fields
                    .iter()
                    .find(|f| f.name == *name)
                    .unwrap_or_else(|| panic!("{message} has no field {name}"));
                assert!(matches!(field.ty, FieldType::String), "{message}.{name}");
                assert!(field.empty_is_set, "{message}.{name}");
            }
        }
    }

    #[test]
    fn proto_field_names_become_json_names() {
        assert_eq!(json_name("aPIGroup"), "apiGroup");
        assert_eq!(json_name("apiGroup"), "apiGroup");
        assert_eq!(json_name("podIPs"), "podIPs");
        assert_eq!(json_name("x"), "x");
        assert_eq!(json_name("Webhooks"), "webhooks");
        assert_eq!(json_name("APIGroup"), "apiGroup");
    }

    #[test]
    fn kinds_resolve_to_their_messages() {
        let s = Schema::upstream();
        let name = |v: &str, k: &str| s.kind(v, k).map(|i| s.message(i).name.clone());
        assert_eq!(name("v1", "Pod").as_deref(), Some("api.core.v1.Pod"));
        assert_eq!(
            name("v1", "Status").as_deref(),
            Some("apimachinery.pkg.apis.meta.v1.Status")
        );
        assert_eq!(
            name("storage.k8s.io/v1", "StorageClassList").as_deref(),
            Some("api.storage.v1.StorageClassList")
        );
        assert_eq!(
            name("meta.k8s.io/v1", "PartialObjectMetadataList").as_deref(),
            Some("apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList")
        );
        assert_eq!(name("example.com/v1", "Widget"), None);
        // A custom group whose first label names an upstream group is still custom.
        assert_eq!(name("batch.tutorial.kubebuilder.io/v1", "CronJob"), None);
        assert_eq!(
            name("apps/v1", "Deployment").as_deref(),
            Some("api.apps.v1.Deployment")
        );
        let pod = s.message(s.kind("v1", "Pod").unwrap());
        let numbers: Vec<(&str, u32)> = pod
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.number))
            .collect();
        assert_eq!(numbers, [("metadata", 1), ("spec", 2), ("status", 3)]);
        let meta = s.message(s.kind("meta.k8s.io/v1", "ObjectMeta").unwrap());
        let labels = meta.fields.iter().find(|f| f.name == "labels").unwrap();
        assert_eq!(labels.number, 11);
        assert_eq!(
            labels.shape,
            Shape::Map(FieldType::String, FieldType::String)
        );
        let created = meta.field(8).unwrap();
        assert_eq!(created.name, "creationTimestamp");
        let FieldType::Message(time) = created.ty else {
            panic!("creationTimestamp is a message")
        };
        assert_eq!(s.message(time).special, Some(Special::Time));
    }

    #[test]
    fn merge_markers_come_from_the_schema_comments() {
        let s = Schema::upstream();
        let field = |kind: &str, name: &str| {
            let m = s.message(s.index(kind).unwrap());
            m.fields.iter().find(|f| f.name == name).unwrap().clone()
        };
        let containers = field("api.core.v1.PodSpec", "containers");
        assert_eq!(containers.list_type, ListType::Map(vec!["name".into()]));
        assert!(containers.patch.merge);
        assert_eq!(containers.patch.merge_key.as_deref(), Some("name"));
        let ports = field("api.core.v1.Container", "ports");
        assert_eq!(
            ports.list_type,
            ListType::Map(vec!["containerPort".into(), "protocol".into()])
        );
        let finalizers = field("apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers");
        assert_eq!(finalizers.list_type, ListType::Set);
        assert_eq!(
            field("api.core.v1.Container", "args").list_type,
            ListType::Atomic
        );
        let volumes = field("api.core.v1.PodSpec", "volumes").patch;
        assert!(volumes.merge && volumes.retain_keys);
        // Atomic by its type (LocalObjectReference is `+structType=atomic`), granular by
        // the field's own marker (a PersistentVolume's claimRef).
        assert!(field("api.core.v1.SecretKeySelector", "localObjectReference").atomic);
        assert!(!field("api.core.v1.PersistentVolumeSpec", "claimRef").atomic);
        assert!(
            s.message(s.index("api.core.v1.LocalObjectReference").unwrap())
                .atomic
        );
    }
}
