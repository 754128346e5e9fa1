//! Backend tests that need internal knobs (forced ABI, forced `.git` layout), on real processes.

use std::path::Path;
use std::process::Stdio;

use oi_protocol::config_types::SandboxPolicy;

use super::{Overrides, Support, check_support_with, confine_with};
use crate::{SandboxError, SandboxRequest};

fn ww(roots: Vec<std::path::PathBuf>) -> SandboxPolicy {
    SandboxPolicy::WorkspaceWrite {
        writable_roots: roots,
        network_access: false,
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: true,
    }
}

fn scratch() -> tempfile::TempDir {
    // Policies here exclude /tmp and $TMPDIR, so a temp dir is outside every other root.
    tempfile::tempdir().unwrap()
}

fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// Runs `argv` confined with `cwd` as workspace and working directory.
async fn run(
    policy: &SandboxPolicy,
    cwd: &Path,
    ov: Overrides,
    argv: &[&str],
) -> (bool, String, String) {
    run_at(policy, cwd, cwd, ov, argv).await
}

/// Runs `argv` confined; returns (success, stdout, stderr).
async fn run_at(
    policy: &SandboxPolicy,
    workspace: &Path,
    cwd: &Path,
    ov: Overrides,
    argv: &[&str],
) -> (bool, String, String) {
    run_protecting(policy, workspace, cwd, &[], ov, argv).await
}

/// Runs `argv` confined, with `read_only` kept read-only; returns (success, stdout, stderr).
async fn run_protecting(
    policy: &SandboxPolicy,
    workspace: &Path,
    cwd: &Path,
    read_only: &[std::path::PathBuf],
    ov: Overrides,
    argv: &[&str],
) -> (bool, String, String) {
    let req = SandboxRequest {
        policy,
        sandbox_cwd: workspace,
        allow_git_writes: false,
        read_only,
    };
    let mut cmd = tokio::process::Command::new(argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    confine_with(&mut cmd, &req, ov).unwrap();
    let out = cmd.output().await.unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn make_repo(root: &Path) {
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("README.md"), "").unwrap();
}

#[test]
fn missing_landlock_or_seccomp_is_unsupported_with_a_way_forward() {
    let e = check_support_with(Support {
        abi: -38,
        seccomp: true,
    })
    .unwrap_err();
    assert!(matches!(e, SandboxError::Unsupported(_)));
    let msg = e.to_string();
    assert!(msg.contains("does not support Landlock"), "{msg}");
    assert!(msg.contains("danger-full-access"), "{msg}");
    let e = check_support_with(Support {
        abi: 3,
        seccomp: false,
    })
    .unwrap_err();
    assert!(e.to_string().contains("seccomp"), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn abi_without_truncate_right_still_blocks_truncation_outside_roots() {
    let cwd = scratch();
    let outside = scratch();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep me\n").unwrap();
    let script = r#"
import os, sys, ctypes, errno
p = sys.argv[1]
def code(f):
    try:
        f(); return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print(code(lambda: os.truncate(p, 0)))
print(code(lambda: os.close(os.open(p, os.O_RDONLY | os.O_TRUNC))))
l = ctypes.CDLL(None, use_errno=True)
r = l.syscall(437, -100, p.encode(), None, 0)  # openat2: its flags are invisible to seccomp
print("ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
with open("inside", "w") as f:
    f.write("x")
    f.flush()
    print(code(lambda: os.ftruncate(f.fileno(), 0)))
print(code(lambda: os.truncate("inside", 0)))
"#;
    let ov = Overrides {
        abi: Some(2),
        mount_shield: None,
        pid_namespace: None,
    };
    let victim_s = victim.to_str().unwrap();
    let (ok, out, err) = run(
        &ww(vec![]),
        cwd.path(),
        ov,
        &[python(), "-c", script, victim_s],
    )
    .await;
    assert!(ok, "{err}");
    // truncate(2) by path is refused everywhere on such kernels; ftruncate on a file opened
    // for writing (which Landlock checked) still works.
    assert_eq!(out, "EPERM\nEPERM\nENOSYS\nok\nEPERM\n");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");

    // With the real ABI (≥ 3) Landlock itself refuses, and openat2 is left alone.
    let (ok, out, err) = run(
        &ww(vec![]),
        cwd.path(),
        Overrides::default(),
        &[python(), "-c", script, victim_s],
    )
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "EACCES\nEACCES\nEINVAL\nok\nok\n");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
}

#[test]
fn mount_namespaces_work_here() {
    // The test machines run as root with namespaces enabled; if this fails, the sibling layout
    // (tested below) is what users get.
    let shield = super::shield::MountShield::new(&[std::env::temp_dir()]).unwrap();
    assert!(shield.works());
}

const GIT_ATTACKS: &[&str] = &[
    "echo evil >> .git/config",
    "echo '#!/bin/sh' > .git/hooks/pre-commit",
    "ln -s /bin/true .git/hooks/post-commit",
    "rm .git/config",
    "mv .git .git-moved",
    "rm -rf .git",
];

async fn assert_git_protected(root: &Path, ov: Overrides) {
    let p = ww(vec![]);
    for script in GIT_ATTACKS {
        let (ok, _, _) = run(&p, root, ov, &["sh", "-c", script]).await;
        assert!(!ok, "`{script}` must fail ({ov:?})");
    }
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!root.join(".git/hooks/pre-commit").exists());
    assert!(std::fs::symlink_metadata(root.join(".git/hooks/post-commit")).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn git_mount_layout_keeps_the_whole_root_writable() {
    let cwd = scratch();
    make_repo(cwd.path());
    let ov = Overrides {
        abi: None,
        mount_shield: Some(true),
        pid_namespace: None,
    };
    assert_git_protected(cwd.path(), ov).await;
    let (ok, _, err) = run(
        &ww(vec![]),
        cwd.path(),
        ov,
        &[
            "sh",
            "-c",
            "echo n > new.txt && mkdir target && echo o > target/o && mv README.md R.md && rm R.md",
        ],
    )
    .await;
    assert!(
        ok,
        "top level must stay writable in the mount layout: {err}"
    );
    assert!(cwd.path().join("target/o").exists());

    // Neither a working directory inside .git nor another process's view of the filesystem
    // reaches the writable mount underneath.
    let git = cwd.path().join(".git");
    let (ok, _, _) = run_at(
        &ww(vec![]),
        cwd.path(),
        &git,
        ov,
        &["sh", "-c", "echo evil >> config"],
    )
    .await;
    assert!(!ok, "cwd inside .git must not bypass the read-only mount");
    let via_proc = format!(
        "echo evil >> /proc/$PPID/root{}/.git/config",
        cwd.path().display()
    );
    let (ok, _, _) = run(&ww(vec![]), cwd.path(), ov, &["sh", "-c", &via_proc]).await;
    assert!(!ok, "/proc/<pid>/root must not bypass the read-only mount");
    assert_eq!(
        std::fs::read_to_string(git.join("config")).unwrap(),
        "[core]\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn git_sibling_layout_freezes_only_the_top_level() {
    let cwd = scratch();
    make_repo(cwd.path());
    let ov = Overrides {
        abi: None,
        mount_shield: Some(false),
        pid_namespace: None,
    };
    assert_git_protected(cwd.path(), ov).await;
    let p = ww(vec![]);
    let (ok, _, err) = run(
        &p,
        cwd.path(),
        ov,
        &[
            "sh",
            "-c",
            "echo ok > README.md && mkdir -p src/a && echo x > src/a/f && rm src/a/f",
        ],
    )
    .await;
    assert!(ok, "existing entries stay writable: {err}");
    for script in ["echo n > new.txt", "mkdir target", "rm README.md"] {
        let (ok, _, _) = run(&p, cwd.path(), ov, &["sh", "-c", script]).await;
        assert!(
            !ok,
            "`{script}`: the root's own entries are frozen in the sibling layout"
        );
    }
    assert!(!cwd.path().join("new.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn git_inside_a_nested_root_is_protected_from_the_outer_root() {
    // The repo lives inside another writable root: granting the outer root whole would
    // reach the repo's .git, so both layouts must still keep it read-only.
    let outer = scratch();
    let repo = outer.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    make_repo(&repo);
    let p = ww(vec![outer.path().to_path_buf()]);
    for shield in [true, false] {
        let ov = Overrides {
            abi: None,
            mount_shield: Some(shield),
            pid_namespace: None,
        };
        for script in GIT_ATTACKS {
            let (ok, _, _) = run(&p, &repo, ov, &["sh", "-c", script]).await;
            assert!(!ok, "`{script}` must fail (shield: {shield})");
        }
        let (ok, _, err) = run(&p, &repo, ov, &["sh", "-c", "echo x > src/f"]).await;
        assert!(ok, "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn privileged_escape_syscalls_are_refused() {
    // Bogus arguments: unfiltered these fail with EBADF/EFAULT/EINVAL, filtered with EPERM.
    let cwd = scratch();
    let script = "import ctypes, sys; l = ctypes.CDLL(None, use_errno=True)\n\
                  for nr in sys.argv[1:]:\n    \
                  r = l.syscall(int(nr), -1, None, 0)\n    \
                  print(ctypes.get_errno() if r < 0 else 'ran')";
    let nrs = [
        libc::SYS_open_by_handle_at,
        libc::SYS_finit_module,
        libc::SYS_kexec_file_load,
    ]
    .map(|n| n.to_string());
    let mut argv = vec![python(), "-c", script];
    argv.extend(nrs.iter().map(String::as_str));
    let (ok, out, err) = run(&ww(vec![]), cwd.path(), Overrides::default(), &argv).await;
    assert!(ok, "{err}");
    assert_eq!(out, "1\n1\n1\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn symlinked_git_protects_link_and_target() {
    let cwd = scratch();
    let root = cwd.path();
    std::fs::create_dir(root.join("gitdir")).unwrap();
    std::fs::write(root.join("gitdir/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink("gitdir", root.join(".git")).unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    let p = ww(vec![]);
    for script in [
        "echo evil >> .git/config",
        "echo evil >> gitdir/config",
        "rm .git",
        "ln -sfn src .git",
    ] {
        let (ok, _, _) = run(&p, root, Overrides::default(), &["sh", "-c", script]).await;
        assert!(!ok, "`{script}` must fail");
    }
    assert_eq!(
        std::fs::read_link(root.join(".git")).unwrap(),
        Path::new("gitdir")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("gitdir/config")).unwrap(),
        "[core]\n"
    );
    let (ok, _, err) = run(
        &p,
        root,
        Overrides::default(),
        &["sh", "-c", "echo x > src/f"],
    )
    .await;
    assert!(ok, "{err}");
}

const CONFIG_ATTACKS: &[&str] = &[
    "mkdir -p .openinterpreter && echo 'sandbox_mode = \"danger-full-access\"' > .openinterpreter/config.toml",
    "echo x > .openinterpreter/config.toml",
    "rm -rf .openinterpreter",
    "mv .openinterpreter moved",
    "ln -s /tmp .openinterpreter/link",
];

#[tokio::test(flavor = "multi_thread")]
async fn config_folder_cannot_be_planted_or_changed_in_either_layout() {
    for shield in [true, false] {
        let ov = Overrides {
            abi: None,
            mount_shield: Some(shield),
            ..Overrides::default()
        };
        // A workspace with no config folder yet, and one with an existing config.
        for existing in [false, true] {
            let cwd = scratch();
            std::fs::write(cwd.path().join("README.md"), "").unwrap();
            if existing {
                std::fs::create_dir(cwd.path().join(".openinterpreter")).unwrap();
                std::fs::write(
                    cwd.path().join(".openinterpreter/config.toml"),
                    "model = \"m\"\n",
                )
                .unwrap();
            }
            let p = ww(vec![]);
            for script in CONFIG_ATTACKS {
                let (ok, _, _) = run(&p, cwd.path(), ov, &["sh", "-c", script]).await;
                assert!(
                    !ok,
                    "`{script}` must fail (shield {shield}, existing {existing})"
                );
            }
            let config = cwd.path().join(".openinterpreter/config.toml");
            if existing {
                assert_eq!(std::fs::read_to_string(&config).unwrap(), "model = \"m\"\n");
            } else {
                assert!(!config.exists(), "planted config must not exist");
            }
            // The rest of the workspace stays writable (in the sibling layout: its existing
            // entries).
            let (ok, _, err) = run(&p, cwd.path(), ov, &["sh", "-c", "echo ok > README.md"]).await;
            assert!(ok, "workspace files stay writable (shield {shield}): {err}");
        }
    }
}

/// What a command would try on a script an accepted project config launches unsandboxed.
const PINNED_ATTACKS: &[&str] = &[
    "echo evil > tools/helper.sh",
    "echo evil >> tools/helper.sh",
    "printf evil > new && mv new tools/helper.sh",
    "rm tools/helper.sh",
    "mv tools/helper.sh tools/old.sh",
    "ln -f new tools/helper.sh",
];

#[tokio::test(flavor = "multi_thread")]
async fn read_only_files_cannot_be_changed_in_either_layout() {
    for shield in [true, false] {
        let ov = Overrides {
            abi: None,
            mount_shield: Some(shield),
            ..Overrides::default()
        };
        let cwd = scratch();
        let root = cwd.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/helper.sh"), "echo ok\n").unwrap();
        std::fs::write(root.join("README.md"), "").unwrap();
        let pinned = vec![root.join("tools/helper.sh")];
        let p = ww(vec![]);
        for script in PINNED_ATTACKS {
            let (ok, _, _) =
                run_protecting(&p, &root, &root, &pinned, ov, &["sh", "-c", script]).await;
            assert!(!ok, "`{script}` must fail (shield {shield})");
            assert_eq!(
                std::fs::read_to_string(root.join("tools/helper.sh")).unwrap(),
                "echo ok\n",
                "after `{script}` (shield {shield})"
            );
        }
        // Beside it the workspace stays writable (in the sibling layout: existing entries).
        let (ok, _, err) = run_protecting(
            &p,
            &root,
            &root,
            &pinned,
            ov,
            &["sh", "-c", "echo x > README.md && cat tools/helper.sh"],
        )
        .await;
        assert!(
            ok,
            "the rest stays writable and the file readable (shield {shield}): {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sibling_layout_does_not_freeze_other_roots_for_the_config_folder() {
    let cwd = scratch();
    let extra = scratch();
    let p = ww(vec![extra.path().to_path_buf()]);
    let ov = Overrides {
        abi: None,
        mount_shield: Some(false),
        ..Overrides::default()
    };
    let script = format!("echo n > '{}/new.txt'", extra.path().display());
    let (ok, _, err) = run(&p, cwd.path(), ov, &["sh", "-c", &script]).await;
    assert!(ok, "an extra root's top level stays writable: {err}");
    let (ok, _, _) = run(
        &p,
        cwd.path(),
        ov,
        &["sh", "-c", "echo x > .openinterpreter/config.toml"],
    )
    .await;
    assert!(!ok, "the workspace's config folder stays protected");
}

/// A process outside every sandbox, to aim signals at. Killed on drop.
struct Bystander(std::process::Child);

impl Bystander {
    fn start() -> Self {
        Bystander(
            std::process::Command::new("sleep")
                .arg("300")
                .spawn()
                .unwrap(),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// The state letter of /proc/PID/stat (`S` sleeping, `T` stopped...).
    fn state(&self) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        after_name.chars().next().unwrap()
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn signal_isolation(pid_namespace: bool) {
    let cwd = scratch();
    let outside = Bystander::start();
    let ov = Overrides {
        pid_namespace: Some(pid_namespace),
        ..Overrides::default()
    };
    let script = format!(
        "kill -STOP {pid}; echo stop=$?; kill -KILL {pid}; echo kill=$?; kill -STOP -1; echo all=$?",
        pid = outside.pid()
    );
    let (_, out, _) = run(&ww(vec![]), cwd.path(), ov, &["sh", "-c", &script]).await;
    assert!(out.contains("stop=1"), "{out}");
    assert!(out.contains("kill=1"), "{out}");
    // Neither stopped nor killed. (Sleeping as a rule, but a loaded machine may still be
    // starting it: 'R' is fine too.)
    let state = outside.state();
    assert!(
        !matches!(state, 'T' | 't' | 'Z' | 'X'),
        "the outside process was signalled (state {state}): {out}"
    );

    // What stays allowed: the command's own group, and probing.
    let (ok, out, err) = run(
        &ww(vec![]),
        cwd.path(),
        ov,
        &["sh", "-c", "kill -0 $$ && kill -s CONT 0 && echo group-ok"],
    )
    .await;
    assert!(ok && out.contains("group-ok"), "{out}{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sandboxed_commands_cannot_signal_outside_processes_in_a_pid_namespace() {
    if !super::pidns::works() {
        // Not a silent skip: the seccomp variant below covers this kernel.
        eprintln!("PID namespaces unavailable here; see the seccomp variant");
        return;
    }
    signal_isolation(true).await;
    // Inside its namespace the command signals its own children freely.
    let cwd = scratch();
    let (ok, out, err) = run(
        &ww(vec![]),
        cwd.path(),
        Overrides::default(),
        &["sh", "-c", "sleep 30 & kill $! && wait $!; echo status=$?; echo procs=$(ls /proc | grep -c '^[0-9]')"],
    )
    .await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("status=143"), "{out}");
    // `/proc` is the namespace's own: init, sh, ls (and maybe grep) — not the host's.
    let procs: usize = out
        .split("procs=")
        .nth(1)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(usize::MAX);
    assert!(procs <= 5, "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sandboxed_commands_cannot_signal_outside_processes_with_the_seccomp_rule() {
    signal_isolation(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn extended_attributes_cannot_be_changed() {
    let cwd = scratch();
    std::fs::write(cwd.path().join("f"), "x").unwrap();
    let script = r#"
import os, errno
def code(f):
    try:
        f(); return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print(code(lambda: os.setxattr("f", "user.oi", b"1")))
print(code(lambda: os.removexattr("f", "user.oi")))
"#;
    let (_, out, err) = run(
        &ww(vec![]),
        cwd.path(),
        Overrides::default(),
        &[python(), "-c", script],
    )
    .await;
    assert_eq!(out, "ENOTSUP\nENOTSUP\n", "{err}");
}

const NESTED_CONFIG_ATTACKS: &[&str] = &[
    "echo 'sandbox_mode = \"danger-full-access\"' > sub/.openinterpreter/config.toml",
    "echo x >> sub/.openinterpreter/config.toml",
    "rm -rf sub/.openinterpreter",
    "mv sub/.openinterpreter sub/moved",
    "mkdir a/b/.openinterpreter/x",
    "echo x > a/b/.openinterpreter/config.toml",
];

#[tokio::test(flavor = "multi_thread")]
async fn nested_config_folders_stay_read_only_in_either_layout() {
    for shield in [true, false] {
        let ov = Overrides {
            abi: None,
            mount_shield: Some(shield),
            ..Overrides::default()
        };
        let cwd = scratch();
        let sub = cwd.path().join("sub/.openinterpreter");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("config.toml"), "model = \"m\"\n").unwrap();
        std::fs::create_dir_all(cwd.path().join("a/b/.openinterpreter")).unwrap();
        std::fs::write(cwd.path().join("a/b/notes.txt"), "").unwrap();
        std::fs::write(cwd.path().join("README.md"), "").unwrap();
        let p = ww(vec![]);
        for script in NESTED_CONFIG_ATTACKS {
            let (ok, _, _) = run(&p, cwd.path(), ov, &["sh", "-c", script]).await;
            assert!(!ok, "`{script}` must fail (shield {shield})");
        }
        assert_eq!(
            std::fs::read_to_string(sub.join("config.toml")).unwrap(),
            "model = \"m\"\n"
        );
        assert!(!cwd.path().join("a/b/.openinterpreter/config.toml").exists());
        // Beside the protected folders the tree stays writable (in the sibling layout: the
        // existing entries of each folder on the way to one).
        let (ok, _, err) = run(
            &p,
            cwd.path(),
            ov,
            &["sh", "-c", "echo ok > a/b/notes.txt && echo ok > README.md"],
        )
        .await;
        assert!(ok, "the rest stays writable (shield {shield}): {err}");
    }
}
