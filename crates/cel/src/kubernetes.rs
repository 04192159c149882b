//! The libraries Kubernetes adds to CEL, as its expressions (CRD validation rules, admission
//! policies) may call them: lists (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`), regular expressions (`find`, `findAll`), URLs (`url`, `isURL`, `getHost`,
//! ...), IP addresses and CIDRs (`ip`, `cidr`, `containsIP`, ...), quantities
//! (`quantity`, `isQuantity`, `compareTo`, ...) and semantic versions (`semver`,
//! `isSemver`, `major`, `compareTo`, ...), with upstream's names and error messages.
//! The cel crate's strings extension (`lowerAscii`, `split`, `join`, ...) is registered too,
//! as upstream enables cel-go's.

use std::any::Any;
use std::cmp::Ordering;
use std::net::IpAddr;

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelString, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE,
    Type,
};
use cel::common::value::{CowVal, StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value};

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// The standard library, the strings extension and the Kubernetes libraries.
pub fn environment() -> Result<Env, DeclarationError> {
    let mut env = Env::stdlib();
    cel::extensions::strings(&mut env)?;
    lists(&mut env)?;
    regex(&mut env)?;
    urls(&mut env)?;
    ips(&mut env)?;
    quantities(&mut env)?;
    semvers(&mut env)?;
    env.add_overload(
        "jsonpatch.escapeKey",
        "jsonpatch_escape_key_string",
        vec![STRING_TYPE],
        escape_key,
    )?;
    Ok(env)
}

fn fail(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

fn args<'b, 'v, const N: usize>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<[CowVal<'b, 'v>; N], ExecutionError> {
    args.try_into()
        .map_err(|a: Vec<_>| ExecutionError::invalid_argument_count(N, a.len()))
}

fn text<'a>(function: &str, v: &'a CowVal<'_, '_>) -> Result<&'a str, ExecutionError> {
    v.downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(|| fail(function, "expected a string"))
}

fn owned<'b, 'v>(v: impl Val + 'static) -> Out<'b, 'v> {
    Ok(CowVal::Owned(Box::new(v)))
}

fn string<'b, 'v>(s: impl Into<String>) -> Out<'b, 'v> {
    owned(CelString::from(s.into()))
}

fn boolean<'b, 'v>(b: bool) -> Out<'b, 'v> {
    owned(CelBool::from(b))
}

fn int<'b, 'v>(i: i64) -> Out<'b, 'v> {
    owned(CelInt::from(i))
}

/// A list's elements.
fn elements<'a, 'v>(
    function: &str,
    list: &'a CowVal<'_, 'v>,
) -> Result<Vec<&'a (dyn Val + 'v)>, ExecutionError> {
    let mut items = list
        .as_iterable()
        .ok_or_else(|| fail(function, "expected a list"))?
        .iter();
    let mut out = Vec::new();
    while let Some(item) = items.next() {
        out.push(item);
    }
    Ok(out)
}

fn compare(function: &str, a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer()
        .ok_or_else(|| fail(function, "the elements are not comparable"))?
        .compare(b)
        .map_err(|e| fail(function, e))
}

// Lists.

fn lists(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

fn is_sorted<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [list] = args(a)?;
    let items = elements("isSorted", &list)?;
    for pair in items.windows(2) {
        if compare("isSorted", pair[0], pair[1])? == Ordering::Greater {
            return boolean(false);
        }
    }
    boolean(true)
}

fn sum<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [list] = args(a)?;
    let values = elements("sum", &list)?
        .into_iter()
        .map(Value::try_from)
        .collect::<Result<Vec<_>, _>>()?;
    // The elements' one numeric type decides the sum's (an empty list sums to int 0).
    let total = match values.first() {
        None | Some(Value::Int(_)) => Value::Int(add_all(
            &values,
            0,
            |v| {
                if let Value::Int(i) = v {
                    Some(*i)
                } else {
                    None
                }
            },
            i64::checked_add,
        )?),
        Some(Value::UInt(_)) => Value::UInt(add_all(
            &values,
            0,
            |v| {
                if let Value::UInt(u) = v {
                    Some(*u)
                } else {
                    None
                }
            },
            u64::checked_add,
        )?),
        Some(Value::Float(_)) => Value::Float(add_all(
            &values,
            0.0,
            |v| {
                if let Value::Float(f) = v {
                    Some(*f)
                } else {
                    None
                }
            },
            |a, b| Some(a + b),
        )?),
        Some(_) => return Err(fail("sum", "the elements are not numbers")),
    };
    Ok(CowVal::Owned(Box::<dyn Val>::try_from(total)?))
}

/// The sum of `values`, each read by `read` (which fails on another type).
fn add_all<T: Copy>(
    values: &[Value],
    zero: T,
    read: fn(&Value) -> Option<T>,
    add: fn(T, T) -> Option<T>,
) -> Result<T, ExecutionError> {
    values.iter().try_fold(zero, |total, v| {
        let v = read(v).ok_or_else(|| fail("sum", "the elements are not all of one type"))?;
        add(total, v).ok_or_else(|| fail("sum", "overflow"))
    })
}

fn extreme<'b, 'v>(function: &str, a: Vec<CowVal<'b, 'v>>, keep: Ordering) -> Out<'b, 'v> {
    let [list] = args(a)?;
    let items = elements(function, &list)?;
    let Some(mut best) = items.first().copied() else {
        return Err(fail(function, format!("{function} called on empty list")));
    };
    for item in items.into_iter().skip(1) {
        if compare(function, item, best)? == keep {
            best = item;
        }
    }
    Ok(CowVal::Owned(best.clone_as_boxed()))
}

fn min<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    extreme("min", a, Ordering::Less)
}

fn max<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    extreme("max", a, Ordering::Greater)
}

fn position<'b, 'v>(function: &str, a: Vec<CowVal<'b, 'v>>, last: bool) -> Out<'b, 'v> {
    let [list, wanted] = args(a)?;
    let items = elements(function, &list)?;
    let found = if last {
        items.iter().rposition(|i| i.equals(wanted.as_ref()))
    } else {
        items.iter().position(|i| i.equals(wanted.as_ref()))
    };
    int(found.map_or(-1, |i| i as i64))
}

fn index_of<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    position("indexOf", a, false)
}

fn last_index_of<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    position("lastIndexOf", a, true)
}

// Regular expressions.

fn regex(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "find",
        "string_find_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        find,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all_n,
    )?;
    Ok(())
}

fn compiled(function: &str, pattern: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern).map_err(|e| fail(function, e))
}

fn find<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s, pattern] = args(a)?;
    let re = compiled("find", text("find", &pattern)?)?;
    string(re.find(text("find", &s)?).map_or("", |m| m.as_str()))
}

fn all_matches<'b, 'v>(s: &str, pattern: &str, limit: Option<usize>) -> Out<'b, 'v> {
    let re = compiled("findAll", pattern)?;
    let found: Vec<Box<dyn Val>> = re
        .find_iter(s)
        .take(limit.unwrap_or(usize::MAX))
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val>)
        .collect();
    owned(CelList::from(found))
}

fn find_all<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s, pattern] = args(a)?;
    all_matches(text("findAll", &s)?, text("findAll", &pattern)?, None)
}

fn find_all_n<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s, pattern, n] = args(a)?;
    let n = *n
        .downcast_ref::<CelInt>()
        .ok_or_else(|| fail("findAll", "expected an int"))?
        .inner();
    // A negative limit means all matches, as upstream.
    let limit = usize::try_from(n).ok();
    all_matches(text("findAll", &s)?, text("findAll", &pattern)?, limit)
}

// Opaque types.

/// Implements `Val` for a Rust type standing for an opaque CEL type (`$cel`): equal by
/// `PartialEq`, compared to nothing else.
macro_rules! opaque_val {
    ($ty:ty, $cel:expr) => {
        impl Val for $ty {
            fn get_type(&self) -> &Type {
                &$cel
            }

            fn cel_type() -> &'static Type {
                &$cel
            }

            fn equals(&self, other: &dyn Val) -> bool {
                other.downcast_ref::<$ty>().is_some_and(|o| o == self)
            }

            fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
                Box::new(self.clone())
            }

            fn as_any(&self) -> Option<&dyn Any> {
                Some(self)
            }
        }

        impl StaticVal for $ty {}
    };
}

// URLs.

const URL_TYPE: Type = Type::new_unspecified_type("kubernetes.URL");
static URL_TYPE_REF: Type = URL_TYPE;

/// A URL as upstream's `url()` reads it: absolute (with a scheme) or an absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Url {
    scheme: String,
    /// Host and port, as written (brackets kept around an IPv6 address).
    host: String,
    path: String,
    query: String,
}

impl Url {
    fn parse(s: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!("URL parse error during conversion from string: parse {s:?}: {why}")
        };
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("invalid character in URL"));
        }
        let without_fragment = s.split_once('#').map_or(s, |(u, _)| u);
        let (rest, query) = without_fragment
            .split_once('?')
            .map_or((without_fragment, ""), |(u, q)| (u, q));
        let (scheme, rest) = match rest.split_once(':') {
            Some((scheme, rest))
                if scheme
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
            {
                (scheme.to_string(), rest)
            }
            _ if rest.starts_with('/') => (String::new(), rest),
            _ => return Err(bad("invalid URI for request")),
        };
        let (host, path) = match rest.strip_prefix("//") {
            Some(authority_and_path) => {
                let (authority, path) = authority_and_path
                    .find('/')
                    .map_or((authority_and_path, ""), |i| authority_and_path.split_at(i));
                let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                (host.to_string(), path.to_string())
            }
            None if !scheme.is_empty() && !rest.starts_with('/') => {
                return Err(bad("invalid URI for request"));
            }
            None => (String::new(), rest.to_string()),
        };
        if host.starts_with('[') && !host.contains(']') {
            return Err(bad("missing ']' in host"));
        }
        Ok(Self {
            scheme,
            host,
            path,
            query: query.to_string(),
        })
    }

    fn hostname(&self) -> &str {
        match self.host.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => self.host.rsplit_once(':').map_or(&self.host, |(h, _)| h),
        }
    }

    fn port(&self) -> &str {
        let after = match self.host.rfind(']') {
            Some(i) => &self.host[i + 1..],
            None => &self.host,
        };
        after.rsplit_once(':').map_or("", |(_, p)| p)
    }
}

opaque_val!(Url, URL_TYPE_REF);

fn urls(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], to_url)?;
    env.add_overload("isURL", "is_url_string", vec![STRING_TYPE], is_url)?;
    let getters: [(&str, cel::common::functions::Function); 6] = [
        ("getScheme", url_scheme),
        ("getHost", url_host),
        ("getHostname", url_hostname),
        ("getPort", url_port),
        ("getEscapedPath", url_path),
        ("getQuery", url_query),
    ];
    for (name, f) in getters {
        env.add_member_overload(name, &format!("url_{name}"), URL_TYPE, vec![], f)?;
    }
    Ok(())
}

/// `jsonpatch.escapeKey`: a key as one JSON pointer token (`~` as `~0`, `/` as `~1`).
fn escape_key<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    string(
        text("jsonpatch.escapeKey", &s)?
            .replace('~', "~0")
            .replace('/', "~1"),
    )
}

fn to_url<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    owned(Url::parse(text("url", &s)?).map_err(|e| fail("url", e))?)
}

fn is_url<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    boolean(Url::parse(text("isURL", &s)?).is_ok())
}

fn url_of<'a>(v: &'a CowVal<'_, '_>) -> Result<&'a Url, ExecutionError> {
    v.downcast_ref::<Url>()
        .ok_or_else(|| fail("url", "expected a URL"))
}

fn url_scheme<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [u] = args(a)?;
    string(url_of(&u)?.scheme.clone())
}

fn url_host<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [u] = args(a)?;
    string(url_of(&u)?.host.clone())
}

fn url_hostname<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [u] = args(a)?;
    string(url_of(&u)?.hostname())
}

fn url_port<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [u] = args(a)?;
    string(url_of(&u)?.port())
}

fn url_path<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [u] = args(a)?;
    string(url_of(&u)?.path.clone())
}

/// The query as a map of each key to its values, in order.
fn url_query<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [u] = args(a)?;
    let mut map = serde_json::Map::new();
    for pair in url_of(&u)?.query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let values = map
            .entry(unescape(k))
            .or_insert_with(|| serde_json::Value::Array(Vec::new()));
        if let serde_json::Value::Array(values) = values {
            values.push(unescape(v).into());
        }
    }
    Ok(CowVal::Owned(crate::to_val(&serde_json::Value::Object(
        map,
    ))))
}

/// A query component with `+` and `%XX` decoded (malformed escapes kept as written).
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

// IP addresses and CIDRs.

const IP_TYPE: Type = Type::new_unspecified_type("net.IP");
static IP_TYPE_REF: Type = IP_TYPE;
const CIDR_TYPE: Type = Type::new_unspecified_type("net.CIDR");
static CIDR_TYPE_REF: Type = CIDR_TYPE;

/// An IP address, as upstream's `ip()` accepts it (no zone, no IPv4-mapped IPv6 form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ip(IpAddr);

/// A prefix as written: an address and a length (host bits may be set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cidr(IpAddr, u8);

opaque_val!(Ip, IP_TYPE_REF);
opaque_val!(Cidr, CIDR_TYPE_REF);

fn parse_ip(s: &str) -> Result<IpAddr, String> {
    if s.contains('%') {
        return Err(format!("IP address with zone value is not allowed: {s}"));
    }
    let ip: IpAddr = s
        .parse()
        .map_err(|_| format!("IP Address {s:?} parse error during conversion from string: ParseAddr({s:?}): unable to parse IP"))?;
    if let IpAddr::V6(v6) = ip
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
    }
    Ok(ip)
}

fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let bad = || {
        format!(
            "network address parse error during conversion from string: network address parse error: netip.ParsePrefix({s:?}): invalid prefix"
        )
    };
    let (addr, len) = s.split_once('/').ok_or_else(bad)?;
    let ip = parse_ip(addr).map_err(|_| bad())?;
    let len: u8 = len.parse().map_err(|_| bad())?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if len > max || len.to_string() != s.split_once('/').map_or("", |(_, l)| l) {
        return Err(bad());
    }
    Ok(Cidr(ip, len))
}

fn bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

impl Cidr {
    fn network(&self) -> u128 {
        let (value, width) = bits(self.0);
        let host_bits = u32::from(width - self.1);
        if host_bits >= 128 {
            0
        } else {
            (value >> host_bits) << host_bits
        }
    }

    fn masked(&self) -> Cidr {
        let n = self.network();
        let ip = match self.0 {
            IpAddr::V4(_) => IpAddr::from(u32::try_from(n).unwrap_or_default().to_be_bytes()),
            IpAddr::V6(_) => IpAddr::from(n.to_be_bytes()),
        };
        Cidr(ip, self.1)
    }

    fn contains(&self, ip: IpAddr) -> bool {
        if self.0.is_ipv4() != ip.is_ipv4() {
            return false;
        }
        Cidr(ip, self.1).network() == self.network()
    }
}

fn ips(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], to_ip)?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], is_ip)?;
    env.add_overload("string", "ip_to_string", vec![IP_TYPE], ip_string)?;
    env.add_member_overload("family", "ip_family", IP_TYPE, vec![], ip_family)?;
    let tests: [(&str, cel::common::functions::Function); 5] = [
        ("isUnspecified", ip_is_unspecified),
        ("isLoopback", ip_is_loopback),
        ("isLinkLocalMulticast", ip_is_link_local_multicast),
        ("isLinkLocalUnicast", ip_is_link_local_unicast),
        ("isGlobalUnicast", ip_is_global_unicast),
    ];
    for (name, f) in tests {
        env.add_member_overload(name, &format!("ip_{name}"), IP_TYPE, vec![], f)?;
    }
    env.add_overload("cidr", "string_to_cidr", vec![STRING_TYPE], to_cidr)?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("string", "cidr_to_string", vec![CIDR_TYPE], cidr_string)?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_ip",
        CIDR_TYPE,
        vec![IP_TYPE],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_string",
        CIDR_TYPE,
        vec![STRING_TYPE],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr",
        CIDR_TYPE,
        vec![CIDR_TYPE],
        contains_cidr,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr_string",
        CIDR_TYPE,
        vec![STRING_TYPE],
        contains_cidr,
    )?;
    env.add_member_overload("ip", "cidr_ip", CIDR_TYPE, vec![], cidr_ip)?;
    env.add_member_overload("masked", "cidr_masked", CIDR_TYPE, vec![], cidr_masked)?;
    env.add_member_overload(
        "prefixLength",
        "cidr_prefix_length",
        CIDR_TYPE,
        vec![],
        cidr_prefix_length,
    )?;
    Ok(())
}

fn ip_of(function: &str, v: &CowVal<'_, '_>) -> Result<IpAddr, ExecutionError> {
    if let Some(ip) = v.downcast_ref::<Ip>() {
        return Ok(ip.0);
    }
    parse_ip(text(function, v)?).map_err(|e| fail(function, e))
}

fn cidr_of(function: &str, v: &CowVal<'_, '_>) -> Result<Cidr, ExecutionError> {
    if let Some(c) = v.downcast_ref::<Cidr>() {
        return Ok(*c);
    }
    parse_cidr(text(function, v)?).map_err(|e| fail(function, e))
}

fn to_ip<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    owned(Ip(ip_of("ip", &s)?))
}

fn is_ip<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    boolean(parse_ip(text("isIP", &s)?).is_ok())
}

fn ip_string<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [ip] = args(a)?;
    string(ip_of("string", &ip)?.to_string())
}

fn ip_family<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [ip] = args(a)?;
    int(if ip_of("family", &ip)?.is_ipv4() {
        4
    } else {
        6
    })
}

fn ip_test<'b, 'v>(name: &str, a: Vec<CowVal<'b, 'v>>, test: fn(IpAddr) -> bool) -> Out<'b, 'v> {
    let [ip] = args(a)?;
    boolean(test(ip_of(name, &ip)?))
}

fn ip_is_unspecified<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    ip_test("isUnspecified", a, |ip| ip.is_unspecified())
}

fn ip_is_loopback<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    ip_test("isLoopback", a, |ip| ip.is_loopback())
}

fn link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

fn link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn ip_is_link_local_multicast<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    ip_test("isLinkLocalMulticast", a, link_local_multicast)
}

fn ip_is_link_local_unicast<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    ip_test("isLinkLocalUnicast", a, link_local_unicast)
}

/// Go's definition: not unspecified, loopback, multicast, link-local or the IPv4
/// broadcast address.
fn ip_is_global_unicast<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    ip_test("isGlobalUnicast", a, |ip| {
        let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
        !(ip.is_unspecified()
            || ip.is_loopback()
            || ip.is_multicast()
            || link_local_unicast(ip)
            || broadcast)
    })
}

fn to_cidr<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    owned(cidr_of("cidr", &s)?)
}

fn is_cidr<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    boolean(parse_cidr(text("isCIDR", &s)?).is_ok())
}

fn cidr_string<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [c] = args(a)?;
    let c = cidr_of("string", &c)?;
    string(format!("{}/{}", c.0, c.1))
}

fn contains_ip<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [c, ip] = args(a)?;
    boolean(cidr_of("containsIP", &c)?.contains(ip_of("containsIP", &ip)?))
}

fn contains_cidr<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [c, other] = args(a)?;
    let (c, other) = (
        cidr_of("containsCIDR", &c)?,
        cidr_of("containsCIDR", &other)?,
    );
    boolean(other.1 >= c.1 && c.contains(other.0))
}

fn cidr_ip<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [c] = args(a)?;
    owned(Ip(cidr_of("ip", &c)?.0))
}

fn cidr_masked<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [c] = args(a)?;
    owned(cidr_of("masked", &c)?.masked())
}

fn cidr_prefix_length<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [c] = args(a)?;
    int(i64::from(cidr_of("prefixLength", &c)?.1))
}

// Quantities.

const QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");
static QUANTITY_TYPE_REF: Type = QUANTITY_TYPE;

/// A quantity in thousandths, as Capstan's quota arithmetic keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Quantity(i128);

opaque_val!(Quantity, QUANTITY_TYPE_REF);

fn quantities(env: &mut Env) -> Result<(), DeclarationError> {
    let q = || QUANTITY_TYPE;
    env.add_overload(
        "quantity",
        "string_to_quantity",
        vec![STRING_TYPE],
        to_quantity,
    )?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        is_quantity,
    )?;
    env.add_member_overload(
        "isInteger",
        "quantity_is_integer",
        q(),
        vec![],
        q_is_integer,
    )?;
    env.add_member_overload(
        "asInteger",
        "quantity_as_integer",
        q(),
        vec![],
        q_as_integer,
    )?;
    env.add_member_overload(
        "asApproximateFloat",
        "quantity_as_float",
        q(),
        vec![],
        q_as_float,
    )?;
    env.add_member_overload("sign", "quantity_sign", q(), vec![], q_sign)?;
    env.add_member_overload(
        "compareTo",
        "quantity_compare_to",
        q(),
        vec![q()],
        q_compare,
    )?;
    env.add_member_overload(
        "isGreaterThan",
        "quantity_greater",
        q(),
        vec![q()],
        q_greater,
    )?;
    env.add_member_overload("isLessThan", "quantity_less", q(), vec![q()], q_less)?;
    env.add_member_overload("add", "quantity_add", q(), vec![q()], q_add)?;
    env.add_member_overload("add", "quantity_add_int", q(), vec![INT_TYPE], q_add)?;
    env.add_member_overload("sub", "quantity_sub", q(), vec![q()], q_sub)?;
    env.add_member_overload("sub", "quantity_sub_int", q(), vec![INT_TYPE], q_sub)?;
    Ok(())
}

fn quantity_of(function: &str, v: &CowVal<'_, '_>) -> Result<i128, ExecutionError> {
    if let Some(q) = v.downcast_ref::<Quantity>() {
        return Ok(q.0);
    }
    if let Some(i) = v.downcast_ref::<CelInt>() {
        return Ok(i128::from(*i.inner()) * 1000);
    }
    Err(fail(function, "expected a quantity"))
}

/// `s` in thousandths, when it is a quantity.
fn capstan_quantity(s: &str) -> Option<i128> {
    capstan_meta::quantity::parse(s).map(|m| m.0)
}

fn to_quantity<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    let s = text("quantity", &s)?;
    let q = capstan_quantity(s).ok_or_else(|| {
        fail("quantity", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    })?;
    owned(Quantity(q))
}

/// The CEL quantity of `s`, when it is one.
pub(crate) fn quantity_val(s: &str) -> Option<Box<dyn Val>> {
    capstan_quantity(s).map(|q| Box::new(Quantity(q)) as Box<dyn Val>)
}

fn is_quantity<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    boolean(capstan_quantity(text("isQuantity", &s)?).is_some())
}

fn q_is_integer<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [q] = args(a)?;
    let q = quantity_of("isInteger", &q)?;
    boolean(q % 1000 == 0 && i64::try_from(q / 1000).is_ok())
}

fn q_as_integer<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [q] = args(a)?;
    let q = quantity_of("asInteger", &q)?;
    if q % 1000 != 0 {
        return Err(fail("asInteger", "cannot convert value to integer"));
    }
    int(i64::try_from(q / 1000)
        .map_err(|_| fail("asInteger", "cannot convert value to integer"))?)
}

fn q_as_float<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [q] = args(a)?;
    owned(CelDouble::from(
        quantity_of("asApproximateFloat", &q)? as f64 / 1000.0,
    ))
}

fn q_sign<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [q] = args(a)?;
    int(quantity_of("sign", &q)?.signum() as i64)
}

fn q_pair(function: &str, a: Vec<CowVal<'_, '_>>) -> Result<(i128, i128), ExecutionError> {
    let [q, other] = args(a)?;
    Ok((quantity_of(function, &q)?, quantity_of(function, &other)?))
}

fn q_compare<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let (q, other) = q_pair("compareTo", a)?;
    int(q.cmp(&other) as i64)
}

fn q_greater<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let (q, other) = q_pair("isGreaterThan", a)?;
    boolean(q > other)
}

fn q_less<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let (q, other) = q_pair("isLessThan", a)?;
    boolean(q < other)
}

fn q_add<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let (q, other) = q_pair("add", a)?;
    owned(Quantity(
        q.checked_add(other)
            .ok_or_else(|| fail("add", "overflow"))?,
    ))
}

fn q_sub<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let (q, other) = q_pair("sub", a)?;
    owned(Quantity(
        q.checked_sub(other)
            .ok_or_else(|| fail("sub", "overflow"))?,
    ))
}

// Semantic versions.

const SEMVER_TYPE: Type = Type::new_unspecified_type("kubernetes.Semver");
static SEMVER_TYPE_REF: Type = SEMVER_TYPE;

/// A semantic version (semver.org 2.0.0, strictly: three numbers, no `v`).
#[derive(Debug, Clone)]
struct Semver(semver::Version);

/// Versions are equal by semver.org precedence: build metadata does not count.
impl PartialEq for Semver {
    fn eq(&self, other: &Self) -> bool {
        self.0.cmp_precedence(&other.0) == Ordering::Equal
    }
}

impl Eq for Semver {}

opaque_val!(Semver, SEMVER_TYPE_REF);

fn semvers(env: &mut Env) -> Result<(), DeclarationError> {
    let v = || SEMVER_TYPE;
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], to_semver)?;
    env.add_overload("isSemver", "is_semver_string", vec![STRING_TYPE], is_semver)?;
    env.add_member_overload("major", "semver_major", v(), vec![], semver_major)?;
    env.add_member_overload("minor", "semver_minor", v(), vec![], semver_minor)?;
    env.add_member_overload("patch", "semver_patch", v(), vec![], semver_patch)?;
    env.add_member_overload(
        "compareTo",
        "semver_compare_to",
        v(),
        vec![v()],
        semver_compare,
    )?;
    env.add_member_overload(
        "isGreaterThan",
        "semver_is_greater_than",
        v(),
        vec![v()],
        semver_greater,
    )?;
    env.add_member_overload(
        "isLessThan",
        "semver_is_less_than",
        v(),
        vec![v()],
        semver_less,
    )?;
    Ok(())
}

fn semver_of<'a>(
    function: &str,
    v: &'a CowVal<'_, '_>,
) -> Result<&'a semver::Version, ExecutionError> {
    v.downcast_ref::<Semver>()
        .map(|s| &s.0)
        .ok_or_else(|| fail(function, "expected a semver"))
}

fn to_semver<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    let version = semver::Version::parse(text("semver", &s)?).map_err(|e| fail("semver", e))?;
    owned(Semver(version))
}

/// The CEL semantic version of `s`, when it is one.
pub(crate) fn semver_val(s: &str) -> Option<Box<dyn Val>> {
    semver::Version::parse(s)
        .ok()
        .map(|v| Box::new(Semver(v)) as Box<dyn Val>)
}

fn is_semver<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let [s] = args(a)?;
    boolean(semver::Version::parse(text("isSemver", &s)?).is_ok())
}

fn semver_part<'b, 'v>(
    function: &str,
    a: Vec<CowVal<'b, 'v>>,
    part: fn(&semver::Version) -> u64,
) -> Out<'b, 'v> {
    let [v] = args(a)?;
    let n = part(semver_of(function, &v)?);
    int(i64::try_from(n).map_err(|_| fail(function, "the number is too large"))?)
}

fn semver_major<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    semver_part("major", a, |v| v.major)
}

fn semver_minor<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    semver_part("minor", a, |v| v.minor)
}

fn semver_patch<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    semver_part("patch", a, |v| v.patch)
}

/// The precedence of two versions (build metadata ignored, as semver.org orders them).
fn semver_order(function: &str, a: Vec<CowVal<'_, '_>>) -> Result<Ordering, ExecutionError> {
    let [x, y] = args(a)?;
    Ok(semver_of(function, &x)?.cmp_precedence(semver_of(function, &y)?))
}

fn semver_compare<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    int(semver_order("compareTo", a)? as i64)
}

fn semver_greater<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    boolean(semver_order("isGreaterThan", a)? == Ordering::Greater)
}

fn semver_less<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    boolean(semver_order("isLessThan", a)? == Ordering::Less)
}

#[cfg(test)]
mod tests {
    use crate::{Error, Program, to_json};
    use serde_json::{Value, json};

    fn eval(expression: &str) -> Result<Value, Error> {
        let object = json!({"ports": [80, 443, 8080], "names": ["b", "a"], "limit": "500Mi"});
        let result = Program::compile(expression)?.evaluate(&[("self", &object)])?;
        to_json(&result)
    }

    #[test]
    fn the_libraries_answer_as_upstream_documents_them() {
        let cases = [
            // Lists.
            ("self.ports.isSorted()", json!(true)),
            ("self.names.isSorted()", json!(false)),
            ("self.ports.sum()", json!(8603)),
            ("[1.5, 2.0].sum()", json!(3.5)),
            ("[].sum()", json!(0)),
            ("self.ports.min()", json!(80)),
            ("self.names.max()", json!("b")),
            ("self.ports.indexOf(443)", json!(1)),
            ("[1, 2, 1].lastIndexOf(1)", json!(2)),
            ("self.ports.indexOf(22)", json!(-1)),
            // Strings (cel-go's extension).
            ("'Hello'.lowerAscii()", json!("hello")),
            ("'a,b'.split(',')", json!(["a", "b"])),
            ("['a', 'b'].join('-')", json!("a-b")),
            ("'abc'.indexOf('c')", json!(2)),
            // Regular expressions.
            ("'abc 123'.find('[0-9]+')", json!("123")),
            ("'abc'.find('[0-9]+')", json!("")),
            ("'1 2 3'.findAll('[0-9]')", json!(["1", "2", "3"])),
            ("'1 2 3'.findAll('[0-9]', 2)", json!(["1", "2"])),
            // URLs.
            (
                "isURL('https://example.com:80/path?query=val#fragment')",
                json!(true),
            ),
            ("isURL('/absolute-path')", json!(true)),
            ("isURL('../relative-path')", json!(false)),
            (
                "url('https://example.com:80/').getHost()",
                json!("example.com:80"),
            ),
            ("url('https://[::1]:80/').getHostname()", json!("::1")),
            ("url('https://[::1]:80/').getPort()", json!("80")),
            (
                "url('https://example.com/path with spaces/'.replace(' ', '%20')).getEscapedPath()",
                json!("/path%20with%20spaces/"),
            ),
            (
                "url('https://example.com/?k=a&k=b&j=c+d').getQuery()",
                json!({"k": ["a", "b"], "j": ["c d"]}),
            ),
            ("url('/a').getScheme()", json!("")),
            // IP addresses and CIDRs.
            ("isIP('10.0.0.1') && !isIP('10.0.0.256')", json!(true)),
            ("ip('::1').family()", json!(6)),
            ("ip('127.0.0.1').isLoopback()", json!(true)),
            ("ip('224.0.0.1').isLinkLocalMulticast()", json!(true)),
            ("ip('169.254.1.1').isLinkLocalUnicast()", json!(true)),
            (
                "ip('8.8.8.8').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
                json!(true),
            ),
            ("ip('10.0.0.1') == ip('10.0.0.1')", json!(true)),
            ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", json!(true)),
            (
                "cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))",
                json!(false),
            ),
            (
                "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
                json!(true),
            ),
            (
                "cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')",
                json!(false),
            ),
            (
                "string(cidr('192.168.1.5/24').masked())",
                json!("192.168.1.0/24"),
            ),
            ("string(cidr('192.168.1.5/24').ip())", json!("192.168.1.5")),
            ("cidr('::1/128').prefixLength()", json!(128)),
            ("isCIDR('10.0.0.0/33')", json!(false)),
            // Quantities.
            (
                "quantity(self.limit).isGreaterThan(quantity('100Mi'))",
                json!(true),
            ),
            ("quantity('1k').asInteger()", json!(1000)),
            ("quantity('1.5').isInteger()", json!(false)),
            ("quantity('500m').asApproximateFloat()", json!(0.5)),
            ("quantity('1').add(2).compareTo(quantity('3'))", json!(0)),
            (
                "quantity('1Gi').sub(quantity('1Mi')).isLessThan(quantity('1Gi'))",
                json!(true),
            ),
            ("quantity('-1').sign()", json!(-1)),
            ("isQuantity('1x') || !isQuantity('20Mi')", json!(false)),
            // Semantic versions.
            ("isSemver('1.2.3-rc.1+build.5')", json!(true)),
            (
                "isSemver('v1.2.3') || isSemver('1.2') || isSemver('01.2.3')",
                json!(false),
            ),
            (
                "semver('1.2.3').major() + semver('1.2.3').minor() + semver('1.2.3').patch()",
                json!(6),
            ),
            ("semver('1.2.3').compareTo(semver('1.2.3+other'))", json!(0)),
            ("semver('1.2.3+a') == semver('1.2.3+b')", json!(true)),
            ("semver('1.2.3') == semver('1.2.4')", json!(false)),
            (
                "semver('1.2.3-alpha').isLessThan(semver('1.2.3'))",
                json!(true),
            ),
            (
                "semver('1.10.0').isGreaterThan(semver('1.9.9'))",
                json!(true),
            ),
            ("semver('1.2.3').compareTo(semver('2.0.0'))", json!(-1)),
            // Durations and timestamps (the standard library, with `chrono`).
            ("duration('90m') > duration('1h')", json!(true)),
            (
                "timestamp('2026-01-01T00:00:00Z') + duration('24h') == timestamp('2026-01-02T00:00:00Z')",
                json!(true),
            ),
            ("timestamp('2026-03-01T10:00:00Z').getHours()", json!(10)),
        ];
        for (expression, want) in cases {
            assert_eq!(eval(expression), Ok(want), "{expression}");
        }
    }

    #[test]
    fn bad_arguments_are_errors_with_upstream_words() {
        let cases = [
            ("[].min()", "min called on empty list"),
            (
                "ip('fe80::1%eth0')",
                "IP address with zone value is not allowed",
            ),
            (
                "ip('::ffff:1.2.3.4')",
                "IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed",
            ),
            (
                "url('../x')",
                "URL parse error during conversion from string",
            ),
            (
                "quantity('1x')",
                "quantities must match the regular expression",
            ),
            (
                "quantity('1.5').asInteger()",
                "cannot convert value to integer",
            ),
            ("['a', 1].isSorted()", "isSorted"),
        ];
        for (expression, want) in cases {
            match eval(expression) {
                Err(Error::Evaluate(message)) => {
                    assert!(message.contains(want), "{expression}: {message}")
                }
                other => panic!("{expression}: {other:?}"),
            }
        }
    }
}
