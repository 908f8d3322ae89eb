//! Faults on purpose (`kwire proxy --inject RULE`): which requests a rule
//! picks (its API, and optionally a topic or client id; every one, every
//! Nth, or a seeded random share) and what the proxy does instead of
//! forwarding plainly: answer with an error itself, hold the request, never
//! deliver the response, close the connection, or deliver the response twice.
//! The proxy (`super::proxy`) asks [`Faults::decide`] for each request and
//! keeps the answers in request order; this module also builds the error
//! answer ([`error_answer`]) from the request's own topics and partitions.

use crate::analysis::exchange::{topic_field, TopicField};
use crate::analysis::records_table::is_partition_index;
use crate::decode::Direction;
use crate::encode::{encode_frame, FrameSpec};
use crate::protocol::error_codes::{error_name, ERROR_CODES};
use crate::schema::{Catalogue, FieldSpec, FieldType, MessageKind, Primitive};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// What a rule does to the requests it picks.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Answer with this error code everywhere the response carries one; the
    /// request is not forwarded, so the broker never applies it.
    Error(i16),
    /// Hold the request this long before forwarding it.
    Delay(Duration),
    /// Forward the request (the broker applies it) and never deliver its response.
    Drop,
    /// Close the client's connection instead of forwarding the request.
    Close,
    /// Deliver the response twice.
    Duplicate,
}

impl Action {
    /// How the proxy's notes say what it did.
    pub fn done(&self) -> String {
        match self {
            Action::Error(code) => {
                format!("error {} ({code})", error_name(*code).unwrap_or("?"))
            }
            Action::Delay(d) => format!("delayed {} ms", d.as_millis()),
            Action::Drop => "dropped the response".into(),
            Action::Close => "closed the connection".into(),
            Action::Duplicate => "duplicated the response".into(),
        }
    }
}

/// Which of the matching requests a rule applies to.
#[derive(Clone, Debug, PartialEq)]
pub enum When {
    Always,
    /// The Nth, 2Nth, … matching request (counted per rule, from 1).
    Every(u64),
    /// Each matching request with this probability, drawn from the rule's seeded sequence.
    Rate(f64),
}

/// One `--inject` rule.
#[derive(Debug)]
pub struct Rule {
    /// 1-based, as the notes name it.
    pub number: usize,
    /// As given on the command line.
    pub text: String,
    pub api_key: i16,
    pub topic: Option<String>,
    pub client_id: Option<String>,
    pub action: Action,
    pub when: When,
    /// Requests that matched (API, topic, client id).
    matched: AtomicU64,
    /// Times applied.
    applied: AtomicU64,
    /// The rule's random sequence (`rate`), seeded by `--seed` and the rule's number.
    random: Mutex<u64>,
}

impl Rule {
    /// Times applied (a rule that picked a request but could not act on it does not count).
    pub fn applied(&self) -> u64 {
        self.applied.load(Ordering::Relaxed)
    }

    pub(crate) fn count_applied(&self) {
        self.applied.fetch_add(1, Ordering::Relaxed);
    }
}

/// Parse `API[:topic=NAME][:client=ID]:ACTION[:every=N|:rate=P]`.
pub fn parse_rule(cat: &Catalogue, text: &str, number: usize, seed: u64) -> Result<Rule, String> {
    let mut parts = text.split(':');
    let api = parts.next().unwrap_or_default();
    let api_key = cat
        .resolve_api(api)
        .ok_or_else(|| format!("--inject {text}: no API named {api}"))?;
    let (mut topic, mut client_id, mut action, mut when) = (None, None, None, When::Always);
    for part in parts {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let set = |a: &mut Option<Action>, new: Action| -> Result<(), String> {
            match a.replace(new) {
                Some(_) => Err(format!("--inject {text}: one action per rule")),
                None => Ok(()),
            }
        };
        match key {
            "topic" => topic = Some(value.to_string()),
            "client" => client_id = Some(value.to_string()),
            "error" => set(&mut action, Action::Error(error_code(value).ok_or_else(|| format!("--inject {text}: no error named {value} (names as in `kwire docs`'s error page, or a number)"))?))?,
            "delay" => set(
                &mut action,
                Action::Delay(Duration::from_millis(value.parse().map_err(|_| {
                    format!("--inject {text}: delay=MS takes whole milliseconds")
                })?)),
            )?,
            "drop" => set(&mut action, Action::Drop)?,
            "close" => set(&mut action, Action::Close)?,
            "duplicate" => set(&mut action, Action::Duplicate)?,
            "every" | "rate" if when != When::Always => {
                return Err(format!("--inject {text}: every=N or rate=P, one of them"))
            }
            "every" => match value.parse::<u64>() {
                Ok(n) if n >= 1 => when = When::Every(n),
                _ => return Err(format!("--inject {text}: every=N takes a whole number from 1")),
            },
            "rate" => match value.parse::<f64>() {
                Ok(p) if (0.0..=1.0).contains(&p) => when = When::Rate(p),
                _ => return Err(format!("--inject {text}: rate=P takes a share from 0 to 1")),
            },
            _ => {
                return Err(format!(
                    "--inject {text}: {part} is none of error=NAME, delay=MS, drop, close, duplicate, every=N, rate=P, topic=NAME, client=ID"
                ))
            }
        }
    }
    let action = action.ok_or_else(|| {
        format!("--inject {text}: no action (error=NAME, delay=MS, drop, close or duplicate)")
    })?;
    Ok(Rule {
        number,
        text: text.to_string(),
        api_key,
        topic,
        client_id,
        action,
        when,
        matched: AtomicU64::new(0),
        applied: AtomicU64::new(0),
        random: Mutex::new(seed ^ (number as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
    })
}

/// An error code by name (`NOT_LEADER_OR_FOLLOWER`, any case) or number.
fn error_code(text: &str) -> Option<i16> {
    if let Ok(n) = text.parse::<i16>() {
        return error_name(n).map(|_| n);
    }
    ERROR_CODES
        .iter()
        .find(|(_, name)| name.eq_ignore_ascii_case(text))
        .map(|(c, _)| *c)
}

/// What a request is, as far as the rules ask.
pub struct Asked<'a> {
    pub api_key: i16,
    pub client_id: Option<&'a str>,
    /// The topics the request names.
    pub topics: &'a [String],
}

/// The rules of one proxy.
#[derive(Debug, Default)]
pub struct Faults {
    pub rules: Vec<Rule>,
}

impl Faults {
    /// Whether any rule is about this API (the request is then decoded for the others' terms).
    pub fn about(&self, api_key: i16) -> bool {
        self.rules.iter().any(|r| r.api_key == api_key)
    }

    /// The first rule that matches the request and fires for it now, counted.
    pub fn decide(&self, asked: &Asked) -> Option<&Rule> {
        self.rules.iter().find(|r| {
            if r.api_key != asked.api_key
                || r.client_id
                    .as_deref()
                    .is_some_and(|c| asked.client_id != Some(c))
                || r.topic
                    .as_deref()
                    .is_some_and(|t| !asked.topics.iter().any(|x| x == t))
            {
                return false;
            }
            let n = r.matched.fetch_add(1, Ordering::Relaxed) + 1;
            let fires = match r.when {
                When::Always => true,
                When::Every(k) => n.is_multiple_of(k),
                When::Rate(p) => {
                    let mut s = r.random.lock().unwrap_or_else(|e| e.into_inner());
                    ((splitmix(&mut s) >> 11) as f64 / (1u64 << 53) as f64) < p
                }
            };
            fires
        })
    }
}

/// The next number of a splitmix64 sequence: small, seedable, and the same on every machine.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The topics a request body names (topic name fields, at any depth).
pub(crate) fn topics_named(fields: &[FieldSpec], body: &Map<String, Value>, out: &mut Vec<String>) {
    for f in fields {
        let Some(v) = body.get(&f.name) else {
            continue;
        };
        match (topic_field(f), v) {
            (Some(TopicField::Name), Value::String(s)) => out.push(s.clone()),
            (Some(TopicField::Name), Value::Array(items)) => {
                out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_string)))
            }
            _ => match v {
                Value::Object(o) => topics_named(&f.fields, o, out),
                Value::Array(items) => {
                    for o in items.iter().filter_map(Value::as_object) {
                        topics_named(&f.fields, o, out);
                    }
                }
                _ => {}
            },
        }
    }
}

/// The response to a request that carries `code` everywhere it has an error
/// code: at the top, and in each topic and partition the request names (the
/// answer names the same topics and partitions). Every `ErrorMessage` says
/// `message`. `None` when the response would carry the code nowhere (a
/// Metadata request for all topics: its response has no error code of its own).
pub fn error_answer(
    cat: &Catalogue,
    release: Option<&str>,
    (api_key, version, correlation_id): (i16, i16, i32),
    request: &Map<String, Value>,
    code: i16,
    message: &str,
) -> Result<Option<Vec<u8>>, String> {
    let (Some(req), Some(resp)) = (
        cat.message(MessageKind::Request, api_key, version, release),
        cat.message(MessageKind::Response, api_key, version, release),
    ) else {
        return Err(format!("api {api_key} v{version} is not in the catalogue"));
    };
    let fill = Fill {
        version,
        code,
        message,
    };
    let mut carried = false;
    let body = fill.structure(&resp.fields, &req.fields, Some(request), &mut carried);
    if !carried {
        return Ok(None);
    }
    let mut header = Map::new();
    header.insert("CorrelationId".into(), Value::from(correlation_id));
    let fs = FrameSpec {
        direction: Direction::Response,
        api_key,
        version,
        release,
    };
    encode_frame(cat, &fs, &header, &body)
        .map(Some)
        .map_err(|e| format!("{}: {}", e.path, e.message))
}

struct Fill<'a> {
    version: i16,
    code: i16,
    message: &'a str,
}

impl Fill<'_> {
    /// A response struct: its error code and message set, its topic and
    /// partition copied from the request's struct, its arrays of topics or
    /// partitions made from the request's. Other fields take their defaults.
    fn structure(
        &self,
        resp: &[FieldSpec],
        req: &[FieldSpec],
        from: Option<&Map<String, Value>>,
        carried: &mut bool,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        for f in resp.iter().filter(|f| f.is_regular_in(self.version)) {
            let meaning = crate::schema::model::FieldMeaning::of(f);
            if meaning == crate::schema::model::FieldMeaning::ErrorCode
                && matches!(f.ty, FieldType::Primitive(Primitive::Int16))
            {
                out.insert(f.name.clone(), Value::from(self.code));
                *carried = true;
            } else if f.name == "ErrorMessage"
                && matches!(f.ty, FieldType::Primitive(Primitive::String))
            {
                out.insert(f.name.clone(), Value::from(self.message));
            } else if let Some(kind) =
                topic_field(f).filter(|_| !matches!(f.ty, FieldType::Array(_)))
            {
                if let Some(v) =
                    from.and_then(|m| same_kind(req, m, |g| topic_field(g) == Some(kind)))
                {
                    out.insert(f.name.clone(), v.clone());
                }
            } else if is_partition_index(f) {
                if let Some(v) = from.and_then(|m| same_kind(req, m, is_partition_index)) {
                    out.insert(f.name.clone(), v.clone());
                }
            } else if let FieldType::Array(inner) = &f.ty {
                if !matches!(**inner, FieldType::Struct(_)) {
                    continue;
                }
                if let Some(made) = from.and_then(|m| self.array(f, req, m, carried)) {
                    out.insert(f.name.clone(), Value::Array(made));
                }
            } else if let Some(v) = from.and_then(|m| m.get(&f.name)).filter(|_| {
                // What the request names and the response echoes under the same
                // name and type (a resource's type and name, a group id).
                req.iter().any(|g| g.name == f.name && g.ty == f.ty)
            }) {
                out.insert(f.name.clone(), v.clone());
            }
        }
        out
    }
}

impl Fill<'_> {
    /// A response array of structs made from the request's array of the same
    /// level: of topics when the response's elements name a topic, of
    /// partitions when they name a partition; else an element per string or
    /// per number the request lists (DeleteTopics' names, OffsetFetch v0's
    /// partition indexes); else, for results (elements holding an error code),
    /// element by element from the request's one array of structs
    /// (CreateAcls' creations, DescribeConfigs' resources).
    fn array(
        &self,
        f: &FieldSpec,
        req: &[FieldSpec],
        from: &Map<String, Value>,
        carried: &mut bool,
    ) -> Option<Vec<Value>> {
        let struct_array = |g: &FieldSpec| {
            matches!(&g.ty, FieldType::Array(i) if matches!(**i, FieldType::Struct(_)))
                && from.contains_key(&g.name)
        };
        let by: Option<fn(&FieldSpec) -> bool> =
            if f.fields.iter().any(|g| topic_field(g).is_some()) {
                Some(|g| topic_field(g).is_some())
            } else if f.fields.iter().any(is_partition_index) {
                Some(is_partition_index)
            } else {
                None
            };
        let level = match by {
            Some(by) => req
                .iter()
                .find(|g| struct_array(g) && g.fields.iter().any(by)),
            // An answer per element of the request's one array of structs, when
            // the response's elements are results (with an error code, at
            // their level or below): not brokers, members or other lists the
            // broker makes up itself.
            None if holds_error_code(&f.fields) => {
                let mut arrays = req.iter().filter(|g| struct_array(g));
                match (arrays.next(), arrays.next()) {
                    (Some(one), None) => Some(one),
                    _ => None,
                }
            }
            None => None,
        };
        if let Some(spec) = level {
            let items = from.get(&spec.name)?.as_array()?;
            return Some(
                items
                    .iter()
                    .map(|item| {
                        let made =
                            self.structure(&f.fields, &spec.fields, item.as_object(), carried);
                        Value::Object(made)
                    })
                    .collect(),
            );
        }
        self.per_value((f, Primitive::String, is_string_key), req, from, carried)
            .or_else(|| {
                let by_partition = (
                    f,
                    Primitive::Int32,
                    is_partition_index as fn(&FieldSpec) -> bool,
                );
                self.per_value(by_partition, req, from, carried)
            })
    }

    /// A response array of structs made from the request's array of
    /// `primitive`s: each value put in the element's field that `is_key`
    /// picks, the error code and message set.
    fn per_value(
        &self,
        (f, primitive, is_key): (&FieldSpec, Primitive, fn(&FieldSpec) -> bool),
        req: &[FieldSpec],
        from: &Map<String, Value>,
        carried: &mut bool,
    ) -> Option<Vec<Value>> {
        let key = f
            .fields
            .iter()
            .find(|g| g.is_regular_in(self.version) && is_key(g))?;
        let values = req.iter().find_map(|g| {
            matches!(&g.ty, FieldType::Array(i) if **i == FieldType::Primitive(primitive))
                .then(|| from.get(&g.name)?.as_array())
                .flatten()
        })?;
        Some(
            values
                .iter()
                .map(|v| {
                    let mut o = self.structure(&f.fields, &[], None, carried);
                    o.insert(key.name.clone(), v.clone());
                    Value::Object(o)
                })
                .collect(),
        )
    }
}

/// A string field other than the message: the key of an element made per
/// string (DeleteTopics' names, FindCoordinator's keys).
fn is_string_key(g: &FieldSpec) -> bool {
    g.name != "ErrorMessage" && matches!(g.ty, FieldType::Primitive(Primitive::String))
}

/// The value of the request struct's field that `is` picks (its topic or partition).
fn same_kind<'m>(
    fields: &[FieldSpec],
    obj: &'m Map<String, Value>,
    is: impl Fn(&FieldSpec) -> bool,
) -> Option<&'m Value> {
    fields
        .iter()
        .filter(|g| !matches!(g.ty, FieldType::Array(_)) && is(g))
        .find_map(|g| obj.get(&g.name))
}

/// Whether fields hold an error code, at their level or in a struct below.
fn holds_error_code(fields: &[FieldSpec]) -> bool {
    fields
        .iter()
        .any(|g| g.name == "ErrorCode" || holds_error_code(&g.fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode_frame, DecodeOptions};
    use crate::render::json::frame_contract;
    use serde_json::json;

    fn cat() -> &'static Catalogue {
        Catalogue::builtin()
    }

    fn answer(api: &str, version: i16, body: Value, code: i16) -> Option<Value> {
        let key = cat().resolve_api(api).unwrap();
        let bytes = error_answer(
            cat(),
            None,
            (key, version, 7),
            body.as_object().unwrap(),
            code,
            "injected by kwire proxy (rule 1)",
        )
        .unwrap()?;
        let opts = DecodeOptions {
            direction: Some(Direction::Response),
            api_key: Some(key),
            api_version: Some(version),
            values_only: true,
            ..Default::default()
        };
        let frame = decode_frame(cat(), bytes::Bytes::from(bytes), 0, &opts);
        assert!(frame.error.is_none(), "{:?}", frame.error);
        Some(frame_contract(&frame))
    }

    /// Every error code in a contract's JSON, wherever it is.
    fn codes(v: &Value, out: &mut Vec<i64>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match x.as_i64() {
                        // ErrorCode, PartitionErrorCode, …
                        Some(c) if k.ends_with("ErrorCode") => out.push(c),
                        _ => codes(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| codes(x, out)),
            _ => {}
        }
    }

    /// For every API and version of the catalogue, from the smallest request
    /// and from one with the values a client sends: the made-up answer either
    /// is refused (None: nowhere to put the error) or decodes whole as that
    /// API's response at that version and carries the error code.
    #[test]
    fn every_api_and_version_gets_an_answer_that_decodes_and_carries_the_error() {
        let cat = cat();
        let (mut made, mut refused) = (0, Vec::new());
        for key in cat.api_keys() {
            for version in cat.versions(MessageKind::Request, key, None) {
                let Some(spec) = cat.message(MessageKind::Request, key, version, None) else {
                    continue;
                };
                let requests = [
                    crate::encode::example::smallest_struct(&spec.fields, version),
                    crate::encode::realistic::realistic_struct(&spec.fields, version),
                ];
                for (i, body) in requests.iter().enumerate() {
                    let at = format!("api {key} v{version} request {i}");
                    let got = error_answer(cat, None, (key, version, 9), body, 15, "m");
                    let bytes = match got {
                        Ok(Some(b)) => b,
                        Ok(None) => {
                            refused.push(at);
                            continue;
                        }
                        Err(e) => panic!("{at}: {e}"),
                    };
                    let opts = DecodeOptions {
                        direction: Some(Direction::Response),
                        api_key: Some(key),
                        api_version: Some(version),
                        values_only: true,
                        ..Default::default()
                    };
                    let frame = decode_frame(cat, bytes::Bytes::from(bytes), 0, &opts);
                    assert!(frame.error.is_none(), "{at}: {:?}", frame.error);
                    let mut found = Vec::new();
                    codes(&frame_contract(&frame)["body"], &mut found);
                    assert!(found.contains(&15), "{at}: no ErrorCode 15 in {found:?}");
                    made += 1;
                }
            }
        }
        // Two APIs are refused, and said so at the proxy: AlterReplicaLogDirs,
        // whose answer lists topics the request holds one level deeper (under
        // each log dir), and AlterUserScramCredentials, whose answer lists
        // users from two request arrays (deletions and upsertions) in an
        // order the request does not give.
        let apis: std::collections::BTreeSet<&str> =
            refused.iter().filter_map(|r| r.split(' ').nth(1)).collect();
        assert_eq!(
            apis.into_iter().collect::<Vec<_>>(),
            ["34", "51"],
            "{refused:?}"
        );
        assert!(made > 700, "{made} answers made");
    }

    #[test]
    fn a_produce_answer_names_each_partition_with_the_error() {
        let got = answer(
            "Produce",
            9,
            json!({"Acks": -1, "TimeoutMs": 1000, "TopicData": [
                {"Name": "a", "PartitionData": [{"Index": 0, "Records": null}, {"Index": 3, "Records": null}]},
                {"Name": "b", "PartitionData": [{"Index": 1, "Records": null}]}]}),
            6,
        )
        .unwrap();
        assert_eq!(got["header"]["CorrelationId"], 7);
        let topics = got["body"]["Responses"].as_array().unwrap();
        let seen: Vec<(String, i64, i64, String)> = topics
            .iter()
            .flat_map(|t| {
                t["PartitionResponses"].as_array().unwrap().iter().map(|p| {
                    (
                        t["Name"].as_str().unwrap().to_string(),
                        p["Index"].as_i64().unwrap(),
                        p["ErrorCode"].as_i64().unwrap(),
                        p["ErrorMessage"].as_str().unwrap().to_string(),
                    )
                })
            })
            .collect();
        let m = "injected by kwire proxy (rule 1)".to_string();
        assert_eq!(
            seen,
            [
                ("a".into(), 0, 6, m.clone()),
                ("a".into(), 3, 6, m.clone()),
                ("b".into(), 1, 6, m)
            ]
        );
    }

    #[test]
    fn group_and_fetch_answers_carry_the_error_where_their_responses_do() {
        let join = answer(
            "JoinGroup",
            5,
            json!({"GroupId": "g", "MemberId": "", "ProtocolType": "consumer", "Protocols": []}),
            15,
        )
        .unwrap();
        assert_eq!(join["body"]["ErrorCode"], 15);
        let fetch = answer(
            "Fetch",
            12,
            json!({"Topics": [{"Topic": "t", "Partitions": [{"Partition": 2}]}]}),
            6,
        )
        .unwrap();
        assert_eq!(fetch["body"]["Responses"][0]["Topic"], "t");
        assert_eq!(
            fetch["body"]["Responses"][0]["Partitions"][0]["PartitionIndex"],
            2
        );
        assert_eq!(
            fetch["body"]["Responses"][0]["Partitions"][0]["ErrorCode"],
            6
        );
        let find = answer(
            "FindCoordinator",
            6,
            json!({"KeyType": 0, "CoordinatorKeys": ["g1", "g2"]}),
            15,
        )
        .unwrap();
        let keys: Vec<(&str, i64)> = find["body"]["Coordinators"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["Key"].as_str().unwrap(), c["ErrorCode"].as_i64().unwrap()))
            .collect();
        assert_eq!(keys, [("g1", 15), ("g2", 15)]);
        // A Metadata request for every topic: its answer has nowhere to carry an error.
        assert_eq!(answer("Metadata", 9, json!({"Topics": null}), 5), None);
        // For named topics: each with the error, and no broker made up from them.
        let metadata = answer(
            "Metadata",
            12,
            json!({"Topics": [{"Name": "t1"}, {"Name": "t2"}], "AllowAutoTopicCreation": true,
                   "IncludeTopicAuthorizedOperations": false}),
            5,
        )
        .unwrap();
        assert_eq!(metadata["body"]["Brokers"], json!([]));
        assert_eq!(metadata["body"]["Topics"][1]["Name"], "t2");
        assert_eq!(metadata["body"]["Topics"][1]["ErrorCode"], 5);
        let join = answer(
            "JoinGroup",
            5,
            json!({"GroupId": "g", "MemberId": "", "ProtocolType": "consumer",
                   "Protocols": [{"Name": "range", "Metadata": ""}]}),
            15,
        )
        .unwrap();
        assert_eq!(join["body"]["Members"], json!([]));
    }

    #[test]
    fn rules_parse_and_fire_as_they_say() {
        let r = parse_rule(cat(), "Produce:error=not_leader_or_follower:every=5", 1, 0).unwrap();
        assert_eq!(
            (r.api_key, &r.action, &r.when),
            (0, &Action::Error(6), &When::Every(5))
        );
        let faults = Faults { rules: vec![r] };
        let asked = Asked {
            api_key: 0,
            client_id: None,
            topics: &[],
        };
        let fired: Vec<bool> = (0..10).map(|_| faults.decide(&asked).is_some()).collect();
        assert_eq!(
            fired,
            [false, false, false, false, true, false, false, false, false, true]
        );
        for bad in [
            "Nope:drop",
            "Produce:error=NO_SUCH_ERROR",
            "Produce:drop:every=0",
            "Produce:drop:rate=2",
            "Produce:explode",
            "Produce",
            "Produce:drop:close",
            "Produce:drop:every=2:rate=0.5",
            "Produce:drop:every=2:every=3",
        ] {
            assert!(parse_rule(cat(), bad, 1, 0).is_err(), "{bad}");
        }
        // A topic and a client id narrow a rule; a seeded rate draws the same every run.
        let t = parse_rule(
            cat(),
            "Fetch:topic=orders:client=c1:delay=300:rate=0.5",
            2,
            42,
        )
        .unwrap();
        let faults = Faults { rules: vec![t] };
        let topics = ["orders".to_string()];
        let other = ["other".to_string()];
        let on = |topics: &[String], client: Option<&str>| {
            faults
                .decide(&Asked {
                    api_key: 1,
                    client_id: client,
                    topics,
                })
                .is_some()
        };
        assert!(!on(&other, Some("c1")) && !on(&topics, Some("c2")));
        let draws: Vec<bool> = (0..200).map(|_| on(&topics, Some("c1"))).collect();
        let hits = draws.iter().filter(|d| **d).count();
        assert!((70..130).contains(&hits), "{hits} of 200 at rate 0.5");
    }
}
