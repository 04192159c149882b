//! `AlwaysAdmit` (lets everything through: no effect) and `AlwaysDeny` (refuses every write).

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::Plugin;

/// `AlwaysAdmit`: admits everything (as if it were not there).
pub struct AlwaysAdmit;

#[async_trait]
impl Plugin for AlwaysAdmit {
    fn name(&self) -> &'static str {
        "AlwaysAdmit"
    }
}

/// `AlwaysDeny`: refuses every create, update, delete and connection.
pub struct AlwaysDeny;

const DENIED: &str = "admission control is denying all modifications";

#[async_trait]
impl Plugin for AlwaysDeny {
    fn name(&self) -> &'static str {
        "AlwaysDeny"
    }

    fn admits(&self, _: Operation, _: &GroupResource, _: &str) -> bool {
        true
    }

    fn validates(&self, _: Operation, _: &GroupResource, _: &str) -> bool {
        true
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        Err(forbidden(a, DENIED))
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        Err(forbidden(a, DENIED))
    }
}
