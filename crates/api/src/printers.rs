//! The Table columns of each served resource, as `kubectl get` shows them (headers, `-o wide`
//! extras, cell values). Cells are computed from the object's JSON.

use capstan_meta::columns::{Column, count, or_none, since, text_or};
use serde_json::Value;

/// The columns of the kind `kind` of `group` (empty, for the default table, when it has no
/// columns of its own).
pub fn for_kind(group: &str, kind: &str) -> Vec<Column> {
    match (group, kind) {
        ("", "Pod") => pods(),
        ("", "Node") => nodes(),
        ("", "Namespace") => namespaces(),
        ("", "ConfigMap") => config_maps(),
        ("", "LimitRange") => limit_ranges(),
        ("", "ResourceQuota") => resource_quotas(),
        ("certificates.k8s.io", "CertificateSigningRequest") => certificate_signing_requests(),
        ("", "Secret") => secrets(),
        ("", "ServiceAccount") => service_accounts(),
        ("", "Event") => events(),
        ("", "PersistentVolume") => persistent_volumes(),
        ("", "PersistentVolumeClaim") => persistent_volume_claims(),
        ("coordination.k8s.io", "Lease") => leases(),
        ("scheduling.k8s.io", "PriorityClass") => priority_classes(),
        ("node.k8s.io", "RuntimeClass") => runtime_classes(),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => flow_schemas(),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => priority_levels(),
        ("networking.k8s.io", "IngressClass") => ingress_classes(),
        ("networking.k8s.io", "Ingress") => ingresses(),
        ("networking.k8s.io", "NetworkPolicy") => network_policies(),
        ("", "Service") => services(),
        ("apps", "Deployment") => deployments(),
        ("autoscaling", "HorizontalPodAutoscaler") => crate::autoscaling::columns(),
        ("", "ReplicationController") => replication_controllers(),
        ("", "PodTemplate") => pod_templates(),
        ("", "ComponentStatus") => component_statuses(),
        ("batch", "Job") => jobs(),
        ("batch", "CronJob") => cron_jobs(),
        ("apps", "ReplicaSet") => replica_sets(),
        ("apps", "StatefulSet") => stateful_sets(),
        ("apps", "DaemonSet") => daemon_sets(),
        ("apps", "ControllerRevision") => controller_revisions(),
        ("", "Endpoints") => endpoints(),
        ("discovery.k8s.io", "EndpointSlice") => endpoint_slices(),
        ("networking.k8s.io", "IPAddress") => ip_addresses(),
        ("networking.k8s.io", "ServiceCIDR") => service_cidrs(),
        ("policy", "PodDisruptionBudget") => pod_disruption_budgets(),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => webhook_configurations(),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => admission_policies(
            "Validations",
            "The number of validations in the policy.",
            |o, _| Value::from(o["spec"]["validations"].as_array().map_or(0, Vec::len)),
        ),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy") => admission_policies(
            "Mutations",
            "The number of mutations in the policy.",
            |o, _| Value::from(o["spec"]["mutations"].as_array().map_or(0, Vec::len)),
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicyBinding" | "MutatingAdmissionPolicyBinding",
        ) => admission_policy_bindings(),
        ("storage.k8s.io", "StorageClass") => storage_classes(),
        ("storage.k8s.io", "CSINode") => csi_nodes(),
        ("storage.k8s.io", "CSIDriver") => csi_drivers(),
        ("storage.k8s.io", "VolumeAttachment") => volume_attachments(),
        ("storage.k8s.io", "CSIStorageCapacity") => csi_storage_capacities(),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => role_bindings(),
        ("resource.k8s.io", "ResourceClaim") => resource_claims(),
        ("resource.k8s.io", "ResourceSlice") => resource_slices(),
        _ => Vec::new(),
    }
}

/// Services: type, cluster IP, external addresses, ports (with node ports), and (wide) the
/// selector.
fn services() -> Vec<Column> {
    fn joined(items: Vec<String>) -> Value {
        none_if_empty(items.join(","))
    }
    fn external(o: &Value) -> Value {
        let kind = o
            .pointer("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        let mut ips = strings(o, "/spec/externalIPs");
        match kind {
            "ExternalName" => text_or(o, "/spec/externalName", "<none>"),
            "LoadBalancer" => {
                let ingress = o
                    .pointer("/status/loadBalancer/ingress")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut found: Vec<String> = ingress
                    .iter()
                    .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                    .map(String::from)
                    .collect();
                found.append(&mut ips);
                if found.is_empty() {
                    Value::String("<pending>".into())
                } else {
                    joined(found)
                }
            }
            _ => joined(ips),
        }
    }
    fn ports(o: &Value) -> Value {
        let ports = o
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        joined(
            ports
                .iter()
                .map(|p| {
                    let protocol = p["protocol"].as_str().unwrap_or("TCP");
                    match p["nodePort"].as_i64().filter(|n| *n != 0) {
                        Some(node) => format!("{}:{node}/{protocol}", p["port"]),
                        None => format!("{}/{protocol}", p["port"]),
                    }
                })
                .collect(),
        )
    }
    vec![
        Column::name(),
        Column::new("Type", "string", "The type of the service.", |o, _| {
            text_or(o, "/spec/type", "ClusterIP")
        }),
        Column::new(
            "Cluster-IP",
            "string",
            "The cluster IP of the service.",
            |o, _| match o.pointer("/spec/clusterIP").and_then(Value::as_str) {
                Some(ip) if !ip.is_empty() => Value::String(ip.into()),
                _ => Value::String("<none>".into()),
            },
        ),
        Column::new(
            "External-IP",
            "string",
            "The external addresses of the service.",
            |o, _| external(o),
        ),
        Column::new("Port(s)", "string", "The ports of the service.", |o, _| {
            ports(o)
        }),
        Column::age(),
        Column::new(
            "Selector",
            "string",
            "The pods the service selects.",
            |o, _| pairs(o, "/spec/selector"),
        )
        .wide(),
    ]
}

/// A number at `pointer` (0 when absent).
fn number(o: &Value, pointer: &str) -> Value {
    Value::from(o.pointer(pointer).and_then(Value::as_i64).unwrap_or(0))
}

/// `ready/desired`, as kubectl shows workloads.
fn ready_of(o: &Value, ready: &str, desired: &str, default_desired: i64) -> Value {
    let ready = o.pointer(ready).and_then(Value::as_i64).unwrap_or(0);
    let desired = o
        .pointer(desired)
        .and_then(Value::as_i64)
        .unwrap_or(default_desired);
    Value::String(format!("{ready}/{desired}"))
}

/// The wide columns of a workload: its containers, their images and its selector.
fn workload_wide(with_selector: bool) -> Vec<Column> {
    fn containers(o: &Value, field: &str) -> Value {
        // A CronJob's pods are those of its job template.
        let items: Vec<&str> = o
            .pointer("/spec/template/spec/containers")
            .or_else(|| o.pointer("/spec/jobTemplate/spec/template/spec/containers"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c[field].as_str())
            .collect();
        Value::String(items.join(","))
    }
    let mut columns = vec![
        Column::new(
            "Containers",
            "string",
            "The containers of the pods.",
            |o, _| containers(o, "name"),
        )
        .wide(),
        Column::new(
            "Images",
            "string",
            "The images of the containers.",
            |o, _| containers(o, "image"),
        )
        .wide(),
    ];
    if with_selector {
        columns.push(
            Column::new(
                "Selector",
                "string",
                "The pods the workload selects.",
                |o, _| match serde_json::from_value(o["spec"]["selector"].clone()) {
                    Ok(s) => none_if_empty(crate::apps::selector_text(&s)),
                    Err(_) => Value::String("<none>".into()),
                },
            )
            .wide(),
        );
    }
    columns
}

/// `k=v` pairs of the map at `pointer`, joined; `<none>` when empty.
fn pairs(o: &Value, pointer: &str) -> Value {
    let pairs: Vec<String> = o
        .pointer(pointer)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    none_if_empty(pairs.join(","))
}

/// ReplicationControllers: desired, current and ready replicas.
fn replication_controllers() -> Vec<Column> {
    let mut columns = replica_sets();
    columns.retain(|c| c.name != "Selector");
    columns.push(
        Column::new(
            "Selector",
            "string",
            "The pods the controller selects.",
            |o, _| pairs(o, "/spec/selector"),
        )
        .wide(),
    );
    columns
}

/// ComponentStatuses: Healthy or Unhealthy (Unknown without the condition), with the probe's
/// message or error.
fn component_statuses() -> Vec<Column> {
    fn healthy(o: &Value) -> Option<&Value> {
        o["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Healthy")
    }
    vec![
        Column::name(),
        Column::new("Status", "string", "Healthy or Unhealthy.", |o, _| {
            Value::String(
                match healthy(o).map(|c| c["status"] == "True") {
                    Some(true) => "Healthy",
                    Some(false) => "Unhealthy",
                    None => "Unknown",
                }
                .into(),
            )
        }),
        Column::new("Message", "string", "What the probe answered.", |o, _| {
            healthy(o).map_or(Value::String(String::new()), |c| text_or(c, "/message", ""))
        }),
        Column::new("Error", "string", "Why the probe failed.", |o, _| {
            healthy(o).map_or(Value::String(String::new()), |c| text_or(c, "/error", ""))
        }),
    ]
}

/// PodTemplates: containers, images and the pods' labels.
fn pod_templates() -> Vec<Column> {
    fn containers(o: &Value, field: &str) -> Value {
        let items: Vec<&str> = o
            .pointer("/template/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c[field].as_str())
            .collect();
        Value::String(items.join(","))
    }
    vec![
        Column::name(),
        Column::new("Containers", "string", "The containers.", |o, _| {
            containers(o, "name")
        }),
        Column::new("Images", "string", "The images.", |o, _| {
            containers(o, "image")
        }),
        Column::new("Pod Labels", "string", "The labels of the pods.", |o, _| {
            pairs(o, "/template/metadata/labels")
        }),
    ]
}

/// Ingresses: class, hosts, load balancer addresses, ports.
fn ingresses() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Class", "string", "The ingress class.", |o, _| {
            or_none(o, "/spec/ingressClassName")
        }),
        Column::new("Hosts", "string", "The hosts of the rules.", |o, _| {
            let hosts: Vec<String> = o
                .pointer("/spec/rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|r| r["host"].as_str().unwrap_or("*").to_string())
                .collect();
            first_three(hosts, "*")
        }),
        Column::new(
            "Address",
            "string",
            "The load balancer's addresses.",
            |o, _| {
                let addresses: Vec<String> = o
                    .pointer("/status/loadBalancer/ingress")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| {
                        i["ip"]
                            .as_str()
                            .or(i["hostname"].as_str())
                            .map(String::from)
                    })
                    .collect();
                Value::String(addresses.join(","))
            },
        ),
        Column::new("Ports", "string", "80, and 443 with TLS.", |o, _| {
            let tls = o
                .pointer("/spec/tls")
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty());
            Value::String(if tls { "80, 443" } else { "80" }.into())
        }),
        Column::age(),
    ]
}

/// NetworkPolicies: the pods they select.
fn network_policies() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Pod-Selector",
            "string",
            "The pods the policy applies to.",
            |o, _| match serde_json::from_value(o["spec"]["podSelector"].clone()) {
                Ok(s) => none_if_empty(crate::apps::selector_text(&s)),
                Err(_) => Value::String("<none>".into()),
            },
        ),
        Column::age(),
    ]
}

/// CSIDrivers: what the driver asks of Kubernetes.
fn csi_drivers() -> Vec<Column> {
    fn flag(o: &Value, pointer: &str) -> Value {
        Value::Bool(o.pointer(pointer).and_then(Value::as_bool).unwrap_or(false))
    }
    vec![
        Column::name(),
        Column::new(
            "AttachRequired",
            "boolean",
            "Whether volumes are attached.",
            |o, _| flag(o, "/spec/attachRequired"),
        ),
        Column::new(
            "PodInfoOnMount",
            "boolean",
            "Whether mounts get pod information.",
            |o, _| flag(o, "/spec/podInfoOnMount"),
        ),
        Column::new(
            "StorageCapacity",
            "boolean",
            "Whether capacity is reported.",
            |o, _| flag(o, "/spec/storageCapacity"),
        ),
        Column::new(
            "TokenRequests",
            "string",
            "Audiences of tokens passed.",
            |o, _| {
                let audiences: Vec<String> = o
                    .pointer("/spec/tokenRequests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["audience"].as_str().map(String::from))
                    .collect();
                none_if_empty(audiences.join(","))
            },
        ),
        Column::new(
            "RequiresRepublish",
            "boolean",
            "Whether mounts are refreshed.",
            |o, _| flag(o, "/spec/requiresRepublish"),
        ),
        Column::new("Modes", "string", "Volume lifecycle modes.", |o, _| {
            none_if_empty(strings(o, "/spec/volumeLifecycleModes").join(","))
        }),
        Column::age(),
    ]
}

/// VolumeAttachments: attacher, volume, node, whether attached.
fn volume_attachments() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Attacher", "string", "The attaching driver.", |o, _| {
            text_or(o, "/spec/attacher", "")
        }),
        Column::new("PV", "string", "The volume.", |o, _| {
            text_or(o, "/spec/source/persistentVolumeName", "")
        }),
        Column::new("Node", "string", "The node.", |o, _| {
            text_or(o, "/spec/nodeName", "")
        }),
        Column::new("Attached", "boolean", "Whether it is attached.", |o, _| {
            Value::Bool(
                o.pointer("/status/attached")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            )
        }),
        Column::age(),
    ]
}

/// CSIStorageCapacities: storage class and capacity.
fn csi_storage_capacities() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "StorageClassName",
            "string",
            "The storage class.",
            |o, _| text_or(o, "/storageClassName", ""),
        ),
        Column::new("Capacity", "string", "The capacity.", |o, _| {
            text_or(o, "/capacity", "")
        }),
        Column::age(),
    ]
}

/// Jobs: status, completions, duration.
fn jobs() -> Vec<Column> {
    fn condition(o: &Value, kind: &str) -> bool {
        o.pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|c| c["type"] == kind && c["status"] == "True")
    }
    let mut columns = vec![
        Column::name(),
        Column::new("Status", "string", "The state of the job.", |o, _| {
            let state = [
                "Failed",
                "Complete",
                "Suspended",
                "FailureTarget",
                "SuccessCriteriaMet",
            ]
            .into_iter()
            .find(|k| condition(o, k))
            .unwrap_or("Running");
            Value::String(state.into())
        }),
        Column::new(
            "Completions",
            "string",
            "Succeeded pods of the completions.",
            |o, _| {
                let succeeded = o
                    .pointer("/status/succeeded")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                let text = match o.pointer("/spec/completions").and_then(Value::as_i64) {
                    Some(c) => format!("{succeeded}/{c}"),
                    None => {
                        let parallelism = o
                            .pointer("/spec/parallelism")
                            .and_then(Value::as_i64)
                            .unwrap_or(0);
                        if parallelism > 1 {
                            format!("{succeeded}/1 of {parallelism}")
                        } else {
                            format!("{succeeded}/1")
                        }
                    }
                };
                Value::String(text)
            },
        ),
        Column::new("Duration", "string", "How long the job ran.", |o, now| {
            let time = |p: &str| capstan_meta::columns::epoch_seconds(o.pointer(p));
            match (time("/status/startTime"), time("/status/completionTime")) {
                (Some(start), Some(end)) => {
                    Value::String(capstan_meta::columns::human_duration(end - start))
                }
                (Some(start), None) => {
                    Value::String(capstan_meta::columns::human_duration(now - start))
                }
                _ => Value::String(String::new()),
            }
        }),
        Column::age(),
    ];
    columns.extend(workload_wide(true));
    columns
}

/// CronJobs: schedule, time zone, suspension, active jobs, last schedule.
fn cron_jobs() -> Vec<Column> {
    let mut columns = vec![
        Column::name(),
        Column::new("Schedule", "string", "The cron schedule.", |o, _| {
            text_or(o, "/spec/schedule", "")
        }),
        Column::new(
            "Timezone",
            "string",
            "The time zone of the schedule.",
            |o, _| or_none(o, "/spec/timeZone"),
        ),
        Column::new(
            "Suspend",
            "boolean",
            "Whether new jobs are held back.",
            // Upstream declares a boolean and prints the word.
            |o, _| {
                Value::String(
                    match o.pointer("/spec/suspend").and_then(Value::as_bool) {
                        Some(true) => "True",
                        Some(false) => "False",
                        None => "<unset>",
                    }
                    .into(),
                )
            },
        ),
        Column::new("Active", "integer", "Jobs running.", |o, _| {
            count(o, "/status/active")
        }),
        Column::new(
            "Last Schedule",
            "string",
            "When a job was last started.",
            |o, now| match o.pointer("/status/lastScheduleTime") {
                Some(t) => Value::String(since(Some(t), now)),
                None => Value::String("<none>".into()),
            },
        ),
        Column::age(),
    ];
    columns.extend(workload_wide(true));
    columns
}

/// Deployments: ready, up-to-date and available replicas.
fn deployments() -> Vec<Column> {
    let mut columns = vec![
        Column::name(),
        Column::new(
            "Ready",
            "string",
            "Ready replicas of the desired.",
            |o, _| ready_of(o, "/status/readyReplicas", "/spec/replicas", 1),
        ),
        // Upstream declares these two as strings (the cells are numbers).
        Column::new(
            "Up-to-date",
            "string",
            "Replicas of the current template.",
            |o, _| number(o, "/status/updatedReplicas"),
        ),
        Column::new("Available", "string", "Available replicas.", |o, _| {
            number(o, "/status/availableReplicas")
        }),
        Column::age(),
    ];
    columns.extend(workload_wide(true));
    columns
}

/// ReplicaSets: desired, current and ready replicas.
fn replica_sets() -> Vec<Column> {
    let mut columns = vec![
        Column::name(),
        Column::new("Desired", "integer", "Desired replicas.", |o, _| {
            Value::from(
                o.pointer("/spec/replicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1),
            )
        }),
        Column::new("Current", "integer", "Current replicas.", |o, _| {
            number(o, "/status/replicas")
        }),
        Column::new("Ready", "integer", "Ready replicas.", |o, _| {
            number(o, "/status/readyReplicas")
        }),
        Column::age(),
    ];
    columns.extend(workload_wide(true));
    columns
}

/// StatefulSets: ready replicas of the desired.
fn stateful_sets() -> Vec<Column> {
    let mut columns = vec![
        Column::name(),
        Column::new(
            "Ready",
            "string",
            "Ready replicas of the desired.",
            |o, _| ready_of(o, "/status/readyReplicas", "/spec/replicas", 1),
        ),
        Column::age(),
    ];
    columns.extend(workload_wide(false));
    columns
}

/// DaemonSets: the scheduled, ready, up-to-date and available pods, and the node selector.
fn daemon_sets() -> Vec<Column> {
    let mut columns = vec![
        Column::name(),
        Column::new(
            "Desired",
            "integer",
            "Nodes that should run the pod.",
            |o, _| number(o, "/status/desiredNumberScheduled"),
        ),
        Column::new("Current", "integer", "Nodes running the pod.", |o, _| {
            number(o, "/status/currentNumberScheduled")
        }),
        Column::new("Ready", "integer", "Nodes with the pod ready.", |o, _| {
            number(o, "/status/numberReady")
        }),
        Column::new(
            "Up-to-date",
            "integer",
            "Nodes with the current pod.",
            |o, _| number(o, "/status/updatedNumberScheduled"),
        ),
        Column::new(
            "Available",
            "integer",
            "Nodes with the pod available.",
            |o, _| number(o, "/status/numberAvailable"),
        ),
        Column::new("Node Selector", "string", "Where the pods run.", |o, _| {
            pairs(o, "/spec/template/spec/nodeSelector")
        }),
        Column::age(),
    ];
    columns.extend(workload_wide(true));
    columns
}

/// ControllerRevisions: their controller and revision.
fn controller_revisions() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Controller",
            "string",
            "The object the revision belongs to.",
            |o, _| {
                let owner = o["metadata"]["ownerReferences"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|r| r["controller"] == Value::Bool(true));
                match owner {
                    Some(r) => {
                        let kind = r["kind"].as_str().unwrap_or("").to_ascii_lowercase();
                        let group = r["apiVersion"]
                            .as_str()
                            .and_then(|v| v.split_once('/'))
                            .map(|(g, _)| g)
                            .unwrap_or("");
                        let name = r["name"].as_str().unwrap_or("");
                        let kind = if group.is_empty() {
                            kind
                        } else {
                            format!("{kind}.{group}")
                        };
                        Value::String(format!("{kind}/{name}"))
                    }
                    None => Value::String("<none>".into()),
                }
            },
        ),
        Column::new("Revision", "integer", "The revision number.", |o, _| {
            number(o, "/revision")
        }),
        Column::age(),
    ]
}

/// Up to three items, then how many more, as kubectl shows endpoints.
fn first_three(items: Vec<String>, empty: &str) -> Value {
    let text = match items.len() {
        0 => empty.to_string(),
        1..=3 => items.join(","),
        n => format!("{} + {} more...", items[..3].join(","), n - 3),
    };
    Value::String(text)
}

/// Endpoints: their `address:port` pairs.
fn endpoints() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Endpoints", "string", "The addresses and ports.", |o, _| {
            let mut pairs = Vec::new();
            for subset in o["subsets"].as_array().into_iter().flatten() {
                let ports: Vec<i64> = subset["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["port"].as_i64())
                    .collect();
                for address in subset["addresses"].as_array().into_iter().flatten() {
                    let ip = address["ip"].as_str().unwrap_or("");
                    if ports.is_empty() {
                        pairs.push(ip.to_string());
                    }
                    for port in &ports {
                        pairs.push(format!("{ip}:{port}"));
                    }
                }
            }
            first_three(pairs, "<none>")
        }),
        Column::age(),
    ]
}

/// EndpointSlices: address type, ports and addresses.
fn endpoint_slices() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "AddressType",
            "string",
            "The type of the addresses.",
            |o, _| text_or(o, "/addressType", ""),
        ),
        Column::new("Ports", "string", "The ports.", |o, _| {
            let ports: Vec<String> = o["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| match p["port"].as_i64() {
                    Some(n) => n.to_string(),
                    None => "<unset>".into(),
                })
                .collect();
            first_three(ports, "<unset>")
        }),
        Column::new("Endpoints", "string", "The addresses.", |o, _| {
            let addresses: Vec<String> = o["endpoints"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|e| e["addresses"].as_array().cloned().unwrap_or_default())
                .filter_map(|a| a.as_str().map(String::from))
                .collect();
            first_three(addresses, "<unset>")
        }),
        Column::age(),
    ]
}

/// IPAddresses: what each address is allocated to.
fn ip_addresses() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "ParentRef",
            "string",
            "The object holding the address.",
            |o, _| {
                let p = o.pointer("/spec/parentRef").cloned().unwrap_or_default();
                let part = |k: &str| p[k].as_str().unwrap_or("").to_string();
                let ns = part("namespace");
                let scoped = if ns.is_empty() {
                    String::new()
                } else {
                    format!("{ns}/")
                };
                Value::String(format!("{}/{scoped}{}", part("resource"), part("name")))
            },
        ),
    ]
}

/// ServiceCIDRs: their ranges.
fn service_cidrs() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("CIDRs", "string", "The ranges of cluster IPs.", |o, _| {
            let cidrs: Vec<&str> = o
                .pointer("/spec/cidrs")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            Value::String(cidrs.join(","))
        }),
        Column::age(),
    ]
}

/// Role bindings: the role, and (wide) the subjects by kind.
fn role_bindings() -> Vec<Column> {
    fn subjects(obj: &Value, kind: &str) -> Value {
        let names: Vec<String> = obj["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["kind"] == kind)
            .map(|s| match (kind, s["namespace"].as_str()) {
                ("ServiceAccount", Some(ns)) => {
                    format!("{ns}/{}", s["name"].as_str().unwrap_or(""))
                }
                _ => s["name"].as_str().unwrap_or("").to_string(),
            })
            .collect();
        Value::String(names.join(", "))
    }
    vec![
        Column::name(),
        Column::new(
            "Role",
            "string",
            "The role the subjects are granted.",
            |o, _| {
                Value::String(format!(
                    "{}/{}",
                    o["roleRef"]["kind"].as_str().unwrap_or(""),
                    o["roleRef"]["name"].as_str().unwrap_or("")
                ))
            },
        ),
        Column::age(),
        Column::new("Users", "string", "The users granted the role.", |o, _| {
            subjects(o, "User")
        })
        .wide(),
        Column::new(
            "Groups",
            "string",
            "The groups granted the role.",
            |o, _| subjects(o, "Group"),
        )
        .wide(),
        Column::new(
            "ServiceAccounts",
            "string",
            "The service accounts granted the role.",
            |o, _| subjects(o, "ServiceAccount"),
        )
        .wide(),
    ]
}

fn strings(obj: &Value, pointer: &str) -> Vec<String> {
    obj.pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn none_if_empty(s: String) -> Value {
    Value::String(if s.is_empty() { "<none>".into() } else { s })
}

/// `ReadWriteOnce,ReadOnlyMany` as kubectl abbreviates access modes: `RWO,ROX`.
fn access_modes(obj: &Value, pointer: &str) -> Value {
    let modes: Vec<&str> = strings(obj, pointer)
        .iter()
        .map(|m| match m.as_str() {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            _ => "",
        })
        .filter(|m| !m.is_empty())
        .collect();
    Value::String(modes.join(","))
}

/// StorageClasses: the default class is marked after its name.
pub fn storage_classes() -> Vec<Column> {
    vec![
        Column {
            cell: capstan_meta::columns::Cell::Fn(|obj, _| {
                let name = obj["metadata"]["name"].as_str().unwrap_or("");
                let annotations = &obj["metadata"]["annotations"];
                let default = [
                    "storageclass.kubernetes.io/is-default-class",
                    "storageclass.beta.kubernetes.io/is-default-class",
                ]
                .iter()
                .any(|k| annotations[*k] == "true");
                Value::String(if default {
                    format!("{name} (default)")
                } else {
                    name.to_string()
                })
            }),
            ..Column::name()
        },
        Column::new(
            "Provisioner",
            "string",
            "The volume plugin that provisions volumes.",
            |o, _| text_or(o, "/provisioner", ""),
        ),
        Column::new(
            "ReclaimPolicy",
            "string",
            "What happens to released volumes.",
            |o, _| text_or(o, "/reclaimPolicy", "Delete"),
        ),
        Column::new(
            "VolumeBindingMode",
            "string",
            "When volumes are bound and provisioned.",
            |o, _| text_or(o, "/volumeBindingMode", "Immediate"),
        ),
        Column::new(
            "AllowVolumeExpansion",
            "string",
            "Whether volumes can be expanded.",
            |o, _| Value::Bool(o["allowVolumeExpansion"].as_bool().unwrap_or(false)),
        ),
        Column::age(),
    ]
}

/// CSINodes.
pub fn csi_nodes() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Drivers",
            "integer",
            "The number of CSI drivers on the node.",
            |o, _| count(o, "/spec/drivers"),
        ),
        Column::age(),
    ]
}

/// Namespaces.
pub fn namespaces() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Status", "string", "The namespace's phase.", |o, _| {
            text_or(o, "/status/phase", "")
        }),
        Column::age(),
    ]
}

/// ConfigMaps.
pub fn config_maps() -> Vec<Column> {
    vec![
        Column::name(),
        // Declared a string upstream, the cell is a number.
        Column::new("Data", "string", "The number of keys.", |o, _| {
            let n = count(o, "/data").as_u64().unwrap_or(0)
                + count(o, "/binaryData").as_u64().unwrap_or(0);
            Value::from(n)
        }),
        Column::age(),
    ]
}

/// CertificateSigningRequests: signer, requester, duration and where the request stands.
fn certificate_signing_requests() -> Vec<Column> {
    vec![
        Column::name(),
        Column::age(),
        Column::new(
            "SignerName",
            "string",
            "The signer asked to sign.",
            |o, _| text_or(o, "/spec/signerName", ""),
        ),
        Column::new("Requestor", "string", "Who asked.", |o, _| {
            text_or(o, "/spec/username", "")
        }),
        Column::new(
            "RequestedDuration",
            "string",
            "The certificate lifetime asked for.",
            |o, _| {
                Value::from(match o["spec"]["expirationSeconds"].as_i64() {
                    None => "<none>".to_string(),
                    Some(s) if s % 3600 == 0 => format!("{}h", s / 3600),
                    Some(s) if s % 60 == 0 => format!("{}m", s / 60),
                    Some(s) => format!("{s}s"),
                })
            },
        ),
        Column::new(
            "Condition",
            "string",
            "Approved, denied, failed, issued.",
            |o, _| {
                let mut shown: Vec<String> = o["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|c| c["status"] == "True")
                    .filter_map(|c| c["type"].as_str().map(str::to_string))
                    .collect();
                if o["status"]["certificate"]
                    .as_str()
                    .is_some_and(|c| !c.is_empty())
                {
                    shown.push("Issued".into());
                }
                Value::from(if shown.is_empty() {
                    "Pending".to_string()
                } else {
                    shown.join(",")
                })
            },
        ),
    ]
}

/// ResourceQuotas: `used/hard` of each resource, the limits apart.
fn resource_quotas() -> Vec<Column> {
    fn pairs(o: &Value, limits: bool) -> Value {
        let hard = o["status"]["hard"]
            .as_object()
            .or(o["spec"]["hard"].as_object());
        let text: Vec<String> = hard
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.starts_with("limits.") == limits)
            .map(|(k, h)| {
                let used = o["status"]["used"][k.as_str()].as_str().unwrap_or("0");
                format!("{k}: {used}/{}", h.as_str().unwrap_or_default())
            })
            .collect();
        Value::from(text.join(", "))
    }
    vec![
        Column::name(),
        Column::age(),
        Column::new(
            "Request",
            "string",
            "Used and hard amounts of what is not a limit.",
            |o, _| pairs(o, false),
        ),
        Column::new(
            "Limit",
            "string",
            "Used and hard amounts of the limits.",
            |o, _| pairs(o, true),
        ),
    ]
}

/// LimitRanges: when each was made.
fn limit_ranges() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Created At",
            "date",
            "When the object was created.",
            |o, _| text_or(o, "/metadata/creationTimestamp", ""),
        ),
    ]
}

/// Secrets.
pub fn secrets() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Type", "string", "The secret's type.", |o, _| {
            text_or(o, "/type", "")
        }),
        // Declared a string upstream, the cell is a number.
        Column::new("Data", "string", "The number of keys.", |o, _| {
            count(o, "/data")
        }),
        Column::age(),
    ]
}

/// ServiceAccounts.
pub fn service_accounts() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Secrets",
            "integer",
            "The number of secrets listed.",
            |o, _| count(o, "/secrets"),
        ),
        Column::age(),
    ]
}

/// Leases.
pub fn leases() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Holder",
            "string",
            "The identity holding the lease.",
            |o, _| text_or(o, "/spec/holderIdentity", ""),
        ),
        Column::age(),
    ]
}

/// APIServices: `Local` or the service's `namespace/name`, and whether it is available (with
/// the reason when it is not).
pub fn api_services() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Service",
            "string",
            "The service that serves the group version, or Local.",
            |o, _| {
                let service = &o["spec"]["service"];
                match (service["namespace"].as_str(), service["name"].as_str()) {
                    (Some(ns), Some(name)) => Value::String(format!("{ns}/{name}")),
                    _ => Value::String("Local".into()),
                }
            },
        ),
        Column::new(
            "Available",
            "string",
            "Whether the group version is served, and why not.",
            |o, _| {
                let conditions = o["status"]["conditions"].as_array();
                let available = conditions
                    .into_iter()
                    .flatten()
                    .find(|c| c["type"] == "Available");
                let Some(c) = available else {
                    return Value::String("Unknown".into());
                };
                let status = c["status"].as_str().unwrap_or("");
                match c["reason"].as_str() {
                    Some(reason) if status != "True" => {
                        Value::String(format!("{status} ({reason})"))
                    }
                    _ => Value::String(status.into()),
                }
            },
        ),
        Column::age(),
    ]
}

/// VolumeAttributesClasses: the CSI driver.
pub fn volume_attributes_classes() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "DriverName",
            "string",
            "The CSI driver that applies the class's parameters.",
            |o, _| text_or(o, "/driverName", ""),
        ),
        Column::age(),
    ]
}

/// ResourceClaims: where the claim is in its life (`pending`, `allocated`, `reserved`,
/// `deleted`, comma-separated).
fn resource_claims() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "State",
            "string",
            "Whether the claim is allocated and reserved for a consumer.",
            |o, _| {
                let deleted = !o["metadata"]["deletionTimestamp"].is_null();
                let allocated = !o["status"]["allocation"].is_null();
                let reserved = o["status"]["reservedFor"]
                    .as_array()
                    .is_some_and(|r| !r.is_empty());
                let mut states = Vec::new();
                if deleted {
                    states.push("deleted");
                }
                if !allocated {
                    if !deleted {
                        states.push("pending");
                    }
                } else {
                    states.push("allocated");
                    if reserved {
                        states.push("reserved");
                    } else if deleted {
                        states.push("deallocating");
                    }
                }
                Value::String(states.join(","))
            },
        ),
        Column::age(),
    ]
}

/// ResourceSlices: the node (if one), the driver and the pool.
fn resource_slices() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Node", "string", "The node the devices are on.", |o, _| {
            text_or(o, "/spec/nodeName", "<none>")
        }),
        Column::new(
            "Driver",
            "string",
            "The driver that publishes the devices.",
            |o, _| text_or(o, "/spec/driver", ""),
        ),
        Column::new("Pool", "string", "The pool of the devices.", |o, _| {
            text_or(o, "/spec/pool/name", "")
        }),
        Column::age(),
    ]
}

/// IngressClasses: the controller and the parameters (`Kind/name`).
pub fn ingress_classes() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Controller",
            "string",
            "The controller that implements the class.",
            |o, _| text_or(o, "/spec/controller", ""),
        ),
        Column::new(
            "Parameters",
            "string",
            "The class's parameters object.",
            |o, _| {
                let p = &o["spec"]["parameters"];
                match (p["kind"].as_str(), p["name"].as_str()) {
                    (Some(kind), Some(name)) => {
                        let group = p["apiGroup"]
                            .as_str()
                            .map(|g| format!(".{g}"))
                            .unwrap_or_default();
                        Value::String(format!("{kind}{group}/{name}"))
                    }
                    _ => Value::from("<none>"),
                }
            },
        ),
        Column::age(),
    ]
}

/// Admission policies: how many validations, and the kind of their parameters.
fn admission_policies(
    column: &'static str,
    description: &'static str,
    count: capstan_meta::columns::CellFn,
) -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(column, "integer", description, count),
        Column::new(
            "ParamKind",
            "string",
            "The kind of the policy's parameters.",
            |o, _| {
                let kind = &o["spec"]["paramKind"];
                match (kind["apiVersion"].as_str(), kind["kind"].as_str()) {
                    (Some(version), Some(kind)) => Value::from(format!("{version}, Kind={kind}")),
                    _ => Value::from("<unset>"),
                }
            },
        ),
        Column::age(),
    ]
}

/// Admission policy bindings: the policy and the parameters they bind it to.
fn admission_policy_bindings() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("PolicyName", "string", "The policy bound.", |o, _| {
            Value::from(o["spec"]["policyName"].as_str().unwrap_or(""))
        }),
        Column::new(
            "ParamRef",
            "string",
            "The parameters the policy is bound to.",
            |o, _| {
                let r = &o["spec"]["paramRef"];
                let name = match (r["name"].as_str(), r.get("selector")) {
                    (Some(name), _) => name.to_string(),
                    (None, Some(_)) => "*".to_string(),
                    (None, None) => return Value::from("<unset>"),
                };
                match r["namespace"].as_str().filter(|ns| !ns.is_empty()) {
                    Some(ns) => Value::from(format!("{ns}/{name}")),
                    None => Value::from(name),
                }
            },
        ),
        Column::age(),
    ]
}

/// Webhook configurations: how many webhooks each holds.
fn webhook_configurations() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Webhooks",
            "integer",
            "The number of webhooks in the configuration.",
            |o, _| Value::from(o["webhooks"].as_array().map_or(0, Vec::len)),
        ),
        Column::age(),
    ]
}

/// RuntimeClasses: the handler.
pub fn runtime_classes() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Handler",
            "string",
            "The container runtime configuration this class selects.",
            |o, _| o.get("handler").cloned().unwrap_or_else(|| Value::from("")),
        ),
        Column::age(),
    ]
}

/// FlowSchemas: the level, precedence and distinguisher; whether the level is missing.
fn flow_schemas() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "PriorityLevel",
            "string",
            "The priority level requests of this schema run at.",
            |o, _| text_or(o, "/spec/priorityLevelConfiguration/name", ""),
        ),
        Column::new(
            "MatchingPrecedence",
            "string",
            "Lower precedences are matched first.",
            |o, _| {
                let p = o
                    .pointer("/spec/matchingPrecedence")
                    .and_then(Value::as_i64);
                Value::String(p.unwrap_or(1000).to_string())
            },
        ),
        Column::new(
            "DistinguisherMethod",
            "string",
            "How requests are told apart into flows.",
            |o, _| text_or(o, "/spec/distinguisherMethod/type", "<none>"),
        ),
        Column::age(),
        Column::new(
            "MissingPL",
            "string",
            "Whether the priority level does not exist.",
            |o, _| {
                let dangling = o
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .and_then(|c| c.iter().find(|c| c["type"] == "Dangling"))
                    .and_then(|c| c["status"].as_str())
                    .unwrap_or("?");
                Value::String(dangling.to_string())
            },
        ),
    ]
}

/// A field of a limited level's spec, `<none>` when absent (exempt levels).
fn limited(o: &Value, field: &str) -> Value {
    let v = o.pointer(&format!("/spec/limited/{field}"));
    Value::String(v.map_or("<none>".to_string(), |v| v.to_string()))
}

/// PriorityLevelConfigurations: type, shares and queuing.
fn priority_levels() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Type", "string", "Exempt or Limited.", |o, _| {
            text_or(o, "/spec/type", "")
        }),
        Column::new(
            "NominalConcurrencyShares",
            "string",
            "The level's share of the server's seats.",
            |o, _| limited(o, "nominalConcurrencyShares"),
        ),
        Column::new("Queues", "string", "Queues of the level.", |o, _| {
            limited(o, "limitResponse/queuing/queues")
        }),
        Column::new(
            "HandSize",
            "string",
            "Queues dealt to each flow.",
            |o, _| limited(o, "limitResponse/queuing/handSize"),
        ),
        Column::new(
            "QueueLengthLimit",
            "string",
            "Requests one queue may hold.",
            |o, _| limited(o, "limitResponse/queuing/queueLengthLimit"),
        ),
        Column::age(),
    ]
}

/// PriorityClasses.
pub fn priority_classes() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Value",
            "integer",
            "The priority of pods of this class.",
            |o, _| o.get("value").cloned().unwrap_or_else(|| Value::from(0)),
        ),
        Column::new(
            "Global-Default",
            "boolean",
            "Whether this class is the default.",
            |o, _| Value::Bool(o["globalDefault"].as_bool().unwrap_or(false)),
        ),
        Column::age(),
        Column::new(
            "PreemptionPolicy",
            "string",
            "Whether pods of this class preempt others.",
            |o, _| text_or(o, "/preemptionPolicy", "PreemptLowerPriority"),
        ),
    ]
}

/// PodDisruptionBudgets.
pub fn pod_disruption_budgets() -> Vec<Column> {
    fn int_or_string(o: &Value, pointer: &str) -> Value {
        match o.pointer(pointer) {
            Some(Value::Number(n)) => Value::String(n.to_string()),
            Some(Value::String(s)) => Value::String(s.clone()),
            _ => Value::String("N/A".into()),
        }
    }
    vec![
        Column::name(),
        Column::new(
            "Min Available",
            "string",
            "Pods that must stay available.",
            |o, _| int_or_string(o, "/spec/minAvailable"),
        ),
        Column::new(
            "Max Unavailable",
            "string",
            "Pods that may be unavailable.",
            |o, _| int_or_string(o, "/spec/maxUnavailable"),
        ),
        Column::new(
            "Allowed Disruptions",
            "integer",
            "Disruptions allowed now.",
            |o, _| {
                o.pointer("/status/disruptionsAllowed")
                    .cloned()
                    .unwrap_or_else(|| Value::from(0))
            },
        ),
        Column::age(),
    ]
}

/// PersistentVolumes.
pub fn persistent_volumes() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Capacity", "string", "The volume's size.", |o, _| {
            text_or(o, "/spec/capacity/storage", "")
        }),
        Column::new(
            "Access Modes",
            "string",
            "How the volume can be mounted.",
            |o, _| access_modes(o, "/spec/accessModes"),
        ),
        Column::new(
            "Reclaim Policy",
            "string",
            "What happens once released.",
            |o, _| text_or(o, "/spec/persistentVolumeReclaimPolicy", ""),
        ),
        Column::new("Status", "string", "The volume's phase.", |o, _| {
            text_or(o, "/status/phase", "")
        }),
        Column::new(
            "Claim",
            "string",
            "The claim bound to the volume.",
            |o, _| {
                let claim = &o["spec"]["claimRef"];
                match (claim["namespace"].as_str(), claim["name"].as_str()) {
                    (Some(ns), Some(name)) => Value::String(format!("{ns}/{name}")),
                    _ => Value::String(String::new()),
                }
            },
        ),
        Column::new("StorageClass", "string", "The volume's class.", |o, _| {
            text_or(o, "/spec/storageClassName", "")
        }),
        Column::new(
            "VolumeAttributesClass",
            "string",
            "The volume's attributes class.",
            |o, _| {
                none_if_empty(
                    text_or(o, "/spec/volumeAttributesClassName", "")
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            },
        ),
        Column::new(
            "Reason",
            "string",
            "Why the volume is in its phase.",
            |o, _| text_or(o, "/status/reason", ""),
        ),
        Column::age(),
        Column::new("VolumeMode", "string", "Filesystem or Block.", |o, _| {
            text_or(o, "/spec/volumeMode", "Filesystem")
        })
        .wide(),
    ]
}

/// PersistentVolumeClaims.
pub fn persistent_volume_claims() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Status", "string", "The claim's phase.", |o, _| {
            text_or(o, "/status/phase", "")
        }),
        Column::new(
            "Volume",
            "string",
            "The volume bound to the claim.",
            |o, _| text_or(o, "/spec/volumeName", ""),
        ),
        Column::new("Capacity", "string", "The bound volume's size.", |o, _| {
            text_or(o, "/status/capacity/storage", "")
        }),
        Column::new(
            "Access Modes",
            "string",
            "How the volume can be mounted.",
            |o, _| access_modes(o, "/status/accessModes"),
        ),
        Column::new("StorageClass", "string", "The claim's class.", |o, _| {
            text_or(o, "/spec/storageClassName", "")
        }),
        Column::new(
            "VolumeAttributesClass",
            "string",
            "The claim's attributes class.",
            |o, _| {
                none_if_empty(
                    text_or(o, "/spec/volumeAttributesClassName", "")
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            },
        ),
        Column::age(),
        Column::new("VolumeMode", "string", "Filesystem or Block.", |o, _| {
            text_or(o, "/spec/volumeMode", "Filesystem")
        })
        .wide(),
    ]
}

/// Nodes.
pub fn nodes() -> Vec<Column> {
    fn address(o: &Value, kind: &str) -> Value {
        let found = o
            .pointer("/status/addresses")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().find(|x| x["type"] == kind))
            .and_then(|x| x["address"].as_str());
        Value::String(found.unwrap_or("<none>").to_string())
    }
    vec![
        Column::name(),
        Column::new("Status", "string", "Whether the node is ready.", |o, _| {
            let ready = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|c| c.iter().find(|x| x["type"] == "Ready"))
                .map(|c| c["status"].as_str().unwrap_or(""));
            let mut status = match ready {
                Some("True") => "Ready".to_string(),
                Some("False") => "NotReady".to_string(),
                _ => "Unknown".to_string(),
            };
            if o.pointer("/spec/unschedulable") == Some(&Value::Bool(true)) {
                status.push_str(",SchedulingDisabled");
            }
            Value::String(status)
        }),
        Column::new(
            "Roles",
            "string",
            "The node's roles, from its labels.",
            |o, _| {
                let mut roles: Vec<String> = Vec::new();
                if let Some(labels) = o.pointer("/metadata/labels").and_then(Value::as_object) {
                    for (k, v) in labels {
                        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                            if !role.is_empty() {
                                roles.push(role.to_string());
                            }
                        } else if k == "kubernetes.io/role"
                            && let Some(role) = v.as_str().filter(|r| !r.is_empty())
                        {
                            roles.push(role.to_string());
                        }
                    }
                }
                roles.sort();
                roles.dedup();
                none_if_empty(roles.join(","))
            },
        ),
        Column::age(),
        Column::new("Version", "string", "The kubelet's version.", |o, _| {
            text_or(o, "/status/nodeInfo/kubeletVersion", "")
        }),
        Column::new(
            "Internal-IP",
            "string",
            "The node's internal address.",
            |o, _| address(o, "InternalIP"),
        )
        .wide(),
        Column::new(
            "External-IP",
            "string",
            "The node's external address.",
            |o, _| address(o, "ExternalIP"),
        )
        .wide(),
        Column::new(
            "OS-Image",
            "string",
            "The node's operating system image.",
            |o, _| or_none(o, "/status/nodeInfo/osImage"),
        )
        .wide(),
        Column::new("Kernel-Version", "string", "The node's kernel.", |o, _| {
            or_none(o, "/status/nodeInfo/kernelVersion")
        })
        .wide(),
        Column::new(
            "Container-Runtime",
            "string",
            "The node's container runtime.",
            |o, _| or_none(o, "/status/nodeInfo/containerRuntimeVersion"),
        )
        .wide(),
    ]
}

/// The STATUS kubectl shows for a pod: the phase, or a more telling reason from the pod or
/// its containers, or `Terminating`.
fn pod_status(o: &Value) -> String {
    let mut reason = o
        .pointer("/status/reason")
        .or_else(|| o.pointer("/status/phase"))
        .and_then(Value::as_str)
        .unwrap_or("Pending")
        .to_string();
    let statuses = |key: &str| {
        o.pointer(&format!("/status/{key}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut initializing = false;
    let init_total = o
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    for (i, c) in statuses("initContainerStatuses").iter().enumerate() {
        let terminated = &c["state"]["terminated"];
        if terminated["exitCode"] == 0 && terminated.is_object() {
            continue;
        }
        initializing = true;
        reason = if let Some(r) = terminated["reason"].as_str() {
            format!("Init:{r}")
        } else if terminated.is_object() {
            format!("Init:ExitCode:{}", terminated["exitCode"])
        } else if let Some(r) = c["state"]["waiting"]["reason"]
            .as_str()
            .filter(|r| *r != "PodInitializing")
        {
            format!("Init:{r}")
        } else {
            format!("Init:{i}/{init_total}")
        };
        break;
    }
    if !initializing {
        for c in statuses("containerStatuses").iter().rev() {
            if let Some(r) = c["state"]["waiting"]["reason"].as_str() {
                reason = r.to_string();
            } else if let Some(r) = c["state"]["terminated"]["reason"].as_str() {
                reason = r.to_string();
            } else if c["state"]["terminated"].is_object() {
                let t = &c["state"]["terminated"];
                reason = match t["signal"].as_i64().filter(|s| *s != 0) {
                    Some(s) => format!("Signal:{s}"),
                    None => format!("ExitCode:{}", t["exitCode"]),
                };
            }
        }
    }
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        reason = if o.pointer("/status/reason") == Some(&Value::from("NodeLost")) {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    reason
}

/// Pods.
pub fn pods() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Ready",
            "string",
            "Ready containers of all containers.",
            |o, _| {
                let total = o
                    .pointer("/spec/containers")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                let ready = o
                    .pointer("/status/containerStatuses")
                    .and_then(Value::as_array)
                    .map_or(0, |s| s.iter().filter(|c| c["ready"] == true).count());
                Value::String(format!("{ready}/{total}"))
            },
        ),
        Column::new(
            "Status",
            "string",
            "The pod's state, as a person reads it.",
            |o, _| Value::String(pod_status(o)),
        ),
        Column::new(
            "Restarts",
            "string",
            "How often the containers restarted.",
            |o, now| {
                let statuses = o
                    .pointer("/status/containerStatuses")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let restarts: i64 = statuses
                    .iter()
                    .filter_map(|c| c["restartCount"].as_i64())
                    .sum();
                let last = statuses
                    .iter()
                    .filter_map(|c| c.pointer("/lastState/terminated/finishedAt"))
                    .filter_map(Value::as_str)
                    .max();
                Value::String(match last {
                    Some(t) if restarts > 0 => {
                        format!("{restarts} ({} ago)", since(Some(&Value::from(t)), now))
                    }
                    _ => restarts.to_string(),
                })
            },
        ),
        Column::age(),
        Column::new("IP", "string", "The pod's IP address.", |o, _| {
            or_none(o, "/status/podIP")
        })
        .wide(),
        Column::new("Node", "string", "The node the pod runs on.", |o, _| {
            or_none(o, "/spec/nodeName")
        })
        .wide(),
        Column::new(
            "Nominated Node",
            "string",
            "The node preemption made room on.",
            |o, _| or_none(o, "/status/nominatedNodeName"),
        )
        .wide(),
        Column::new(
            "Readiness Gates",
            "string",
            "Readiness gates that are true.",
            |o, _| {
                let gates: Vec<String> = o
                    .pointer("/spec/readinessGates")
                    .and_then(Value::as_array)
                    .map(|g| {
                        g.iter()
                            .filter_map(|x| x["conditionType"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                if gates.is_empty() {
                    return Value::String("<none>".into());
                }
                let conditions = o
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let met = gates
                    .iter()
                    .filter(|g| {
                        conditions
                            .iter()
                            .any(|c| c["type"] == g.as_str() && c["status"] == "True")
                    })
                    .count();
                Value::String(format!("{met}/{}", gates.len()))
            },
        )
        .wide(),
    ]
}

/// Events (`v1`): newest time first, then what happened to which object.
pub fn events() -> Vec<Column> {
    fn last_seen(o: &Value, now: i64) -> Value {
        let t = o
            .get("lastTimestamp")
            .filter(|v| v.is_string())
            .or_else(|| o.pointer("/series/lastObservedTime"))
            .or_else(|| o.get("eventTime").filter(|v| v.is_string()));
        Value::String(since(t, now))
    }
    vec![
        Column::new(
            "Last Seen",
            "string",
            "When the event was last seen.",
            last_seen,
        ),
        Column::new("Type", "string", "Normal or Warning.", |o, _| {
            text_or(o, "/type", "")
        }),
        Column::new("Reason", "string", "Why the event happened.", |o, _| {
            text_or(o, "/reason", "")
        }),
        Column::new(
            "Object",
            "string",
            "The object the event is about.",
            |o, _| {
                let kind = o["involvedObject"]["kind"]
                    .as_str()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let name = o["involvedObject"]["name"].as_str().unwrap_or("");
                Value::String(format!("{kind}/{name}"))
            },
        ),
        Column::new("Subobject", "string", "The part of the object.", |o, _| {
            text_or(o, "/involvedObject/fieldPath", "")
        })
        .wide(),
        Column::new("Source", "string", "Who reported the event.", |o, _| {
            let component = o["source"]["component"]
                .as_str()
                .or_else(|| o["reportingComponent"].as_str())
                .unwrap_or("");
            let host = o["source"]["host"].as_str().unwrap_or("");
            Value::String(if host.is_empty() {
                component.to_string()
            } else {
                format!("{component}, {host}")
            })
        })
        .wide(),
        Column::new("Message", "string", "What happened.", |o, _| {
            text_or(o, "/message", "")
        }),
        Column::new(
            "First Seen",
            "string",
            "When the event was first seen.",
            |o, now| {
                let t = o
                    .get("firstTimestamp")
                    .filter(|v| v.is_string())
                    .or_else(|| o.get("eventTime").filter(|v| v.is_string()));
                Value::String(since(t, now))
            },
        )
        .wide(),
        Column::new(
            "Count",
            "string",
            "How often the event happened.",
            |o, _| {
                let n = o["count"]
                    .as_i64()
                    .or_else(|| o.pointer("/series/count").and_then(Value::as_i64))
                    .unwrap_or(1);
                Value::String(n.to_string())
            },
        )
        .wide(),
        Column {
            priority: 1,
            ..Column::name()
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cells(columns: &[Column], obj: &Value) -> Vec<Value> {
        columns
            .iter()
            .map(|c| c.cell(obj, 1_795_330_800 + 3_600))
            .collect()
    }

    #[test]
    fn storage_classes_print_defaults_and_mark_the_default_class() {
        let sc = json!({"metadata": {"name": "fast", "creationTimestamp": "2026-11-22T07:00:00Z",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "example.com/ssd"});
        assert_eq!(
            cells(&storage_classes(), &sc),
            [
                json!("fast (default)"),
                json!("example.com/ssd"),
                json!("Delete"),
                json!("Immediate"),
                json!(false),
                json!("60m")
            ]
        );
    }

    #[test]
    fn pods_show_readiness_status_and_restarts() {
        let pod = json!({"metadata": {"name": "p", "creationTimestamp": "2026-11-22T07:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2,
                    "state": {"running": {}},
                    "lastState": {"terminated": {"finishedAt": "2026-11-22T07:55:00Z"}}},
                {"name": "b", "ready": false, "restartCount": 0,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        assert_eq!(
            cells(&pods(), &pod),
            [
                json!("p"),
                json!("1/2"),
                json!("CrashLoopBackOff"),
                json!("2 (5m ago)"),
                json!("60m"),
                json!("10.0.0.1"),
                json!("n1"),
                json!("<none>"),
                json!("<none>")
            ]
        );
        let deleting = json!({"metadata": {"name": "p", "deletionTimestamp": "2026-11-22T07:00:00Z"},
            "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Running"}});
        assert_eq!(pod_status(&deleting), "Terminating");
        assert_eq!(pod_status(&json!({"spec": {}})), "Pending");
    }

    #[test]
    fn nodes_show_readiness_roles_and_scheduling() {
        let node = json!({"metadata": {"name": "n1",
                "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                "nodeInfo": {"kubeletVersion": "v1.33.0"},
                "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}});
        let c = cells(&nodes(), &node);
        assert_eq!(c[1], "Ready,SchedulingDisabled");
        assert_eq!(c[2], "control-plane,worker");
        assert_eq!(c[4], "v1.33.0");
        assert_eq!(c[5], "10.0.0.2");
        assert_eq!(c[6], "<none>");
    }

    #[test]
    fn volumes_abbreviate_access_modes() {
        let pv = json!({"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"namespace": "default", "name": "data"}}, "status": {"phase": "Bound"}});
        let c = cells(&persistent_volumes(), &pv);
        assert_eq!(
            &c[1..6],
            [
                json!("5Gi"),
                json!("RWO,ROX"),
                json!("Retain"),
                json!("Bound"),
                json!("default/data")
            ]
        );
    }
}
