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

/// [`now`] as the wire writes it (`2006-01-02T15:04:05Z`). The text is made once a second
/// per thread: managedFields stamp every write with it.
pub fn now_text() -> String {
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> = const {
            std::cell::RefCell::new((i64::MIN, String::new()))
        };
    }
    let second = jiff::Timestamp::now().as_second();
    LAST.with_borrow_mut(|(at, text)| {
        if *at != second {
            let time = jiff::Timestamp::from_second(second).map(Time);
            *text = time
                .ok()
                .and_then(|t| serde_json::to_value(t).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            *at = second;
        }
        text.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_text_is_now_as_serialized() {
        let before = serde_json::to_value(now()).unwrap();
        let text = now_text();
        let after = serde_json::to_value(now()).unwrap();
        assert!(text.ends_with('Z') && text.len() == 20, "{text}");
        assert!(before.as_str() == Some(&text) || after.as_str() == Some(&text));
        assert_eq!(now_text().len(), 20);
    }
}
