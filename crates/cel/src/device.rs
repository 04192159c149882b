//! The `device` variable of Dynamic Resource Allocation's selectors: a device of a
//! ResourceSlice as a DeviceClass's or a claim's CEL selector reads it (`device.driver`,
//! `device.attributes["<domain>"].<name>`, `device.capacity["<domain>"].<name>` as a
//! quantity, `device.allowMultipleAllocations`). Attributes and capacities are grouped by the
//! domain of their qualified name; an unqualified name belongs to the driver's domain. An
//! unknown domain reads as an empty map, as upstream's selectors see it.

use std::collections::{BTreeMap, HashMap};

use cel::ExecutionError;
use cel::common::traits::{Container, Indexer};
use cel::common::types::{CelBool, CelInt, CelMap, CelMapKey, CelString, Type};
use cel::common::value::{CowVal, Val};

use crate::kubernetes::{quantity_val, semver_val};

/// A value of a device attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceAttribute {
    /// `int`.
    Int(i64),
    /// `bool`.
    Bool(bool),
    /// `string`.
    String(String),
    /// `version`: a semantic version (a `semver` in CEL).
    Version(String),
}

/// A device as its selectors see it.
#[derive(Debug, Clone, Default)]
pub struct Device<'a> {
    /// The driver's name (also the domain of unqualified attribute names).
    pub driver: &'a str,
    /// Attributes by (possibly qualified) name.
    pub attributes: Vec<(&'a str, DeviceAttribute)>,
    /// Capacities by (possibly qualified) name, as quantity strings.
    pub capacity: Vec<(&'a str, &'a str)>,
    /// Whether several claims may share the device.
    pub allow_multiple_allocations: bool,
}

/// (domain, name) of an attribute or capacity name.
fn split<'a>(driver: &'a str, name: &'a str) -> (&'a str, &'a str) {
    name.rsplit_once('/').unwrap_or((driver, name))
}

impl Device<'_> {
    /// The CEL value of the device.
    pub(crate) fn to_val(&self) -> Result<Box<dyn Val>, crate::Error> {
        let mut attributes: BTreeMap<&str, HashMap<CelMapKey<'static>, Box<dyn Val>>> =
            BTreeMap::new();
        for (name, value) in &self.attributes {
            let (domain, name) = split(self.driver, name);
            let value: Box<dyn Val> = match value {
                DeviceAttribute::Int(i) => Box::new(CelInt::from(*i)),
                DeviceAttribute::Bool(b) => Box::new(CelBool::from(*b)),
                DeviceAttribute::String(s) => Box::new(CelString::from(s.clone())),
                DeviceAttribute::Version(v) => semver_val(v).ok_or_else(|| {
                    crate::Error::Evaluate(format!("attribute {name}: invalid version {v:?}"))
                })?,
            };
            attributes
                .entry(domain)
                .or_default()
                .insert(CelMapKey::from(name.to_string()), value);
        }
        let mut capacity: BTreeMap<&str, HashMap<CelMapKey<'static>, Box<dyn Val>>> =
            BTreeMap::new();
        for (name, value) in &self.capacity {
            let (domain, name) = split(self.driver, name);
            let value = quantity_val(value).ok_or_else(|| {
                crate::Error::Evaluate(format!("capacity {name}: invalid quantity {value:?}"))
            })?;
            capacity
                .entry(domain)
                .or_default()
                .insert(CelMapKey::from(name.to_string()), value);
        }
        let mut fields: HashMap<CelMapKey<'static>, Box<dyn Val>> = HashMap::new();
        fields.insert(
            CelMapKey::from("driver".to_string()),
            Box::new(CelString::from(self.driver.to_string())),
        );
        fields.insert(
            CelMapKey::from("attributes".to_string()),
            Box::new(DomainMap::new(attributes)),
        );
        fields.insert(
            CelMapKey::from("capacity".to_string()),
            Box::new(DomainMap::new(capacity)),
        );
        fields.insert(
            CelMapKey::from("allowMultipleAllocations".to_string()),
            Box::new(CelBool::from(self.allow_multiple_allocations)),
        );
        Ok(Box::new(CelMap::from(fields)))
    }
}

/// Maps of a device's attributes or capacities by domain: a domain the device has nothing
/// in reads as an empty map.
#[derive(Debug, Clone, Default)]
struct DomainMap {
    domains: CelMap<'static>,
    empty: CelMap<'static>,
}

impl DomainMap {
    fn new(domains: BTreeMap<&str, HashMap<CelMapKey<'static>, Box<dyn Val>>>) -> Self {
        let domains: HashMap<CelMapKey<'static>, Box<dyn Val>> = domains
            .into_iter()
            .map(|(d, m)| {
                (
                    CelMapKey::from(d.to_string()),
                    Box::new(CelMap::from(m)) as Box<dyn Val>,
                )
            })
            .collect();
        Self {
            domains: CelMap::from(domains),
            empty: CelMap::default(),
        }
    }
}

impl Val for DomainMap {
    fn get_type(&self) -> &Type {
        self.domains.get_type()
    }

    fn cel_type() -> &'static Type {
        <CelMap<'static> as Val>::cel_type()
    }

    fn as_container(&self) -> Option<&dyn Container> {
        Some(&self.domains)
    }

    fn as_indexer<'b, 'w>(&'b self) -> Option<&'b (dyn Indexer + 'w)>
    where
        Self: 'w,
    {
        Some(self)
    }

    fn equals(&self, other: &dyn Val) -> bool {
        self.domains.equals(other)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
}

impl Indexer for DomainMap {
    fn get<'b, 'w>(&'b self, key: &dyn Val) -> Result<CowVal<'b, 'w>, ExecutionError>
    where
        Self: 'w,
    {
        match self.domains.get(key) {
            Err(ExecutionError::NoSuchKey(_)) => Ok(CowVal::Borrowed(&self.empty)),
            other => other,
        }
    }

    fn steal<'w>(self: Box<Self>, key: &dyn Val) -> Result<Box<dyn Val + 'w>, ExecutionError>
    where
        Self: 'w,
    {
        self.get(key).map(CowVal::into_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Activation, Program};

    fn gpu() -> Device<'static> {
        Device {
            driver: "gpu.example.com",
            attributes: vec![
                ("model", DeviceAttribute::String("a100".into())),
                ("index", DeviceAttribute::Int(3)),
                (
                    "ext.example.com/family",
                    DeviceAttribute::String("x".into()),
                ),
                ("driverVersion", DeviceAttribute::Version("1.2.3".into())),
                ("healthy", DeviceAttribute::Bool(true)),
            ],
            capacity: vec![("memory", "40Gi")],
            allow_multiple_allocations: false,
        }
    }

    fn eval(expression: &str) -> Result<bool, crate::Error> {
        let mut activation = Activation::new();
        activation.bind_device(&gpu())?;
        Program::compile(expression)?.run_bool(&activation)
    }

    #[test]
    fn selectors_read_attributes_by_domain() {
        for (expression, want) in [
            ("device.driver == 'gpu.example.com'", true),
            ("device.attributes['gpu.example.com'].model == 'a100'", true),
            ("device.attributes['gpu.example.com'].index > 2", true),
            ("device.attributes['ext.example.com'].family == 'x'", true),
            ("device.attributes['gpu.example.com'].healthy", true),
            (
                "device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('1.0.0'))",
                true,
            ),
            (
                "device.capacity['gpu.example.com'].memory.compareTo(quantity('32Gi')) >= 0",
                true,
            ),
            (
                "device.capacity['gpu.example.com'].memory.isLessThan(quantity('16Gi'))",
                false,
            ),
            ("'model' in device.attributes['other.example.com']", false),
            ("size(device.attributes['other.example.com']) == 0", true),
            ("device.allowMultipleAllocations", false),
        ] {
            assert_eq!(eval(expression), Ok(want), "{expression}");
        }
    }

    #[test]
    fn an_unknown_attribute_is_an_error() {
        let err = eval("device.attributes['gpu.example.com'].color == 'red'").unwrap_err();
        assert!(matches!(err, crate::Error::Evaluate(_)), "{err:?}");
    }
}
