//! `loopbench mock-model`: the scripted model server of one session, alone or around
//! an agent command ([`crate::agent::mock_model`]).

use super::args::MockModelArgs;
use crate::agent::mock_model::{Launch, launch};
use crate::error::Result;

/// Runs the command; its exit code is the agent command's.
pub fn run(args: &MockModelArgs) -> Result<i32> {
    launch(&Launch {
        scenario: args.scenario.clone(),
        session: args.session,
        attempt: args.attempt,
        log: args.log.clone(),
        requests_dir: args.requests.clone(),
        home: args.home.clone(),
        port: args.port,
        command: args.command.clone(),
    })
}
