//! Images the user attaches (`-i FILE`, a path pasted into the TUI, v2 `localImage`): the
//! checks every front end runs before a file goes to the model, and the `data:` URL it goes
//! as. The type comes from the file's first bytes, not its name, so a renamed text file is
//! refused here rather than by the model server with an opaque error.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest image file accepted (10 MiB). Base64 makes it a third larger on the wire, and
/// open-model servers refuse far smaller requests than hosted APIs do.
pub const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;

/// The image types vision models accept, told by their magic bytes: the MIME type.
pub fn sniff_image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Checks that `path` is an image the model can be sent (a regular file, at most
/// [`MAX_IMAGE_BYTES`], PNG/JPEG/GIF/WebP by content) and returns its MIME type. The error
/// names the file, what is wrong and what to do. Blocking: call off async workers.
pub fn check_image_file(path: &Path) -> Result<&'static str, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read image {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("image {shown} is not a regular file"));
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "image {shown} is {} MiB; the limit is {} MiB — scale it down or crop it first",
            meta.len().div_ceil(1024 * 1024),
            MAX_IMAGE_BYTES / (1024 * 1024)
        ));
    }
    let mut head = [0u8; 12];
    let mut file =
        std::fs::File::open(path).map_err(|e| format!("cannot read image {shown}: {e}"))?;
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) => return Err(format!("cannot read image {shown}: {e}")),
        }
    }
    sniff_image_type(&head[..filled]).ok_or_else(|| {
        format!("{shown} is not a PNG, JPEG, GIF or WebP image (judged by its content); convert it to one of those")
    })
}

/// Why `model` cannot be sent images, when the built-in catalog knows it has no vision (see
/// `oi_model_client::vision`); `None` for vision models and models we know nothing about.
pub fn vision_refusal(model: &str) -> Option<String> {
    oi_model_client::vision::refusal(model)
}

/// Why a local image was not sent; the text names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ImageReadError {
    /// The file failed [`check_image_file`] (its text says what to do).
    #[error("{0}")]
    Check(String),
    /// Reading it failed.
    #[error("cannot read image {}: {source}", path.display())]
    Read {
        /// The image file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// What was read is not an image (the file changed after the check).
    #[error("{} is not a PNG, JPEG, GIF or WebP image (judged by its content)", path.display())]
    NotAnImage {
        /// The image file.
        path: PathBuf,
    },
    /// It grew past [`MAX_IMAGE_BYTES`] after the check.
    #[error(
        "image {} grew past the {} MiB limit while it was read",
        path.display(),
        MAX_IMAGE_BYTES / (1024 * 1024)
    )]
    Grew {
        /// The image file.
        path: PathBuf,
    },
    /// The blocking task that read it failed.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The file as a `data:<mime>;base64,…` URL, after [`check_image_file`]. Blocking.
pub fn image_data_url(path: &Path) -> Result<String, ImageReadError> {
    use base64::Engine;
    check_image_file(path).map_err(ImageReadError::Check)?;
    let bytes = std::fs::read(path).map_err(|source| ImageReadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    // The file may have changed between the check and the read: judge what is sent.
    let mime = sniff_image_type(&bytes).ok_or_else(|| ImageReadError::NotAnImage {
        path: path.to_path_buf(),
    })?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(ImageReadError::Grew {
            path: path.to_path_buf(),
        });
    }
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_magic_bytes() {
        assert_eq!(
            sniff_image_type(b"\x89PNG\r\n\x1a\nrest"),
            Some("image/png")
        );
        assert_eq!(
            sniff_image_type(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some("image/jpeg")
        );
        assert_eq!(sniff_image_type(b"GIF89a..."), Some("image/gif"));
        assert_eq!(
            sniff_image_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(sniff_image_type(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(sniff_image_type(b"hello"), None);
    }

    #[test]
    fn refuses_a_renamed_text_file_and_a_huge_one() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("cat.png");
        std::fs::write(&fake, "not an image").unwrap();
        let e = check_image_file(&fake).unwrap_err();
        assert!(e.contains("is not a PNG, JPEG, GIF or WebP"), "{e}");

        let big = dir.path().join("big.png");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_IMAGE_BYTES + 1).unwrap();
        let e = check_image_file(&big).unwrap_err();
        assert!(e.contains("the limit is 10 MiB"), "{e}");

        let png = dir.path().join("dot.webp.txt");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
        assert_eq!(check_image_file(&png), Ok("image/png"));
        assert!(
            image_data_url(&png)
                .unwrap()
                .starts_with("data:image/png;base64,iVBORw0KGgo")
        );

        let e = check_image_file(&dir.path().join("missing.png")).unwrap_err();
        assert!(e.starts_with("cannot read image"), "{e}");
    }
}
