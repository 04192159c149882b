//! [`RequestAttributes`]: a request as the policies that match requests see it (audit
//! policies, API Priority and Fairness' FlowSchemas), borrowed from what the server parsed.

/// Who asks for what: the user and the request's verb, resource and path.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestAttributes<'a> {
    /// The user's name (empty when not authenticated).
    pub user: &'a str,
    /// The user's groups.
    pub groups: &'a [String],
    /// The verb (`get`, `list`, `create`, … or the lowercase HTTP method for other paths).
    pub verb: &'a str,
    /// Whether the path is a resource's.
    pub resource_request: bool,
    /// The API group.
    pub api_group: &'a str,
    /// The resource.
    pub resource: &'a str,
    /// The subresource.
    pub subresource: &'a str,
    /// The namespace.
    pub namespace: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// The path.
    pub path: &'a str,
}
