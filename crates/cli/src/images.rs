//! `-i FILE` on `interpreter` and `interpreter exec`: the images sent with the first prompt,
//! checked before anything starts so a wrong file or a model without vision is a usage error
//! that names the fix, not a failed turn.

use oi_protocol::user_input::UserInput;
use std::path::PathBuf;

/// Why the `-i` images cannot be sent; each message names the fix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageError {
    /// The model is known to have no vision (the text says which and what to use).
    #[error("{0}")]
    NoVision(String),
    /// The file is not an image the model can be sent (see `check_image_file`).
    #[error("{0}")]
    File(String),
    /// The path could not be made absolute.
    #[error("cannot resolve image path {}: {source}", path.display())]
    Resolve {
        /// The path as given.
        path: PathBuf,
        /// Why it did not resolve.
        source: std::io::Error,
    },
}

/// The images' absolute paths (so the stored thread names the file), or why they cannot be
/// sent to `model`.
pub(crate) fn checked_images(paths: &[PathBuf], model: &str) -> Result<Vec<PathBuf>, ImageError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(why) = oi_core::image_input::vision_refusal(model) {
        return Err(ImageError::NoVision(why));
    }
    paths
        .iter()
        .map(|p| {
            oi_core::image_input::check_image_file(p).map_err(ImageError::File)?;
            std::path::absolute(p).map_err(|source| ImageError::Resolve {
                path: p.clone(),
                source,
            })
        })
        .collect()
}

/// [`checked_images`] as input items.
pub(crate) fn image_inputs(paths: &[PathBuf], model: &str) -> Result<Vec<UserInput>, ImageError> {
    Ok(checked_images(paths, model)?
        .into_iter()
        .map(|path| UserInput::LocalImage { path })
        .collect())
}
