//! From the grammar's tree to tests kwire can run: every name resolved once,
//! against the catalogue, to a fact of the exchange or to fields of the
//! definitions; every value read once into what it may be compared as (an
//! error name becomes its code, an API name its key, a duration
//! microseconds). Mistakes are found here, with their place: a name no
//! definition has (and the nearest that exist), a value a field cannot hold.

use super::syntax::{Ast, Literal, Op, Spanned, SyntaxError};
use crate::schema::model::{FieldMeaning, FieldSpec, FieldType, Primitive};
use crate::schema::{Catalogue, MessageKind};

/// A compiled expression: a tree over tests of facts and of fields.
#[derive(Debug)]
pub struct Expr {
    pub(crate) root: Node,
    pub(crate) facts: Vec<FactTest>,
    pub(crate) fields: Vec<FieldTest>,
}

#[derive(Debug)]
pub(crate) enum Node {
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Fact(usize),
    Field(usize),
}

/// What the exchange (or the frame tested) knows without its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fact {
    Api,
    Version,
    Direction,
    Latency,
    Size,
    Conn,
    ClientId,
    Topic,
    Error,
    CorrelationId,
    Frame,
    Finding,
}

/// The facts by name, with what each is, for messages and the docs.
pub const FACTS: &[(&str, Fact, &str)] = &[
    ("api", Fact::Api, "the exchange's API, by name or key"),
    ("version", Fact::Version, "the exchange's API version"),
    ("direction", Fact::Direction, "request or response: the frame tested"),
    ("latency", Fact::Latency, "time to the response (us, ms, s; a bare number is ms); a request never answered: the time it waited"),
    ("size", Fact::Size, "the frame's bytes, its size prefix included (B, KB, KiB, MB, MiB)"),
    ("conn", Fact::Conn, "the connection's number, as --list shows it"),
    ("client_id", Fact::ClientId, "the request header's client id"),
    ("topic", Fact::Topic, "a topic the request or response names (names learnt for topic ids count)"),
    ("error", Fact::Error, "alone: the response has a non-zero error code; compared: one of its codes"),
    ("correlation_id", Fact::CorrelationId, "the exchange's correlation id"),
    ("frame", Fact::Frame, "the frame's number in the capture"),
    ("finding", Fact::Finding, "alone: some finding of kwire check names the frame; compared: one of its rules (retry-loop, error-not-in-version; kwire check --rules lists them)"),
];

/// A value as it may be compared: each reading that the text allows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Value {
    pub int: Option<i128>,
    pub float: Option<f64>,
    pub text: Option<Vec<u8>>,
    pub uuid: Option<[u8; 16]>,
    pub boolean: Option<bool>,
}

#[derive(Debug)]
pub enum Test {
    /// The name alone: the fact holds, the field is there (not null).
    Present,
    /// `==`, `!=`, `<`, `<=`, `>`, `>=` with one value; `in` with several (as `==` with any).
    Compare(Op, Vec<Value>),
    Contains(Vec<u8>),
    Matches(regex::bytes::Regex),
}

#[derive(Debug)]
pub(crate) struct FactTest {
    pub fact: Fact,
    pub test: Test,
}

/// A test of fields: those at `path` (from the message, or ending there).
#[derive(Debug)]
pub struct FieldTest {
    pub anchor: Anchor,
    pub path: Vec<String>,
    pub test: Test,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// `header.…`: from the header's fields.
    Header,
    /// `body.…`: from the body's fields.
    Body,
    /// A bare name or path: any field whose path ends so, header or body.
    Anywhere,
    /// `record.…`: a part of each record of every records field.
    Record(RecordPart),
}

/// The parts of a record a test can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordPart {
    Key,
    Value,
    HeaderKey,
    HeaderValue,
    Offset,
    Timestamp,
}

/// The record parts by name.
pub(crate) const RECORD_PARTS: &[(&str, RecordPart)] = &[
    ("record.key", RecordPart::Key),
    ("record.value", RecordPart::Value),
    ("record.headers.key", RecordPart::HeaderKey),
    ("record.headers.value", RecordPart::HeaderValue),
    ("record.offset", RecordPart::Offset),
    ("record.timestamp", RecordPart::Timestamp),
];

/// At most this many field tests in one expression (a frame's results are one word).
pub(crate) const MAX_FIELD_TESTS: usize = 64;

/// Compile a parsed expression against the catalogue.
pub fn compile(cat: &Catalogue, ast: &Ast) -> Result<Expr, SyntaxError> {
    let mut c = Compiler {
        cat,
        facts: Vec::new(),
        fields: Vec::new(),
    };
    let root = c.node(ast)?;
    Ok(Expr {
        root,
        facts: c.facts,
        fields: c.fields,
    })
}

struct Compiler<'c> {
    cat: &'c Catalogue,
    facts: Vec<FactTest>,
    fields: Vec<FieldTest>,
}

/// A field of some definition: its path from its message and its type.
struct KnownField {
    /// The message's name (RequestHeader for the header's).
    message: String,
    header: bool,
    path: Vec<String>,
    ty: Kind,
}

/// What a field holds, as far as comparing goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int { error_code: bool },
    Float,
    Bool,
    Text,
    Bytes,
    Uuid,
    Records,
    Struct,
}

impl Kind {
    pub fn of(f: &FieldSpec) -> Kind {
        let element = match &f.ty {
            FieldType::Array(inner) => &**inner,
            t => t,
        };
        match element {
            FieldType::Primitive(p) => {
                Kind::of_primitive(*p, FieldMeaning::of(f) == FieldMeaning::ErrorCode)
            }
            _ => Kind::Struct,
        }
    }

    pub(crate) fn of_primitive(p: Primitive, error_code: bool) -> Kind {
        match p {
            Primitive::Bool => Kind::Bool,
            Primitive::Int8
            | Primitive::Int16
            | Primitive::Uint16
            | Primitive::Int32
            | Primitive::Uint32
            | Primitive::Int64 => Kind::Int { error_code },
            Primitive::Float64 => Kind::Float,
            Primitive::String => Kind::Text,
            Primitive::Bytes => Kind::Bytes,
            Primitive::Uuid => Kind::Uuid,
            Primitive::Records => Kind::Records,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Int { .. } => "an integer",
            Kind::Float => "a float64",
            Kind::Bool => "a bool",
            Kind::Text => "a string",
            Kind::Bytes => "bytes",
            Kind::Uuid => "a uuid",
            Kind::Records => "record data",
            Kind::Struct => "a struct",
        }
    }

    /// Whether `v` can be compared with a field of this kind.
    fn takes(self, v: &Value) -> bool {
        match self {
            Kind::Int { .. } => v.int.is_some(),
            Kind::Float => v.float.is_some(),
            Kind::Bool => v.boolean.is_some(),
            Kind::Text | Kind::Bytes => v.text.is_some(),
            Kind::Uuid => v.uuid.is_some(),
            Kind::Records | Kind::Struct => false,
        }
    }
}

impl Compiler<'_> {
    fn node(&mut self, ast: &Ast) -> Result<Node, SyntaxError> {
        Ok(match ast {
            Ast::And(l, r) => Node::And(Box::new(self.node(l)?), Box::new(self.node(r)?)),
            Ast::Or(l, r) => Node::Or(Box::new(self.node(l)?), Box::new(self.node(r)?)),
            Ast::Not(x) => Node::Not(Box::new(self.node(x)?)),
            Ast::Test { name, compare } => self.test(name, compare.as_ref())?,
        })
    }

    fn test(
        &mut self,
        name: &Spanned<String>,
        compare: Option<&(Spanned<Op>, Vec<Spanned<Literal>>)>,
    ) -> Result<Node, SyntaxError> {
        let wanted = match name.item.as_str() {
            "client-id" => "client_id",
            "correlation-id" => "correlation_id",
            n => n,
        };
        if let Some(&(_, fact, _)) = FACTS.iter().find(|(n, _, _)| *n == wanted) {
            let test = self.fact_test(fact, compare)?;
            self.facts.push(FactTest { fact, test });
            return Ok(Node::Fact(self.facts.len() - 1));
        }
        if name.item == "record" || name.item.starts_with("record.") {
            let Some(&(_, part)) = RECORD_PARTS.iter().find(|(n, _)| *n == name.item) else {
                let names: Vec<&str> = RECORD_PARTS.iter().map(|(n, _)| *n).collect();
                return Err(SyntaxError::new(
                    name.at,
                    name.len,
                    format!("a record's parts are {}", names.join(", ")),
                ));
            };
            let kinds = [match part {
                RecordPart::Offset | RecordPart::Timestamp => Kind::Int { error_code: false },
                _ => Kind::Bytes,
            }];
            return self.push_field(name, Anchor::Record(part), Vec::new(), &kinds, compare);
        }
        let (anchor, rest) = match name.item.split_once('.') {
            Some(("header", rest)) => (Anchor::Header, rest),
            Some(("body", rest)) => (Anchor::Body, rest),
            _ => (Anchor::Anywhere, name.item.as_str()),
        };
        let path: Vec<String> = rest.split('.').map(str::to_string).collect();
        if path.iter().any(String::is_empty) {
            return Err(SyntaxError::new(
                name.at,
                name.len,
                "a field path is names joined by dots: body.Topics.Name",
            ));
        }
        let kinds = self.field_kinds(anchor, &path);
        if kinds.is_empty() {
            return Err(self.unknown_name(name, anchor, &path));
        }
        self.push_field(name, anchor, path, &kinds, compare)
    }

    /// A field test of fields of these kinds.
    fn push_field(
        &mut self,
        name: &Spanned<String>,
        anchor: Anchor,
        path: Vec<String>,
        kinds: &[Kind],
        compare: Option<&(Spanned<Op>, Vec<Spanned<Literal>>)>,
    ) -> Result<Node, SyntaxError> {
        let test = match compare {
            None => Test::Present,
            Some((op, values)) => {
                let values = values
                    .iter()
                    .map(|v| self.value(v).map(|x| (v, x)))
                    .collect::<Result<Vec<_>, _>>()?;
                field_test(op, values, kinds, name)?
            }
        };
        if self.fields.len() == MAX_FIELD_TESTS {
            return Err(SyntaxError::new(
                name.at,
                name.len,
                format!("an expression tests at most {MAX_FIELD_TESTS} fields"),
            ));
        }
        self.fields.push(FieldTest { anchor, path, test });
        Ok(Node::Field(self.fields.len() - 1))
    }

    /// A literal's readings: numbers as numbers; strings as text (and a uuid
    /// when they spell one); names as text, and as an error code, an API key
    /// or a bool when they name one.
    fn value(&self, v: &Spanned<Literal>) -> Result<Value, SyntaxError> {
        Ok(match &v.item {
            Literal::Number { value, int, unit } => {
                if let Some(u) = unit {
                    return Err(SyntaxError::new(
                        v.at,
                        v.len,
                        format!("`{u}`: units go with latency (us, ms, s) and size (B, KB, KiB, MB, MiB, GB, GiB) only"),
                    ));
                }
                Value {
                    int: *int,
                    float: Some(*value),
                    ..Value::default()
                }
            }
            Literal::Str(s) => Value {
                uuid: std::str::from_utf8(s).ok().and_then(parse_uuid),
                text: Some(s.clone()),
                ..Value::default()
            },
            Literal::Name(n) => Value {
                int: error_code_by_name(n)
                    .map(i128::from)
                    .or_else(|| self.cat.resolve_api(n).map(i128::from)),
                boolean: match n.as_str() {
                    "true" => Some(true),
                    "false" => Some(false),
                    _ => None,
                },
                text: Some(n.as_bytes().to_vec()),
                ..Value::default()
            },
        })
    }

    fn fact_test(
        &self,
        fact: Fact,
        compare: Option<&(Spanned<Op>, Vec<Spanned<Literal>>)>,
    ) -> Result<Test, SyntaxError> {
        let Some((op, values)) = compare else {
            return Ok(Test::Present);
        };
        let text_fact = matches!(fact, Fact::ClientId | Fact::Topic);
        match op.item {
            Op::Contains | Op::Matches if !text_fact => {
                return Err(SyntaxError::new(
                    op.at,
                    op.len,
                    format!(
                        "`{}` takes text: client_id or topic, or a string field",
                        op.item.text()
                    ),
                ))
            }
            Op::Lt | Op::Le | Op::Gt | Op::Ge
                if matches!(fact, Fact::Direction | Fact::Error | Fact::Finding) =>
            {
                return Err(SyntaxError::new(
                    op.at,
                    op.len,
                    format!("{} is compared with == or != (or in)", fact_name(fact)),
                ))
            }
            _ => {}
        }
        let mut read = Vec::new();
        for v in values {
            read.push(self.fact_value(fact, v)?);
        }
        text_test(op, read, values)
    }

    /// A value as `fact` takes it.
    fn fact_value(&self, fact: Fact, v: &Spanned<Literal>) -> Result<Value, SyntaxError> {
        let wrong =
            |what: &str| SyntaxError::new(v.at, v.len, format!("{} takes {what}", fact_name(fact)));
        let int = |i: i128| Value {
            int: Some(i),
            ..Value::default()
        };
        // A quoted name is the name: `api == "Fetch"` as `api == Fetch`.
        let quoted;
        let item = match (&v.item, fact) {
            (Literal::Str(b), Fact::Api | Fact::Direction | Fact::Error) => {
                match std::str::from_utf8(b) {
                    Ok(name) => {
                        quoted = Literal::Name(name.to_string());
                        &quoted
                    }
                    Err(_) => &v.item,
                }
            }
            _ => &v.item,
        };
        match (fact, item) {
            (Fact::Api, Literal::Name(n)) => match self.cat.resolve_api(n) {
                Some(k) => Ok(int(k.into())),
                None => {
                    let near = self.cat.suggest_api(n);
                    let hint = match near.is_empty() {
                        true => String::new(),
                        false => format!("; did you mean {}?", near.join(", ")),
                    };
                    Err(SyntaxError::new(
                        v.at,
                        v.len,
                        format!("no API is named {n}{hint}"),
                    ))
                }
            },
            (
                Fact::Api,
                Literal::Number {
                    int: Some(i),
                    unit: None,
                    ..
                },
            ) => Ok(int(*i)),
            (Fact::Api, _) => Err(wrong("an API name (Produce) or key (0)")),
            (Fact::Direction, Literal::Name(n)) => match n.as_str() {
                "request" => Ok(int(0)),
                "response" => Ok(int(1)),
                _ => Err(wrong("request or response")),
            },
            (Fact::Direction, _) => Err(wrong("request or response")),
            (Fact::Error, Literal::Name(n)) => match error_code_by_name(n) {
                Some(c) => Ok(int(c.into())),
                None => Err(SyntaxError::new(
                    v.at,
                    v.len,
                    format!("no error is named {n}: give a name such as NOT_COORDINATOR or a code"),
                )),
            },
            (Fact::Latency, Literal::Number { value, unit, .. }) => {
                let scale = match unit.as_deref() {
                    None | Some("ms") => 1000.0,
                    Some("us" | "µs") => 1.0,
                    Some("s") => 1e6,
                    Some(u) => {
                        return Err(SyntaxError::new(
                            v.at,
                            v.len,
                            format!("`{u}`: latency takes us, ms or s (a bare number is ms)"),
                        ))
                    }
                };
                Ok(int((value * scale).round() as i128))
            }
            (Fact::Latency, _) => Err(wrong("a duration: 250us, 100ms, 2s")),
            (Fact::Size, Literal::Number { value, unit, .. }) => {
                let scale = match unit.as_deref() {
                    None | Some("B") => 1.0,
                    Some("KB" | "kB") => 1e3,
                    Some("KiB") => 1024.0,
                    Some("MB") => 1e6,
                    Some("MiB") => 1048576.0,
                    Some("GB") => 1e9,
                    Some("GiB") => 1073741824.0,
                    Some(u) => {
                        return Err(SyntaxError::new(
                            v.at,
                            v.len,
                            format!("`{u}`: size takes B, KB, KiB, MB, MiB, GB or GiB"),
                        ))
                    }
                };
                Ok(int((value * scale).round() as i128))
            }
            (Fact::Size, _) => Err(wrong("a size: 512, 4KiB, 1MB")),
            (_, Literal::Number { unit: Some(u), .. }) => Err(SyntaxError::new(
                v.at,
                v.len,
                format!("`{u}`: units go with latency and size only"),
            )),
            (Fact::ClientId | Fact::Topic, Literal::Str(s)) => Ok(Value {
                text: Some(s.clone()),
                // A topic may be named by its id: read once, here.
                uuid: (fact == Fact::Topic)
                    .then(|| std::str::from_utf8(s).ok().and_then(parse_uuid))
                    .flatten(),
                ..Value::default()
            }),
            (Fact::ClientId | Fact::Topic, Literal::Name(n)) => Ok(Value {
                text: Some(n.as_bytes().to_vec()),
                ..Value::default()
            }),
            (Fact::ClientId | Fact::Topic, _) => Err(wrong("text: \"orders\"")),
            (
                Fact::Version | Fact::Conn | Fact::CorrelationId | Fact::Frame | Fact::Error,
                Literal::Number { int: Some(i), .. },
            ) => Ok(int(*i)),
            (Fact::Version | Fact::Conn | Fact::CorrelationId | Fact::Frame, _) => {
                Err(wrong("a whole number"))
            }
            (Fact::Error, _) => Err(wrong("an error name (NOT_COORDINATOR) or code")),
            (Fact::Finding, Literal::Name(n)) => rule_by_name(n).map(int).ok_or_else(|| {
                SyntaxError::new(
                    v.at,
                    v.len,
                    format!("no rule is named {n}: kwire check --rules lists them (retry-loop)"),
                )
            }),
            (Fact::Finding, Literal::Str(t)) => std::str::from_utf8(t)
                .ok()
                .and_then(rule_by_name)
                .map(int)
                .ok_or_else(|| wrong("a rule of kwire check --rules (retry-loop)")),
            (Fact::Finding, _) => Err(wrong("a rule of kwire check --rules (retry-loop)")),
        }
    }

    /// The kinds of the fields at `path`, over every definition.
    fn field_kinds(&mut self, anchor: Anchor, path: &[String]) -> Vec<Kind> {
        let known = known_fields(self.cat, path.last().map(String::as_str));
        let mut kinds: Vec<Kind> = known
            .iter()
            .filter(|k| path_matches(anchor, path, k.header, &k.path))
            .map(|k| k.ty)
            .collect();
        kinds.dedup();
        kinds.sort_by_key(|k| format!("{k:?}"));
        kinds.dedup();
        kinds
    }

    fn unknown_name(
        &mut self,
        name: &Spanned<String>,
        anchor: Anchor,
        path: &[String],
    ) -> SyntaxError {
        let known = known_fields(self.cat, None);
        let last = path.last().map_or("", String::as_str);
        // The last name exists: the path before it is what is wrong.
        let mut at: Vec<String> = known
            .iter()
            .filter(|k| k.path.last().is_some_and(|l| l == last))
            .map(|k| {
                format!(
                    "{}.{}",
                    if k.header { "header" } else { "body" },
                    k.path.join(".")
                )
            })
            .collect();
        at.sort();
        at.dedup();
        if !at.is_empty() {
            let shown: Vec<&str> = at.iter().take(4).map(String::as_str).collect();
            let more = if at.len() > 4 {
                format!(" and {} more", at.len() - 4)
            } else {
                String::new()
            };
            let whose = match anchor {
                Anchor::Header => "the header",
                Anchor::Body => "the body",
                Anchor::Anywhere | Anchor::Record(_) => "any message",
            };
            return SyntaxError::new(
                name.at,
                name.len,
                format!(
                    "no field of {whose} is at {}; {last} is at {}{more}",
                    name.item,
                    shown.join(", ")
                ),
            );
        }
        let mut names: Vec<&str> = known
            .iter()
            .filter_map(|k| k.path.last().map(String::as_str))
            .chain(FACTS.iter().map(|(n, _, _)| *n))
            .collect();
        names.sort_unstable();
        names.dedup();
        let lower = last.to_ascii_lowercase();
        let mut scored: Vec<(usize, &str)> = names
            .iter()
            .map(|n| {
                (
                    crate::schema::catalogue::edit_distance(&lower, &n.to_ascii_lowercase()),
                    *n,
                )
            })
            .collect();
        scored.sort();
        let near: Vec<&str> = scored
            .iter()
            .filter(|(d, _)| *d <= 2.max(lower.len() / 3))
            .take(3)
            .map(|(_, n)| *n)
            .collect();
        let hint = match near.is_empty() {
            true => "; `kwire filter --fields API` lists an API's fields, `kwire filter --facts` the facts".to_string(),
            false => format!("; did you mean {}?", near.join(", ")),
        };
        SyntaxError::new(
            name.at,
            name.len,
            format!("no field or fact is named {last}{hint}"),
        )
    }
}

pub(crate) fn fact_name(f: Fact) -> &'static str {
    FACTS
        .iter()
        .find(|(_, x, _)| *x == f)
        .map_or("?", |(n, _, _)| n)
}

/// A rule of `kwire check` by its id (`retry-loop`, or `retry_loop` as a
/// bare name may be written, any case): its place in [`Rule::ALL`], the bit
/// a frame's findings set.
///
/// [`Rule::ALL`]: crate::analysis::finding::Rule::ALL
pub(crate) fn rule_by_name(text: &str) -> Option<i128> {
    let text = text.replace('_', "-");
    crate::analysis::finding::Rule::ALL
        .iter()
        .position(|(_, id, _, _)| id.eq_ignore_ascii_case(&text))
        .map(|i| i as i128)
}

/// An error code by name (any case); numbers are not names.
pub fn error_code_by_name(text: &str) -> Option<i16> {
    if text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        return None;
    }
    error_code(text)
}

/// An error code by its name (any case) or number.
pub fn error_code(text: &str) -> Option<i16> {
    if let Ok(n) = text.parse::<i16>() {
        return Some(n);
    }
    crate::protocol::error_codes::ERROR_CODES
        .iter()
        .find(|(_, name)| name.eq_ignore_ascii_case(text))
        .map(|&(code, _)| code)
}

/// A comparison of fields, checked against what the fields named can hold.
fn field_test(
    op: &Spanned<Op>,
    values: Vec<(&Spanned<Literal>, Value)>,
    kinds: &[Kind],
    name: &Spanned<String>,
) -> Result<Test, SyntaxError> {
    let described = || {
        let mut d: Vec<&str> = kinds.iter().map(|k| k.describe()).collect();
        d.dedup();
        d.join(" or ")
    };
    match op.item {
        Op::Contains | Op::Matches => {
            if !kinds.iter().any(|k| matches!(k, Kind::Text | Kind::Bytes)) {
                return Err(SyntaxError::new(
                    op.at,
                    op.len,
                    format!(
                        "`{}` takes text, and {} is {}",
                        op.item.text(),
                        name.item,
                        described()
                    ),
                ));
            }
        }
        _ => {
            for (lit, v) in &values {
                if !kinds.iter().any(|k| k.takes(v)) {
                    return Err(SyntaxError::new(
                        lit.at,
                        lit.len,
                        format!(
                            "{} is {}: this value cannot be compared with it",
                            name.item,
                            described()
                        ),
                    ));
                }
            }
            if op.item.orders()
                && !kinds
                    .iter()
                    .any(|k| matches!(k, Kind::Int { .. } | Kind::Float | Kind::Text | Kind::Bytes))
            {
                return Err(SyntaxError::new(
                    op.at,
                    op.len,
                    format!("{} is {}: compare it with == or !=", name.item, described()),
                ));
            }
        }
    }
    let lits: Vec<&Spanned<Literal>> = values.iter().map(|(l, _)| *l).collect();
    let read = values.into_iter().map(|(_, v)| v).collect();
    text_test(op, read, &lits.into_iter().cloned().collect::<Vec<_>>())
}

/// The test of `op` with values read: `contains` and `matches` take their text.
fn text_test(
    op: &Spanned<Op>,
    read: Vec<Value>,
    lits: &[Spanned<Literal>],
) -> Result<Test, SyntaxError> {
    let first_text = || {
        read.first().and_then(|v| v.text.clone()).ok_or_else(|| {
            SyntaxError::new(op.at, op.len, format!("`{}` takes text", op.item.text()))
        })
    };
    Ok(match op.item {
        Op::Contains => Test::Contains(first_text()?),
        Op::Matches => {
            let text = first_text()?;
            let lit = lits.first();
            let pattern = String::from_utf8(text)
                .map_err(|_| SyntaxError::new(op.at, op.len, "a pattern is UTF-8 text"))?;
            // Bounded: a pattern is compiled once, within these limits.
            let re = regex::bytes::RegexBuilder::new(&pattern)
                .size_limit(1 << 20)
                .dfa_size_limit(1 << 22)
                .build()
                .map_err(|e| {
                    let (at, len) = lit.map_or((op.at, op.len), |l| (l.at, l.len));
                    let first = e.to_string();
                    let last = first.lines().last().unwrap_or("").trim().to_string();
                    SyntaxError::new(at, len, format!("not a regular expression: {last}"))
                })?;
            Test::Matches(re)
        }
        o => Test::Compare(o, read),
    })
}

/// Whether a field at `path` (of a header or not) is what `wanted` names.
pub(crate) fn path_matches(
    anchor: Anchor,
    wanted: &[String],
    header: bool,
    path: &[impl AsRef<str>],
) -> bool {
    let same = |a: &[String], b: &[_]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y): (&String, &_)| x == AsRef::<str>::as_ref(y))
    };
    match anchor {
        Anchor::Header => header && same(wanted, path),
        Anchor::Body => !header && same(wanted, path),
        Anchor::Anywhere => {
            path.len() >= wanted.len() && same(wanted, &path[path.len() - wanted.len()..])
        }
        Anchor::Record(_) => false,
    }
}

/// Every field path of every request, response and header definition (of
/// those that may have a field named `named`, when given).
fn known_fields(cat: &Catalogue, named: Option<&str>) -> Vec<KnownField> {
    fn walk(
        fields: &[FieldSpec],
        (message, header): (&str, bool),
        path: &mut Vec<String>,
        out: &mut Vec<KnownField>,
    ) {
        for f in fields {
            path.push(f.name.clone());
            out.push(KnownField {
                message: message.to_string(),
                header,
                path: path.clone(),
                ty: Kind::of(f),
            });
            walk(&f.fields, (message, header), path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    for e in &cat.entries {
        let header = match e.kind() {
            MessageKind::Request | MessageKind::Response => false,
            MessageKind::Header => true,
            _ => continue,
        };
        if named.is_some_and(|n| !e.may_name(n)) {
            continue;
        }
        walk(
            &e.spec().fields,
            (e.name(), header),
            &mut Vec::new(),
            &mut out,
        );
    }
    out
}

/// A uuid hyphenated (or plain hex), or as Kafka prints it (22 characters of URL-safe base64).
pub(crate) fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    if let Ok(u) = uuid::Uuid::parse_str(text) {
        return Some(*u.as_bytes());
    }
    if text.len() != 22 {
        return None;
    }
    let mut bits: u128 = 0;
    for (i, c) in text.bytes().enumerate() {
        let v = u128::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        });
        // 21 characters carry 126 bits; the last one 2 more and 4 of padding (zero).
        bits = match i {
            21 if v & 0xf != 0 => return None,
            21 => bits << 2 | v >> 4,
            _ => bits << 6 | v,
        };
    }
    Some(bits.to_be_bytes())
}

/// A field a filter can name: its path from the message, its type, and the
/// versions of the message that have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    pub path: String,
    pub ty: String,
    pub versions: crate::schema::Versions,
}

/// The field paths of an API's request or response (`header.…` for the
/// header's, `body.…` for the body's), over every release that defines it.
pub fn field_paths(
    cat: &Catalogue,
    kind: MessageKind,
    api: i16,
    pin: Option<&str>,
) -> Vec<FieldPath> {
    fn walk(
        fields: &[FieldSpec],
        within: crate::schema::Versions,
        prefix: &str,
        out: &mut Vec<FieldPath>,
    ) {
        for f in fields {
            let versions = crate::schema::Versions {
                lo: f.versions.lo.max(within.lo),
                hi: f.versions.hi.min(within.hi),
            };
            if versions.is_empty() {
                continue;
            }
            let path = format!("{prefix}.{}", f.name);
            out.push(FieldPath {
                path: path.clone(),
                ty: f.ty.to_string(),
                versions,
            });
            walk(&f.fields, versions, &path, out);
        }
    }
    let mut out: Vec<FieldPath> = Vec::new();
    for e in cat.entries_for(kind, api, pin) {
        let spec = e.spec();
        let mut these = Vec::new();
        walk(&spec.fields, spec.valid_versions, "body", &mut these);
        for p in these {
            // Releases that define the same field: one row, its versions joined.
            match out.iter_mut().find(|o| o.path == p.path && o.ty == p.ty) {
                Some(o) => {
                    o.versions.lo = o.versions.lo.min(p.versions.lo);
                    o.versions.hi = o.versions.hi.max(p.versions.hi);
                }
                None => out.push(p),
            }
        }
    }
    out
}

impl Expr {
    /// What each name of the expression resolved to, a line each: facts as
    /// such, fields with the messages that have them.
    pub fn explain(&self, cat: &Catalogue) -> String {
        let known = known_fields(cat, None);
        let mut lines = Vec::new();
        for t in &self.facts {
            let about = FACTS
                .iter()
                .find(|(_, f, _)| *f == t.fact)
                .map_or("", |(_, _, a)| a);
            lines.push(format!("{:<24} fact: {about}", fact_name(t.fact)));
        }
        for t in &self.fields {
            let mut messages: Vec<&str> = known
                .iter()
                .filter(|k| path_matches(t.anchor, &t.path, k.header, &k.path))
                .map(|k| k.message.as_str())
                .collect();
            messages.sort_unstable();
            messages.dedup();
            if let Anchor::Record(part) = t.anchor {
                let name = RECORD_PARTS
                    .iter()
                    .find(|(_, p)| *p == part)
                    .map_or("record", |(n, _)| n);
                lines.push(format!("{name:<24} each record of every records field (Produce requests, Fetch and ShareFetch responses)"));
                continue;
            }
            let name = match t.anchor {
                Anchor::Header => format!("header.{}", t.path.join(".")),
                Anchor::Record(_) => String::new(),
                Anchor::Body => format!("body.{}", t.path.join(".")),
                Anchor::Anywhere => t.path.join("."),
            };
            let shown: Vec<&str> = messages.iter().take(6).copied().collect();
            let more = match messages.len() > 6 {
                true => format!(", and {} more", messages.len() - 6),
                false => String::new(),
            };
            lines.push(format!(
                "{name:<24} field of {} {}: {}{more}",
                messages.len(),
                if messages.len() == 1 {
                    "message"
                } else {
                    "messages"
                },
                shown.join(", ")
            ));
        }
        lines.join("\n")
    }
}
