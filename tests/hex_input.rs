//! Pasted hex text as `kwire decode` reads it (`input::to_bytes`, deciding
//! the shape itself): real `hexdump` and `od -x` word dumps of the shipped
//! samples, and `*` repeat lines that ask for more than the text may expand to.

use kwire::input::{base64_decode, hex_text, to_bytes, InputKind};
use std::path::Path;
use std::process::{Command, Stdio};

fn sample(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    hex_text::parse_hex_text(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn auto(text: &str) -> Result<Vec<u8>, String> {
    to_bytes(text.as_bytes().to_vec(), InputKind::Auto).map(|b| b.to_vec())
}

/// `hexdump samples/write-share-group-state-v0-request.bin` (78 bytes), as
/// bsdextrautils' hexdump prints it, trailing spaces included.
const WRITE_SHARE_HEXDUMP: &str = "\
0000000 0000 4a00 5500 0000 0000 0000 0000 0100
0000010 0002 0000 0000 0000 0000 0000 0000 0000
0000020 0200 0000 0000 0000 0000 0000 0000 0000
0000030 0000 0000 0000 0002 0000 0000 0000 0000
0000040 0000 0000 0000 0000 0000 0000 0000     
000004e
";

/// `hexdump` of the 41-byte delete-share-group-state-v0-request: the last
/// word carries a zero padding byte that the closing offset leaves out.
const DELETE_SHARE_HEXDUMP: &str = "\
0000000 0000 2500 5600 0000 0000 0000 0000 0100
0000010 0002 0000 0000 0000 0000 0000 0000 0000
0000020 0200 0000 0000 0000 0000               
0000029
";

/// `od -x` of the same 41 bytes: octal offsets.
const DELETE_SHARE_OD_X: &str = "\
0000000 0000 2500 5600 0000 0000 0000 0000 0100
0000020 0002 0000 0000 0000 0000 0000 0000 0000
0000040 0200 0000 0000 0000 0000
0000051
";

/// `hexdump -x` of the same 41 bytes: wider gaps.
const DELETE_SHARE_HEXDUMP_X: &str = "\
0000000    0000    2500    5600    0000    0000    0000    0000    0100
0000010    0002    0000    0000    0000    0000    0000    0000    0000
0000020    0200    0000    0000    0000    0000                        
0000029
";

/// `hexdump` of 40 zero bytes followed by the write-share request: a `*` line.
const ZEROS_THEN_WRITE_SHARE_HEXDUMP: &str = "\
0000000 0000 0000 0000 0000 0000 0000 0000 0000
*
0000020 0000 0000 0000 0000 0000 4a00 5500 0000
0000030 0000 0000 0000 0100 0002 0000 0000 0000
0000040 0000 0000 0000 0000 0200 0000 0000 0000
0000050 0000 0000 0000 0000 0000 0000 0000 0002
0000060 0000 0000 0000 0000 0000 0000 0000 0000
0000070 0000 0000 0000                         
0000076
";

#[test]
fn hexdump_words_of_a_sample_read_as_the_sample() {
    let want = sample("write-share-group-state-v0-request.hex");
    assert_eq!(auto(WRITE_SHARE_HEXDUMP).unwrap(), want);
    let mut zeros_first = vec![0u8; 40];
    zeros_first.extend(&want);
    assert_eq!(auto(ZEROS_THEN_WRITE_SHARE_HEXDUMP).unwrap(), zeros_first);
}

#[test]
fn odd_length_word_dumps_are_not_taken_for_base64() {
    let want = sample("delete-share-group-state-v0-request.hex");
    assert_eq!(want.len(), 41);
    // All letters and digits in groups of four: base64 would take it too.
    assert!(base64_decode(DELETE_SHARE_HEXDUMP).is_some());
    for (tool, text) in [
        ("hexdump", DELETE_SHARE_HEXDUMP),
        ("od -x", DELETE_SHARE_OD_X),
        ("hexdump -x", DELETE_SHARE_HEXDUMP_X),
    ] {
        assert_eq!(auto(text).as_deref(), Ok(&want[..]), "{tool}");
    }
}

#[test]
fn a_damaged_word_dump_reports_where_not_base64_garbage() {
    // A letter O typed for a zero in the first row.
    let damaged = DELETE_SHARE_HEXDUMP.replacen("0100", "01O0", 1);
    assert!(
        base64_decode(&damaged).is_some_and(|b| !b.is_empty()),
        "base64 would take it"
    );
    let e = auto(&damaged).unwrap_err();
    assert!(e.contains("line 1, column 44"), "{e}");
}

/// 90 bytes of `hexdump -C` text whose `*` line claims 64 MiB of zeros.
const REPEAT_BOMB: &str = "\
00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
*
03fffff0
";

#[test]
fn a_repeat_line_over_the_budget_is_an_error_not_an_abort() {
    assert_eq!(REPEAT_BOMB.len(), 90);
    let e = auto(REPEAT_BOMB).unwrap_err();
    assert!(
        e.contains("line 2, column 1: '*' repeat line would add 67108832 bytes"),
        "{e}"
    );
    assert!(e.contains("at most 1050016 bytes"), "{e}");

    // The command exits with that error instead of decoding frames until it aborts.
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["decode", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kwire");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(REPEAT_BOMB.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("line 2, column 1: '*' repeat line"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// Runs `kwire ARGS` with `stdin`; (status, stdout, stderr).
fn kwire_with_input(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kwire");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn kwire_reads_back_its_own_grid_with_cr_or_lf_line_breaks() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    for name in ["produce-v9-request.hex", "join-group-v9-request.hex"] {
        let path = samples.join(name).display().to_string();
        let (status, tree, _) = kwire_with_input(&["decode", &path], b"");
        assert_eq!(status, Some(0), "{name}");
        // Two frames: each grid's offsets start again at 0.
        let mut twice = std::fs::read(samples.join(name)).unwrap();
        twice.extend(std::fs::read(samples.join(name)).unwrap());
        let (status, grid, err) = kwire_with_input(&["decode", "--format", "grid", "-"], &twice);
        assert_eq!(status, Some(0), "{err}");
        for ending in ["\n", "\r", "\r\n"] {
            let pasted = grid.replace('\n', ending);
            let (status, back, err) = kwire_with_input(&["decode", "-"], pasted.as_bytes());
            assert_eq!(status, Some(0), "{name} {ending:?}: {err}");
            let frames: Vec<&str> = back.split("# frame ").skip(1).collect();
            assert_eq!(frames.len(), 2, "{name} {ending:?}:\n{back}");
            for f in frames {
                let body = f.split_once('\n').unwrap().1.trim_end();
                assert_eq!(body, tree.trim_end(), "{name} {ending:?}");
            }
        }
    }
}

#[test]
fn a_frame_without_its_size_prefix_is_read_with_one_added_and_said() {
    let frame = sample("join-group-v9-request.hex");
    let (_, want, _) = kwire_with_input(&["decode", "--binary", "-"], &frame);
    let bare = hex::encode(&frame[4..]);
    let (status, tree, err) = kwire_with_input(&["decode", "-"], bare.as_bytes());
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(tree, want);
    assert!(
        err.contains("reads as one frame without its 4-byte size prefix")
            && err.contains("--framing prefixed reads the bytes as given"),
        "{err}"
    );
    // The other reading, on request: the first 4 bytes taken for a size.
    let (status, _, err) =
        kwire_with_input(&["decode", "--framing", "prefixed", "-"], bare.as_bytes());
    assert_eq!(status, Some(2), "{err}");
    assert!(!err.contains("size prefix"), "{err}");
    // `bare` adds the prefix without asking.
    let (status, tree, err) =
        kwire_with_input(&["decode", "--framing", "bare", "-"], bare.as_bytes());
    assert_eq!((status, tree), (Some(0), want), "{err}");
    // A whole frame is read as given, with no note.
    let (status, _, err) = kwire_with_input(&["decode", "--binary", "-"], &frame);
    assert_eq!(status, Some(0));
    assert!(err.is_empty(), "{err}");
}
