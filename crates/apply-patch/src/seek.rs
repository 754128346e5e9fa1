//! Finding a hunk's old lines in a file, from strict to lenient: exact, then ignoring trailing
//! whitespace, then ignoring surrounding whitespace, then with typographic punctuation folded to
//! ASCII. The first (strictest) pass that matches anywhere wins, so leniency never moves a
//! hunk away from an exact match further down.

/// Comparison passes, strictest first.
const PASSES: [fn(&str, &str) -> bool; 4] = [
    |a, b| a == b,
    |a, b| a.trim_end() == b.trim_end(),
    |a, b| a.trim() == b.trim(),
    |a, b| fold(a.trim()) == fold(b.trim()),
];

/// Where `pattern` first occurs in `lines` at or after `start`. With `at_eof`, a match that ends
/// exactly at the last line is preferred; if there is none, search forward as usual.
pub(crate) fn seek_sequence(
    lines: &[String],
    pattern: &[&str],
    start: usize,
    at_eof: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start.min(lines.len()));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    if at_eof && last_start >= start {
        for eq in PASSES {
            if matches_at(lines, pattern, last_start, eq) {
                return Some(last_start);
            }
        }
    }
    for eq in PASSES {
        for i in start..=last_start {
            if matches_at(lines, pattern, i, eq) {
                return Some(i);
            }
        }
    }
    None
}

/// Index of the first line at or after `start` matching `needle` (any pass, strictest first).
pub(crate) fn seek_line(lines: &[String], needle: &str, start: usize) -> Option<usize> {
    seek_sequence(lines, &[needle], start, false)
}

/// How many leading lines of `pattern` match (leniently) at the best spot after `start`, and
/// where that spot is. Used to tell the model which line of its hunk did not match.
pub(crate) fn longest_prefix_match(
    lines: &[String],
    pattern: &[&str],
    start: usize,
) -> (usize, usize) {
    let lenient = PASSES[PASSES.len() - 1];
    let mut best = (0, start);
    for i in start..lines.len() {
        let n = pattern
            .iter()
            .zip(&lines[i..])
            .take_while(|(p, l)| lenient(l, p))
            .count();
        if n > best.0 {
            best = (n, i);
        }
    }
    best
}

fn matches_at(lines: &[String], pattern: &[&str], at: usize, eq: fn(&str, &str) -> bool) -> bool {
    pattern.iter().zip(&lines[at..]).all(|(p, l)| eq(l, p))
}

/// Fold typographic punctuation and exotic spaces to their ASCII look-alikes.
fn fold(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
            | '\u{00BB}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn passes_table() {
        let cases: &[(&[&str], &[&str], Option<usize>)] = &[
            (&["a", "b", "c"], &["b", "c"], Some(1)),
            (&["a", "b  ", "c"], &["b", "c"], Some(1)),
            (&["a", "    b", "c"], &["b", "c"], Some(1)),
            (
                &["x = \u{201C}hi\u{201D} \u{2014} ok"],
                &["x = \"hi\" - ok"],
                Some(0),
            ),
            (&["it\u{2019}s"], &["it's"], Some(0)),
            (&["a", "b"], &["c"], None),
            (&["a"], &["a", "b"], None),
            (&["a"], &[], Some(0)),
        ];
        for (lines, pat, want) in cases {
            assert_eq!(
                seek_sequence(&file(lines), pat, 0, false),
                *want,
                "{lines:?} / {pat:?}"
            );
        }
    }

    #[test]
    fn exact_match_beats_earlier_lenient_match() {
        let lines = file(&["  foo", "foo"]);
        assert_eq!(seek_sequence(&lines, &["foo"], 0, false), Some(1));
    }

    #[test]
    fn search_starts_at_start() {
        let lines = file(&["x", "y", "x"]);
        assert_eq!(seek_sequence(&lines, &["x"], 1, false), Some(2));
    }

    #[test]
    fn eof_prefers_last_occurrence() {
        let lines = file(&["}", "a", "}"]);
        assert_eq!(seek_sequence(&lines, &["}"], 0, true), Some(2));
        assert_eq!(seek_sequence(&lines, &["a"], 0, true), Some(1));
    }

    #[test]
    fn prefix_match_reports_first_failing_line() {
        let lines = file(&["fn a() {", "    one();", "}"]);
        assert_eq!(
            longest_prefix_match(&lines, &["fn a() {", "    two();"], 0),
            (1, 0)
        );
    }
}
