//! The scripted model server (`loopbench mock-model`): a dry run of a real agent CLI
//! without an API key. A scenario says, per session, what the "model" does; the server
//! speaks the CLI's own API on 127.0.0.1 and answers each model call with the next step
//! as that CLI's tool call, and logs what it served.

mod aider;
mod http;
mod launch;
mod render;
pub mod script;
pub mod server;
mod tool_call;

pub use launch::{API_KEY, CRASH_EXIT, CRASH_GRACE, Launch, launch};
pub use script::Scenario;
pub use server::Summary;
