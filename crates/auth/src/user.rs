use std::collections::BTreeMap;

/// An authenticated (or anonymous) user, as upstream's `user.Info`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name.
    pub name: String,
    /// A unique id, when the source has one.
    pub uid: String,
    /// The groups the user is in.
    pub groups: Vec<String>,
    /// Extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The group of cluster administrators, always authorized.
    pub const MASTERS: &'static str = "system:masters";
    /// The group every authenticated user is in.
    pub const AUTHENTICATED: &'static str = "system:authenticated";
    /// The group of the anonymous user.
    pub const UNAUTHENTICATED: &'static str = "system:unauthenticated";
    /// The anonymous user's name.
    pub const ANONYMOUS: &'static str = "system:anonymous";

    /// The anonymous user.
    pub fn anonymous() -> Self {
        Self {
            name: Self::ANONYMOUS.into(),
            groups: vec![Self::UNAUTHENTICATED.into()],
            ..Default::default()
        }
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}
