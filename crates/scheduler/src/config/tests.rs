use super::*;
use crate::plugins::build_profile;

const HEADER: &str =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

fn load(body: &str) -> Result<(Configuration, Vec<String>)> {
    Configuration::load(&format!("{HEADER}{body}"))
}

fn error(body: &str) -> String {
    load(body).unwrap_err().to_string()
}

#[test]
fn an_empty_configuration_is_upstreams_default() {
    let (config, warnings) = load("").unwrap();
    assert!(warnings.is_empty());
    assert_eq!(config.parallelism, 16);
    assert_eq!(config.pod_max_backoff_seconds, 10);
    assert_eq!(
        config.leader_election.lease_duration.0,
        Duration::from_secs(15)
    );
    assert_eq!(config.profiles.len(), 1);
    let profile = &config.profiles[0];
    assert_eq!(profile.scheduler_name, "default-scheduler");
    let with_args: Vec<&str> = profile
        .plugin_config
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(with_args, args::WITH_ARGS);
    let fit = &profile.plugin_config[5].args;
    assert_eq!(fit["kind"], "NodeResourcesFitArgs");
    assert_eq!(fit["scoringStrategy"]["type"], "LeastAllocated");
    assert_eq!(profile.plugin_config[2].args["hardPodAffinityWeight"], 1);
    let dra = &profile.plugin_config[1].args;
    assert_eq!(dra["kind"], "DynamicResourcesArgs");
    assert_eq!(
        (&dra["filterTimeout"], &dra["bindingTimeout"]),
        (&"10s".into(), &"10m0s".into())
    );
    let (built, warnings) = build_profile(&config, profile).unwrap();
    assert_eq!(
        built.filter_names(),
        [
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity",
            "DynamicResources"
        ]
    );
    assert_eq!(
        built.score_names(),
        [
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("NodeResourcesBalancedAllocation", 1),
            ("ImageLocality", 1)
        ]
    );
    // The default plugins not built yet are named, not silently dropped.
    // Every default plugin is built.
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(built.scheduling_gates);
    assert!(built.preemption.is_some());
}

#[test]
fn the_written_configuration_reads_back_the_same() {
    let (config, _) = load(
        "percentageOfNodesToScore: 30\nprofiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    score:\n      disabled:\n      - name: ImageLocality\n",
    )
    .unwrap();
    let text = config.to_yaml();
    assert!(text.contains("kind: KubeSchedulerConfiguration"), "{text}");
    let (again, _) = Configuration::load(&text).unwrap();
    assert_eq!(again, config);
}

#[test]
fn profiles_enable_disable_and_configure_plugins() {
    let (config, _) = load(
        r#"profiles:
- schedulerName: packer
  percentageOfNodesToScore: 50
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 5
      disabled:
      - name: NodeResourcesBalancedAllocation
      - name: ImageLocality
    filter:
      disabled:
      - name: NodePorts
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 2
"#,
    )
    .unwrap();
    let profile = &config.profiles[0];
    let (built, _) = build_profile(&config, profile).unwrap();
    assert_eq!(built.percentage_of_nodes_to_score, 50);
    assert!(!built.filter_names().contains(&"NodePorts"));
    assert_eq!(
        built.score_names(),
        [
            ("NodeResourcesFit", 5),
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2)
        ]
    );
    let fit = args::node_resources_fit(&profile.plugin_config);
    assert_eq!(fit.strategy, crate::plugins::ScoringStrategy::MostAllocated);
    assert_eq!(fit.resources.len(), 1);
    assert_eq!(fit.resources[0].weight, 2);
    // Disabling everything at multiPoint leaves only what is enabled explicitly.
    let (config, _) = load(
        "profiles:\n- schedulerName: bare\n  plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n    filter:\n      enabled:\n      - name: NodeName\n    bind:\n      enabled:\n      - name: DefaultBinder\n",
    )
    .unwrap();
    let (built, _) = build_profile(&config, &config.profiles[0]).unwrap();
    assert_eq!(built.filter_names(), ["NodeName"]);
    assert!(built.score_names().is_empty());
}

#[test]
fn bad_configurations_name_the_field() {
    assert!(
        error("foo: 1\n").contains("unknown field `foo`"),
        "{}",
        error("foo: 1\n")
    );
    assert_eq!(
        error("parallelism: 0\n"),
        "parallelism: Invalid value: 0: should be an integer value greater than zero"
    );
    assert_eq!(
        error(
            "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 200\n"
        ),
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 200: not in valid range [0-100]"
    );
    assert_eq!(
        error(
            "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: DynamicResources\n    args:\n      bindingTimeout: 500ms\n"
        ),
        "profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: \"500ms\": must be at least 1 second"
    );
    assert_eq!(
        error(
            "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled:\n      - name: Nope\n"
        ),
        "profiles[0].plugins.score.enabled[0]: plugin \"Nope\" does not exist"
    );
    assert_eq!(
        error(
            "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled:\n      - name: NodePorts\n"
        ),
        "profiles[0].plugins.score.enabled[0]: plugin \"NodePorts\" does not extend the score point"
    );
    assert_eq!(
        error("profiles:\n- schedulerName: a\n- schedulerName: a\n"),
        "profiles[1].schedulerName: Duplicate value: \"a\""
    );
    assert!(
        error("profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Fancy\n")
            .starts_with("profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"Fancy\"")
    );
    assert!(
        error("profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n")
            .contains("must be empty")
    );
    assert!(
        Configuration::load(
            "apiVersion: kubescheduler.config.k8s.io/v9\nkind: KubeSchedulerConfiguration\n"
        )
        .unwrap_err()
        .to_string()
        .contains("v9")
    );
    assert!(Configuration::load("kind: Pod\n").is_err());
    assert!(Configuration::load("[1, 2").is_err());
}

#[test]
fn v1beta1_is_converted_with_that_eras_plugins_and_weights() {
    let (config, warnings) = Configuration::load(
        r#"apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
healthzBindAddress: 0.0.0.0:10251
profiles:
- schedulerName: packer
  plugins:
    score:
      disabled:
      - name: NodeResourcesLeastAllocated
      - name: SelectorSpread
      enabled:
      - name: NodeResourcesMostAllocated
        weight: 4
  pluginConfig:
  - name: NodeResourcesMostAllocated
    args:
      resources:
      - name: cpu
        weight: 3
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 7
"#,
    )
    .unwrap();
    assert_eq!(config.api_version, V1);
    assert_eq!(config.insecure_address.as_deref(), Some("0.0.0.0:10251"));
    assert!(
        warnings.iter().any(|w| w.contains("SelectorSpread")),
        "{warnings:?}"
    );
    let profile = &config.profiles[0];
    let (built, _) = build_profile(&config, profile).unwrap();
    let scores = built.score_names();
    assert!(scores.contains(&("NodeResourcesFit", 4)), "{scores:?}");
    assert!(scores.contains(&("TaintToleration", 1)), "{scores:?}");
    assert!(scores.contains(&("PodTopologySpread", 2)), "{scores:?}");
    let fit = args::node_resources_fit(&profile.plugin_config);
    assert_eq!(fit.strategy, crate::plugins::ScoringStrategy::MostAllocated);
    assert_eq!(fit.resources[0].weight, 3);
    assert_eq!(
        args::inter_pod_affinity(&profile.plugin_config).hard_pod_affinity_weight,
        7
    );
}
