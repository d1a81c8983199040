//! Helpers shared by more than one test module (each lives here once).

pub mod conformance;
pub mod console_view;
pub mod deploy_record;
pub mod fixture_server;
pub mod model_api;
pub mod npm_packages;
pub mod oauth_servers;
pub mod process;
pub mod pty;
pub mod real_tools;
pub mod replay_model;
pub mod window_api;
