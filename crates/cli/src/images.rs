//! `-i FILE` on `interpreter` and `interpreter exec`: the images sent with the first prompt,
//! checked before anything starts so a wrong file or a model without vision is a usage error
//! that names the fix, not a failed turn.

use oi_protocol::user_input::UserInput;
use std::path::PathBuf;

/// The images' absolute paths (so the stored thread names the file), or why they cannot be
/// sent to `model`.
pub fn checked_images(paths: &[PathBuf], model: &str) -> Result<Vec<PathBuf>, String> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(why) = oi_core::image_input::vision_refusal(model) {
        return Err(why);
    }
    paths
        .iter()
        .map(|p| {
            oi_core::image_input::check_image_file(p)?;
            std::path::absolute(p)
                .map_err(|e| format!("cannot resolve image path {}: {e}", p.display()))
        })
        .collect()
}

/// [`checked_images`] as input items.
pub fn image_inputs(paths: &[PathBuf], model: &str) -> Result<Vec<UserInput>, String> {
    Ok(checked_images(paths, model)?
        .into_iter()
        .map(|path| UserInput::LocalImage { path })
        .collect())
}
