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

    // resourceVersionMatch unset, limit unset.
    let most_recent = list(String::new()).await.json();
    assert_eq!((rv_of(&most_recent), items(&most_recent)), (current, 3));
    assert_eq!(list("resourceVersion=0".into()).await.status, 200);
    let not_older = list(format!("resourceVersion={rv2}")).await.json();
    assert!(rv_of(&not_older) >= rv2);
    // limit set, continue unset.
    let page = list("limit=2".into()).await.json();
    assert_eq!((rv_of(&page), items(&page)), (current, 2));
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    assert_eq!(list("resourceVersion=0&limit=2".into()).await.status, 200);
    let exact = list(format!("resourceVersion={rv2}&limit=2")).await.json();
    assert_eq!(
        (rv_of(&exact), items(&exact)),
        (rv2, 2),
        "exact: the state at rv2 had two objects"
    );
    // limit and continue: the token's version; rv=0 tolerated; another version is 400.
    let next = list(format!("limit=2&continue={token}")).await.json();
    assert_eq!((rv_of(&next), items(&next)), (current, 1));
    assert_eq!(
        list(format!("resourceVersion=0&limit=2&continue={token}"))
            .await
            .status,
        200
    );
    assert_eq!(
        list(format!("resourceVersion={rv2}&limit=2&continue={token}"))
            .await
            .status,
        400
    );
    // resourceVersionMatch=Exact.
    assert_eq!(list("resourceVersionMatch=Exact".into()).await.status, 422);
    assert_eq!(
        list("resourceVersionMatch=Exact&resourceVersion=0".into())
            .await
            .status,
        422
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
    assert_eq!(
        list("resourceVersionMatch=NotOlderThan".into())
            .await
            .status,
        422
    );
    assert_eq!(
        list("resourceVersionMatch=NotOlderThan&resourceVersion=0".into())
            .await
            .status,
        200
    );
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
    assert_eq!(
        c.get(&format!("{SC}/t1?resourceVersion=0")).await.status,
        200
    );
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
    assert!(
        future.json()["message"]
            .as_str()
            .unwrap()
            .starts_with("Too large resource version")
    );
}
