use async_trait::async_trait;
use capstan_meta::ResourceDescriptor;

use crate::error::Result;
use crate::options::{DeleteOptions, GetOptions, ListOptions, WriteOptions};
use crate::patch::PatchType;
use crate::payload::Payload;
use crate::watching::EventStream;

/// Options of a watch.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Selectors and the resourceVersion to start from.
    pub list: ListOptions,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// When the watch ends.
    pub timeout: std::time::Duration,
    /// Kept until the watch's initial events have been handed on, then dropped: the seat a
    /// watch holds while it initializes (upstream's watch initialization in API Priority and
    /// Fairness).
    pub initialization: Option<InitializationGuard>,
    /// The client connection the watch came on (0: none known). A change is sent to the
    /// watches of one connection one after another, so the connection writes their frames
    /// together.
    pub connection: u64,
}

/// Whatever a watch holds while it sends its initial events ([`WatchOptions::initialization`]).
pub type InitializationGuard = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// A response body (JSON) with the warnings to send along (`Warning` headers).
#[derive(Debug, Clone, Default)]
pub struct Encoded {
    /// The JSON body.
    pub body: Payload,
    /// Warnings for the client, e.g. unknown fields dropped from a body.
    pub warnings: Vec<String>,
    /// Whether the request created the object (201) or, for deletes, only started the
    /// deletion (202).
    pub status: ResponseStatus,
}

impl Encoded {
    /// The 201 `Success` Status of an action that creates no object of its own (a pod's
    /// `binding`, an `eviction`).
    pub fn created_success() -> crate::Result<Self> {
        let status = capstan_meta::v1::Status {
            status: Some("Success".into()),
            code: Some(201),
            ..Default::default()
        };
        Ok(Self {
            body: serde_json::to_vec(&status)
                .map_err(crate::Error::Encode)?
                .into(),
            warnings: Vec::new(),
            status: ResponseStatus::Created,
        })
    }
}

/// Which success code a response carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResponseStatus {
    /// 200.
    #[default]
    Ok,
    /// 201.
    Created,
    /// 202.
    Accepted,
}

/// A function describing a resource's objects for OpenAPI: it adds their definitions to the
/// generator and answers a reference to the kind's.
pub type SchemaFn =
    std::sync::Arc<dyn Fn(&mut schemars::SchemaGenerator) -> schemars::Schema + Send + Sync>;

/// The operations of one served resource (or subresource), independent of HTTP.
/// `namespace` is empty for cluster-scoped resources and for lists across all namespaces. A
/// verb the type does not implement answers 405, as do verbs its descriptor does not list.
#[async_trait]
pub trait RestStorage: Send + Sync + 'static {
    /// Names, scope and verbs.
    fn descriptor(&self) -> &ResourceDescriptor;

    /// The JSON schema of the object type (upstream definition names), for OpenAPI.
    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;

    /// How many objects the collection holds, when known without reading storage (from a
    /// watch cache), across namespaces.
    fn cached_count(&self) -> Option<u64> {
        None
    }

    /// A revision that changes whenever an object of the collection does, when a watch cache
    /// knows it (see [`capstan_watch::WatchCache::changed_at`]): what is derived from a list
    /// can be kept while it stays.
    fn changed_at(&self) -> Option<u64> {
        None
    }

    /// The forms of the store this resource's objects are kept in, when it has them.
    fn forms(&self) -> Option<std::sync::Arc<crate::forms::StoreForms>> {
        None
    }

    /// Called once the resource is served: a version converted over another's store adds
    /// its form to that store's (admission converts to it for webhooks and policies).
    fn on_served(&self) {}

    /// Reads one object.
    async fn get(&self, _namespace: &str, _name: &str, _options: &GetOptions) -> Result<Encoded> {
        Err(not_allowed())
    }

    /// Reads a collection (one chunk of it when `limit` is set).
    async fn list(&self, _namespace: &str, _options: &ListOptions) -> Result<Encoded> {
        Err(not_allowed())
    }

    /// Watches a collection: a stream of event lines that ends at the timeout (or earlier,
    /// when the watcher falls behind). Starting points older than the kept history produce a
    /// single ERROR event (410 Expired), as upstream.
    async fn watch(&self, _namespace: &str, _options: &WatchOptions) -> Result<EventStream> {
        Err(not_allowed())
    }

    /// Creates an object from a JSON body.
    async fn create(
        &self,
        _namespace: &str,
        _body: &[u8],
        _options: &WriteOptions,
    ) -> Result<Encoded> {
        Err(not_allowed())
    }

    /// Creates through a subresource of the object `name` (`POST pods/{name}/binding`).
    async fn create_for(
        &self,
        _namespace: &str,
        _name: &str,
        _body: &[u8],
        _options: &WriteOptions,
    ) -> Result<Encoded> {
        Err(not_allowed())
    }

    /// Replaces an object with a JSON body.
    async fn update(
        &self,
        _namespace: &str,
        _name: &str,
        _body: &[u8],
        _options: &WriteOptions,
    ) -> Result<Encoded> {
        Err(not_allowed())
    }

    /// Patches an object.
    async fn patch(
        &self,
        _namespace: &str,
        _name: &str,
        _patch_type: PatchType,
        _body: &[u8],
        _options: &WriteOptions,
    ) -> Result<Encoded> {
        Err(not_allowed())
    }

    /// Deletes an object (or starts its deletion when finalizers remain).
    async fn delete(
        &self,
        _namespace: &str,
        _name: &str,
        _options: &DeleteOptions,
    ) -> Result<Encoded> {
        Err(not_allowed())
    }

    /// Deletes every object the list options select; answers a `Status`.
    async fn delete_collection(
        &self,
        _namespace: &str,
        _list: &ListOptions,
        _options: &DeleteOptions,
    ) -> Result<Encoded> {
        Err(not_allowed())
    }
}

fn not_allowed() -> crate::Error {
    capstan_meta::ApiError::method_not_allowed().into()
}
