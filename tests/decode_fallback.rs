//! `decode` never shows a made-up request tree without a word: a frame that
//! does not read as a request is tried as every response, shown as the best
//! that fits with the candidates named, or reported as neither.

mod common;

fn run(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let out = common::kwire_with_stdin(args, stdin);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_response_given_without_flags_is_shown_as_the_response_it_reads_as() {
    let (status, out, err) = run(&["decode", &sample("fetch-v12-response.hex")], b"");
    assert_eq!(status, 0, "{err}");
    assert!(out.starts_with("FetchResponse message v12"), "{out}");
    assert!(
        err.contains("does not decode as a request") && err.contains("Fetch v12"),
        "{err}"
    );
    assert!(!out.contains("ProduceRequest"), "no made-up request tree");
    // `check` reads it alike: no error about a made-up request.
    let (status, out, err) = run(&["check", &sample("fetch-v12-response.hex")], b"");
    assert_eq!(
        (status, out.as_str()),
        (0, "1 frame checked: 0 errors, 0 warnings, 0 notes\n"),
        "{err}"
    );
    assert!(err.contains("taken for Fetch v12"), "{err}");
    // Several responses fit: the best is shown and the others named.
    let (status, out, err) = run(
        &["decode", &sample("write-share-group-state-v0-response.hex")],
        b"",
    );
    assert_eq!(status, 0, "{err}");
    assert!(out.starts_with("WriteShareGroupStateResponse"), "{out}");
    assert!(err.contains("DeleteShareGroupState v0"), "{err}");
    // The JSON says which it is.
    let (_, out, _) = run(
        &["decode", "--json", &sample("fetch-v12-response.hex")],
        b"",
    );
    assert!(
        out.starts_with(
            "{\"kind\":\"response\",\"api_key\":1,\"api_name\":\"Fetch\",\"api_version\":12"
        ),
        "{out}"
    );
}

#[test]
fn a_frame_that_is_neither_says_so_and_flags_turn_guessing_off() {
    // Five bytes whose last is a varint that never ends: no request, no response.
    let (status, _, err) = run(&["decode", "-"], b"00000005 ffffffff80");
    assert_eq!(status, 2);
    assert!(err.contains("--response --api NAME --version N"), "{err}");
    // --request: the request reading stands, with its error.
    let (status, out, err) = run(
        &["decode", "--request", &sample("fetch-v12-response.hex")],
        b"",
    );
    assert_eq!(status, 2);
    assert!(out.starts_with("ProduceRequest"), "{out}");
    assert!(!err.contains("reads as a response"), "{err}");
}
