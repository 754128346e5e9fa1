//! Real processes under each policy. Every assertion here would fail if enforcement were
//! missing: writes that must be refused would succeed, connections that must fail would connect.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message
#![cfg(target_os = "linux")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use oi_protocol::config_types::SandboxPolicy;
use oi_sandbox::{
    SandboxError, SandboxRequest, check_support, confine, is_path_writable, run_sandboxed,
    writable_roots,
};

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn ww(network_access: bool) -> SandboxPolicy {
    SandboxPolicy::WorkspaceWrite {
        writable_roots: vec![],
        network_access,
        // Keep the test independent of the caller's $TMPDIR.
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: false,
    }
}

/// A scratch dir that is neither under /tmp nor under another test dir.
/// A scratch directory outside every root `workspace-write` grants by default: not under
/// `/tmp` or `$TMPDIR` (CI may put the target directory, or the whole clone, there).
fn scratch() -> tempfile::TempDir {
    let in_temp = |p: &Path| {
        p.starts_with("/tmp")
            || std::env::var_os("TMPDIR").is_some_and(|t| !t.is_empty() && p.starts_with(&t))
    };
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
        Some(PathBuf::from("/var/tmp")),
    ];
    let base = candidates
        .into_iter()
        .flatten()
        .find(|p| p.is_dir() && !in_temp(p))
        .expect("a scratch location outside /tmp");
    tempfile::Builder::new()
        .prefix("oi-sandbox-test-")
        .tempdir_in(base)
        .unwrap()
}

fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

async fn run_in(policy: &SandboxPolicy, cwd: &Path, allow_git: bool, argv: &[&str]) -> Out {
    let req = SandboxRequest {
        policy,
        sandbox_cwd: cwd,
        allow_git_writes: allow_git,
        read_only: &[],
    };
    let mut cmd = tokio::process::Command::new(argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    confine(&mut cmd, &req).unwrap();
    let out = cmd.output().await.unwrap();
    Out {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

async fn sh(policy: &SandboxPolicy, cwd: &Path, script: &str) -> Out {
    run_in(policy, cwd, false, &["sh", "-c", script]).await
}

fn q(p: &Path) -> String {
    format!("'{}'", p.display())
}

#[test]
fn this_kernel_supports_every_policy() {
    check_support(&SandboxPolicy::ReadOnly).unwrap();
    check_support(&ww(false)).unwrap();
    check_support(&SandboxPolicy::DangerFullAccess).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_refuses_writes_but_reads_and_dev_null_work() {
    let cwd = scratch();
    std::fs::write(cwd.path().join("existing"), "original\n").unwrap();
    let p = SandboxPolicy::ReadOnly;

    let o = sh(
        &p,
        cwd.path(),
        "cat existing && echo hi > /dev/null && echo done",
    )
    .await;
    assert!(o.ok, "reads and /dev/null must work: {}", o.stderr);
    assert_eq!(o.stdout, "original\ndone\n");

    let o = sh(&p, cwd.path(), "echo x > new").await;
    assert!(!o.ok);
    assert!(o.stderr.contains("Permission denied"), "{}", o.stderr);
    assert!(!cwd.path().join("new").exists());

    let o = sh(&p, cwd.path(), "echo x >> existing").await;
    assert!(!o.ok);
    let o = sh(&p, cwd.path(), "rm -f existing").await;
    assert!(!o.ok);
    assert_eq!(
        std::fs::read_to_string(cwd.path().join("existing")).unwrap(),
        "original\n"
    );

    let tmp_file = PathBuf::from(format!("/tmp/oi-sandbox-ro-{}", std::process::id()));
    let o = sh(&p, cwd.path(), &format!("echo x > {}", q(&tmp_file))).await;
    let leaked = tmp_file.exists();
    let _ = std::fs::remove_file(&tmp_file);
    assert!(!o.ok && !leaked, "read-only must not write /tmp");
}

#[tokio::test(flavor = "multi_thread")]
async fn workspace_write_allows_cwd_and_tmp_only() {
    let cwd = scratch();
    let outside = scratch();
    let p = ww(false);

    let o = sh(
        &p,
        cwd.path(),
        "echo x > f && mkdir -p a/b && echo y > a/b/g && mv f a/f && rm a/b/g && cat a/f",
    )
    .await;
    assert!(o.ok, "cwd must be writable: {}", o.stderr);
    assert_eq!(o.stdout, "x\n");

    let tmp_file = PathBuf::from(format!("/tmp/oi-sandbox-ww-{}", std::process::id()));
    let o = sh(&p, cwd.path(), &format!("echo x > {}", q(&tmp_file))).await;
    let written = tmp_file.exists();
    let _ = std::fs::remove_file(&tmp_file);
    assert!(o.ok && written, "/tmp must be writable: {}", o.stderr);

    let target = outside.path().join("f");
    let o = sh(&p, cwd.path(), &format!("echo x > {}", q(&target))).await;
    assert!(!o.ok);
    assert!(!target.exists(), "wrote outside the writable roots");

    if let Some(home) = std::env::var_os("HOME").filter(|h| Path::new(h).is_dir()) {
        let in_home = tempfile::tempdir_in(home).unwrap();
        let target = in_home.path().join("f");
        let o = sh(&p, cwd.path(), &format!("echo x > {}", q(&target))).await;
        assert!(!o.ok);
        assert!(!target.exists(), "wrote into $HOME");
    }

    let etc = PathBuf::from(format!("/etc/oi-sandbox-probe-{}", std::process::id()));
    let o = sh(&p, cwd.path(), &format!("echo x > {}", q(&etc))).await;
    let leaked = etc.exists();
    let _ = std::fs::remove_file(&etc);
    assert!(!o.ok && !leaked, "wrote into /etc");

    // /tmp excluded: no longer writable.
    let p = SandboxPolicy::WorkspaceWrite {
        writable_roots: vec![outside.path().to_path_buf()],
        network_access: false,
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: true,
    };
    let o = sh(&p, cwd.path(), &format!("echo x > {}", q(&tmp_file))).await;
    let leaked = tmp_file.exists();
    let _ = std::fs::remove_file(&tmp_file);
    assert!(!o.ok && !leaked, "/tmp must not be writable when excluded");
    // ...while a configured root is.
    let o = sh(&p, cwd.path(), &format!("echo x > {}", q(&target))).await;
    assert!(o.ok, "configured writable root: {}", o.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn children_of_the_command_are_equally_confined() {
    let cwd = scratch();
    let outside = scratch();
    let a = outside.path().join("a");
    let b = outside.path().join("b");
    let script = format!(
        "sh -c \"sh -c 'echo x > {}'\"; (echo y > {}) & wait; echo ok > inside",
        a.display(),
        b.display()
    );
    let o = sh(&ww(false), cwd.path(), &script).await;
    assert!(o.ok, "{}", o.stderr);
    assert!(cwd.path().join("inside").exists());
    assert!(
        !a.exists() && !b.exists(),
        "a grandchild escaped the sandbox"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn git_dir_stays_read_only_unless_allowed() {
    let cwd = scratch();
    let root = cwd.path();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "").unwrap();
    std::fs::write(root.join("README.md"), "").unwrap();
    let p = ww(false);

    for script in [
        "echo evil >> .git/config",
        "echo '#!/bin/sh' > .git/hooks/pre-commit",
        "rm .git/config",
        "mv .git .git-moved",
        "rm -rf .git",
        "mkdir .git/objects",
    ] {
        let o = sh(&p, root, script).await;
        assert!(!o.ok, "`{script}` must fail inside .git");
    }
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!root.join(".git/hooks/pre-commit").exists());
    assert!(!root.join(".git-moved").exists());

    let o = sh(
        &p,
        root,
        "echo ok > src/main.rs && echo ok > README.md && echo new > src/new.rs",
    )
    .await;
    assert!(
        o.ok,
        "the rest of the workspace stays writable: {}",
        o.stderr
    );

    let o = run_in(
        &p,
        root,
        true,
        &["sh", "-c", "echo '[user]' >> .git/config"],
    )
    .await;
    assert!(o.ok, "allow_git_writes: {}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n[user]\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn git_reads_work_and_commits_fail_in_a_real_repository() {
    let cwd = scratch();
    let root = cwd.path();
    let git = |args: &[&str]| {
        let st = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
    };
    git(&["init", "-q"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    let head = std::fs::read_to_string(root.join(".git/HEAD")).unwrap();

    let o = sh(
        &ww(false),
        root,
        "git status --porcelain && git diff --stat && git log --oneline",
    )
    .await;
    assert!(o.ok, "read-only git commands must work: {}", o.stderr);
    assert!(o.stdout.contains(" M a.txt"), "{}", o.stdout);
    assert!(o.stdout.contains("first"), "{}", o.stdout);

    let o = sh(
        &ww(false),
        root,
        "git -c user.name=t -c user.email=t@example.invalid commit -qam second",
    )
    .await;
    assert!(!o.ok, "commit must fail with .git read-only");
    let o = sh(&ww(false), root, "git log --oneline").await;
    assert_eq!(o.stdout.lines().count(), 1, "{}", o.stdout);
    assert_eq!(
        std::fs::read_to_string(root.join(".git/HEAD")).unwrap(),
        head
    );
}

const BASH_CONNECT: &str = "exec 3<>/dev/tcp/127.0.0.1/$0 && echo hi >&3";

#[tokio::test(flavor = "multi_thread")]
async fn network_off_refuses_tcp_network_on_connects() {
    let cwd = scratch();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    listener.set_nonblocking(true).unwrap();

    for policy in [ww(false), SandboxPolicy::ReadOnly] {
        let o = run_in(
            &policy,
            cwd.path(),
            false,
            &["bash", "-c", BASH_CONNECT, &port],
        )
        .await;
        assert!(!o.ok, "connected with network off ({policy:?})");
        assert!(o.stderr.contains("Operation not permitted"), "{}", o.stderr);
        let err = listener.accept().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
    }

    let o = run_in(
        &ww(true),
        cwd.path(),
        false,
        &["bash", "-c", BASH_CONNECT, &port],
    )
    .await;
    assert!(o.ok, "network on must connect: {}", o.stderr);
    // The handshake completed before the child exited, so the connection is queued.
    listener.accept().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn network_off_keeps_unix_sockets_and_blocks_other_families_with_eperm() {
    let cwd = scratch();
    let script = r#"
import socket, errno
a, b = socket.socketpair()
a.send(b"x"); assert b.recv(1) == b"x"
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); u.close()
for fam, typ in [(socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET6, socket.SOCK_DGRAM),
                 (socket.AF_PACKET, socket.SOCK_RAW)]:
    try:
        socket.socket(fam, typ)
        print("open", fam)
    except OSError as e:
        print("denied", e.errno == errno.EPERM)
"#;
    let o = run_in(&ww(false), cwd.path(), false, &[python(), "-c", script]).await;
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.stdout, "denied True\ndenied True\ndenied True\n");

    let o = run_in(
        &ww(true),
        cwd.path(),
        false,
        &[
            python(),
            "-c",
            "import socket; socket.socket(socket.AF_INET); print('ok')",
        ],
    )
    .await;
    assert!(o.ok, "{}", o.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn terminal_injection_and_io_uring_are_refused() {
    let cwd = scratch();
    // Without the filter TIOCSTI on a non-terminal fails with ENOTTY; the filter answers EPERM.
    let tiocsti = r#"
import fcntl, termios, os
fd = os.open("/dev/null", os.O_RDONLY)
try:
    fcntl.ioctl(fd, termios.TIOCSTI, b"x")
except OSError as e:
    print(e.errno)
"#;
    let o = run_in(&ww(true), cwd.path(), false, &[python(), "-c", tiocsti]).await;
    assert_eq!(o.stdout.trim(), "1", "{}", o.stderr);

    // io_uring_setup(1, NULL): EFAULT when allowed, EPERM when filtered.
    let uring = "import ctypes; l = ctypes.CDLL(None, use_errno=True); \
                 r = l.syscall(425, 1, None); print(ctypes.get_errno() if r < 0 else 'fd')";
    let off = run_in(&ww(false), cwd.path(), false, &[python(), "-c", uring]).await;
    let on = run_in(&ww(true), cwd.path(), false, &[python(), "-c", uring]).await;
    assert_eq!(off.stdout.trim(), "1", "{}", off.stderr);
    assert_ne!(on.stdout.trim(), "1", "{}", on.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn danger_full_access_writes_anywhere_the_user_can() {
    let cwd = scratch();
    let outside = scratch();
    let target = outside.path().join("f");
    let o = sh(
        &SandboxPolicy::DangerFullAccess,
        cwd.path(),
        &format!("echo x > {}", q(&target)),
    )
    .await;
    assert!(o.ok, "{}", o.stderr);
    assert!(target.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn run_sandboxed_reports_exit_codes_signals_and_errors() {
    let cwd = scratch();
    let p = ww(false);
    let req = SandboxRequest {
        policy: &p,
        sandbox_cwd: cwd.path(),
        allow_git_writes: false,
        read_only: &[],
    };
    let argv = |s: &str| vec!["sh".to_string(), "-c".to_string(), s.to_string()];
    assert_eq!(
        run_sandboxed(&argv("exit 7"), cwd.path(), &req)
            .await
            .unwrap(),
        7
    );
    assert_eq!(
        run_sandboxed(&argv("kill -TERM $$"), cwd.path(), &req)
            .await
            .unwrap(),
        128 + 15
    );
    assert_eq!(
        run_sandboxed(&argv("echo x > f"), cwd.path(), &req)
            .await
            .unwrap(),
        0
    );
    assert!(cwd.path().join("f").exists());

    let ro = SandboxRequest {
        policy: &SandboxPolicy::ReadOnly,
        ..req
    };
    assert_ne!(
        run_sandboxed(&argv("exec 2>/dev/null; echo x > g"), cwd.path(), &ro)
            .await
            .unwrap(),
        0
    );
    assert!(!cwd.path().join("g").exists());

    assert!(matches!(
        run_sandboxed(&[], cwd.path(), &req).await,
        Err(SandboxError::Setup(_))
    ));
    let err = run_sandboxed(&["/nonexistent/prog".to_string()], cwd.path(), &req)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/prog"), "{err}");
}

#[test]
fn roots_and_path_checks_match_enforcement_intent() {
    let cwd = scratch();
    std::fs::create_dir(cwd.path().join(".git")).unwrap();
    let p = ww(false);
    let req = SandboxRequest {
        policy: &p,
        sandbox_cwd: cwd.path(),
        allow_git_writes: false,
        read_only: &[],
    };
    let roots = writable_roots(&req);
    assert_eq!(roots[0], std::fs::canonicalize(cwd.path()).unwrap());
    assert!(roots.contains(&std::fs::canonicalize("/tmp").unwrap()));
    assert!(is_path_writable(&req, Path::new("new/file")));
    assert!(!is_path_writable(&req, Path::new(".git/config")));
    assert!(!is_path_writable(&req, Path::new("/etc/passwd")));
}
