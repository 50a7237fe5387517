//! The admission webhook (`syncguard serve`): validating and mutating endpoints that run the
//! same policy pipeline as `syncguard check` on every object the API server admits.

pub mod review;
