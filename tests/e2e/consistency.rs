//! The resourceVersion tables of the spec (4.4) for get and list, cell by cell.

use capstan_testing::TestServer;
use http::Method;
use serde_json::{Value, json};

use crate::{SC, admin};

fn rv_of(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn list_and_get_follow_the_resource_version_tables() {
    let server = TestServer::start().await;
    let c = admin(&server);
    // The server's own writes after its start (each namespace's CA map, published after a
    // grace) move the latest resource version: let them land first.
    for _ in 0..100 {
        let maps = c
            .get("/api/v1/configmaps?fieldSelector=metadata.name%3Dkube-root-ca.crt")
            .await
            .json();
        if maps["items"].as_array().map_or(0, Vec::len) >= 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mut rvs = Vec::new();
    for name in ["t1", "t2", "t3"] {
        let created = c
            .send_json(
                Method::POST,
                SC,
                &json!({"metadata": {"name": name}, "provisioner": "p"}),
            )
            .await
            .json();
        rvs.push(rv_of(&created));
    }
    let merge = [("content-type", "application/merge-patch+json")];
    let updated = c
        .request(
            Method::PATCH,
            &format!("{SC}/t1"),
            &merge,
            br#"{"mountOptions":["ro"]}"#.to_vec(),
        )
        .await
        .json();
    let current = rv_of(&updated);
    let rv2 = rvs[1];
    let list = |q: String| {
        let c = c.clone();
        async move { c.get(&format!("{SC}?{q}")).await }
    };
    let items = |v: &Value| v["items"].as_array().unwrap().len();
    // A refusal: its code, reason and the message (a field error's, for 422s).
    let refused = |r: capstan_e2e::RawResponse, code: u16, message: &str| {
        assert_eq!(r.status, code);
        let status = r.json();
        let text = status["message"].as_str().unwrap().to_string();
        assert!(text.contains(message), "{status}");
        status
    };

    // resourceVersionMatch unset, limit unset.
    let most_recent = list(String::new()).await.json();
    assert_eq!((rv_of(&most_recent), items(&most_recent)), (current, 3));
    // "0": any state the server has, never newer than the latest.
    let any = list("resourceVersion=0".into()).await.json();
    assert_eq!(any["kind"], "StorageClassList");
    assert!(rv_of(&any) <= current && items(&any) <= 3, "{any}");
    let not_older = list(format!("resourceVersion={rv2}")).await.json();
    assert!(rv_of(&not_older) >= rv2);
    // limit set, continue unset.
    let page = list("limit=2".into()).await.json();
    assert_eq!((rv_of(&page), items(&page)), (current, 2));
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    let any_page = list("resourceVersion=0&limit=2".into()).await.json();
    assert!(
        rv_of(&any_page) <= current && items(&any_page) <= 2,
        "{any_page}"
    );
    let exact = list(format!("resourceVersion={rv2}&limit=2")).await.json();
    assert_eq!(
        (rv_of(&exact), items(&exact)),
        (rv2, 2),
        "exact: the state at rv2 had two objects"
    );
    // limit and continue: the token's version; rv=0 tolerated; another version is 400.
    let next = list(format!("limit=2&continue={token}")).await.json();
    assert_eq!((rv_of(&next), items(&next)), (current, 1));
    let tolerated = list(format!("resourceVersion=0&limit=2&continue={token}"))
        .await
        .json();
    assert_eq!((rv_of(&tolerated), items(&tolerated)), (current, 1));
    let status = refused(
        list(format!("resourceVersion={rv2}&limit=2&continue={token}")).await,
        400,
        "specifying resource version is not allowed when using continue",
    );
    assert_eq!(status["reason"], "BadRequest");
    // resourceVersionMatch=Exact.
    let status = refused(
        list("resourceVersionMatch=Exact".into()).await,
        422,
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "resourceVersionMatch"
    );
    refused(
        list("resourceVersionMatch=Exact&resourceVersion=0".into()).await,
        422,
        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
    );
    let exact = list(format!("resourceVersionMatch=Exact&resourceVersion={rv2}"))
        .await
        .json();
    assert_eq!((rv_of(&exact), items(&exact)), (rv2, 2));
    let exact_page = list(format!(
        "resourceVersionMatch=Exact&resourceVersion={rv2}&limit=1"
    ))
    .await
    .json();
    assert_eq!((rv_of(&exact_page), items(&exact_page)), (rv2, 1));
    assert!(exact_page["metadata"]["continue"].is_string());
    // resourceVersionMatch=NotOlderThan.
    refused(
        list("resourceVersionMatch=NotOlderThan".into()).await,
        422,
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
    let any = list("resourceVersionMatch=NotOlderThan&resourceVersion=0".into())
        .await
        .json();
    assert!(rv_of(&any) <= current && items(&any) <= 3, "{any}");
    let newer = list(format!(
        "resourceVersionMatch=NotOlderThan&resourceVersion={rv2}"
    ))
    .await
    .json();
    assert!(rv_of(&newer) >= rv2);
    let newer_page = list(format!(
        "resourceVersionMatch=NotOlderThan&resourceVersion={rv2}&limit=2"
    ))
    .await
    .json();
    assert!(rv_of(&newer_page) >= rv2);
    assert_eq!(list("resourceVersion=x1".into()).await.status, 400);

    // get: unset is the latest, 0 any, another value not older than it.
    let t1 = c.get(&format!("{SC}/t1")).await.json();
    assert_eq!(rv_of(&t1), current);
    let any = c.get(&format!("{SC}/t1?resourceVersion=0")).await.json();
    assert_eq!(any["metadata"]["name"], "t1");
    assert!(rv_of(&any) <= current);
    assert_eq!(
        rv_of(
            &c.get(&format!("{SC}/t1?resourceVersion={rv2}"))
                .await
                .json()
        ),
        current
    );
    let future = c
        .get(&format!("{SC}/t1?resourceVersion={}", current + 1000))
        .await;
    assert_eq!(future.status, 504);
    let too_large = |status: &Value, requested: u64| {
        assert_eq!(status["reason"], "Timeout", "{status}");
        assert_eq!(status["code"], 504);
        assert!(
            status["message"].as_str().unwrap().starts_with(&format!(
                "Too large resource version: {requested}, current: "
            )),
            "{status}"
        );
        assert_eq!(status["details"]["retryAfterSeconds"], 1);
        assert_eq!(
            status["details"]["causes"],
            json!([{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}])
        );
    };
    too_large(&future.json(), current + 1000);
    assert_eq!(future.headers["retry-after"], "1");

    // A watch from a revision the server has not reached waits for it, then is refused the
    // same way instead of starting and skipping the changes up to it.
    let ahead = current + 1000;
    let refused = c
        .get(&format!("{SC}?watch=1&resourceVersion={ahead}"))
        .await;
    assert_eq!(refused.status, 504);
    too_large(&refused.json(), ahead);
    // One reached while it waits is served: the changes after it arrive.
    let latest = rv_of(&c.get(SC).await.json());
    let waiting = tokio::spawn({
        let c = c.clone();
        let path = format!(
            "{SC}?watch=1&resourceVersion={}&timeoutSeconds=2",
            latest + 1
        );
        async move { c.get(&path).await }
    });
    let sc = |name: &str| json!({"metadata": {"name": name}, "provisioner": "p"});
    for name in ["late1", "late2"] {
        assert_eq!(c.send_json(Method::POST, SC, &sc(name)).await.status, 201);
    }
    let served = waiting.await.unwrap();
    assert_eq!(served.status, 200);
    let added: Vec<Value> = served
        .json_lines()
        .iter()
        .filter(|e| e["type"] == "ADDED")
        .map(|e| e["object"]["metadata"]["name"].clone())
        .collect();
    assert!(added.contains(&json!("late2")), "{added:?}");
}

fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// Paging one object at a time with a create and a delete between every two chunks: every
/// chunk is at the first chunk's resourceVersion and together they are exactly the state at
/// that version.
#[tokio::test]
async fn chunks_are_one_snapshot_under_concurrent_writes() {
    let server = TestServer::start().await;
    let c = admin(&server);
    let sc = |name: String| json!({"metadata": {"name": name}, "provisioner": "p"});
    for i in 0..20 {
        let r = c.send_json(Method::POST, SC, &sc(format!("a{i:02}"))).await;
        assert_eq!(r.status, 201);
    }
    let first = c.get(&format!("{SC}?limit=1")).await.json();
    let snapshot = rv_of(&first);
    let mut seen = names(&first);
    let mut token = first["metadata"]["continue"].as_str().map(str::to_string);
    let mut i = 0;
    while let Some(t) = token {
        // New names sort between the listed ones; deletions remove listed ones, some not yet
        // paged through.
        let r = c
            .send_json(Method::POST, SC, &sc(format!("a{i:02}x")))
            .await;
        assert_eq!(r.status, 201);
        let victim = format!("{SC}/a{:02}", 19 - i);
        let r = c.request(Method::DELETE, &victim, &[], Vec::new()).await;
        assert_eq!(r.status, 200);
        i += 1;
        let page = c.get(&format!("{SC}?limit=1&continue={t}")).await.json();
        assert_eq!(
            rv_of(&page),
            snapshot,
            "every chunk is at the list's version"
        );
        seen.extend(names(&page));
        token = page["metadata"]["continue"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_string);
    }
    let expected: Vec<String> = (0..20).map(|i| format!("a{i:02}")).collect();
    assert_eq!(seen, expected);
    let exact = c
        .get(&format!(
            "{SC}?resourceVersion={snapshot}&resourceVersionMatch=Exact"
        ))
        .await
        .json();
    assert_eq!(names(&exact), expected);
}

/// With compaction every second, a continue token's revision is compacted away: the next
/// chunk is 410 Expired with a fresh token that continues (inconsistently) from the same
/// place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_token_expires_with_compaction() {
    let server =
        TestServer::start_with(|c| c.compaction_interval = std::time::Duration::from_secs(1)).await;
    let c = admin(&server);
    for name in ["c1", "c2", "c3"] {
        let r = c
            .send_json(
                Method::POST,
                SC,
                &json!({"metadata": {"name": name}, "provisioner": "p"}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let first = c.get(&format!("{SC}?limit=1")).await.json();
    let listed_at = rv_of(&first);
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    let r = c
        .request(Method::DELETE, &format!("{SC}/c2"), &[], Vec::new())
        .await;
    assert_eq!(r.status, 200);
    // Wait until the compactor has passed the list's revision (each pass compacts to what the
    // previous pass saw); the exact read at that revision turns 410 then.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let r = c
            .get(&format!(
                "{SC}?resourceVersion={listed_at}&resourceVersionMatch=Exact"
            ))
            .await;
        if r.status == 410 {
            break;
        }
        assert_eq!(r.status, 200);
        assert!(
            std::time::Instant::now() < deadline,
            "never compacted past {listed_at}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let expired = c.get(&format!("{SC}?limit=1&continue={token}")).await;
    assert_eq!(expired.status, 410);
    let status = expired.json();
    assert_eq!(status["reason"], "Expired");
    let fresh = status["metadata"]["continue"]
        .as_str()
        .expect("a fresh token");
    let rest = c
        .get(&format!("{SC}?limit=10&continue={fresh}"))
        .await
        .json();
    assert_eq!(names(&rest), ["c3"], "c2 is gone, c1 was on the first page");
    assert!(rv_of(&rest) > listed_at);
}
