//! Head+tail truncation for tool output the model sees. Pure text, shared by the engine
//! (command output) and the MCP client (tool results) so both cut the same way.

/// Keep the first and last parts of `s` so the result is at most about `max_bytes`, with a
/// marker saying how much was cut. Cuts on char boundaries, preferring line boundaries.
pub fn truncate_head_tail(s: &str, max_bytes: usize) -> String {
    if s.len() <= max_bytes {
        return s.to_string();
    }
    let half = max_bytes / 2;
    let mut head_end = floor_char_boundary(s, half);
    if let Some(nl) = s[..head_end].rfind('\n')
        && nl > half / 2
    {
        head_end = nl + 1;
    }
    let mut tail_start = ceil_char_boundary(s, s.len() - half);
    if let Some(nl) = s[tail_start..].find('\n')
        && nl < half / 2
    {
        tail_start += nl + 1;
    }
    let omitted = tail_start - head_end;
    format!(
        "{}\n[... {omitted} of {} bytes omitted ...]\n{}",
        &s[..head_end],
        s.len(),
        &s[tail_start..]
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(truncate_head_tail("abc", 10), "abc");
    }

    #[test]
    fn long_text_keeps_head_and_tail_with_marker() {
        let s: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let t = truncate_head_tail(&s, 200);
        assert!(t.starts_with("line 0\n"));
        assert!(t.trim_end().ends_with("line 999"));
        assert!(t.contains("bytes omitted"));
        assert!(t.len() < 400);
    }

    #[test]
    fn multibyte_is_safe() {
        let s = "é".repeat(500);
        let t = truncate_head_tail(&s, 101);
        assert!(t.contains("omitted"));
    }
}
