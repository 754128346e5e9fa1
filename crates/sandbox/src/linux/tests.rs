//! Backend tests that need internal knobs (forced ABI, forced `.git` layout).
