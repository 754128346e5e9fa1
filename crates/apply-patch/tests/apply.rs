//! Planning and applying against a real temp directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::fs;
use std::path::{Path, PathBuf};

use oi_apply_patch::{
    ApplyError, PlannedKind, apply_patch, extract_from_argv, parse_patch, plan_patch,
};
use oi_protocol::protocol::FileChange;
use tempfile::TempDir;

fn setup(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
    dir
}

fn read(dir: &TempDir, path: &str) -> String {
    fs::read_to_string(dir.path().join(path)).unwrap()
}

fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// Every regular file under `root` (relative path → content), to prove nothing else changed.
fn snapshot(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
                out.push((
                    path.strip_prefix(root).unwrap().to_path_buf(),
                    "<dir>".into(),
                ));
            } else {
                let content = fs::read_to_string(&path).unwrap();
                out.push((path.strip_prefix(root).unwrap().to_path_buf(), content));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn update_cases() {
    // (name, original file, patch body for file "f", expected file)
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "simple replace",
            "a\nb\nc\n",
            "@@\n a\n-b\n+B\n c\n",
            "a\nB\nc\n",
        ),
        ("first chunk without @@", "a\nb\n", "-a\n+A\n", "A\nb\n"),
        (
            "multiple hunks in order",
            "1\n2\n3\n4\n5\n6\n7\n8\n",
            "@@\n 1\n-2\n+two\n@@\n 6\n-7\n+seven\n",
            "1\ntwo\n3\n4\n5\n6\nseven\n8\n",
        ),
        (
            "context header disambiguates",
            "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n",
            "@@ fn b() {\n-    x();\n+    y();\n",
            "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n",
        ),
        (
            "end-of-file anchor picks the last occurrence",
            "}\nmiddle\n}\n",
            "@@\n-}\n+};\n*** End of File\n",
            "}\nmiddle\n};\n",
        ),
        (
            "append at eof",
            "a\n",
            "@@\n+b\n*** End of File\n",
            "a\nb\n",
        ),
        (
            "pure insertion after header",
            "x\ny\nz\n",
            "@@ x\n+inserted\n",
            "x\ninserted\ny\nz\n",
        ),
        (
            "eof insertion with header",
            "x\ny\n",
            "@@ x\n+last\n*** End of File\n",
            "x\ny\nlast\n",
        ),
        (
            "trailing whitespace ignored, file text kept",
            "keep   \nold\n",
            "@@\n keep\n-old\n+new\n",
            "keep   \nnew\n",
        ),
        (
            "indentation ignored",
            "    if x:\n        go()\n",
            "@@\n if x:\n-    go()\n+        stop()\n",
            "    if x:\n        stop()\n",
        ),
        (
            "unicode punctuation folded",
            "msg = \u{201C}it\u{2019}s \u{2014} fine\u{201D}\n",
            "@@\n-msg = \"it's - fine\"\n+msg = \"ok\"\n",
            "msg = \"ok\"\n",
        ),
        (
            "crlf preserved",
            "a\r\nb\r\nc\r\n",
            "@@\n a\n-b\n+B\n+B2\n",
            "a\r\nB\r\nB2\r\nc\r\n",
        ),
        (
            "no final newline stays without",
            "a\nb",
            "@@\n-b\n+c\n",
            "a\nc",
        ),
        ("final newline kept", "a\nb\n", "@@\n-b\n+c\n", "a\nc\n"),
        ("empty file gets newline", "", "@@\n+first\n", "first\n"),
        ("delete everything", "only\n", "@@\n-only\n", ""),
        (
            "trailing blank separator ignored",
            "a\nb\n",
            "@@\n-a\n+A\n \n",
            "A\nb\n",
        ),
        (
            "unified range header",
            "a\nb\n",
            "@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
            "a\nc\n",
        ),
    ];
    for (name, original, body, expected) in cases {
        let dir = setup(&[("f", original)]);
        let out = apply_patch(&patch(&format!("*** Update File: f\n{body}")), dir.path())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            out, "Success. Updated the following files:\nM f\n",
            "{name}"
        );
        assert_eq!(read(&dir, "f"), *expected, "{name}");
    }
}

#[test]
fn add_update_delete_summary_in_patch_order() {
    let dir = setup(&[("src/lib.rs", "fn a() {}\n"), ("old.txt", "bye\n")]);
    let out = apply_patch(
        &patch(
            "*** Add File: new.txt\n+hello\n+world\n\
             *** Update File: src/lib.rs\n@@\n-fn a() {}\n+fn b() {}\n\
             *** Delete File: old.txt\n",
        ),
        dir.path(),
    )
    .unwrap();
    assert_eq!(
        out,
        "Success. Updated the following files:\nA new.txt\nM src/lib.rs\nD old.txt\n"
    );
    assert_eq!(read(&dir, "new.txt"), "hello\nworld\n");
    assert_eq!(read(&dir, "src/lib.rs"), "fn b() {}\n");
    assert!(!dir.path().join("old.txt").exists());
}

#[test]
fn move_into_new_directory() {
    let dir = setup(&[("src/a.rs", "x\n")]);
    let out = apply_patch(
        &patch("*** Update File: src/a.rs\n*** Move to: deep/new/dir/b.rs\n@@\n-x\n+y\n"),
        dir.path(),
    )
    .unwrap();
    assert_eq!(
        out,
        "Success. Updated the following files:\nM deep/new/dir/b.rs\n"
    );
    assert!(!dir.path().join("src/a.rs").exists());
    assert_eq!(read(&dir, "deep/new/dir/b.rs"), "y\n");
}

#[test]
fn pure_rename_and_add_into_new_directory() {
    let dir = setup(&[("a.txt", "same\n")]);
    apply_patch(
        &patch("*** Update File: a.txt\n*** Move to: b.txt\n*** Add File: x/y/z.txt\n+z\n"),
        dir.path(),
    )
    .unwrap();
    assert_eq!(read(&dir, "b.txt"), "same\n");
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(read(&dir, "x/y/z.txt"), "z\n");
}

/// Issue 43 item 3: an `Add File` on an existing file silently replaced the user's lines.
#[test]
fn add_over_an_existing_file_is_refused_unless_asked_to_replace() {
    let dir = setup(&[("a.txt", "old one\nold two\n")]);
    let mut p = parse_patch(&patch("*** Add File: a.txt\n+new\n")).unwrap();
    let err = plan_patch(&p, dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("a.txt already exists (2 lines)") && err.contains("*** Update File: a.txt"),
        "{err}"
    );
    assert!(apply_patch(&patch("*** Add File: a.txt\n+new\n"), dir.path()).is_err());
    assert_eq!(read(&dir, "a.txt"), "old one\nold two\n", "nothing lost");
    // Deleting it first in the same patch is a replacement the model asked for.
    let replaced = patch("*** Delete File: a.txt\n*** Add File: a.txt\n+new\n");
    apply_patch(&replaced, dir.path()).unwrap();
    assert_eq!(read(&dir, "a.txt"), "new\n");
    // A whole-file write (harness profiles) replaces it, planned as an update.
    p.add_replaces = true;
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    let plan = plan_patch(&p, dir.path()).unwrap();
    assert!(
        matches!(&plan.changes[0].kind, PlannedKind::Update { old_content, new_content, move_to: None }
        if old_content == "old\n" && new_content == "new\n")
    );
    assert_eq!(
        plan.apply().unwrap(),
        "Success. Updated the following files:\nM a.txt\n"
    );
    assert_eq!(read(&dir, "a.txt"), "new\n");
    // An empty file, or the same content, loses nothing.
    std::fs::write(dir.path().join("e.txt"), "").unwrap();
    apply_patch(&patch("*** Add File: e.txt\n+x\n"), dir.path()).unwrap();
    assert_eq!(read(&dir, "e.txt"), "x\n");
}

#[test]
fn sections_on_one_file_apply_in_sequence() {
    let dir = setup(&[("f", "a\nb\n")]);
    let plan = plan_patch(
        &parse_patch(&patch(
            "*** Update File: f\n-a\n+A\n*** Update File: f\n-b\n+B\n",
        ))
        .unwrap(),
        dir.path(),
    )
    .unwrap();
    let changes = plan.file_changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[&dir.path().join("f")],
        FileChange::Update {
            unified_diff: "@@ -1,2 +1,2 @@\n-a\n-b\n+A\n+B\n".into(),
            move_path: None
        }
    );
    plan.apply().unwrap();
    assert_eq!(read(&dir, "f"), "A\nB\n");
}

#[test]
fn absolute_and_dotted_paths_resolve() {
    let dir = setup(&[("sub/f", "1\n")]);
    let abs = dir.path().join("sub/f");
    let body = format!(
        "*** Update File: {}\n-1\n+2\n*** Add File: sub/../g\n+g\n",
        abs.display()
    );
    let plan = plan_patch(&parse_patch(&patch(&body)).unwrap(), dir.path()).unwrap();
    assert_eq!(
        plan.affected_paths(),
        vec![abs.clone(), dir.path().join("g")]
    );
    plan.apply().unwrap();
    assert_eq!(read(&dir, "sub/f"), "2\n");
    assert_eq!(read(&dir, "g"), "g\n");
}

#[test]
fn second_file_failing_leaves_everything_untouched() {
    let dir = setup(&[
        ("one.txt", "first\n"),
        ("two.txt", "second\n"),
        ("gone.txt", "keep\n"),
    ]);
    let before = snapshot(dir.path());
    let err = apply_patch(
        &patch(
            "*** Update File: one.txt\n-first\n+changed\n\
             *** Add File: brand/new/file.txt\n+x\n\
             *** Delete File: gone.txt\n\
             *** Update File: two.txt\n@@\n-not there\n+x\n",
        ),
        dir.path(),
    )
    .unwrap_err();
    assert!(matches!(err, ApplyError::ContextNotFound { .. }), "{err}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn failure_while_staging_removes_temps_and_new_dirs() {
    let dir = setup(&[("one.txt", "first\n"), ("src.txt", "s\n")]);
    let plan = plan_patch(
        &parse_patch(&patch(
            "*** Add File: fresh/a.txt\n+a\n\
             *** Update File: one.txt\n-first\n+changed\n\
             *** Update File: src.txt\n*** Move to: zz/dest.txt\n-s\n+t\n",
        ))
        .unwrap(),
        dir.path(),
    )
    .unwrap();
    // After planning, a plain file appears where the move needs a directory. Paths are staged in
    // sorted order, so `fresh/` and one.txt's temp file already exist when staging zz/dest.txt fails.
    fs::write(dir.path().join("zz"), "in the way\n").unwrap();
    let before = snapshot(dir.path());
    let err = plan.apply().unwrap_err();
    assert!(matches!(err, ApplyError::Io { .. }), "{err}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn long_file_names_can_be_updated() {
    let name = "n".repeat(250);
    let dir = setup(&[(name.as_str(), "a\n")]);
    apply_patch(
        &patch(&format!("*** Update File: {name}\n-a\n+b\n")),
        dir.path(),
    )
    .unwrap();
    assert_eq!(read(&dir, &name), "b\n");
}

#[test]
fn file_changed_after_planning_is_not_overwritten() {
    let dir = setup(&[("f", "a\n")]);
    let plan = plan_patch(
        &parse_patch(&patch("*** Update File: f\n-a\n+b\n")).unwrap(),
        dir.path(),
    )
    .unwrap();
    fs::write(dir.path().join("f"), "edited meanwhile\n").unwrap();
    let err = plan.apply().unwrap_err();
    assert!(matches!(err, ApplyError::ChangedOnDisk { .. }), "{err}");
    assert_eq!(read(&dir, "f"), "edited meanwhile\n");
}

#[cfg(unix)]
#[test]
fn update_keeps_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = setup(&[("run.sh", "echo a\n")]);
    let path = dir.path().join("run.sh");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    apply_patch(
        &patch("*** Update File: run.sh\n-echo a\n+echo b\n"),
        dir.path(),
    )
    .unwrap();
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o755
    );
}

#[test]
fn plan_errors_are_actionable() {
    let dir = setup(&[
        ("src/lib.rs", "fn foo() {\n    one();\n}\nfn bar() {}\n"),
        ("dir/inner", "x\n"),
    ]);
    // (patch body, expected error text)
    let cases: &[(&str, &str)] = &[
        (
            "*** Update File: src/lib.rs\n@@\n fn bar() {}\n@@\n-fn foo() {\n+fn baz() {\n",
            "Failed to find context line(s) in src/lib.rs:\n  fn foo() {\n(hunk 2). Re-read the file and \
             resend the patch with exact context lines.",
        ),
        (
            "*** Update File: src/lib.rs\n@@\n fn foo() {\n-    two();\n+    three();\n",
            "Failed to find context line(s) in src/lib.rs:\n      two();\n(hunk 1; the 1 line(s) before it \
             match starting at line 1). Re-read the file and resend the patch with exact context lines.",
        ),
        (
            "*** Update File: src/lib.rs\n@@ fn qux() {\n-x\n+y\n",
            "Failed to find the context header line in src/lib.rs:\n  @@ fn qux() {\n(hunk 1).",
        ),
        (
            "*** Update File: missing.rs\n-x\n+y\n",
            "Failed to update missing.rs: the file does not exist",
        ),
        (
            "*** Delete File: missing.rs\n",
            "Failed to delete missing.rs: the file does not exist",
        ),
        ("*** Delete File: dir\n", "dir is a directory"),
        ("*** Add File: dir\n+x\n", "dir is a directory"),
    ];
    for (body, expected) in cases {
        let err = plan_patch(&parse_patch(&patch(body)).unwrap(), dir.path()).unwrap_err();
        assert!(
            err.to_string().starts_with(expected),
            "got:\n{err}\nwant prefix:\n{expected}"
        );
    }
}

#[test]
fn non_utf8_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("bin"), [0xff, 0xfe, 0x00]).unwrap();
    let err = apply_patch(&patch("*** Update File: bin\n-x\n+y\n"), dir.path()).unwrap_err();
    assert!(matches!(err, ApplyError::NotUtf8 { .. }), "{err}");
}

#[test]
fn file_changes_for_approval() {
    let dir = setup(&[
        ("mod.txt", "original\n"),
        ("del.txt", "bye\n"),
        ("mv.txt", "a\nb\n"),
    ]);
    let plan = plan_patch(
        &parse_patch(&patch(
            "*** Add File: add.txt\n+hi\n\
             *** Update File: mod.txt\n-original\n+modified\n\
             *** Delete File: del.txt\n\
             *** Update File: mv.txt\n*** Move to: moved/mv.txt\n a\n-b\n+c\n",
        ))
        .unwrap(),
        dir.path(),
    )
    .unwrap();
    let p = |s: &str| dir.path().join(s);
    let changes = plan.file_changes();
    let expected = [
        (
            p("add.txt"),
            FileChange::Add {
                content: "hi\n".into(),
            },
        ),
        (
            p("del.txt"),
            FileChange::Delete {
                content: "bye\n".into(),
            },
        ),
        (
            p("mod.txt"),
            FileChange::Update {
                unified_diff: "@@ -1 +1 @@\n-original\n+modified\n".into(),
                move_path: None,
            },
        ),
        (
            p("mv.txt"),
            FileChange::Update {
                unified_diff: "@@ -1,2 +1,2 @@\n a\n-b\n+c\n".into(),
                move_path: Some(p("moved/mv.txt")),
            },
        ),
    ];
    assert_eq!(changes.into_iter().collect::<Vec<_>>(), expected);
    assert_eq!(
        plan.affected_paths(),
        vec![
            p("add.txt"),
            p("mod.txt"),
            p("del.txt"),
            p("mv.txt"),
            p("moved/mv.txt")
        ]
    );
}

#[test]
fn heredoc_invocation_end_to_end() {
    let dir = setup(&[("sub/f.txt", "old\n")]);
    let script = "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: f.txt\n-old\n+new\n*** End Patch\nEOF\n";
    let argv: Vec<String> = ["bash", "-lc", script]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (text, workdir) = extract_from_argv(&argv).unwrap();
    assert_eq!(workdir, Some(PathBuf::from("sub")));
    let cwd = dir.path().join(workdir.unwrap());
    apply_patch(&text, &cwd).unwrap();
    assert_eq!(read(&dir, "sub/f.txt"), "new\n");

    // The same script given directly as the tool input also works.
    fs::write(dir.path().join("sub/f.txt"), "old\n").unwrap();
    apply_patch(&script.replace("cd sub && ", ""), &cwd).unwrap();
    assert_eq!(read(&dir, "sub/f.txt"), "new\n");
}
