//! Parser: structure, leniency and error line numbers.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::path::PathBuf;

use oi_apply_patch::{FileHunk, HunkLine, UpdateChunk, parse_patch};

fn ctx(s: &str) -> HunkLine {
    HunkLine::Context(s.into())
}
fn del(s: &str) -> HunkLine {
    HunkLine::Remove(s.into())
}
fn add(s: &str) -> HunkLine {
    HunkLine::Add(s.into())
}

#[test]
fn parses_every_section_kind() {
    let patch = parse_patch(
        "*** Begin Patch\n\
         *** Add File: path/to/new.txt\n\
         +line one\n\
         +line two\n\
         *** Update File: src/lib.rs\n\
         *** Move to: src/renamed.rs\n\
         @@ fn context_line\n \
         unchanged\n\
         -removed\n\
         +added\n\
         @@\n\
         -another\n\
         +replacement\n\
         *** End of File\n\
         *** Delete File: old.txt\n\
         *** End Patch\n",
    )
    .unwrap();
    assert_eq!(
        patch.hunks,
        vec![
            FileHunk::Add {
                path: "path/to/new.txt".into(),
                contents: "line one\nline two\n".into()
            },
            FileHunk::Update {
                path: "src/lib.rs".into(),
                move_to: Some("src/renamed.rs".into()),
                chunks: vec![
                    UpdateChunk {
                        change_context: Some("fn context_line".into()),
                        lines: vec![ctx("unchanged"), del("removed"), add("added")],
                        is_end_of_file: false,
                        patch_line: 7,
                    },
                    UpdateChunk {
                        change_context: None,
                        lines: vec![del("another"), add("replacement")],
                        is_end_of_file: true,
                        patch_line: 11,
                    },
                ],
            },
            FileHunk::Delete {
                path: "old.txt".into()
            },
        ]
    );
    let FileHunk::Update { chunks, .. } = &patch.hunks[1] else {
        unreachable!()
    };
    assert_eq!(chunks[0].old_lines(), vec!["unchanged", "removed"]);
    assert_eq!(chunks[0].new_lines(), vec!["unchanged", "added"]);
}

#[test]
fn envelope_leniency() {
    let bare = "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n";
    let want = vec![FileHunk::Delete {
        path: PathBuf::from("a.txt"),
    }];
    let cases = [
        bare.to_string(),
        bare.trim_end().to_string(),
        bare.replace('\n', "\r\n"),
        format!("\n\n  {bare}\n\n"),
        format!("<<'EOF'\n{bare}EOF\n"),
        format!("<<EOF\n{bare}EOF"),
        format!("apply_patch <<'EOF'\n{bare}EOF\n"),
        format!("bash -lc \"apply_patch <<'EOF'\n{bare}EOF\n\""),
        "*** Begin Patch  \n*** Delete File:   a.txt  \n  *** End Patch".to_string(),
    ];
    for input in cases {
        let got = parse_patch(&input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(got.hunks, want, "{input:?}");
    }
}

#[test]
fn hunk_leniency() {
    // First chunk without `@@`, blank context without its space, unified-diff ranges,
    // and `\ No newline` markers.
    let patch = parse_patch(
        "*** Begin Patch\n\
         *** Update File: a.py\n \
         def f():\n\
         \n\
         -    return 1\n\
         +    return 2\n\
         @@ -10,2 +10,2 @@ class C:\n\
         -x\n\
         \\ No newline at end of file\n\
         +y\n\
         *** End Patch",
    )
    .unwrap();
    let FileHunk::Update { chunks, .. } = &patch.hunks[0] else {
        panic!("not an update")
    };
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].change_context, None);
    assert_eq!(
        chunks[0].lines,
        vec![
            ctx("def f():"),
            ctx(""),
            del("    return 1"),
            add("    return 2")
        ]
    );
    assert_eq!(chunks[1].change_context.as_deref(), Some("class C:"));
    assert_eq!(chunks[1].lines, vec![del("x"), add("y")]);
}

#[test]
fn add_file_edge_cases() {
    let patch = parse_patch(
        "*** Begin Patch\n*** Add File: empty.txt\n*** Add File: blank.txt\n+\n+\n*** End Patch\n",
    )
    .unwrap();
    assert_eq!(
        patch.hunks,
        vec![
            FileHunk::Add {
                path: "empty.txt".into(),
                contents: String::new()
            },
            FileHunk::Add {
                path: "blank.txt".into(),
                contents: "\n\n".into()
            },
        ]
    );
}

#[test]
fn move_only_update_is_allowed() {
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b/a.txt\n*** End Patch\n",
    )
    .unwrap();
    assert_eq!(
        patch.hunks,
        vec![FileHunk::Update {
            path: "a.txt".into(),
            move_to: Some("b/a.txt".into()),
            chunks: vec![]
        }]
    );
}

#[test]
fn errors_name_line_and_expectation() {
    // (input, line, fragment of the message)
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "empty patch"),
        (
            "*** Delete File: a\n*** End Patch",
            1,
            "expected '*** Begin Patch'",
        ),
        (
            "hello\n*** Begin Patch\n*** Delete File: a\n*** End Patch",
            1,
            "expected '*** Begin Patch'",
        ),
        (
            "*** Begin Patch\n*** Delete File: a\n",
            3,
            "without '*** End Patch'",
        ),
        (
            "*** Begin Patch\n*** Delete File: a",
            2,
            "without '*** End Patch'",
        ),
        (
            "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch",
            2,
            "unknown line",
        ),
        (
            "*** Begin Patch\n*** Update File: a\nfoo\n*** End Patch",
            3,
            "must start with ' ' (context)",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n-x\nbar\n*** End Patch",
            5,
            "\"bar\"",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            2,
            "has no changes",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@ foo\n*** End Patch",
            3,
            "empty hunk",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n@@\n-x\n*** End Patch",
            3,
            "empty hunk",
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch",
            4,
            "must start with '+'",
        ),
        (
            "*** Begin Patch\n*** Add File: \n*** End Patch",
            2,
            "needs a file path",
        ),
        (
            "*** Begin Patch\n*** Delete File: a\n-x\n*** End Patch",
            3,
            "has no body",
        ),
        (
            "*** Begin Patch\n*** Delete File: a\n*** End Patch\nrm -rf /\n",
            4,
            "after '*** End Patch'",
        ),
        ("*** Begin Patch\n\n*** End Patch\n", 3, "no file sections"),
        (
            "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch",
            3,
            "must follow hunk lines",
        ),
        // Line numbers count the heredoc wrapper line too.
        (
            "<<'EOF'\n*** Begin Patch\n*** Bogus\n*** End Patch\nEOF\n",
            3,
            "unknown line",
        ),
    ];
    for (input, line, fragment) in cases {
        let err = parse_patch(input).expect_err(input);
        assert_eq!(err.line, *line, "{input:?}: {err}");
        let shown = err.to_string();
        assert!(
            shown.starts_with(&format!("Invalid patch at line {line}: ")),
            "{shown}"
        );
        assert!(shown.contains(fragment), "{input:?}: {shown}");
    }
}
