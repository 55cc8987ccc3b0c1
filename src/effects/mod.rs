//! The effects log: the harness's own record of a trial's irreversible actions, which
//! the side-effect tools append to through a channel that only appends
//! ([`Channel`]: a FIFO whose read end the harness holds), and which the harness keeps
//! counted, not copied ([`EffectsTally`]).

mod channel;
mod record;

pub use channel::{Channel, ChannelEnd, SESSION_BYTES};
pub use record::{EffectsLog, EffectsTally, LISTED_KEY_BYTES, LISTED_KEYS};
