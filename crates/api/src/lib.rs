//! The built-in kinds Capstan serves, each as a [`Strategy`](capstan_meta::Strategy):
//! upstream defaulting, validation and update rules over the `k8s-openapi` types. The server
//! registers these strategies; nothing in the server knows a kind by name.

pub mod storage;

pub use storage::StorageClassStrategy;
