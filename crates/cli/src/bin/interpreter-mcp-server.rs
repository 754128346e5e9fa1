//! `interpreter-mcp-server`: the same as `interpreter mcp-server`, for MCP client configs
//! that name a dedicated executable. It replaces itself with the `interpreter` binary that
//! sits next to it (one `execve`, no extra process).

use std::os::unix::process::CommandExt;

fn main() {
    let interpreter = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("interpreter")))
        .filter(|p| p.exists())
        .unwrap_or_else(|| "interpreter".into());
    let err = std::process::Command::new(&interpreter)
        .arg("mcp-server")
        .args(std::env::args_os().skip(1))
        .exec();
    eprintln!(
        "interpreter-mcp-server: cannot start `{} mcp-server`: {err}. Install `interpreter` next to this executable or on PATH.",
        interpreter.display()
    );
    std::process::exit(1);
}
