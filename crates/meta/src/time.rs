//! The server's clock, in the precision the wire carries.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// The current time, truncated to whole seconds as `metav1.Time` is serialized.
pub fn now() -> Time {
    let now = jiff::Timestamp::now();
    let secs = now.as_second();
    Time(jiff::Timestamp::from_second(secs).unwrap_or(now))
}

/// [`now`] plus `seconds` (e.g. a deletion deadline).
pub fn seconds_from_now(seconds: i64) -> Time {
    let now = now();
    Time(
        now.0
            .checked_add(jiff::SignedDuration::from_secs(seconds))
            .unwrap_or(now.0),
    )
}
