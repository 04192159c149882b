//! What a request is about, from its method, path and query alone (upstream's RequestInfo).

use http::Method;

use crate::query::Query;

/// The parsed meaning of a request, attached to it as an extension by the first filter.
#[derive(Debug, Clone, Default)]
pub struct RequestInfo {
    /// Whether the path names an API resource (`/api/v1/...`, `/apis/g/v/...`).
    pub is_resource_request: bool,
    /// The request path.
    pub path: String,
    /// The verb: get, list, watch, create, update, patch, delete, deletecollection; for
    /// other requests the lower-case method.
    pub verb: String,
    /// `api` or `apis` for API paths.
    pub api_prefix: String,
    /// API group ("" for core).
    pub api_group: String,
    /// API version.
    pub api_version: String,
    /// Namespace from the path.
    pub namespace: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource.
    pub subresource: String,
    /// Object name.
    pub name: String,
    /// Path segments after the subresource (proxy paths); a non-empty value is unroutable.
    pub extra: Vec<String>,
    /// The decoded query.
    pub query: Query,
    /// The field selector of a list, watch or deletecollection, parsed once here (empty when
    /// there is none or it does not parse; the store then refuses it).
    pub field_selector: Vec<capstan_meta::fields::FieldRequirement>,
}

impl RequestInfo {
    /// The request as policies match it (audit rules, FlowSchemas), for `user` (anonymous
    /// and groupless when none).
    pub fn attributes<'a>(
        &'a self,
        user: Option<&'a capstan_auth::UserInfo>,
    ) -> capstan_meta::RequestAttributes<'a> {
        capstan_meta::RequestAttributes {
            user: user.map_or("", |u| u.name.as_str()),
            groups: user.map_or(&[][..], |u| u.groups.as_slice()),
            verb: &self.verb,
            resource_request: self.is_resource_request,
            api_group: &self.api_group,
            resource: &self.resource,
            subresource: &self.subresource,
            namespace: &self.namespace,
            name: &self.name,
            path: &self.path,
        }
    }

    /// Parses the request line.
    pub fn parse(method: &Method, path: &str, raw_query: Option<&str>) -> Self {
        let query = Query::parse(raw_query);
        let mut info = Self {
            path: path.to_string(),
            verb: method.as_str().to_ascii_lowercase(),
            query,
            ..Default::default()
        };
        let segments: Vec<&str> = path
            .trim_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let (prefix, rest) = match segments.split_first() {
            Some((p, rest)) if *p == "api" || *p == "apis" => (*p, rest),
            _ => return info,
        };
        let (group, version, rest) = match (prefix, rest) {
            ("api", [version, rest @ ..]) => ("", *version, rest),
            ("apis", [group, version, rest @ ..]) => (*group, *version, rest),
            _ => return info,
        };
        info.api_prefix = prefix.to_string();
        info.api_group = group.to_string();
        info.api_version = version.to_string();
        info.is_resource_request = true;
        // The deprecated `/watch/` prefix (`/api/v1/watch/namespaces/a/pods/p`) watches what the
        // rest of the path names.
        let (watch_prefix, mut parts): (bool, &[&str]) = match rest {
            ["watch", more @ ..] => (true, more),
            _ => (false, rest),
        };
        if let ["namespaces", ns, more @ ..] = parts {
            if matches!(more, [] | ["status" | "finalize"]) {
                // /namespaces/{name} is the namespace object itself.
                // /namespaces/{name}/status and /finalize are its subresources.
                info.resource = "namespaces".into();
                info.name = ns.to_string();
                info.subresource = more.first().map(|s| s.to_string()).unwrap_or_default();
                parts = &[];
            } else {
                info.namespace = ns.to_string();
                parts = more;
            }
        }
        match parts {
            [] => {}
            [resource] => info.resource = resource.to_string(),
            [resource, name] => {
                info.resource = resource.to_string();
                info.name = name.to_string();
            }
            [resource, name, sub, extra @ ..] => {
                info.resource = resource.to_string();
                info.name = name.to_string();
                info.subresource = sub.to_string();
                info.extra = extra.iter().map(|s| s.to_string()).collect();
            }
        }
        if info.resource.is_empty() {
            // Discovery of a group version.
            info.is_resource_request = false;
            return info;
        }
        let named = !info.name.is_empty();
        info.verb = match (method.as_str(), named) {
            // `watch=1` makes a watch of a collection only: on an object's path it is a get,
            // as upstream (the prefix watches one object).
            ("GET" | "HEAD", _) if watch_prefix => "watch",
            ("GET" | "HEAD", false) if info.query.flag("watch") => "watch",
            ("GET" | "HEAD", true) => "get",
            ("GET" | "HEAD", false) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "delete",
            ("DELETE", false) => "deletecollection",
            (other, _) => {
                return Self {
                    verb: other.to_ascii_lowercase(),
                    ..info
                };
            }
        }
        .to_string();
        if matches!(info.verb.as_str(), "list" | "watch" | "deletecollection")
            && let Some(parsed) = info
                .query
                .get("fieldSelector")
                .and_then(|s| capstan_meta::fields::FieldSelector::parse(s).ok())
        {
            // A list or watch of one object by `metadata.name` names it (as upstream, so that
            // per-object authorization, the Node authorizer's, applies).
            if !named
                && info.verb != "deletecollection"
                && let Some(name) = exact_name(&parsed)
            {
                info.name = name;
            }
            info.field_selector = parsed.requirements;
        }
        info
    }
}

/// The name a field selector requires exactly (a `metadata.name=x` or `==x` term), if it is a
/// valid path segment. The selector is parsed as the store parses it (escaped commas and
/// operators included), so the name authorized is the only one the store can return.
fn exact_name(parsed: &capstan_meta::fields::FieldSelector) -> Option<String> {
    let value = parsed.requires_exact("metadata.name")?;
    let valid = !value.is_empty() && value != "." && value != ".." && !value.contains(['/', '%']);
    valid.then(|| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_selector_on_the_name_names_the_object() {
        let watch = |query: &str| {
            RequestInfo::parse(&Method::GET, "/api/v1/namespaces/a/secrets", Some(query)).name
        };
        assert_eq!(
            watch("watch=1&fieldSelector=metadata.name%3Dcreds"),
            "creds"
        );
        assert_eq!(
            watch("fieldSelector=type%3Dx,metadata.name%3D%3Dcreds"),
            "creds"
        );
        assert_eq!(watch("fieldSelector=metadata.name!%3Dcreds"), "");
        assert_eq!(watch("fieldSelector=metadata.name%3D.."), "");
        // An escaped comma belongs to the value of the term before it: this selector has one
        // term, `metadata.name != "x,metadata.name=allowed"`, and names nothing.
        assert_eq!(
            watch("fieldSelector=metadata.name!%3Dx%5C,metadata.name%3Dallowed"),
            ""
        );
        assert_eq!(
            watch("fieldSelector=metadata.name%3Dallowed,metadata.name!%3Dx"),
            "allowed"
        );
        // A selector the store would refuse names nothing either.
        assert_eq!(watch("fieldSelector=metadata.name%3Da%5Cb"), "");
    }

    #[test]
    fn watch_is_of_collections_or_through_the_prefix() {
        let verb_and_name = |path: &str, query: &str| {
            let i = RequestInfo::parse(&Method::GET, path, Some(query));
            (i.verb, i.name, i.namespace, i.resource)
        };
        let named = "/api/v1/namespaces/a/secrets/creds";
        assert_eq!(verb_and_name(named, "watch=1").0, "get");
        let prefixed = verb_and_name("/api/v1/watch/namespaces/a/secrets/creds", "");
        assert_eq!(
            prefixed,
            (
                "watch".to_string(),
                "creds".to_string(),
                "a".to_string(),
                "secrets".to_string()
            )
        );
        let all = verb_and_name("/apis/apps/v1/watch/deployments", "");
        assert_eq!((all.0.as_str(), all.1.as_str()), ("watch", ""));
    }

    #[test]
    fn resource_paths() {
        let i = RequestInfo::parse(
            &Method::GET,
            "/apis/storage.k8s.io/v1/storageclasses",
            Some("watch=true"),
        );
        assert_eq!(
            (i.api_group.as_str(), i.resource.as_str(), i.verb.as_str()),
            ("storage.k8s.io", "storageclasses", "watch")
        );
        let i = RequestInfo::parse(&Method::DELETE, "/api/v1/namespaces/ns1/pods/p1", None);
        assert_eq!(
            (
                i.namespace.as_str(),
                i.resource.as_str(),
                i.name.as_str(),
                i.verb.as_str()
            ),
            ("ns1", "pods", "p1", "delete")
        );
        let i = RequestInfo::parse(&Method::GET, "/api/v1/namespaces/ns1", None);
        assert_eq!(
            (i.resource.as_str(), i.name.as_str(), i.verb.as_str()),
            ("namespaces", "ns1", "get")
        );
        let i = RequestInfo::parse(
            &Method::POST,
            "/api/v1/namespaces/ns1/pods/p1/binding",
            None,
        );
        assert_eq!(
            (i.subresource.as_str(), i.verb.as_str()),
            ("binding", "create")
        );
        let i = RequestInfo::parse(
            &Method::DELETE,
            "/apis/storage.k8s.io/v1/storageclasses",
            None,
        );
        assert_eq!(i.verb, "deletecollection");
    }

    #[test]
    fn non_resource_paths() {
        for p in [
            "/version",
            "/apis",
            "/apis/storage.k8s.io",
            "/apis/storage.k8s.io/v1",
            "/healthz",
        ] {
            let i = RequestInfo::parse(&Method::GET, p, None);
            assert!(!i.is_resource_request, "{p}");
            assert_eq!(i.verb, "get");
        }
    }

    /// Fuzzing what any client controls here: the path and the query. Nothing panics, and a
    /// name taken from a field selector is the only name that selector lets the store return.
    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        fn encode(s: &str) -> String {
            s.bytes().map(|b| format!("%{b:02X}")).collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1000))]

            #[test]
            fn any_path_and_query_parse(
                method in proptest::sample::select(vec!["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "BREW"]),
                path in prop_oneof![
                    "(/(api|apis|v1|apps|namespaces|a|pods|watch|proxy|status|\\.\\.|%2F|)){0,9}",
                    any::<String>(),
                ],
                query in prop_oneof![
                    "((watch|fieldSelector|labelSelector|limit|x)=[a-z.=!,%\\&]{0,12}&?){0,4}",
                    any::<String>(),
                ],
            ) {
                let method = Method::from_bytes(method.as_bytes()).unwrap();
                let _ = RequestInfo::parse(&method, &path, Some(&query));
            }

            #[test]
            fn a_name_from_a_selector_is_the_only_one_it_selects(
                selector in "(metadata\\.name|a)(=|==|!=)[a-c\\\\,=!.]{0,6}(,(metadata\\.name|a)(=|==|!=)[a-c\\\\,.]{0,4}){0,2}",
                other in "[a-c.\\\\,]{1,4}",
            ) {
                let query = format!("fieldSelector={}", encode(&selector));
                let info = RequestInfo::parse(&Method::GET, "/api/v1/namespaces/a/secrets", Some(&query));
                if !info.name.is_empty() && info.name != other {
                    let parsed = capstan_meta::fields::FieldSelector::parse(&selector).unwrap();
                    prop_assert!(
                        !parsed.matches(|f| (f == "metadata.name").then(|| other.clone())),
                        "{selector:?} named {:?} yet selects {other:?}", info.name
                    );
                }
            }

            #[test]
            fn queries_decode_what_was_encoded(key in "k[a-z]{0,8}", value in any::<String>()) {
                let query = Query::parse(Some(&format!("x=1&{key}={}", encode(&value))));
                prop_assert_eq!(query.get(&key), Some(value.as_str()));
            }
        }
    }
}
