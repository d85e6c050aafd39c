//! The pub/sub family: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB,
//! SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH. The registry and delivery are in [`crate::pubsub`].

pub mod publish;
pub mod pubsub_cmd;
pub mod subscribe;

use crate::cmd::Spec;

/// The pub/sub commands.
pub static SPECS: &[Spec] = &[
    subscribe::SPEC_SUBSCRIBE,
    subscribe::SPEC_UNSUBSCRIBE,
    subscribe::SPEC_PSUBSCRIBE,
    subscribe::SPEC_PUNSUBSCRIBE,
    publish::SPEC_PUBLISH,
    pubsub_cmd::SPEC,
    subscribe::SPEC_SSUBSCRIBE,
    subscribe::SPEC_SUNSUBSCRIBE,
    publish::SPEC_SPUBLISH,
];
