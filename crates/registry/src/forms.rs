//! The forms one store's objects are served in ([`capstan_admission::Forms`]): the store's
//! own, and each [`ConvertedRest`](crate::converted::ConvertedRest) served over it, with its
//! converters. Admission runs on the stored form; webhooks and policies that name another
//! version see the object converted here.

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use capstan_admission::Form;
use capstan_meta::{ApiError, ResourceDescriptor};
use serde_json::Value;

use crate::converted::Converter;

/// A served form other than the stored one, and the conversions to and from it.
struct Other {
    form: Form,
    to_stored: Arc<dyn Converter>,
    to_served: Arc<dyn Converter>,
}

/// The forms of one store.
pub struct StoreForms {
    stored: Form,
    status: bool,
    others: RwLock<Vec<Other>>,
    /// The groups and resources of the other forms that are not the stored form's (core
    /// `events` are also `events.k8s.io` `events`), asked on every write.
    aliases: RwLock<Vec<capstan_meta::GroupResource>>,
}

impl std::fmt::Debug for StoreForms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let others = self.read();
        f.debug_struct("StoreForms")
            .field("stored", &self.stored)
            .field(
                "others",
                &others.iter().map(|o| &o.form).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The form a descriptor serves.
pub fn form_of(d: &ResourceDescriptor) -> Form {
    Form {
        group: d.group.clone(),
        version: d.version.clone(),
        resource: d.resource.clone(),
        subresource: d.subresource.clone(),
        kind: d.kind.clone(),
    }
}

impl StoreForms {
    /// The forms of a store serving `d` (with a `status` subresource when `status`).
    pub fn new(d: &ResourceDescriptor, status: bool) -> Self {
        Self {
            stored: form_of(d),
            status,
            others: RwLock::default(),
            aliases: RwLock::default(),
        }
    }

    /// The form objects are stored in.
    pub fn stored(&self) -> &Form {
        &self.stored
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Other>> {
        self.others.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds (or replaces) a served form, converted with `to_stored` and `to_served`.
    pub fn add(&self, form: Form, to_stored: Arc<dyn Converter>, to_served: Arc<dyn Converter>) {
        if self.is_stored(&form) {
            return;
        }
        if form.group != self.stored.group || form.resource != self.stored.resource {
            let alias = capstan_meta::GroupResource::new(form.group.clone(), form.resource.clone());
            let mut aliases = self.aliases.write().unwrap_or_else(|e| e.into_inner());
            if !aliases.contains(&alias) {
                aliases.push(alias);
            }
        }
        let mut others = self.others.write().unwrap_or_else(|e| e.into_inner());
        others.retain(|o| o.form != form);
        others.push(Other {
            form,
            to_stored,
            to_served,
        });
    }

    /// The groups and resources other forms are served as, besides the stored one's.
    pub fn aliases(&self) -> Vec<capstan_meta::GroupResource> {
        self.aliases
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether any form is served under another group or resource name.
    pub fn has_aliases(&self) -> bool {
        !self
            .aliases
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Whether `form` is in the stored group and version.
    fn is_stored(&self, form: &Form) -> bool {
        form.group == self.stored.group
            && form.version == self.stored.version
            && form.resource == self.stored.resource
    }

    /// One object through the converter of `form`'s group and version (`to_served` or
    /// `to_stored`, as `pick` chooses).
    async fn convert(
        &self,
        object: Value,
        form: &Form,
        pick: impl Fn(&Other) -> &Arc<dyn Converter>,
    ) -> Result<Value, ApiError> {
        if self.is_stored(form) {
            return Ok(object);
        }
        let converter = self
            .read()
            .iter()
            .find(|o| {
                o.form.group == form.group
                    && o.form.version == form.version
                    && o.form.resource == form.resource
            })
            .map(|o| pick(o).clone())
            .ok_or_else(|| {
                ApiError::internal(format!(
                    "no conversion to {}/{} {}",
                    form.group, form.version, form.resource
                ))
            })?;
        converter
            .convert(vec![object])
            .await
            .map_err(ApiError::from)?
            .pop()
            .ok_or_else(|| ApiError::internal("the conversion returned no object"))
    }
}

#[async_trait]
impl capstan_admission::Forms for StoreForms {
    fn served(&self, subresource: &str) -> Vec<Form> {
        let mut out = Vec::new();
        if subresource.is_empty() || (subresource == "status" && self.status) {
            out.push(Form {
                subresource: subresource.to_string(),
                ..self.stored.clone()
            });
        }
        out.extend(
            self.read()
                .iter()
                .filter(|o| o.form.subresource == subresource)
                .map(|o| o.form.clone()),
        );
        out
    }

    async fn to_form(&self, object: Value, form: &Form) -> Result<Value, ApiError> {
        self.convert(object, form, |o| &o.to_served).await
    }

    async fn back_from_form(&self, object: Value, form: &Form) -> Result<Value, ApiError> {
        self.convert(object, form, |o| &o.to_stored).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converted::PerObject;
    use capstan_admission::Forms;
    use serde_json::json;

    fn descriptor(version: &str, subresource: &str) -> ResourceDescriptor {
        ResourceDescriptor {
            group: "example.com".into(),
            version: version.into(),
            resource: "widgets".into(),
            subresource: subresource.into(),
            kind: "Widget".into(),
            namespaced: true,
            ..Default::default()
        }
    }

    fn retag(version: &'static str) -> Arc<dyn Converter> {
        Arc::new(PerObject(move |mut o: Value| {
            o["apiVersion"] = json!(format!("example.com/{version}"));
            o
        }))
    }

    #[tokio::test]
    async fn forms_list_the_stored_one_first_and_convert_both_ways() {
        let forms = StoreForms::new(&descriptor("v2", ""), true);
        for sub in ["", "status"] {
            forms.add(form_of(&descriptor("v1", sub)), retag("v2"), retag("v1"));
        }
        // Added twice: kept once.
        forms.add(form_of(&descriptor("v1", "")), retag("v2"), retag("v1"));
        let versions = |sub: &str| -> Vec<String> {
            forms.served(sub).into_iter().map(|f| f.version).collect()
        };
        assert_eq!(versions(""), ["v2", "v1"]);
        assert_eq!(versions("status"), ["v2", "v1"]);
        assert_eq!(versions("scale"), Vec::<String>::new());
        let v1 = &forms.served("")[1];
        let object = json!({"apiVersion": "example.com/v2"});
        let out = forms.to_form(object.clone(), v1).await.unwrap();
        assert_eq!(out["apiVersion"], "example.com/v1");
        let back = forms.back_from_form(out, v1).await.unwrap();
        assert_eq!(back, object);
        // The stored form is not converted; an unknown one is an error.
        let stored = &forms.served("")[0];
        assert_eq!(forms.to_form(object.clone(), stored).await.unwrap(), object);
        let unknown = Form {
            version: "v9".into(),
            ..stored.clone()
        };
        assert!(forms.to_form(object, &unknown).await.is_err());
    }
}
