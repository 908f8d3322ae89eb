//! The display filter page: the language `--filter` takes, its facts, its
//! operators and what they mean, with examples a Kafka engineer asks.

use super::{Block, Cell, Page, Section, Table};
use crate::analysis::expr::compile::FACTS;

pub const PATH: &str = "filters";

/// Examples, each with the question it answers.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "ErrorCode != 0",
        "any exchange where some error code is not 0",
    ),
    (
        "error == NOT_COORDINATOR",
        "responses naming NOT_COORDINATOR (the exchange's fact)",
    ),
    (
        "api == JoinGroup and ErrorCode == MEMBER_ID_REQUIRED and version < 4",
        "JoinGroup answers with MEMBER_ID_REQUIRED below v4 (a broker may not send it there)",
    ),
    (
        "api == Fetch and MaxWaitMs > 500",
        "fetches that let the broker wait over half a second",
    ),
    (
        "client_id matches \"^console-\" and latency > 100ms",
        "slow exchanges of console tools",
    ),
    (
        "topic == orders and direction == response and size > 1MiB",
        "large responses about one topic",
    ),
    (
        "body.Topics.Partitions.ErrorCode in {NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH}",
        "partition errors at one place of the message",
    ),
    ("Acks == 0", "produce requests that want no acknowledgement"),
    (
        "record.key contains \"order-7\"",
        "frames with a record whose key holds order-7, in compressed batches too",
    ),
    (
        "record.headers.key == \"traceparent\" and api == Fetch",
        "fetches returning records with a trace header",
    ),
    (
        "not api in {ApiVersions, Metadata, Heartbeat}",
        "everything but the chatter",
    ),
    (
        "TopicId == \"Ntjl7mQ5S0iAlzF1kVTWOA\"",
        "a topic id, as Kafka prints it (hyphenated works too)",
    ),
];

pub fn filters_page() -> Page {
    let mut facts = Table {
        head: ["fact", "what it is"].map(String::from).to_vec(),
        ..Default::default()
    };
    for (name, _, about) in FACTS {
        facts.rows.push(vec![Cell::text(*name), Cell::text(*about)]);
    }
    let operators = Table {
        head: ["operator", "means"].map(String::from).to_vec(),
        rows: [
            ("NAME", "a fact that holds (error: a non-zero code; latency: answered), or a field that is there and not null"),
            ("== != < <= > >=", "compare (= is ==); numbers, strings and bytes (byte order), bools and uuids (== and != only)"),
            ("contains \"text\"", "a string or bytes field (or client_id, topic) holds the text"),
            ("matches \"regex\"", "a regular expression (Rust's regex syntax, linear time) finds a match"),
            ("in {a, b, c}", "equal to one of them"),
            ("and or not ( )", "also && || !; not binds tightest, then and, then or"),
        ]
        .iter()
        .map(|(o, m)| vec![Cell::text(*o), Cell::text(*m)])
        .collect(),
        ..Default::default()
    };
    let examples = Table {
        head: ["expression", "selects"].map(String::from).to_vec(),
        rows: EXAMPLES
            .iter()
            .map(|(e, m)| vec![Cell::text(*e), Cell::text(*m)])
            .collect(),
        ..Default::default()
    };
    Page {
        path: PATH.into(),
        title: "Display filters".into(),
        blocks: vec![Block::Para(
            "kwire capture, stats, inventory, report, check (the findings that name a frame it selects), export (the rows of the exchanges it selects) and proxy take --filter EXPR (or -Y EXPR), and the explorer's f key takes the same text: an expression over the facts of an exchange and every field of its frames, by the names the definitions give them. kwire filter EXPR says what each name resolved to; kwire filter --fields API lists an API's field paths with their types and versions.".into(),
        )],
        sections: vec![
            Section::new(
                "What selects",
                vec![
                    Block::Para("An exchange is a request and its response. It is selected when the expression holds on the request or on the response: facts of the exchange (api, version, conn, client_id, topic, error, latency, correlation_id) are the same for both, direction, size, frame and finding (the rules of kwire check's findings naming it, read from the whole capture first) are the frame's own, and fields are the frame's own. A listing then shows both frames.".into()),
                    Block::Para("A test of a field holds when some occurrence passes: every element of an array, the field in every struct of an array, and a bare name anywhere in the message. So ErrorCode != 0 is \"some error code is not 0\", and not ErrorCode == 0 is \"no error code is 0\" (also true of a request, which has none). A field no frame of that API and version has never passes.".into()),
                    Block::Para("Names: a bare name (ErrorCode) matches the field anywhere, header or body; a dotted path matches fields whose path ends so (Partitions.ErrorCode); header.NAME and body.PATH start at the top. Every name is checked against the definitions when the expression is read: a name no definition has is an error, with the nearest names that exist.".into()),
                    Block::Para("Values: numbers (-1, 0x1f, 2.5), strings in double quotes (escapes \\\" \\\\ \\n \\t \\r \\0 \\xHH), and bare words, which are read as the field needs them: an error name as its code, an API name as its key, true and false as bools, and otherwise as text (GroupId == my-group). latency takes us, ms or s (a bare number is ms); size takes B, KB, KiB, MB, MiB, GB or GiB.".into()),
                    Block::Para("Deciding: a listing shows a request when its exchange is decided. A request that passes comes out at once; one whose response could still decide waits for it (at most until the capture ends, or until its correlation id is reused); one that cannot pass and whose response cannot either is dropped at once. A request never answered has no latency, but waited: latency > X holds when it waited longer.".into()),
                    Block::Para("Records: record.key, record.value, record.headers.key, record.headers.value (bytes: compared as text, contains, matches), record.offset and record.timestamp (the batch's base plus the record's delta, as on the wire: a producer's offsets start at 0) test every record of every records field of the frame (Produce requests, Fetch and ShareFetch responses), compressed batches decompressed within one budget per frame (256 MiB decompressed). A record test passes when some record passes.".into()),
                ],
            )
            .with_id("meaning"),
            Section::new(
                "Selecting records",
                vec![Block::Para("kwire records CAPTURE --filter EXPR selects records, not exchanges: record tests apply to each record itself, with api, direction, conn, frame and topic of the frame it came in (a record's row knows nothing of its exchange, so other facts and other fields are refused). There record.offset is the offset in the frame, as the producer sent it or the broker fetched it; the listing shows a produced record's broker-assigned offset when the capture has the Produce response.".into())],
            )
            .with_id("records"),
            Section::new(
                "Saving a selection",
                vec![Block::Para("kwire capture CAPTURE --filter EXPR --write-selected FILE writes the frames it shows to a pcapng file, each connection's TCP synthesized around them (a handshake, the frames at their captured times, and at the end both FINs of each connection both sides closed), decrypted when the capture was TLS, with credentials masked unless --show-secrets. kwire proxy --write-selected FILE does the same with what it prints, while --write-pcap keeps everything that passed.".into())],
            )
            .with_id("saving"),
            Section::new("Facts", vec![Block::Table(facts)]).with_id("facts"),
            Section::new("Operators", vec![Block::Table(operators)]).with_id("operators"),
            Section::new("Examples", vec![Block::Table(examples)]).with_id("examples"),
            Section::new(
                "The command line's shorthands",
                vec![Block::Para("--api NAME, --topic NAME, --client-id ID, --conn N, --error [NAME] and --min-latency MS are kept, and read as api == NAME, topic == \"NAME\", client_id == \"ID\", conn == N, error (or error == NAME) and latency >= MSms, joined by and with --filter's expression.".into())],
            )
            .with_id("shorthands"),
        ],
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_example_reads() {
        let cat = crate::schema::Catalogue::builtin();
        for (e, _) in super::EXAMPLES {
            if let Err(err) = crate::analysis::filter::Filter::parse(cat, e) {
                panic!("{}", err.show(e));
            }
        }
    }
}
