//! The cost of one request-log line (the `-v=2` line of every request) in each format and
//! destination, and of an event filtered out.

use clap::Parser;
use criterion::{Criterion, criterion_group, criterion_main};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    log: capstan_logging::LogOptions,
}

fn request_line() {
    tracing::info!(
        target: "capstan::httplog",
        verb = "GET",
        uri = "/apis/storage.k8s.io/v1/storageclasses/fast-ssd",
        status = 200u16,
        latency_ms = 0.231,
        user_agent = "kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef",
        source = "10.0.0.7",
        "HTTP"
    );
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--log-file={}", dir.path().join("bench.log").display());
    let cases: [(&str, Vec<&str>); 4] = [
        ("text to a file", vec!["--logtostderr=false", &file]),
        (
            "json to a file",
            vec!["--logtostderr=false", &file, "--logging-format=json"],
        ),
        (
            "sanitized json to a file",
            vec![
                "--logtostderr=false",
                &file,
                "--logging-format=json",
                "--experimental-logging-sanitization",
            ],
        ),
        (
            "filtered out (-v=0, debug event)",
            vec!["--logtostderr=false", &file],
        ),
    ];
    for (name, args) in cases {
        let cli = Cli::parse_from(std::iter::once("bench").chain(args));
        let (subscriber, _guard) = capstan_logging::subscriber("bench", &cli.log).unwrap();
        let filtered = name.starts_with("filtered");
        tracing::subscriber::with_default(subscriber, || {
            c.bench_function(&format!("log line: {name}"), |b| {
                b.iter(|| {
                    if filtered {
                        tracing::debug!(target: "capstan::httplog", verb = "GET", "HTTP");
                    } else {
                        request_line();
                    }
                })
            });
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
