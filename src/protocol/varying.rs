//! Facts for replaying a conversation against another broker (`kwire
//! replay`): the response fields whose values legitimately differ from one
//! broker (or one run) to the next, and the fields whose values a broker
//! hands out for the client to send back later, which `--map` carries from
//! the new broker's answers into the requests that follow.

/// Response fields compared by default in no replay, by name wherever they
/// are: times the broker stamps, its node ids and addresses, ids it makes up
/// (cluster, topic, producer, member, fetch session), and free-text messages.
/// `record.timestamp` is a record's own timestamp inside records data (the
/// broker's append time when the topic stamps it).
pub const VARIES: &[(&str, &str)] = &[
    (
        "ThrottleTimeMs",
        "how long the broker asks the client to wait",
    ),
    ("LogAppendTimeMs", "the broker's clock"),
    ("Timestamp", "the broker's clock"),
    (
        "record.timestamp",
        "the broker's clock when it stamps records",
    ),
    ("NodeId", "the new broker's node ids"),
    ("BrokerId", "the new broker's node ids"),
    ("LeaderId", "the new broker's node ids"),
    ("ControllerId", "the new broker's node ids"),
    ("ReplicaNodes", "the new broker's node ids"),
    ("IsrNodes", "the new broker's node ids"),
    ("OfflineReplicas", "the new broker's node ids"),
    ("Host", "the new broker's address"),
    ("Port", "the new broker's address"),
    ("Rack", "the new broker's address"),
    ("ClusterId", "made up by each cluster"),
    ("TopicId", "made up by each cluster"),
    ("ProducerId", "made up by each broker"),
    ("ProducerEpoch", "made up by each broker"),
    ("MemberId", "made up by each coordinator"),
    ("Leader", "a member id, made up by each coordinator"),
    ("SessionId", "made up by each broker"),
    ("ClientInstanceId", "made up by each broker"),
    ("ErrorMessage", "free text"),
];

/// Fields whose values a broker hands out and the client sends back: with
/// `--map`, a value the captured answer had is replaced, in every later
/// request, by the value the new broker gave instead.
pub const HANDED_OUT: &[&str] = &[
    "ProducerId",
    "ProducerEpoch",
    "MemberId",
    "GenerationId",
    "SessionId",
    "TopicId",
    "ClientInstanceId",
];
