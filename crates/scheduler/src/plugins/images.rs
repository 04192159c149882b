//! ImageLocality: prefers nodes that already have the pod's images, weighing each image by its
//! size and by how many nodes have it (an image every node has says little about any).

use crate::cache::{Cache, NodeInfo, normalized_image};
use crate::framework::{MAX_NODE_SCORE, PodInfo, Score, StateValue};

const MB: i64 = 1024 * 1024;
/// Below this, images count as absent (upstream's threshold).
const MIN_THRESHOLD: i64 = 23 * MB;
/// Per container, sizes above this count no more (upstream's threshold).
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// The ImageLocality plugin.
pub struct ImageLocality;

/// The pod's images (normalized) with the number of nodes that have each, and the number of
/// nodes: computed once per attempt.
struct ImageSpread {
    images: Vec<(String, usize)>,
    total_nodes: usize,
}

impl Score for ImageLocality {
    fn name(&self) -> &'static str {
        "ImageLocality"
    }

    fn pre_score(&self, pod: &PodInfo, cache: &Cache, _: &[&NodeInfo]) -> Option<StateValue> {
        let spec = pod.pod.spec.as_ref();
        let images = spec
            .into_iter()
            .flat_map(|s| s.init_containers.iter().flatten().chain(&s.containers))
            .filter_map(|c| c.image.as_deref())
            .map(|image| {
                let name = normalized_image(image);
                let n = cache.nodes_with_image(&name);
                (name, n)
            })
            .collect();
        Some(Box::new(ImageSpread {
            images,
            total_nodes: cache.node_count(),
        }))
    }

    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let Some(spread) = pod.state.get::<ImageSpread>() else {
            return 0;
        };
        if spread.images.is_empty() || spread.total_nodes == 0 {
            return 0;
        }
        let sum: i64 = spread
            .images
            .iter()
            .filter_map(|(image, with)| {
                let size = node.images.get(image)?;
                Some(size * *with as i64 / spread.total_nodes as i64)
            })
            .sum();
        let max = MAX_CONTAINER_THRESHOLD * spread.images.len() as i64;
        let clamped = sum.clamp(MIN_THRESHOLD, max);
        MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) / (max - MIN_THRESHOLD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Node, Pod};

    #[test]
    fn big_images_on_many_nodes_score_high() {
        let mut cache = Cache::default();
        for (name, images) in [("n1", true), ("n2", true), ("n3", false)] {
            let status = if images {
                serde_json::json!({"images": [{"names": ["registry.example.com/app:1"], "sizeBytes": 600 * MB}]})
            } else {
                serde_json::json!({})
            };
            let node: Node = serde_json::from_value(
                serde_json::json!({"metadata": {"name": name}, "status": status}),
            )
            .unwrap();
            cache.set_node(node);
        }
        let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "registry.example.com/app:1"}]}}))
        .unwrap();
        let mut info = PodInfo::new(pod);
        let nodes: Vec<_> = cache.nodes().collect();
        info.state
            .insert(ImageLocality.pre_score(&info, &cache, &nodes).unwrap());
        let spread = info.state.get::<ImageSpread>().unwrap();
        assert_eq!(
            spread.images,
            [("registry.example.com/app:1".to_string(), 2)]
        );
        let scores: Vec<i64> = cache
            .nodes()
            .map(|n| ImageLocality.score(&info, n))
            .collect();
        // 600 MB × 2/3 = 400 MB: (400 − 23) / (1000 − 23) of the maximum.
        assert_eq!(scores, [38, 38, 0]);
        cache.remove_node("n2");
        assert_eq!(cache.nodes_with_image("registry.example.com/app:1"), 1);
        assert_eq!(crate::cache::normalized_image("nginx"), "nginx:latest");
        assert_eq!(
            crate::cache::normalized_image("host:5000/nginx"),
            "host:5000/nginx:latest"
        );
    }
}
