//! Images in the composer: a pasted path to an image file (what terminals paste when a file
//! is dropped on them) becomes an `[image N: name]` placeholder, and the images whose
//! placeholders are still in the text when it is sent go with it as image input.

use super::*;
use std::path::Path;

impl App {
    /// A paste that is one image file's path: attaches it (or says why not) and returns
    /// true; any other paste returns false and is text.
    pub(super) fn paste_image(&mut self, text: &str) -> bool {
        let Some(path) = pasted_image_path(text, &self.status.cwd) else {
            return false;
        };
        self.attach_image(path);
        true
    }

    /// Attaches an image file to the draft: a placeholder at the cursor, the file checked
    /// now (type, size, the model's vision) so a problem shows before anything is sent.
    pub fn attach_image(&mut self, path: PathBuf) {
        if let Some(why) = oi_core::image_input::vision_refusal(&self.status.model) {
            self.push_error(why);
            return;
        }
        if let Err(e) = oi_core::image_input::check_image_file(&path) {
            self.push_error(e);
            return;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let placeholder = format!("[image {}: {name}]", self.images.len() + 1);
        self.composer.insert_str(&placeholder);
        self.images.push((placeholder, path));
    }

    /// The input items of a message: its text, then the attached images whose placeholders
    /// it still contains (a placeholder deleted from the draft drops its image).
    pub(super) fn message_items(&mut self, text: String) -> Result<Vec<UserInput>, String> {
        let kept = |(placeholder, _): &&(String, PathBuf)| text.contains(placeholder.as_str());
        // The model may have changed (/model) since the image was attached; the draft and
        // its images stay for the user to change when it has no vision.
        if self.images.iter().any(|i| kept(&i))
            && let Some(why) = oi_core::image_input::vision_refusal(&self.status.model)
        {
            return Err(why);
        }
        let images: Vec<PathBuf> = std::mem::take(&mut self.images)
            .iter()
            .filter(kept)
            .map(|(_, path)| path.clone())
            .collect();
        // The text with the context the TUI adds (a `!cmd`'s output, an undo note).
        let mut items = self.prompt_items(text);
        items.extend(
            images
                .into_iter()
                .map(|path| UserInput::LocalImage { path }),
        );
        Ok(items)
    }
}

/// The image file a paste names, if it is exactly one existing file that is an image by
/// its extension or its first bytes. Terminals paste dropped files as a path, quoted, with
/// backslash-escaped spaces, or as a `file://` URL.
pub(super) fn pasted_image_path(text: &str, cwd: &Path) -> Option<PathBuf> {
    let t = text.trim();
    if t.is_empty() || t.contains('\n') {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(t);
    let unescaped = match unquoted.strip_prefix("file://") {
        Some(url) => percent_decode(url)?,
        None => unescape_spaces(unquoted),
    };
    let path = Path::new(&unescaped);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    if !path.is_file() {
        return None;
    }
    let by_name = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .is_some_and(|e| matches!(e.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp"));
    (by_name || oi_core::image_input::check_image_file(&path).is_ok()).then_some(path)
}

/// `a\ b` → `a b` (shells' and terminals' quoting of a dropped path).
fn unescape_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(next) = chars.peek()
            && !next.is_alphanumeric()
        {
            out.push(*next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// `%20` → ` `; `None` on a malformed escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_paths_in_the_shapes_terminals_paste() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("my cat.png");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
        let shown = png.display().to_string();
        for pasted in [
            shown.clone(),
            format!("'{shown}'"),
            format!("\"{shown}\"  "),
            shown.replace(' ', "\\ "),
            format!("file://{}", shown.replace(' ', "%20")),
        ] {
            assert_eq!(
                pasted_image_path(&pasted, Path::new("/")),
                Some(png.clone()),
                "{pasted}"
            );
        }
        assert_eq!(
            pasted_image_path("my cat.png", dir.path()),
            Some(png.clone())
        );
        // Text, a missing file, two lines, a file that is no image: all stay text.
        std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
        for pasted in [
            "hello world",
            "missing.png",
            "my cat.png\nmy cat.png",
            "notes.txt",
        ] {
            assert_eq!(pasted_image_path(pasted, dir.path()), None, "{pasted}");
        }
    }
}
